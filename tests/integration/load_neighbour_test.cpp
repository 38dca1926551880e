// SPDX-License-Identifier: Apache-2.0
// writepath load noisy-neighbour at small sizes: its figures against truths of their own (what
// was asked, each writer child's /proc/self/io, the cgroup directories left behind), and the
// cleanup of its cgroups on Ctrl-C. Needs root (scratch filesystem, cgroups).
#include <signal.h>
#include <unistd.h>

#include "harness.h"

namespace {

using namespace wp::testing;
namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::uint64_t kBulkBytes = 256ull << 20;
constexpr std::uint64_t kCount = 40;

// Whether `dir`, a cgroup directory this test expects gone, is still there.
bool cgroup_left(const json& writer) {
  const std::string dir = writer.value("cgroup_dir", "");
  return !dir.empty() && fs::exists(dir);
}

// The writer's /proc/self/io write_bytes is within 10% of `expected` bytes: buffered writes
// are counted as their pages are dirtied, once each.
void expect_io_near(const json& writer, std::uint64_t expected) {
  ASSERT_TRUE(writer["io_write_bytes"].is_number()) << "no /proc/PID/io: " << writer.dump();
  const double io = static_cast<double>(u64(writer["io_write_bytes"]));
  EXPECT_GE(io, 0.9 * static_cast<double>(expected)) << writer.dump();
  EXPECT_LE(io, 1.1 * static_cast<double>(expected)) << writer.dump();
}

TEST(LoadNoisyNeighbour, FiguresAgreeWithWhatWasAskedAndTheWritersOwnCounts) {
  WP_REQUIRE_ROOT();
  const json f =
      load_figures("noisy-neighbour", {"--bulk-size", "256M", "--count", std::to_string(kCount)});
  ASSERT_FALSE(f.empty());
  const json& wal_alone = f["wal_alone"];
  const json& bulk_alone = f["bulk_alone"];
  const json& wal = f["together"]["wal"];
  const json& bulk = f["together"]["bulk"];

  // One fdatasync a record, in each WAL phase.
  EXPECT_EQ(u64(wal_alone["fdatasync_count"]), kCount) << f.dump();
  EXPECT_EQ(u64(wal["fdatasync_count"]), kCount) << f.dump();
  // The bulk wrote what it was asked, and its own /proc/self/io says it dirtied that much.
  EXPECT_EQ(u64(bulk_alone["bytes"]), kBulkBytes);
  EXPECT_EQ(u64(bulk["bytes"]), kBulkBytes);
  expect_io_near(bulk_alone, kBulkBytes);
  expect_io_near(bulk, kBulkBytes);
  expect_io_near(wal, kCount * 4096);
  EXPECT_GT(u64(bulk["sync_ns"]), 0u);

  // Two children with their own names and pids, neither the load itself.
  EXPECT_EQ(wal["comm"], "wal-writer");
  EXPECT_EQ(bulk["comm"], "bulk-writer");
  EXPECT_NE(u64(wal["pid"]), u64(bulk["pid"]));
  EXPECT_NE(u64(wal_alone["pid"]), u64(wal["pid"]));

  // The WAL started as the bulk's fsync began: at least its first fdatasync met it, and waiting
  // behind 256 MiB of someone else's write-back is no quicker than the WAL's usual fdatasync.
  // Only that is asserted on a shared machine: the median moves only where the bulk's sync
  // outlasts the WAL's run, and noise beside the alone phase can move it more.
  const json& together = f["together"];
  EXPECT_GE(u64(together["fdatasyncs_beside_bulk"]), 1u) << f.dump();
  EXPECT_GE(u64(together["beside_bulk_max_ns"]), u64(wal_alone["fdatasync_p50_ns"])) << f.dump();
  EXPECT_GE(u64(wal["fdatasync_max_ns"]), u64(together["beside_bulk_max_ns"])) << f.dump();

  // Root on a host with cgroup2: each writer was in its own cgroup, as it says itself, and the
  // directories are gone after the run.
  if (!cgroup2_mount().empty()) {
    EXPECT_EQ(f["in_cgroups"], true) << f.dump();
    for (const json* writer : {&wal_alone, &bulk_alone, &wal, &bulk}) {
      const std::string dir = writer->value("cgroup_dir", "");
      ASSERT_FALSE(dir.empty()) << writer->dump();
      EXPECT_TRUE(
          (*writer)["cgroup"].get<std::string>().ends_with(fs::path(dir).filename().string()))
          << writer->dump();
      EXPECT_FALSE(cgroup_left(*writer)) << dir;
    }
    EXPECT_NE(wal["cgroup_dir"], bulk["cgroup_dir"]);
  } else {
    EXPECT_EQ(f["in_cgroups"], false);
    EXPECT_NE(f["cgroups_skipped"], "");
  }
}

TEST(LoadNoisyNeighbour, InterruptKillsTheWritersAndRemovesTheCgroups) {
  WP_REQUIRE_ROOT();
  const std::string mount = cgroup2_mount();
  if (mount.empty()) GTEST_SKIP() << "no cgroup2 mounted";
  // A WAL phase far longer than the test waits.
  Background load(
      {writepath(), "load", "noisy-neighbour", "--count", "1000000", "--bulk-size", "16M"});
  const fs::path wal_cgroup = fs::path(mount) / ("writepath-nn-wal-" + std::to_string(load.pid()));
  const fs::path bulk_cgroup =
      fs::path(mount) / ("writepath-nn-bulk-" + std::to_string(load.pid()));
  // Running: the WAL writer is in its cgroup.
  ASSERT_TRUE(wait_until(
      [&] {
        std::error_code ec;
        return fs::exists(wal_cgroup / "cgroup.procs", ec) &&
               slurp(wal_cgroup / "cgroup.procs").find_first_of("0123456789") != std::string::npos;
      },
      std::chrono::seconds(60)))
      << "the WAL writer never joined " << wal_cgroup << ": " << load.err();
  const pid_t writer = std::stoi(slurp(wal_cgroup / "cgroup.procs"));
  EXPECT_EQ(load.stop(SIGINT), 130) << load.err();
  EXPECT_FALSE(fs::exists(wal_cgroup)) << wal_cgroup;
  EXPECT_FALSE(fs::exists(bulk_cgroup)) << bulk_cgroup;
  EXPECT_NE(::kill(writer, 0), 0) << "the WAL writer " << writer << " outlived the load";
}

TEST(LoadNoisyNeighbour, BulkSizeBelowOneWriteIsRejected) {
  auto r = run({writepath(), "load", "noisy-neighbour", "--bulk-size", "4k"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--bulk-size"), std::string::npos) << r.err;
}

}  // namespace
