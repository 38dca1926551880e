// SPDX-License-Identifier: Apache-2.0
// Live output and wall-clock time: the offset math, RFC 3339 and the -T column, the text
// sink's early and update lines, the JSON event stream and `time`, the trace file's offsets.
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/wall_clock.h"
#include "record/trace_file.h"
#include "sinks/json_sink.h"
#include "sinks/sink.h"
#include "sinks/text_live.h"
#include "sinks/text_sink.h"

#include "builders.h"

namespace wp {
namespace {

using nlohmann::json;
using namespace builders;

constexpr Nanos kStart = 1'000'000'000;
// 2026-12-01T15:17:14.000000Z on the realtime clock is kStart on the monotonic one.
constexpr std::int64_t kRealAtStart = 1'796'138'234'000'000'000;
constexpr ClockOffsets kOffsets{.realtime_ns = kRealAtStart - static_cast<std::int64_t>(kStart),
                                .boottime_ns = 5'000};

WriteTimeline pending_write() {
  SyscallEvent call = syscall_event({.start_ns = kStart, .end_ns = kStart + 14'200, .pos = 8192});
  WriteTimeline write = builders::dirty_write(call);
  write.incomplete = false;
  write.id = 7;
  return write;
}

WriteTimeline completed_write() {
  RequestTimeline request =
      write_request(kLoop0, 2048, 4096, kStart + 1'220'000, kStart + 2'800'000);
  WriteTimeline write = builders::durable_write(pending_write().call, request, kStart + 3'100'000);
  write.id = 7;
  write.announced = true;
  return write;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// ---- the clock ----

TEST(ClockOffset, IsTheOtherClockMinusTheBracketsMidpoint) {
  EXPECT_EQ(
      offset_of(ClockBracket{.monotonic_before = 1000, .other = 50'000, .monotonic_after = 1200}),
      50'000 - 1100);
}

TEST(ClockOffset, TheTightestBracketWins) {
  const ClockBracket brackets[] = {
      {.monotonic_before = 1000, .other = 9'000, .monotonic_after = 5000},  // preempted
      {.monotonic_before = 6000, .other = 14'050, .monotonic_after = 6100},
      {.monotonic_before = 7000, .other = 15'000, .monotonic_after = 6000},  // nonsense
  };
  const auto best = tightest(brackets, 3);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->monotonic_before, 6000u);
  EXPECT_EQ(offset_of(*best), 14'050 - 6050);
  EXPECT_FALSE(tightest(brackets, 0));
}

TEST(ClockOffset, MeasuredOffsetsMatchTheClocks) {
  const ClockOffsets offsets = measure_clock_offsets();
  timespec mono{}, real{};
  ::clock_gettime(CLOCK_MONOTONIC, &mono);
  ::clock_gettime(CLOCK_REALTIME, &real);
  const Nanos mono_ns = static_cast<Nanos>(mono.tv_sec) * 1'000'000'000 + mono.tv_nsec;
  const std::int64_t real_ns =
      static_cast<std::int64_t>(real.tv_sec) * 1'000'000'000 + real.tv_nsec;
  EXPECT_LT(std::llabs(realtime_of(mono_ns, offsets) - real_ns), 10'000'000);
  EXPECT_GT(offsets.boottime_ns, -1'000'000) << "BOOTTIME is never behind MONOTONIC";
}

TEST(ClockOffset, BoottimeOffsetIsNeverNegative) {
  // Without a suspend the two clocks agree, and a midpoint estimate falls either side of zero.
  for (int i = 0; i < 2000; ++i) ASSERT_GE(measure_clock_offsets().boottime_ns, 0) << "try " << i;
}

TEST(Rfc3339, UtcWithMicroseconds) {
  EXPECT_EQ(rfc3339_utc(kRealAtStart + 123'456'789), "2026-12-01T15:17:14.123456Z");
  EXPECT_EQ(rfc3339_utc(0), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(rfc3339_utc(951'782'400'000'001'000), "2000-02-29T00:00:00.000001Z");  // leap day
  EXPECT_EQ(rfc3339_utc(-1'000), "1969-12-31T23:59:59.999999Z");
}

TEST(ClockColumn, LocalTimeOfDayWithMicroseconds) {
  // The zone is the process's: pin it for the test.
  const char* saved = std::getenv("TZ");
  const std::string restore = saved ? saved : "";
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  EXPECT_EQ(clock_column(kRealAtStart + 5'000), "15:17:14.000005");
  ::setenv("TZ", "CET-1", 1);
  ::tzset();
  EXPECT_EQ(clock_column(kRealAtStart + 5'000), "16:17:14.000005");
  if (saved)
    ::setenv("TZ", restore.c_str(), 1);
  else
    ::unsetenv("TZ");
  ::tzset();
}

// ---- text ----

TEST(TextLive, ReturnedWriteIsItsBlockHeadedByItsId) {
  const std::string text =
      format_live_progress(ItemProgress::Returned, pending_write(), SinkOptions{}, std::nullopt);
  EXPECT_TRUE(text.starts_with("#7 pwrite64 pid 1234/1235 (dd)")) << text;
  EXPECT_TRUE(contains(text, "latency 14.2us")) << text;
  EXPECT_TRUE(contains(text, "DIRTY 1/1 pages pending")) << text;
  EXPECT_TRUE(contains(text, "dirtied 1 page")) << text;
}

TEST(TextLive, UpdateLinesAreOneLineWithTheSameId) {
  WriteTimeline written = pending_write();
  written.state = WriteState::Written;
  written.written_ns = kStart + 2'800'000;
  const std::string w =
      format_live_progress(ItemProgress::Written, written, SinkOptions{}, std::nullopt);
  EXPECT_EQ(w, "#7 pwrite64 pid 1234/1235 (dd) ino 12  WRITTEN +2.80ms (1 page), not durable\n");

  SinkOptions live;
  live.live = true;
  const std::string d = format_live_complete(completed_write(), live, std::nullopt);
  EXPECT_EQ(d, "#7 pwrite64 pid 1234/1235 (dd) ino 12  DURABLE +3.10ms via flush\n");

  WriteTimeline still_dirty = pending_write();
  still_dirty.announced = true;
  EXPECT_EQ(format_live_complete(still_dirty, live, std::nullopt),
            "#7 pwrite64 pid 1234/1235 (dd) ino 12  DIRTY 1/1 pages pending at the end of the "
            "trace\n");
}

TEST(TextLive, ItemNotAnnouncedIsPrintedWholeWithItsId) {
  WriteTimeline write = completed_write();
  write.announced = false;
  const std::string text = format_live_complete(write, SinkOptions{}, std::nullopt);
  EXPECT_TRUE(text.starts_with("#7 pwrite64")) << text;
  EXPECT_GT(lines_of(text).size(), 1u);
  EXPECT_TRUE(contains(text, "DURABLE +3.10ms via flush")) << text;
}

TEST(TextLive, SinkPrintsTheEarlyBlockThenTheUpdateLine) {
  std::ostringstream out;
  SinkOptions options;
  options.live = true;
  auto sink = make_sink(OutputFormat::Text, out, options);
  sink->progress(ItemProgress::Returned, pending_write());
  const std::string early = out.str();
  EXPECT_TRUE(early.starts_with("#7 pwrite64")) << early;
  sink->timeline(completed_write());
  const std::vector<std::string> lines = lines_of(out.str());
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines.back(), "#7 pwrite64 pid 1234/1235 (dd) ino 12  DURABLE +3.10ms via flush");
}

TEST(TextLive, SinkOfCompleteItemsIgnoresSnapshots) {
  std::ostringstream out;
  auto sink = make_sink(OutputFormat::Text, out, SinkOptions{});
  sink->progress(ItemProgress::Returned, pending_write());
  EXPECT_EQ(out.str(), "");
  sink->timeline(completed_write());
  // No id outside live output: the block (after the one-time legend) starts with the call.
  EXPECT_NE(out.str().find("\npwrite64 pid"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("#7"), std::string::npos) << out.str();
}

TEST(TextLive, ClockColumnHeadsTheFirstLineAndIndentsTheRest) {
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  const std::string block = with_clock_column("head\n  body\n", kStart + 14'200, kOffsets);
  EXPECT_EQ(block, "15:17:14.000014 head\n                  body\n");
  EXPECT_EQ(with_clock_column("head\n", kStart, std::nullopt), "head\n");

  std::ostringstream out;
  SinkOptions options;
  options.live = true;
  options.timestamps = true;
  options.clock = kOffsets;
  auto sink = make_sink(OutputFormat::Text, out, options);
  sink->timeline(completed_write());  // the update line: at its durable time
  EXPECT_TRUE(out.str().starts_with("15:17:14.003100 #7 ")) << out.str();
  ::unsetenv("TZ");
  ::tzset();
}

// ---- JSON ----

TEST(JsonLive, DefaultStreamHasIdAndTimeAndNoEventKeys) {
  std::ostringstream out;
  SinkOptions options;
  options.clock = kOffsets;
  auto sink = make_sink(OutputFormat::Json, out, options);
  sink->progress(ItemProgress::Returned, pending_write());
  EXPECT_EQ(out.str(), "");
  sink->timeline(completed_write());
  const json object = json::parse(out.str());
  EXPECT_EQ(object["id"], 7);
  EXPECT_EQ(object["time"], "2026-12-01T15:17:14.000014Z");  // the call's return
  EXPECT_FALSE(object.contains("event"));
  EXPECT_FALSE(object.contains("final"));
}

TEST(JsonLive, TimeIsNullWithoutTheClockOffsets) {
  std::ostringstream out;
  JsonSink sink(out);
  sink.timeline(completed_write());
  const json object = json::parse(out.str());
  ASSERT_TRUE(object.contains("time"));
  EXPECT_TRUE(object["time"].is_null());
}

TEST(JsonLive, StreamHasReturnedWrittenAndFinalEventsOfOneId) {
  std::ostringstream out;
  JsonSink sink(out, /*live=*/true, kOffsets);
  sink.progress(ItemProgress::Returned, pending_write());
  WriteTimeline written = pending_write();
  written.state = WriteState::Written;
  written.written_ns = kStart + 2'800'000;
  sink.progress(ItemProgress::Written, written);
  sink.timeline(completed_write());
  SyncTimeline sync = sync_timeline(
      syscall_event({.syscall = Syscall::Fsync, .start_ns = kStart, .end_ns = kStart + 5'000}),
      {1000, 1000, 1000, 1000, 1000});
  sync.id = 8;
  sink.timeline(sync);
  const std::vector<std::string> lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 4u);
  std::vector<json> objects;
  for (const auto& line : lines) objects.push_back(json::parse(line));
  EXPECT_EQ(objects[0]["event"], "returned");
  EXPECT_EQ(objects[0]["final"], false);
  EXPECT_EQ(objects[0]["state"], "dirty");
  EXPECT_EQ(objects[1]["event"], "written");
  EXPECT_EQ(objects[1]["final"], false);
  EXPECT_EQ(objects[2]["event"], "durable");
  EXPECT_EQ(objects[2]["final"], true);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(objects[i]["id"], 7);
    EXPECT_EQ(objects[i]["time"], "2026-12-01T15:17:14.000014Z");
  }
  EXPECT_EQ(objects[3]["type"], "fsync");
  EXPECT_EQ(objects[3]["event"], "returned");
  EXPECT_EQ(objects[3]["final"], true);
  EXPECT_EQ(objects[3]["id"], 8);
}

// ---- the trace file ----

TEST(TraceFileClock, HeaderKeepsTheOffsetsAndOlderFilesHaveNone) {
  const std::string path = ::testing::TempDir() + "/clock.wpt";
  TraceFileHeader header;
  header.record_version = 1;
  header.clock_offsets = kOffsets;
  { TraceFileWriter writer(path, header); }
  TraceFileReader reader = TraceFileReader::open(path);
  ASSERT_EQ(reader.error(), "");
  ASSERT_TRUE(reader.header().clock_offsets);
  EXPECT_EQ(*reader.header().clock_offsets, kOffsets);

  header.clock_offsets.reset();
  { TraceFileWriter writer(path, header); }
  EXPECT_FALSE(TraceFileReader::open(path).header().clock_offsets);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace wp
