// SPDX-License-Identifier: Apache-2.0
// Live output and wall-clock time on real I/O: a buffered write's line shows while the traced
// command still runs, within a second of the write's return (by the workload's own
// CLOCK_REALTIME, the -T column and when the test read it); JSON `time` against the same
// clock, live, in the event stream and from a recording. Needs root.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <ctime>
#include <fstream>
#include <regex>
#include <string>

#include "harness.h"

namespace {

using namespace wp::testing;

constexpr std::int64_t kSecond = 1'000'000'000;

std::int64_t realtime_now() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * kSecond + ts.tv_nsec;
}

// What the workload wrote once its pwrite returned: its pid and CLOCK_REALTIME.
struct Stamp {
  int pid = 0;
  std::int64_t returned_ns = 0;
};

std::optional<Stamp> read_stamp(const std::string& path) {
  std::ifstream in(path);
  Stamp s;
  if (!(in >> s.pid >> s.returned_ns)) return std::nullopt;
  return s;
}

// "HH:MM:SS.uuuuuu" in local time → ns since the epoch, on the day of `near_ns`.
std::int64_t column_time(const std::string& column, std::int64_t near_ns) {
  std::time_t sec = near_ns / kSecond;
  std::tm tm{};
  ::localtime_r(&sec, &tm);
  int h = 0, m = 0, s = 0, us = 0;
  std::sscanf(column.c_str(), "%d:%d:%d.%d", &h, &m, &s, &us);
  tm.tm_hour = h;
  tm.tm_min = m;
  tm.tm_sec = s;
  return static_cast<std::int64_t>(std::mktime(&tm)) * kSecond + us * 1000ll;
}

// "2026-12-01T15:17:14.123456Z" → ns since the epoch.
std::int64_t rfc3339_time(const std::string& text) {
  std::tm tm{};
  int us = 0;
  std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
              &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &us);
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<std::int64_t>(::timegm(&tm)) * kSecond + us * 1000ll;
}

// The workload's pwrite64 items (its stamp file is written with write(2)).
std::vector<json> pwrites(const std::string& out) {
  std::vector<json> found;
  for (const auto& item : of_type(json_lines(out), "write"))
    if (item["syscall"] == "pwrite64") found.push_back(item);
  return found;
}

class LiveOutput : public ScratchExt4 {};

TEST_F(LiveOutput, BufferedWriteLineArrivesWithinASecondWhileTheCommandRuns) {
  const std::string stamp = file("live.stamp"), fifo = file("live.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Background trace({tool("writepath"), "trace", "-T", "--", tool("wp_workload"), "write-wait",
                    file("live"), stamp, fifo});
  std::optional<Stamp> returned;
  ASSERT_TRUE(wait_until([&] { return (returned = read_stamp(stamp)).has_value(); }))
      << trace.err();
  // The early line: -T column, the item's id, the call, still dirty.
  const std::regex early(R"((\d\d:\d\d:\d\d\.\d{6}) #(\d+) pwrite64 pid )" +
                         std::to_string(returned->pid) + R"(/\d+ .* 4 KiB .*DIRTY 1/1 pages)");
  std::smatch match;
  std::string out;
  const bool seen = wait_until(
      [&] {
        out = trace.out();
        return std::regex_search(out, match, early);
      },
      std::chrono::seconds(10));
  const std::int64_t read_at = realtime_now();
  ASSERT_TRUE(seen) << out << trace.err();
  const std::string column = match[1], id = match[2];
  EXPECT_LT(read_at - returned->returned_ns, kSecond) << "read by the test within 1 s";
  const std::int64_t line_time = column_time(column, returned->returned_ns);
  // The column is the call's return as the kernel stamped it, truncated to microseconds.
  EXPECT_LT(std::llabs(line_time - returned->returned_ns), kSecond) << column;
  EXPECT_LE(line_time, returned->returned_ns + 1000) << "the call returned before the stamp";

  // Release the command: the write ends the trace still dirty (30 s expiry), said on an
  // update line keyed by the same id.
  { std::ofstream(fifo.c_str()) << "go"; }
  EXPECT_EQ(trace.wait(), 0) << trace.err();
  out = trace.out();
  const std::regex update(R"(\d\d:\d\d:\d\d\.\d{6} #)" + id +
                          R"( pwrite64 pid \d+/\d+ .*)"
                          R"((DIRTY|WRITTEN|DURABLE))");
  EXPECT_TRUE(std::regex_search(out, update)) << out;
  ::unlink(fifo.c_str());
}

TEST_F(LiveOutput, JsonTimeIsTheCallsReturnOnTheWallClock) {
  const std::string stamp = file("json.stamp");
  auto r = run({tool("writepath"), "trace", "--format", "json", "--", tool("wp_workload"),
                "write-wait", file("json"), stamp, "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto returned = read_stamp(stamp);
  ASSERT_TRUE(returned);
  const auto writes = pwrites(r.out);
  ASSERT_EQ(writes.size(), 1u) << r.out;
  ASSERT_TRUE(writes[0]["time"].is_string()) << writes[0].dump();
  EXPECT_LT(std::llabs(rfc3339_time(writes[0]["time"]) - returned->returned_ns), kSecond)
      << writes[0]["time"];
  EXPECT_FALSE(writes[0].contains("event")) << "one object per item by default";
}

TEST_F(LiveOutput, JsonLiveStreamHasTheReturnedThenTheFinalObjectOfOneId) {
  const std::string stamp = file("stream.stamp");
  auto r = run({tool("writepath"), "trace", "--format", "json", "--live", "--", tool("wp_workload"),
                "write-wait", file("stream"), stamp, "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto writes = pwrites(r.out);
  ASSERT_EQ(writes.size(), 2u) << r.out;
  EXPECT_EQ(writes[0]["event"], "returned");
  EXPECT_EQ(writes[0]["final"], false);
  EXPECT_EQ(writes[1]["id"], writes[0]["id"]);
  EXPECT_EQ(writes[1]["final"], true);
  EXPECT_EQ(writes[1]["event"], writes[1]["state"]);
}

TEST_F(LiveOutput, RecordingKeepsTheOffsetForReportTimeAndTimestamps) {
  const std::string stamp = file("rec.stamp"), wpt = file("rec.wpt");
  auto r = run({tool("writepath"), "record", "-o", wpt, "--", tool("wp_workload"), "write-wait",
                file("rec"), stamp, "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto returned = read_stamp(stamp);
  ASSERT_TRUE(returned);
  auto report = run({tool("writepath"), "report", wpt, "--format", "json"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const auto writes = pwrites(report.out);
  ASSERT_EQ(writes.size(), 1u) << report.out;
  ASSERT_TRUE(writes[0]["time"].is_string());
  EXPECT_LT(std::llabs(rfc3339_time(writes[0]["time"]) - returned->returned_ns), kSecond);

  auto text = run({tool("writepath"), "report", wpt, "-T"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  std::smatch match;
  const std::regex line(R"((\d\d:\d\d:\d\d\.\d{6}) pwrite64 pid )" + std::to_string(returned->pid) +
                        "/");
  ASSERT_TRUE(std::regex_search(text.out, match, line)) << text.out;
  EXPECT_LT(std::llabs(column_time(match[1], returned->returned_ns) - returned->returned_ns),
            kSecond);
}

}  // namespace
