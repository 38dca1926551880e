// SPDX-License-Identifier: Apache-2.0
// writepath demo traces only a scenario's measured part, by the names of its threads: no item
// of mkfs, losetup, the file layout, the result file or the teardown; and dirty-throttle's
// logger stalls for hundreds of ms in balance_dirty_pages, as its explanation says.
#include <unistd.h>

#include <set>

#include "harness.h"

namespace {

using namespace wp::testing;
namespace fs = std::filesystem;
using nlohmann::json;

fs::path trace_path(const std::string& name) {
  return fs::temp_directory_path() / ("wp_it_" + name + "_" + std::to_string(::getpid()) + ".json");
}

// The trace's items (not the summary), from `demo ... -o PATH --format json`.
std::vector<json> items_of(const fs::path& path) {
  std::vector<json> items;
  for (auto& item : json_lines(slurp(path)))
    if (item["type"] != "summary") items.push_back(std::move(item));
  return items;
}

TEST(DemoScope, WalTracesOnlyTheWalWriter) {
  WP_REQUIRE_ROOT();
  const fs::path trace = trace_path("demo_wal");
  RunResult r =
      run({writepath(), "demo", "wal", "--count", "20", "-o", trace.string(), "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<json> items = items_of(trace);
  std::size_t writes = 0, fsyncs = 0;
  std::set<std::uint64_t> pids;
  for (const auto& item : items) {
    // The scenario's only thread; mkfs.ext4, losetup and the load's own set-up thread
    // ("writepath") never appear.
    EXPECT_EQ(item["comm"], "wal-writer") << item.dump();
    pids.insert(u64(item["pid"]));
    writes += item["type"] == "write";
    fsyncs += item["type"] == "fsync";
  }
  // What the scenario did, exactly: 20 records, each written and fsynced.
  EXPECT_EQ(writes, 20u) << r.out;
  EXPECT_EQ(fsyncs, 20u) << r.out;
  EXPECT_EQ(pids.size(), 1u) << "one process: the load, not its mkfs child";
  EXPECT_NE(r.out.find("20 fsyncs traced (the log made 20)"), std::string::npos) << r.out;
  fs::remove(trace);
}

// The loop devices' strict_limit and max_ratio, which dirty-throttle changes for its own.
std::string bdi_knobs() {
  std::string all;
  for (const auto& entry : fs::directory_iterator("/sys/class/bdi"))
    if (entry.path().filename().string().rfind("7:", 0) == 0)
      all += entry.path().filename().string() + " " + slurp(entry.path() / "strict_limit") + " " +
             slurp(entry.path() / "max_ratio");
  return all;
}

TEST(DemoScope, DirtyThrottleTracesItsTwoThreadsAndTheLoggerStallsInDirtyThrottling) {
  WP_REQUIRE_ROOT();
  const fs::path trace = trace_path("demo_throttle");
  const std::string knobs_before = bdi_knobs();
  RunResult r = run({writepath(), "demo", "dirty-throttle", "--duration", "2s", "-o",
                     trace.string(), "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(bdi_knobs(), knobs_before) << "the scratch device's limits not restored";
  std::uint64_t logger_max_ns = 0, logger_max_throttled_ns = 0, logger_writes = 0, flood_writes = 0;
  for (const auto& item : items_of(trace)) {
    // The probe that measured the write-back speed and the sysctl writes are not traced.
    const std::string comm = item["comm"];
    EXPECT_TRUE(comm == "logger" || comm == "flood") << item.dump();
    if (item["type"] != "write") continue;
    if (comm == "logger") {
      ++logger_writes;
      if (u64(item["latency_ns"]) > logger_max_ns) {
        logger_max_ns = u64(item["latency_ns"]);
        logger_max_throttled_ns = u64(item["throttled_ns"]);
      }
    } else {
      ++flood_writes;
    }
  }
  EXPECT_GE(logger_writes, 50u) << r.out;
  // Every append the logger timed is a traced write of the thread "logger".
  const auto appends = r.out.find("logger: ");
  ASSERT_NE(appends, std::string::npos) << r.out;
  EXPECT_EQ(std::stoull(r.out.substr(appends + 8)), logger_writes) << r.out;
  EXPECT_GE(flood_writes, 1u) << r.out;
  // The scenario says what it measured and chose.
  EXPECT_NE(r.out.find("write-back measured at"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("from the measured speed"), std::string::npos) << r.out;
  // The limits dropped below what the flood had dirtied: the logger's slowest append waited
  // hundreds of ms, most of it asleep in balance_dirty_pages (the trace's own pauses).
  EXPECT_GE(logger_max_ns, 100'000'000u) << r.out;
  EXPECT_GE(logger_max_throttled_ns, logger_max_ns / 2) << r.out;
  // And the explanation names the stall and its cause.
  EXPECT_NE(r.out.find("stalled for 1.00ms or more"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("no stall"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("went asleep in dirty throttling (balance_dirty_pages) of the logger"),
            std::string::npos)
      << r.out;
  fs::remove(trace);
}

}  // namespace
