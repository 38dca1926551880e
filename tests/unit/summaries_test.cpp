#include "analyze/summaries.h"

#include "sinks/text_sink.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace wp {
namespace {

SyncTimeline sync_of(Nanos latency, Nanos flush) {
  SyncTimeline s;
  s.call.start_ns = 1000;
  s.call.end_ns = 1000 + latency;
  s.phases.flush_ns = flush;
  s.phases.other_ns = latency - flush;
  return s;
}

TEST(Log2Histogram, BucketsByPowerOfTwo) {
  Log2Histogram h;
  for (Nanos v : {0ull, 1ull, 2ull, 3ull, 4ull, 1023ull, 1024ull, 1ull << 40}) h.add(v);
  EXPECT_EQ(h.buckets[0], 2u);   // 0 and 1
  EXPECT_EQ(h.buckets[1], 2u);   // 2, 3
  EXPECT_EQ(h.buckets[2], 1u);   // 4
  EXPECT_EQ(h.buckets[9], 1u);   // 1023
  EXPECT_EQ(h.buckets[10], 1u);  // 1024
  EXPECT_EQ(h.buckets[40], 1u);
  EXPECT_EQ(h.count(), 8u);
}

TEST(SyncPhaseSummary, PercentilesPerPhase) {
  SyncPhaseSummary summary;
  for (Nanos i = 1; i <= 100; ++i) summary.add(sync_of(i * 1000, i * 600));
  EXPECT_EQ(summary.syncs(), 100u);
  PhaseStats latency = summary.phase(0);
  EXPECT_EQ(latency.count, 100u);
  EXPECT_EQ(latency.p50, 50'000u);
  EXPECT_EQ(latency.p99, 99'000u);
  EXPECT_EQ(latency.max, 100'000u);
  EXPECT_EQ(latency.total, 5'050'000u);
  EXPECT_EQ(latency.histogram.count(), 100u);
  PhaseStats flush = summary.phase(4);  // kPhases[4] == "flush"
  EXPECT_STREQ(SyncPhaseSummary::kPhases[4], "flush");
  EXPECT_EQ(flush.p50, 30'000u);
  EXPECT_EQ(flush.max, 60'000u);
  EXPECT_EQ(summary.phase(2).max, 0u);  // no data I/O in these
  EXPECT_EQ(summary.phase(99).count, 0u);
}

WriteTimeline direct_write(std::uint32_t pid, std::uint64_t ino, std::int64_t ret,
                           std::uint32_t dirtied) {
  WriteTimeline w;
  w.direct = true;
  w.call.pid = pid;
  w.call.comm = "db";
  w.call.dev = make_dev(7, 0);
  w.call.ino = ino;
  w.call.ret = ret;
  w.call.pages_dirtied = dirtied;
  return w;
}

TEST(DirectIoSummary, VerdictPerProcessAndFile) {
  DirectIoSummary summary;
  summary.add(direct_write(1, 10, 4096, 0));
  summary.add(direct_write(1, 10, 4096, 0));
  summary.add(direct_write(1, 10, -EINVAL, 0));
  summary.add(direct_write(1, 11, 8192, 2));  // the filesystem went buffered
  summary.add(direct_write(2, 10, -EIO, 0));
  WriteTimeline buffered = direct_write(1, 10, 4096, 1);
  buffered.direct = false;
  summary.add(buffered);  // not O_DIRECT: not judged here

  auto v = summary.verdicts();
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].ino, 10u);
  EXPECT_EQ(v[0].writes, 2u);
  EXPECT_EQ(v[0].bytes, 8192u);
  EXPECT_EQ(v[0].einval, 1u);
  EXPECT_TRUE(v[0].bypassed());
  EXPECT_EQ(v[1].ino, 11u);
  EXPECT_EQ(v[1].pages_dirtied, 2u);
  EXPECT_EQ(v[1].buffered_bytes, 8192u);
  EXPECT_FALSE(v[1].bypassed());
  EXPECT_EQ(v[2].pid, 2u);
  EXPECT_EQ(v[2].other_errors, 1u);
  EXPECT_EQ(v[2].writes, 0u);
}

// The top bucket's upper bound is 2^64 - 1: found by the fuzzer as a shift by 64.
TEST(SyncPhaseSummaryText, HistogramOfHugeLatenciesRenders) {
  SyncPhaseSummary summary;
  summary.add(sync_of(~Nanos{0} - 2000, 0));
  std::string text = format_sync_phases(summary, SinkOptions{});
  EXPECT_NE(text.find("latency histogram"), std::string::npos) << text;
}

}  // namespace
}  // namespace wp
