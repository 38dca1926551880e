// SPDX-License-Identifier: Apache-2.0
// Data a file system keeps in its metadata: btrfs's inline extents (files up to max_inline
// bytes, 2048 by default) and ext4's inline_data. No data request carries them; the
// transaction holding them does. Each test draws file sizes on both sides of the limit, runs
// the writer and its sync under the tracer, and holds every write to the sync's own return
// and to filefrag's word on which files are inline (FIEMAP's FIEMAP_EXTENT_DATA_INLINE).
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "harness.h"
#include "oracle.h"

namespace wp::testing {
namespace {

// Whether `filefrag -v PATH` (e2fsprogs, FIEMAP) lists the file's one extent as inline.
bool filefrag_inline(const std::string& path) {
  const RunResult r = run({"filefrag", "-v", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out.find("inline") != std::string::npos;
}

struct InlineCase {
  std::string type, mkfs;
  std::uint64_t limit;  // the largest file the file system keeps inline here
};

void PrintTo(const InlineCase& c, std::ostream* os) {
  *os << c.type << " (inline up to " << c.limit << " B)";
}

class InlineData : public SeededTest, public ::testing::WithParamInterface<InlineCase> {};

// Files of drawn sizes, each written by one write(2) of `head -c`, then one syncfs (`sync -f`)
// that returns 0: every write of every file is durable by the time it returns; the writes of
// files filefrag shows inline say so (stored inline in the file system's metadata, by the
// transaction the sync committed) and are made durable by that commit's own FUA write, with
// no data request; the others are not inline.
TEST_P(InlineData, EveryWriteIsDurableWhenTheSyncReturnsInlineOrNot) {
  const InlineCase& c = GetParam();
  ScratchFs disk(c.type, c.mkfs);
  ASSERT_TRUE(disk.ready());
  std::vector<std::uint64_t> sizes;
  for (int i = 0; i < 12; ++i) {
    sizes.push_back(std::uniform_int_distribution<std::uint64_t>(1, c.limit)(rng_));
    sizes.push_back(std::uniform_int_distribution<std::uint64_t>(c.limit + 1, 12288)(rng_));
  }
  std::string script;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    script += "head -c " + std::to_string(sizes[i]) + " /dev/urandom > " +
              disk.file("f" + std::to_string(i)) + " && ";
  script += "sync -f " + disk.mount_point();
  const RunResult r = run(
      {writepath(), "trace", "--dev", disk.disk(), "--format", "json", "--", "sh", "-c", script});
  ASSERT_EQ(r.exit_code, 0) << r.err;  // the sync (and every write) succeeded
  const std::vector<json> items = json_lines(r.out);
  ASSERT_FALSE(items.empty());
  ASSERT_EQ(items.back().value("lost", -1), 0);
  std::int64_t sync_end = -1;
  for (const json& s : items)
    if (s["type"] == "fsync" && s["syscall"] == "syncfs") {
      ASSERT_EQ(s["ret"], 0) << s.dump();
      sync_end = oracle::i64(s["end_ns"]);
    }
  ASSERT_GE(sync_end, 0) << "no syncfs item";

  int inline_files = 0, other_files = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::string path = disk.file("f" + std::to_string(i));
    const bool kept_inline = filefrag_inline(path);
    (kept_inline ? inline_files : other_files) += 1;
    const oracle::FileItems f = oracle::items_of(items, path);
    ASSERT_FALSE(f.writes.empty()) << path;
    std::uint64_t bytes = 0;
    for (const json& w : f.writes) {
      const std::string what = path + " (" + std::to_string(sizes[i]) + " B): " + w.dump();
      bytes += u64(w["bytes"]);
      EXPECT_EQ(w["state"], "durable") << what;
      if (w["state"] != "durable") continue;
      EXPECT_LE(oracle::i64(w["durable_ns"]), sync_end) << what;
      EXPECT_EQ(w["inline"].is_object(), kept_inline) << what;
      if (!kept_inline) continue;
      EXPECT_EQ(w["inline"]["fs"], c.type) << what;
      EXPECT_TRUE(w["inline"]["committed_ns"].is_number()) << what;
      for (const json& rq : w["requests"]) EXPECT_TRUE(rq["fua"].get<bool>()) << what;
    }
    EXPECT_EQ(bytes, sizes[i]) << path;  // the writes add up to the file head wrote
  }
  // Both sides of the limit were exercised, as filefrag saw them.
  EXPECT_GT(inline_files, 0);
  EXPECT_GT(other_files, 0);
}

// The reproduction: one 1000-byte write and an fsync (dd conv=fsync). The write is
// durable when the fsync returns: on btrfs by the log sync's superblock, on ext4 by the jbd2
// commit the fsync waited for.
TEST_P(InlineData, OneSmallWriteIsDurableWhenItsFsyncReturns) {
  const InlineCase& c = GetParam();
  ScratchFs disk(c.type, c.mkfs);
  ASSERT_TRUE(disk.ready());
  const std::string path = disk.file("small");
  const std::uint64_t bytes = std::min<std::uint64_t>(c.limit, 1000);
  const RunResult r = run({writepath(), "trace", "--dev", disk.disk(), "--format", "json", "--",
                           "dd", "if=/dev/zero", "of=" + path, "bs=" + std::to_string(bytes),
                           "count=1", "conv=fsync", "status=none"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(filefrag_inline(path));
  const oracle::FileItems f = oracle::items_of(json_lines(r.out), path);
  ASSERT_EQ(f.writes.size(), 1u);
  ASSERT_EQ(f.syncs.size(), 1u);
  EXPECT_EQ(f.syncs[0]["ret"], 0);
  const json& w = f.writes[0];
  EXPECT_EQ(w["state"], "durable") << w.dump();
  EXPECT_TRUE(w["inline"].is_object()) << w.dump();
  EXPECT_TRUE(oracle::check_sync_contract(f).empty()) << w.dump();
}

INSTANTIATE_TEST_SUITE_P(
    FileSystems, InlineData,
    ::testing::Values(InlineCase{"btrfs", "mkfs.btrfs -q -f", 2048},
                      // 256-byte inodes: 60 bytes in i_block, the rest of the in-inode xattr
                      // space (system.data) holds more; 60 is inline on every inode size.
                      InlineCase{"ext4", "mkfs.ext4 -q -F -O inline_data", 60}),
    [](const auto& info) { return info.param.type; });

}  // namespace
}  // namespace wp::testing
