// SPDX-License-Identifier: Apache-2.0
// What a trace's summary says beyond its events: the session collects it, the summary of the
// events is completed with it.
#include "agent/summary_builder.h"

#include <gtest/gtest.h>

namespace wp {
namespace {

constexpr DevT kDisk = (8u << 20) | 0;
constexpr DevT kOther = (8u << 20) | 16;

TEST(SummaryBuilder, FilteredRequestsAddToTheDisksTotals) {
  SummaryBuilder facts;
  facts.add_filtered_requests({{kDisk, {.write_requests = 2, .write_bytes = 8192}}});
  // Twice: a trace file may carry the counts of more than one reading.
  facts.add_filtered_requests(
      {{kDisk, {.write_requests = 1, .write_bytes = 4096}}, {kOther, {.flush_requests = 3}}});
  TraceSummary summary;
  summary.disks[kDisk] = {.write_requests = 5, .write_bytes = 20480, .flush_requests = 1};
  facts.complete(summary);
  EXPECT_EQ(summary.disks[kDisk],
            (DiskTotals{.write_requests = 8, .write_bytes = 32768, .flush_requests = 1}));
  EXPECT_EQ(summary.disks[kOther], (DiskTotals{.flush_requests = 3}));
}

TEST(SummaryBuilder, TheKernelsCountsAndTheHintGoToTheSummary) {
  SummaryBuilder facts;
  facts.set_untraced_calls({{"pwritev2", 4}, {"sync", 0}});
  facts.set_bpf_cost(BpfCost{.programs = {}, .cpus = 2});
  facts.set_hint("pid 42 has children: --children follows them");
  TraceSummary summary;
  facts.complete(summary);
  EXPECT_EQ(summary.untraced_calls,
            (std::map<std::string, std::uint64_t>{{"pwritev2", 4}, {"sync", 0}}));
  ASSERT_TRUE(summary.bpf_cost);
  EXPECT_EQ(summary.bpf_cost->cpus, 2u);
  EXPECT_EQ(summary.hint, "pid 42 has children: --children follows them");
}

TEST(SummaryBuilder, NothingCollectedLeavesTheSummaryAsItWas) {
  TraceSummary summary;
  summary.disks[kDisk] = {.write_requests = 1, .write_bytes = 4096, .flush_requests = 0};
  SummaryBuilder{}.complete(summary);
  EXPECT_EQ(summary.disks.size(), 1u);
  EXPECT_EQ(summary.disks[kDisk].write_requests, 1u);
  EXPECT_TRUE(summary.untraced_calls.empty());
  EXPECT_FALSE(summary.bpf_cost);
  EXPECT_EQ(summary.hint, "");
}

}  // namespace
}  // namespace wp
