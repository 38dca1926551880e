// SPDX-License-Identifier: Apache-2.0
// Verdicts the oracle (oracle.h) found wrong, each pinned by a real run of the command that
// showed it: dd's own record count and exit status, the sync contract and the page counts.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <cstring>
#include <map>
#include <set>

#include "harness.h"
#include "oracle.h"

namespace wp::testing {
namespace {

// `writepath trace --dev DISK --format json -- CMD…`: the items of `path`, and the summary.
struct Traced {
  oracle::FileItems file;
  json summary;
};
Traced trace_of(const ScratchFs& disk, const std::string& path,
                const std::vector<std::string>& command) {
  std::vector<std::string> argv = {writepath(), "trace", "--dev", disk.disk(),
                                   "--format",  "json",  "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  RunResult res = run(argv);
  EXPECT_EQ(res.exit_code, 0) << res.err;
  std::vector<json> items = json_lines(res.out);
  Traced t;
  t.file = oracle::items_of(items, path);
  if (!items.empty()) t.summary = items.back();
  return t;
}

std::string join(const std::vector<std::string>& lines) {
  std::string s;
  for (std::size_t i = 0; i < lines.size() && i < 10; ++i) s += "\n  " + lines[i];
  return s;
}

// What a broken sync contract needs to be told apart: the summary's counters of inferred,
// aged-out and evicted items, and each request and flush the sync waited for, with its times.
std::string evidence(const Traced& t) {
  std::string s = "\n  summary:";
  for (const char* key : {"events", "missed_completions", "aged_out", "evicted", "incomplete"})
    s += std::string(" ") + key + "=" + t.summary.value(key, json()).dump();
  auto describe = [&](const char* what, const json& r) {
    s += "\n  " + std::string(what) + ": " + r.value("rwbs", "") + " " +
         r.value("sector", json()).dump() + "+" + r.value("bytes", json()).dump() + " issue " +
         r.value("issue_ns", json()).dump() + " complete " + r.value("complete_ns", json()).dump() +
         " durable " + r.value("durable_ns", json()).dump() +
         (r.value("complete_inferred", false) ? " (inferred)" : "");
  };
  for (const json& w : t.file.writes) {
    if (w.value("state", "") == "durable") continue;
    s += "\n  the first write not durable, id " + w.value("id", json()).dump() + ":";
    for (const json& r : w.value("requests", json::array())) describe("its request", r);
    break;
  }
  for (const json& sync : t.file.syncs) {
    for (const char* list : {"requests", "flushes"}) {
      for (const json& r : sync.value(list, json::array())) describe(list, r);
    }
  }
  return s;
}

struct FsCase {
  std::string type, mkfs;
};

class DdConvFsync : public ::testing::TestWithParam<FsCase> {};

// dd bs=4k count=256 conv=fsync: the 1 MiB writeback bio is split (the loop device's limits),
// and the split's front piece must take its pages from its parent's complete extent list
// (StitcherTest.TruncatedSplitPieceTakesItsPagesFromItsParent): all 256 writes durable.
TEST_P(DdConvFsync, EveryWriteIsDurableWhenTheFsyncReturns) {
  WP_REQUIRE_ROOT();
  ScratchFs disk(GetParam().type, GetParam().mkfs);
  ASSERT_TRUE(disk.ready());
  for (const auto& [bs, count] : {std::pair{"4k", 256}, std::pair{"64k", 64}}) {
    const std::string path = disk.file(std::string("dd-") + bs);
    Traced t = trace_of(disk, path,
                        {"dd", "if=/dev/zero", "of=" + path, std::string("bs=") + bs,
                         "count=" + std::to_string(count), "conv=fsync", "status=none"});
    ASSERT_EQ(t.summary.value("lost", -1), 0);
    ASSERT_EQ(t.file.writes.size(), static_cast<std::size_t>(count)) << bs;  // dd's own count
    ASSERT_EQ(t.file.syncs.size(), 1u);
    EXPECT_EQ(t.file.syncs[0]["ret"], 0);
    const auto v = oracle::check_sync_contract(t.file);
    EXPECT_TRUE(v.empty()) << GetParam().type << " bs=" << bs << join(v) << evidence(t);
    const auto p = oracle::check_pages(t.file);
    EXPECT_TRUE(p.empty()) << join(p);
  }
}

INSTANTIATE_TEST_SUITE_P(FileSystems, DdConvFsync,
                         ::testing::Values(FsCase{"ext4", "mkfs.ext4 -q -F"},
                                           FsCase{"xfs", "mkfs.xfs -q -f"},
                                           FsCase{"btrfs", "mkfs.btrfs -q -f"}),
                         [](const auto& info) { return info.param.type; });

// A large folio is dirtied whole, but a write dirtied only the pages its bytes span: an 8 KiB
// overwrite of a file written in 1 MiB blocks (large folios) reports 2, not the folio's 256.
TEST(VerdictRules, LargeFolioWriteDirtiesOnlyThePagesItsBytesSpan) {
  WP_REQUIRE_ROOT();
  ScratchFs disk("ext4", "mkfs.ext4 -q -F");
  ASSERT_TRUE(disk.ready());
  const std::string path = disk.file("big");
  ASSERT_TRUE(sh("dd if=/dev/zero of=" + path + " bs=1M count=4 conv=fsync status=none"));
  for (int seek : {10, 100, 300}) {
    Traced t = trace_of(disk, path,
                        {"dd", "if=/dev/zero", "of=" + path, "bs=8k", "count=1",
                         "seek=" + std::to_string(seek), "conv=notrunc,fsync", "status=none"});
    ASSERT_EQ(t.file.writes.size(), 1u);
    const json& w = t.file.writes[0];
    EXPECT_EQ(w["pages"], 2) << w.dump();
    EXPECT_GE(w["pages_dirtied"].get<int>(), 1) << w.dump();
    EXPECT_LE(w["pages_dirtied"].get<int>(), 2) << w.dump();
    EXPECT_EQ(w["state"], "durable") << w.dump();
  }
}

// A tmpfs (what /dev/shm and many /tmp are) never reaches a disk: dd's writes there are
// memory only, none dirty, and its fsync returns having done no I/O.
TEST(VerdictRules, WritesToTmpfsAreMemoryOnlyAndItsFsyncDoesNoIo) {
  WP_REQUIRE_ROOT();
  std::string dir = (fs::temp_directory_path() / "wp_tmpfs.XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  ASSERT_TRUE(sh("mount -t tmpfs -o size=64m wp_tmpfs " + dir));
  const std::string path = dir + "/shm";
  RunResult res = run({writepath(), "trace", "--format", "json", "--", "dd", "if=/dev/zero",
                       "of=" + path, "bs=4k", "count=32", "conv=fsync", "status=none"});
  sh("umount " + dir);
  fs::remove_all(dir);
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const std::vector<json> items = json_lines(res.out);
  const oracle::FileItems f = oracle::items_of(items, path);
  ASSERT_EQ(f.writes.size(), 32u);  // dd's count
  for (const json& w : f.writes) {
    EXPECT_EQ(w["state"], "memory") << w.dump();
    EXPECT_EQ(w["pages"], 1) << w.dump();
    EXPECT_TRUE(w["requests"].empty()) << w.dump();
  }
  ASSERT_EQ(f.syncs.size(), 1u);
  EXPECT_EQ(f.syncs[0]["ret"], 0);
  EXPECT_TRUE(f.syncs[0]["requests"].empty());
  EXPECT_TRUE(f.syncs[0]["flushes"].empty());
  ASSERT_FALSE(items.empty());
  EXPECT_GE(items.back().value("memory_only", 0), 32);
}

// A file written under a temporary name and renamed (PostgreSQL's xlogtemp.N, rsync's
// .name.XXXXXX) is named by its new path from the rename on, as /proc/PID/fd names it; a new
// file that takes a deleted file's inode number is named by its own path.
TEST(VerdictRules, ItemsAreNamedByThePathTheirFileHadWhenTheCallRan) {
  WP_REQUIRE_ROOT();
  ScratchFs disk("ext4", "mkfs.ext4 -q -F");
  ASSERT_TRUE(disk.ready());
  const std::string dir = disk.mount_point();
  const std::string fd_log = dir + "/../fd.log";  // not on the traced disk
  // Each write is followed by what /proc/self/fd says of its fd at that moment.
  const std::string script =
      "cd " + dir + " && exec 3>xlogtemp.1 && echo one >&3 && readlink /proc/$$/fd/3 >>" + fd_log +
      " && mv xlogtemp.1 segment.1 && echo two >&3 && readlink /proc/$$/fd/3 >>" + fd_log +
      " && exec 3>&- && echo x >old && ino=$(stat -c %i old) && rm old && sync && " +
      "echo y >new && readlink -f new >>" + fd_log + " && stat -c %i new >>" + fd_log +
      " && echo $ino >>" + fd_log;
  RunResult res = run(
      {writepath(), "trace", "--dev", disk.disk(), "--format", "json", "--", "sh", "-c", script});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  std::istringstream truth(slurp(fd_log));
  std::string before_rename, after_rename, new_path, new_ino, old_ino;
  std::getline(truth, before_rename);
  std::getline(truth, after_rename);
  std::getline(truth, new_path);
  std::getline(truth, new_ino);
  std::getline(truth, old_ino);
  ASSERT_EQ(fs::path(after_rename).filename(), "segment.1");
  std::map<std::uint64_t, std::string> by_id;  // items leave when final: order them by call
  for (const json& o : json_lines(res.out))
    if (o["type"] == "write" && o["path"].is_string()) by_id[o["id"]] = o["path"];
  std::vector<std::string> write_paths;
  for (const auto& [id, path] : by_id) write_paths.push_back(path);
  // echo one, echo two, echo x, echo y: in order of their calls.
  ASSERT_EQ(write_paths.size(), 4u) << res.out;
  EXPECT_EQ(write_paths[0], before_rename);
  EXPECT_EQ(write_paths[1], after_rename);
  EXPECT_EQ(write_paths[3], new_path) << "old inode " << old_ino << ", new " << new_ino;
}

// fsyncgate on a thin-provisioned disk: a loop device over a sparse file on a 48 MiB tmpfs runs
// out of space under writeback. The writes whose pages the failed requests carried are lost,
// the fsync that returned ENOSPC (the workload's own log) lists exactly them, the summary counts
// them, and what the disk holds (read back with O_DIRECT, past the page cache) agrees: a lost
// write's block is not its data, a written one's is.
TEST(VerdictRules, WritesLostToAFullThinDiskAreLostAndTheFailedFsyncNamesThem) {
  WP_REQUIRE_ROOT();
  ThinDisk thin;
  ASSERT_TRUE(thin.ready());
  const std::string disk = thin.disk();

  const std::string file = thin.file("data"), log = thin.scratch("truth.log");
  constexpr int kBlocks = 80;
  RunResult res =
      run({writepath(), "trace", "--dev", disk, "--format", "json", "--",
           (build_dir() / "wp_oracle_writer").string(), file, log, "pwrite",
           std::to_string(1 << 20), std::to_string(kBlocks), "1", "end-fsync", "1", "1"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const oracle::Truth truth = oracle::read_truth(log);
  ASSERT_EQ(truth.syncs.size(), 1u);
  ASSERT_EQ(truth.syncs[0].ret, -ENOSPC) << "the disk did not run out of space";
  const std::vector<json> items = json_lines(res.out);
  const oracle::FileItems f = oracle::items_of(items, file);
  const auto calls = oracle::check_calls(truth, f);
  EXPECT_TRUE(calls.empty()) << join(calls);
  ASSERT_EQ(f.writes.size(), static_cast<std::size_t>(kBlocks));

  // What the disk holds, block by block, bypassing the page cache.
  const int fd = ::open(file.c_str(), O_RDONLY | O_DIRECT);
  ASSERT_GE(fd, 0);
  void* buf = nullptr;
  ASSERT_EQ(::posix_memalign(&buf, 4096, 1 << 20), 0);
  std::set<std::uint64_t> lost_ids;
  std::size_t lost = 0, on_disk = 0;
  for (const json& w : f.writes) {
    const std::int64_t off = w["offset"].get<std::int64_t>();
    const ssize_t n = ::pread(fd, buf, 1 << 20, off);
    const bool holds_data = n == (1 << 20) && static_cast<char*>(buf)[0] == 'o' &&
                            std::memcmp(buf, static_cast<char*>(buf) + 1, (1 << 20) - 1) == 0;
    const std::string state = w["state"];
    if (state == "lost") {
      ++lost;
      lost_ids.insert(w["id"].get<std::uint64_t>());
      EXPECT_FALSE(holds_data) << "reported lost, but the disk holds its data: " << w.dump();
      EXPECT_EQ(w["lost_error"], "ENOSPC") << w.dump();
      EXPECT_FALSE(w["requests"].empty()) << w.dump();
    } else {
      // Written to the device; ext4 may still have failed to convert its extent from
      // unwritten once the journal aborted (the kernel log's "potential data loss"): then the
      // disk holds it but the file reads zeros there. The converse must hold.
      if (holds_data) ++on_disk;
      EXPECT_TRUE(state == "written" || state == "durable") << w.dump();
    }
  }
  ::free(buf);
  ::close(fd);
  EXPECT_GT(lost, 0u);
  EXPECT_GT(on_disk, 0u);
  ASSERT_EQ(f.syncs.size(), 1u);
  const json& sync = f.syncs[0];
  EXPECT_EQ(sync["error"], "ENOSPC");
  std::set<std::uint64_t> listed;
  for (const json& id : sync["lost_writes"]) listed.insert(id.get<std::uint64_t>());
  EXPECT_EQ(listed, lost_ids);
  EXPECT_FALSE(sync["loss_unreported"].get<bool>());
  EXPECT_EQ(items.back()["lost_writes"].get<std::size_t>(), lost);
  EXPECT_EQ(items.back()["lost_bytes"].get<std::size_t>(), lost << 20);
}

}  // namespace
}  // namespace wp::testing
