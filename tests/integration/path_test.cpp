// SPDX-License-Identifier: Apache-2.0
// File paths on items: resolved in the kernel once per file, checked against the paths the test
// itself created (and stat() of them) on a scratch ext4 mounted below the root file system.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "decode/decoder.h"
#include "harness.h"
#include "record/trace_file.h"

namespace {

using namespace wp::testing;
namespace fs = std::filesystem;
using nlohmann::json;

// The path records of a recorded trace, per (dev, ino): how many, and the last path each said.
struct PathRecords {
  std::map<std::pair<wp::DevT, std::uint64_t>, int> count;
  std::map<std::pair<wp::DevT, std::uint64_t>, std::string> path;
  int writes = 0;  // syscall records of writes, for the per-file, not per-write, comparison
};

PathRecords path_records(const fs::path& trace) {
  PathRecords out;
  auto reader = wp::TraceFileReader::open(trace.string());
  EXPECT_EQ(reader.error(), "");
  wp::Decoder decoder;
  while (auto frame = reader.next()) {
    if (frame->kind != wp::FrameKind::Record) continue;
    auto event = decoder.decode(frame->payload);
    if (!event) continue;
    if (const auto* p = std::get_if<wp::FilePathEvent>(&*event)) {
      ++out.count[{p->dev, p->ino}];
      out.path[{p->dev, p->ino}] = p->path;
    } else if (const auto* s = std::get_if<wp::SyscallEvent>(&*event)) {
      if (wp::is_write_syscall(s->syscall)) ++out.writes;
    }
  }
  return out;
}

std::uint64_t inode_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

TEST_F(ScratchExt4, ItemsCarryTheFullPathOfTheirFileResolvedOncePerFile) {
  const fs::path dir = root_ / "mnt" / "logs" / "2026" / "app";
  fs::create_directories(dir);
  const fs::path target = dir / "server.log";
  const fs::path live = root_ / "paths.jsonl";
  const fs::path saved = root_ / "paths.wpt";
  auto r =
      run({tool("writepath"), "trace", "--format", "json", "-o", live.string(), "--save",
           saved.string(), "--", tool("wp_workload"), "buffered-fsync", target.string(), "200"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string expected = fs::canonical(target).string();
  const std::uint64_t ino = inode_of(target);
  const auto items = json_lines(slurp(live));
  const auto writes = of_type(items, "write");
  const auto syncs = of_type(items, "fsync");
  ASSERT_EQ(writes.size(), 200u);
  ASSERT_EQ(syncs.size(), 1u);
  for (const auto& w : writes) {
    ASSERT_EQ(u64(w["ino"]), ino) << w.dump();
    ASSERT_EQ(w["path"], expected) << w.dump();
  }
  EXPECT_EQ(syncs[0]["path"], expected) << syncs[0].dump();

  // One path record for the file, not one per write: the kernel remembers it resolved it.
  const PathRecords records = path_records(saved);
  EXPECT_GE(records.writes, 200);
  int for_target = 0;
  for (const auto& [key, n] : records.count)
    if (key.second == ino) {
      for_target += n;
      EXPECT_EQ(records.path.at(key), expected);
    }
  EXPECT_EQ(for_target, 1);

  // The report of the recording names it the same way, text included (in place of dev/ino).
  auto report = run({tool("writepath"), "report", saved.string()});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find(") fd " + std::to_string(u64(writes[0]["fd"])) + " " + expected +
                            " off 0 4 KiB  latency"),
            std::string::npos)
      << report.out.substr(0, 2000);
}

TEST_F(ScratchExt4, WritesToAnUnlinkedFileSayItWasDeleted) {
  const fs::path dir = root_ / "mnt" / "rotated";
  fs::create_directories(dir);
  const fs::path target = dir / "old.log";
  const fs::path live = root_ / "unlinked.jsonl";
  auto r = run({tool("writepath"), "trace", "--format", "json", "-o", live.string(), "--",
                tool("wp_workload"), "unlinked", target.string(), "8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_FALSE(fs::exists(target));
  const std::string expected = (fs::canonical(dir) / "old.log").string() + " (deleted)";
  const auto items = json_lines(slurp(live));
  const auto writes = of_type(items, "write");
  ASSERT_EQ(writes.size(), 8u);
  for (const auto& w : writes) EXPECT_EQ(w["path"], expected) << w.dump();
  const auto syncs = of_type(items, "fsync");
  ASSERT_EQ(syncs.size(), 1u);
  EXPECT_EQ(syncs[0]["path"], expected);
}

// A file renamed over another (PostgreSQL's durable_rename, a .tmp written anew each round)
// is named by its new name from the rename on, however its struct file was recycled: every
// fsync the workload made under a name (its stderr says which inode) is an item of that path.
TEST_F(ScratchExt4, AFileRenamedOverAnotherIsNamedByItsNewName) {
  constexpr int kRounds = 6;
  const fs::path dir = root_ / "mnt" / "renamed";
  fs::create_directories(dir);
  const fs::path target = dir / "checkpoint";
  const fs::path out = root_ / "renamed.jsonl";
  auto r = run({tool("writepath"), "trace", "--format", "json", "-o", out.string(), "--",
                tool("wp_workload"), "rename-over", target.string(), std::to_string(kRounds)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string base = (fs::canonical(dir) / "checkpoint").string();
  // The workload's fsyncs in order, each with the name it made it under.
  std::vector<std::string> names;
  std::istringstream err(r.err);
  for (std::string line; std::getline(err, line);)
    if (line.rfind("wp_workload: ino ", 0) == 0)
      names.push_back(line.find(" tmp ") != std::string::npos ? base + ".tmp" : base);
  ASSERT_EQ(names.size(), 3u * kRounds - 1) << r.err;
  std::vector<std::string> paths;
  for (const auto& s : of_type(json_lines(slurp(out)), "fsync")) paths.push_back(s["path"]);
  EXPECT_EQ(paths, names);
}

// Every item kind with a file names it: stores into a mapping and msync, io_submit's iocbs,
// io_uring's ops. Each item of a workload's file (by the inode stat() gives) must carry the
// path the test gave the workload.
TEST_F(ScratchExt4, EveryItemKindNamesItsFile) {
  const fs::path dir = root_ / "mnt" / "kinds";
  fs::create_directories(dir);
  const std::vector<std::vector<std::string>> workloads = {
      {"mmap-msync", (dir / "mapped").string(), "4", "2"},
      {"aio-batch", (dir / "aio").string(), "4"},
      {"uring-mix", (dir / "uring").string(), "4", "inline"},
  };
  std::map<std::string, int> named;  // syscall -> items named
  for (const auto& args : workloads) {
    const fs::path live = root_ / ("kinds-" + args[0] + ".jsonl");
    std::vector<std::string> argv = {tool("writepath"), "trace", "--format",         "json", "-o",
                                     live.string(),     "--",    tool("wp_workload")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv);
    ASSERT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
    const std::uint64_t ino = inode_of(args[1]);
    const std::string expected = fs::canonical(args[1]).string();
    for (const auto& item : json_lines(slurp(live))) {
      if (item["type"] == "summary" || item["comm"] != "wp_workload" || u64(item["ino"]) != ino)
        continue;
      EXPECT_EQ(item["path"], expected) << item.dump();
      ++named[item["syscall"].get<std::string>()];
    }
  }
  EXPECT_GT(named["mmap"], 0);
  EXPECT_GT(named["msync"], 0);
  EXPECT_GT(named["io_submit"], 0);
  EXPECT_GT(named["io_uring_write"] + named["io_uring_writev"] + named["io_uring_write_fixed"], 0);
}

}  // namespace
