// SPDX-License-Identifier: Apache-2.0
// --min-latency is decided in the kernel: calls under the threshold cost no record at all,
// while a slow call keeps everything it needs (its requests, flushes and phases).
#include "harness.h"

namespace wp::testing {
namespace {

class MinLatency : public ScratchExt4 {};

TEST_F(MinLatency, FastCallsAreDroppedInTheKernelAndSlowOnesKeepTheirIo) {
  constexpr int kWrites = 8192;  // 32 MiB of 4 KiB buffered writes, then one fsync
  const std::string path = file("min-latency.dat");
  // --dev: the records counted are this workload's own, whatever else the machine writes
  // (another writepath beside this one, or the disk's other users).
  RunResult all = run({tool("writepath"), "trace", "--format", "json", "--dev", loop_, "--",
                       tool("wp_workload"), "buffered-fsync", path, std::to_string(kWrites)});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  RunResult slow =
      run({tool("writepath"), "trace", "--format", "json", "--dev", loop_, "--min-latency", "1ms",
           "--", tool("wp_workload"), "buffered-fsync", path, std::to_string(kWrites)});
  ASSERT_EQ(slow.exit_code, 0) << slow.err;

  auto all_items = json_lines(all.out);
  auto slow_items = json_lines(slow.out);
  auto all_summary = of_type(all_items, "summary");
  auto slow_summary = of_type(slow_items, "summary");
  ASSERT_EQ(all_summary.size(), 1u);
  ASSERT_EQ(slow_summary.size(), 1u);
  // Unfiltered, every write is a record; filtered, the fast ones never left the kernel
  // (the agent counts decoded records in "events").
  EXPECT_GE(u64(all_summary[0]["events"]), static_cast<std::uint64_t>(kWrites));
  EXPECT_EQ(of_type(all_items, "write").size(), static_cast<std::size_t>(kWrites));
  EXPECT_LT(u64(slow_summary[0]["events"]), static_cast<std::uint64_t>(kWrites) / 2);
  EXPECT_LT(of_type(slow_items, "write").size(), static_cast<std::size_t>(kWrites) / 2);

  // Writing back 32 MiB takes far more than 1 ms: the fsync is there, whole.
  auto fsyncs = of_type(slow_items, "fsync");
  ASSERT_EQ(fsyncs.size(), 1u);
  const auto& fsync = fsyncs[0];
  EXPECT_GE(u64(fsync["latency_ns"]), 1'000'000u);
  EXPECT_FALSE(fsync["requests"].empty());
  const auto& p = fsync["phases"];
  EXPECT_EQ(u64(p["writeback_ns"]) + u64(p["data_io_ns"]) + u64(p["journal_ns"]) +
                u64(p["flush_ns"]) + u64(p["other_ns"]),
            u64(fsync["latency_ns"]));
  for (const auto& w : of_type(slow_items, "write"))
    EXPECT_GE(u64(w["latency_ns"]), 1'000'000u) << w.dump();
}

}  // namespace
}  // namespace wp::testing
