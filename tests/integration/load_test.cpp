// SPDX-License-Identifier: Apache-2.0
// writepath load / demo: the workspace rules every scenario shares, and write-fsync's physics.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "harness.h"

namespace {

using namespace wp::testing;
namespace fs = std::filesystem;
using nlohmann::json;

// The loop devices attached right now (scratch filesystems must not leak them).
std::string loop_devices() {
  FILE* p = ::popen("losetup -a 2>/dev/null | sort", "r");
  std::string out;
  char buf[256];
  while (p && std::fgets(buf, sizeof(buf), p)) out += buf;
  if (p) ::pclose(p);
  return out;
}

// The scratch directories of `writepath load` runs (each mounts its filesystem at DIR/mnt).
std::set<fs::path> load_scratch_dirs() {
  std::set<fs::path> dirs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::temp_directory_path(), ec))
    if (entry.path().filename().string().rfind("writepath-load.", 0) == 0)
      dirs.insert(entry.path());
  return dirs;
}

// The loop devices backed by the image of a `writepath load` run other than `earlier` ones
// (losetup -a lines): a run's teardown detaches its own. Other tests' loop devices come and go
// beside these tests, so the whole list is not compared.
std::string loops_of_new_runs(const std::set<fs::path>& earlier) {
  std::istringstream lines(loop_devices());
  std::string found;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("/writepath-load.") == std::string::npos) continue;
    const bool earlier_run = std::any_of(earlier.begin(), earlier.end(), [&](const fs::path& dir) {
      return line.find(dir.string() + "/") != std::string::npos;
    });
    if (!earlier_run) found += line + "\n";
  }
  return found;
}

// A write-fsync run that was not there before (`others`) has begun writing its file.
bool new_run_is_writing(const std::set<fs::path>& others) {
  for (const fs::path& dir : load_scratch_dirs()) {
    if (others.count(dir)) continue;
    std::error_code ec;
    const auto size = fs::file_size(dir / "mnt" / "write-fsync.dat", ec);
    if (!ec && size > 0) return true;
  }
  return false;
}

TEST(LoadWriteFsync, FsyncLeavesNoDirtyPagesOfItsOwn) {
  WP_REQUIRE_ROOT();
  const std::set<fs::path> earlier_runs = load_scratch_dirs();
  const json f = load_figures("write-fsync", {"--size", "32M", "--block", "1M"});
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(u64(f["bytes"]), 32u << 20);
  EXPECT_GT(u64(f["write_ns"]), 0u);
  EXPECT_GT(u64(f["fsync_ns"]), 0u);
  // The file's own pages (cachestat, 6.5+; meminfo's Dirty counts every process's, which other
  // I/O on the machine moves by more than 32 MiB): the writes left some of them dirty or under
  // writeback, and after fsync none are.
  if (!f.contains("file_pending_after_write_bytes")) GTEST_SKIP() << "no cachestat(2) here";
  EXPECT_GT(u64(f["file_pending_after_write_bytes"]), 0u) << f.dump();
  EXPECT_EQ(u64(f["file_pending_after_fsync_bytes"]), 0u) << f.dump();
  EXPECT_EQ(loops_of_new_runs(earlier_runs), "") << "the scratch filesystem was not torn down";
}

TEST(LoadWorkspace, DirMustBeNewOrEmptyAndOnlyCreatedFilesAreRemoved) {
  fs::path dir = fs::temp_directory_path() / ("wp_load_dir_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  { std::ofstream(dir / "precious") << "keep me"; }
  auto busy = run({writepath(), "load", "write-fsync", "--dir", dir.string(), "--size", "1M"});
  EXPECT_EQ(busy.exit_code, 2);
  EXPECT_EQ(line_count(busy.err), 1) << busy.err;
  EXPECT_NE(busy.err.find("not empty"), std::string::npos) << busy.err;
  EXPECT_EQ(slurp(dir / "precious"), "keep me");

  fs::path fresh = dir / "fresh";
  auto ok = run({writepath(), "load", "write-fsync", "--dir", fresh.string(), "--size", "1M",
                 "--block", "64k", "--json"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_FALSE(fs::exists(fresh)) << "the run's own directory and files are removed";

  auto kept = run({writepath(), "load", "write-fsync", "--dir", fresh.string(), "--size", "1M",
                   "--keep", "--json"});
  EXPECT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_TRUE(fs::exists(fresh / "write-fsync.dat"));
  fs::remove_all(dir);
}

TEST(LoadWorkspace, NonsenseValuesAreRejectedBeforeAnythingIsWritten) {
  fs::path dir = fs::temp_directory_path() / ("wp_load_bad_" + std::to_string(::getpid()));
  for (auto args : std::vector<std::vector<std::string>>{
           {"--size", "banana"},
           {"--size", "0"},
           {"--block", "-4k"},
           {"--size", "1M", "--block", "2M"},
           {"--fs", "ntfs"},
           {"--fs-size", "1k"},
       }) {
    std::vector<std::string> argv{writepath(), "load", "write-fsync", "--dir", dir.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.err;
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_FALSE(fs::exists(dir)) << args[0] << " " << args[1];
  }
  auto unknown = run({writepath(), "load", "no-such-scenario"});
  EXPECT_EQ(unknown.exit_code, 2);
}

TEST(LoadWorkspace, TooLittleFreeSpaceIsRefused) {
  WP_REQUIRE_ROOT();
  auto r = run({writepath(), "load", "write-fsync", "--size", "512M", "--fs-size", "64M"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("free"), std::string::npos) << r.err;
}

TEST(LoadWorkspace, InterruptTearsTheScratchFilesystemDown) {
  WP_REQUIRE_ROOT();
  const std::set<fs::path> earlier_runs = load_scratch_dirs();
  // 8 GiB in 4 KiB writes: far longer than the test waits.
  Background load({writepath(), "load", "write-fsync", "--size", "8G", "--block", "4k"});
  ASSERT_TRUE(
      wait_until([&] { return new_run_is_writing(earlier_runs); }, std::chrono::seconds(60)))
      << "the scenario never started writing: " << load.err();
  EXPECT_EQ(load.stop(SIGINT), 130) << load.err();
  EXPECT_NE(load.err().find("interrupted"), std::string::npos) << load.err();
  EXPECT_EQ(loops_of_new_runs(earlier_runs), "");
}

TEST(DemoWriteFsync, ExplainsTheFsyncFromTheTrace) {
  WP_REQUIRE_ROOT();
  fs::path trace = fs::temp_directory_path() / ("wp_demo_" + std::to_string(::getpid()) + ".jsonl");
  auto r = run({writepath(), "demo", "write-fsync", "--size", "16M", "-o", trace.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("write 16 MiB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("what the tracer saw:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fsync "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("journal"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("16 of 16 writes durable"), std::string::npos) << r.out;
  // The full trace went to -o: the scenario's writes, all durable via the fsync's flush.
  std::size_t durable = 0;
  for (const auto& item : json_lines(slurp(trace)))
    if (item["type"] == "write" && item["comm"] == "writer" && item["state"] == "durable")
      ++durable;
  EXPECT_GE(durable, 16u);
  fs::remove(trace);
}

}  // namespace
