// SPDX-License-Identifier: Apache-2.0
// What `writepath demo` says of a trace: only what the trace's items show (kv-tier's io_uring
// engine, dirty-throttle's stalls or their absence).
#include "agent/explain/explain.h"

#include <gtest/gtest.h>

#include "builders.h"

namespace wp {
namespace {

using namespace builders;

loadgen::ScenarioResult kv_tier_result(const std::string& engine) {
  loadgen::ScenarioResult result;
  result.figures["engine"] = engine;
  return result;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
}

WriteTimeline direct_write(Syscall syscall, std::uint32_t tid, std::uint32_t submitter) {
  WriteTimeline w = durable_write(
      syscall_event({.syscall = syscall, .tid = tid, .ret = 262144, .pages_dirtied = 0}),
      write_request(kLoop0, 2048, 262144, 10, 20), 30);
  w.direct = true;
  w.requests.front().submit_tid = submitter;
  return w;
}

TEST(ExplainKvTier, IoUringOpsAreTheItemsNamedIoUring) {
  EXPECT_TRUE(explain::is_io_uring_op("io_uring_write"));
  EXPECT_TRUE(explain::is_io_uring_op("io_uring_write_fixed"));
  EXPECT_FALSE(explain::is_io_uring_op("pwrite64"));
  EXPECT_FALSE(explain::is_io_uring_op("write"));
  EXPECT_FALSE(explain::is_io_uring_op("io_uring"));
}

TEST(ExplainKvTier, IoUringEngineWithoutIoUringItemsSaysTheTracerSawNone) {
  // Direct pwrites in the trace are not the ring's: no bypass is claimed from them.
  const std::vector<Timeline> timelines = {direct_write(Syscall::Pwrite64, 7, 7)};
  const std::string text = joined(explain::explain_kv_tier(kv_tier_result("io_uring"), timelines));
  EXPECT_NE(text.find("the tracer saw no io_uring writes"), std::string::npos) << text;
  EXPECT_NE(text.find("1 writes by other calls"), std::string::npos) << text;
  EXPECT_EQ(text.find("bypassed"), std::string::npos) << text;
}

TEST(ExplainKvTier, IoUringDirectOpsWithNoPagesDirtiedBypassThePageCache) {
  const Syscall op = Syscall::IoUringWriteFixed;
  const std::vector<Timeline> timelines = {direct_write(op, 7, 7), direct_write(op, 7, 99)};
  const std::string text = joined(explain::explain_kv_tier(kv_tier_result("io_uring"), timelines));
  EXPECT_NE(text.find("io_uring O_DIRECT: 2 writes, 0 pages dirtied, 2 requests"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("bypassed the page cache"), std::string::npos) << text;
  EXPECT_NE(text.find("1 of their 2 data requests were issued by the thread"), std::string::npos)
      << text;
}

TEST(ExplainKvTier, IoUringDirectOpsAllIssuedBySubmitterSayAll) {
  const Syscall op = Syscall::IoUringWrite;
  const std::vector<Timeline> timelines = {direct_write(op, 7, 7), direct_write(op, 7, 7)};
  const std::string text = joined(explain::explain_kv_tier(kv_tier_result("io_uring"), timelines));
  EXPECT_NE(text.find("all 2 of their data requests were issued by the thread that submitted"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("the rest by another thread"), std::string::npos) << text;
}

TEST(ExplainKvTier, PwriteEngineTalliesBothModes) {
  const std::vector<Timeline> timelines = {
      direct_write(Syscall::Pwrite64, 7, 7),
      dirty_write(syscall_event({.syscall = Syscall::Pwrite64, .pages_dirtied = 64}))};
  const std::string text = joined(explain::explain_kv_tier(kv_tier_result("pwrite"), timelines));
  EXPECT_NE(text.find("O_DIRECT: 1 writes, 0 pages dirtied, 1 requests"), std::string::npos)
      << text;
  EXPECT_NE(text.find("buffered: 1 writes, 64 pages dirtied, 0 requests"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("io_uring"), std::string::npos) << text;
}

// A logger append of `latency` (the dirty-throttle scenario's thread "logger").
WriteTimeline log_append(Nanos start, Nanos latency) {
  return dirty_write(syscall_event({.syscall = Syscall::Write,
                                    .start_ns = start,
                                    .end_ns = start + latency,
                                    .comm = "logger",
                                    .ret = 64}));
}

// O_DIRECT: whatever the states, the demo says in words that a direct write that returned
// is not durable by itself (only FUA writes and write-through devices are).
TEST(ExplainOdirect, SaysInWordsThatDirectWritesAreNotDurableByThemselves) {
  WriteTimeline flushed_later = direct_write(Syscall::Pwrite64, 7, 7);
  flushed_later.durable_via = DurableVia::Flush;
  WriteTimeline fua = direct_write(Syscall::Pwrite64, 7, 7);
  fua.durable_via = DurableVia::Fua;
  const std::string text =
      joined(explain::explain_odirect(loadgen::ScenarioResult{}, {flushed_later, fua}));
  EXPECT_NE(text.find("O_DIRECT skips the page cache, not the device's cache. 1 of these 2 "
                      "direct writes was durable when it returned"),
            std::string::npos)
      << text;
  EXPECT_EQ(joined(explain::explain_odirect(loadgen::ScenarioResult{}, {})),
            "no O_DIRECT writes were seen\n");
}

TEST(ExplainDirtyThrottle, NoStallSaysSoWithTheSlowestAppend) {
  std::vector<Timeline> timelines = {log_append(0, 4'800), log_append(10'000'000, 23'700),
                                     log_append(20'000'000, 5'000)};
  const std::string text = joined(explain::explain_dirty_throttle({}, timelines));
  EXPECT_NE(text.find("no stall: the logger's slowest of 3 appends took 23.7us, below the 1.00ms"),
            std::string::npos)
      << text;
  // No cause is named for appends that did not stall.
  EXPECT_EQ(text.find("journal"), std::string::npos) << text;
  EXPECT_EQ(text.find("writeback"), std::string::npos) << text;
  EXPECT_EQ(text.find("throttled in"), std::string::npos) << text;
}

TEST(ExplainDirtyThrottle, StallNamesTheCauseTheTraceMeasured) {
  WriteTimeline stalled = log_append(5'000'000, 150'000'000);
  stalled.call.throttle_ns = 140'000'000;
  stalled.call.throttle_events = 1;
  stalled.causes = SlowCauses{.on_cpu_ns = 10'000'000, .throttle_ns = 140'000'000};
  WriteTimeline flood = dirty_write(
      syscall_event({.syscall = Syscall::Pwrite64, .end_ns = 300'000'000, .comm = "flood"}));
  flood.call.throttle_ns = 200'000'000;
  flood.call.throttle_events = 2;
  std::vector<Timeline> timelines = {flood, log_append(0, 5'000), stalled};
  const std::string text = joined(explain::explain_dirty_throttle({}, timelines));
  EXPECT_NE(text.find("flood writer: 1 writes, throttled 200.00ms in all (2 balance_dirty_pages"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("logger: 2 appends traced, 1 stalled for 1.00ms or more"), std::string::npos)
      << text;
  EXPECT_NE(text.find("140.00ms (93%) went asleep in dirty throttling"), std::string::npos) << text;
  EXPECT_EQ(text.find("no stall"), std::string::npos) << text;
}

TEST(ExplainDirtyThrottle, StallWithoutThrottlingDoesNotBlameThrottling) {
  WriteTimeline stalled = log_append(0, 120'000'000);
  stalled.causes = SlowCauses{.on_cpu_ns = 1'000'000, .blocked_ns = 119'000'000};
  const std::string text = joined(explain::explain_dirty_throttle({}, {stalled}));
  EXPECT_NE(text.find("went asleep for something the trace does not name"), std::string::npos)
      << text;
  EXPECT_NE(text.find("not dirty throttling"), std::string::npos) << text;
}

}  // namespace
}  // namespace wp

namespace wp {
namespace {

// A read of `path` at `pos`: 1 MiB (256 pages), `from_device` of them brought in, `ahead`
// pages read ahead past it.
ReadTimeline read_at(const std::string& path, std::uint64_t pos, std::uint64_t from_device,
                     std::uint32_t ahead) {
  ReadTimeline r;
  r.call = builders::syscall_event({.syscall = Syscall::Read, .start_ns = 10, .end_ns = 1010});
  r.call.path = path;
  r.call.pos = pos;
  r.call.ret = 1 << 20;
  r.call.count = 1 << 20;
  r.pages = 256;
  r.pages_from_device = from_device;
  r.pages_cached = 256 - from_device;
  r.readahead_pages = ahead;
  return r;
}

// The two passes over the file are told apart where a read goes back to offset 0; the load's
// reads of other files (its /proc/self/io) are not the scenario's.
TEST(ExplainColdWarm, EachPassIsItsReadsOfTheFile) {
  const std::string file = "/tmp/writepath-load.x/mnt/cold-warm.dat";
  const std::vector<Timeline> items = {
      read_at("/proc/self/io", 0, 0, 0), read_at(file, 0, 256, 256), read_at(file, 1 << 20, 0, 0),
      read_at("/proc/self/io", 0, 0, 0), read_at(file, 0, 0, 0),     read_at(file, 1 << 20, 0, 0)};
  loadgen::ScenarioResult result;
  result.figures["file"] = file;
  result.figures["cold_storage_read_bytes"] = 2 << 20;
  result.figures["warm_storage_read_bytes"] = 0;
  const std::string text = joined(explain::explain_run("cold-warm", result, items));
  EXPECT_NE(text.find("cold read: 2 reads, 2 MiB in 2.0us; 512 pages brought in from the device "
                      "(256 by readahead), 256 found cached, hit 0.0 %; the load's own count: "
                      "2.0 MiB from storage"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("warm read: 2 reads, 2 MiB in 2.0us; 0 pages brought in from the device (0 "
                      "by readahead), 512 found cached, hit 100.0 %; the load's own count: 0.0 "
                      "MiB from storage"),
            std::string::npos)
      << text;
  EXPECT_TRUE(explain::explains_reads("cold-warm"));
  EXPECT_FALSE(explain::explains_reads("wal"));
}

}  // namespace
}  // namespace wp
