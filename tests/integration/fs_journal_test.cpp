// SPDX-License-Identifier: Apache-2.0
// xfs and btrfs on loop devices the tests make: a sync's journal phase (xfs's log force,
// btrfs's log tree), flushes attributed through the file system's real disk and matched
// against /proc/diskstats, and btrfs's --file and --dev by the disk and by stat()'s device.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fstream>

#include "harness.h"

namespace wp::testing {
namespace {

constexpr int kWrites = 64;

std::string tool(const std::string& name) {
  return (build_dir() / name).string();
}

// `writepath trace --format json [FILTER…] -- wp_workload fsync-each FILE 64`
RunResult trace_fsync_each(const std::string& path, const std::vector<std::string>& filter = {}) {
  std::vector<std::string> argv = {tool("writepath"), "trace", "--format", "json"};
  argv.insert(argv.end(), filter.begin(), filter.end());
  for (const std::string& arg : {std::string("--"), tool("wp_workload"), std::string("fsync-each"),
                                 path, std::to_string(kWrites)})
    argv.push_back(arg);
  return run(argv);
}

struct JournalFacts {
  int fsyncs = 0;
  int with_journal = 0;
  std::uint64_t flushes = 0;
  int journal_requests = 0;
};

// Checks that every fsync's phases add up and its segments tile it; counts the rest.
JournalFacts journal_facts(const std::vector<json>& fsyncs) {
  JournalFacts f;
  for (const json& s : fsyncs) {
    ++f.fsyncs;
    const json& p = s["phases"];
    const std::uint64_t sum = u64(p["writeback_ns"]) + u64(p["data_io_ns"]) + u64(p["journal_ns"]) +
                              u64(p["flush_ns"]) + u64(p["other_ns"]);
    EXPECT_EQ(sum, u64(s["latency_ns"])) << s.dump();
    std::uint64_t at = u64(s["start_ns"]);
    for (const json& seg : s["segments"]) {
      EXPECT_EQ(u64(seg["start_ns"]), at) << s.dump();
      at = u64(seg["end_ns"]);
    }
    EXPECT_EQ(at, u64(s["end_ns"])) << s.dump();
    if (u64(p["journal_ns"]) > 0) ++f.with_journal;
    // FLUSH requests only (they have no sector): a PREFLUSH/FUA write's flush sequence is
    // listed too, as the write, but the disk counts only the FLUSH requests it issued.
    for (const json& flush : s["flushes"])
      if (flush["sector"].is_null()) ++f.flushes;
    f.journal_requests += static_cast<int>(s["journal_requests"].size());
  }
  return f;
}

// Runs the fsync loop on `fs` under the tracer and checks the journal phase and the flushes
// against the loop device's own count.
void check_journal_and_flushes(const ScratchFs& fs, const std::string& name) {
  const std::uint64_t flushes_before = fs.flushes_completed();
  RunResult r = trace_fsync_each(fs.file(name));
  const std::uint64_t flushes_after = fs.flushes_completed();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto items = json_lines(r.out);
  const auto fsyncs = of_type(items, "fsync");
  const auto writes = of_type(items, "write");
  EXPECT_EQ(static_cast<int>(writes.size()), kWrites);
  ASSERT_EQ(static_cast<int>(fsyncs.size()), kWrites);
  const JournalFacts f = journal_facts(fsyncs);
  // Every fsync wrote the log (a 4 KiB write each time changes the inode's size); a first one
  // may find the file system's own commit writing its log instead.
  EXPECT_GE(f.with_journal, kWrites - 2) << name;
  EXPECT_GE(f.journal_requests, kWrites - 2) << name;
  // The disk's count covers the whole run, the trace's only the fsyncs: a background log or
  // transaction commit outside them may add a flush or two.
  const std::uint64_t disk_flushes = flushes_after - flushes_before;
  std::cerr << name << ": flushes in the trace " << f.flushes << ", on the disk " << disk_flushes
            << "; fsyncs with journal time " << f.with_journal << "/" << f.fsyncs << "\n";
  EXPECT_GE(disk_flushes, static_cast<std::uint64_t>(kWrites));
  EXPECT_LE(f.flushes, disk_flushes);
  EXPECT_GE(f.flushes + 4, disk_flushes);
}

class FsJournal : public ::testing::Test {
 protected:
  void SetUp() override { WP_REQUIRE_ROOT(); }
};

TEST_F(FsJournal, XfsFsyncLogForceIsItsJournalPhaseAndFlushesMatchTheDisk) {
  ScratchFs xfs("xfs", "mkfs.xfs -q -f");
  ASSERT_TRUE(xfs.ready());
  check_journal_and_flushes(xfs, "xfs");
}

TEST_F(FsJournal, BtrfsFsyncLogTreeIsItsJournalPhaseAndFlushesMatchTheDisk) {
  ScratchFs btrfs("btrfs", "mkfs.btrfs -q -f");
  ASSERT_TRUE(btrfs.ready());
  check_journal_and_flushes(btrfs, "btrfs");
}

// btrfs items carry stat()'s device, and the filters select them by the file, by the disk and
// by that device.
TEST_F(FsJournal, BtrfsFileAndDevFiltersSelectTheWrites) {
  ScratchFs btrfs("btrfs", "mkfs.btrfs -q -f");
  ASSERT_TRUE(btrfs.ready());
  const std::string path = btrfs.file("filtered");
  ASSERT_TRUE(sh("touch " + path));  // --file needs it to exist
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  const std::string stat_dev = btrfs.stat_dev();
  ASSERT_NE(stat_dev, btrfs.disk());
  for (const std::vector<std::string>& filter :
       {std::vector<std::string>{"--file", path}, {"--dev", btrfs.disk()}, {"--dev", stat_dev}}) {
    RunResult r = trace_fsync_each(path, filter);
    ASSERT_EQ(r.exit_code, 0) << filter[0] << " " << filter[1] << ": " << r.err;
    const auto items = json_lines(r.out);
    const auto writes = of_type(items, "write");
    EXPECT_EQ(static_cast<int>(writes.size()), kWrites) << filter[0] << " " << filter[1];
    EXPECT_EQ(static_cast<int>(of_type(items, "fsync").size()), kWrites)
        << filter[0] << " " << filter[1];
    for (const json& w : writes) {
      EXPECT_EQ(w["dev"], stat_dev);
      EXPECT_EQ(u64(w["ino"]), st.st_ino);
    }
    // Flushes are attributed through the disk under the anonymous devices.
    std::uint64_t flushes = 0;
    for (const json& s : of_type(items, "fsync")) flushes += s["flushes"].size();
    EXPECT_GE(flushes, static_cast<std::uint64_t>(kWrites)) << filter[0] << " " << filter[1];
  }
}

}  // namespace
}  // namespace wp::testing
