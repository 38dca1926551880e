// SPDX-License-Identifier: Apache-2.0
// The hazard rules on real runs, against what the test set up and what the kernel and the
// workload say, not what the tracer computed: the loop device's queue/write_cache (set here),
// dd's own count of the blocks it wrote and its exit status, and diskstats' count of the cache
// flushes the device completed while dd ran. Sizes and counts are random (the seed is printed).
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using namespace wp::testing;

struct DirectRun {
  std::size_t dd_blocks = 0;         // dd's "N+0 records out"
  std::uint64_t flushes_during = 0;  // flush requests the disk completed while traced
  std::vector<json> writes;          // the trace's write items of dd's file
  json summary;
};

// `dd oflag=direct` (with `extra` flags) of `count` blocks of `bs` to a file of `disk`, whose
// queue/write_cache is `cache` ("write back" or "write through"), under trace --format json.
DirectRun run_direct_dd(ScratchFs& disk, const std::string& cache, std::size_t bs,
                        std::size_t count, const std::vector<std::string>& extra) {
  DirectRun r;
  // Put back as the loop device was found when the disk goes (ScratchFs).
  EXPECT_TRUE(disk.set_queue("write_cache", cache)) << disk.loop_name() << " write_cache";
  const std::string file = disk.file("direct.dat");
  std::vector<std::string> argv = {writepath(),
                                   "trace",
                                   "--format",
                                   "json",
                                   "--",
                                   "dd",
                                   "if=/dev/zero",
                                   "of=" + file,
                                   "bs=" + std::to_string(bs),
                                   "count=" + std::to_string(count)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const std::uint64_t before = disk.flushes_completed();
  const RunResult res = run(argv);
  r.flushes_during = disk.flushes_completed() - before;
  EXPECT_EQ(res.exit_code, 0) << res.err;
  std::smatch m;
  if (std::regex_search(res.err, m, std::regex("([0-9]+)\\+0 records out")))
    r.dd_blocks = std::stoul(m[1]);
  const auto items = json_lines(res.out);
  for (const json& item : of_type(items, "write", "dd"))
    if (item["path"] == file) r.writes.push_back(item);
  if (!items.empty()) r.summary = items.back();
  sh("rm -f " + file);
  return r;
}

class DirectHazard : public SeededTest {
 protected:
  void SetUp() override {
    SeededTest::SetUp();
    if (IsSkipped()) return;
    bs_ = std::size_t{4096} << (rng_() % 5);  // 4 KiB .. 64 KiB
    count_ = 2 + rng_() % 15;
  }
  std::size_t bs_ = 4096, count_ = 4;
};

std::size_t flagged(const std::vector<json>& writes) {
  std::size_t n = 0;
  for (const json& w : writes)
    for (const json& h : w["hazards"]) n += h["rule"] == "direct-not-durable" ? 1 : 0;
  return n;
}

// A write-back device and no sync: every block dd wrote is flagged, when the disk completed no
// cache flush meanwhile (a journal commit's flush would have made them durable).
TEST_F(DirectHazard, DirectWritesNoFlushCoveredAreEachFlagged) {
  ScratchFs disk("ext4", "mkfs.ext4 -q -F");
  ASSERT_TRUE(disk.ready());
  const DirectRun r = run_direct_dd(disk, "write back", bs_, count_, {"oflag=direct"});
  ASSERT_EQ(r.dd_blocks, count_);
  ASSERT_EQ(r.writes.size(), count_);
  if (r.flushes_during != 0) GTEST_SKIP() << "the disk flushed its cache during the run";
  EXPECT_EQ(flagged(r.writes), count_);
  for (const json& w : r.writes) EXPECT_EQ(w["state"], "written") << w;
  EXPECT_EQ(r.summary["hazards"]["direct-not-durable"], count_) << r.summary;
}

// The near misses: the same writes made durable by the workload (fdatasync, O_DSYNC), or a
// device with no volatile cache to lose them from. dd's own exit status says its syncs
// succeeded.
TEST_F(DirectHazard, DurableDirectWritesAndWriteThroughDevicesAreNotFlagged) {
  ScratchFs disk("ext4", "mkfs.ext4 -q -F");
  ASSERT_TRUE(disk.ready());
  struct Case {
    const char* cache;
    std::vector<std::string> flags;
  };
  for (const Case& c :
       {Case{"write back", {"oflag=direct", "conv=fdatasync"}},
        Case{"write back", {"oflag=direct,dsync"}}, Case{"write through", {"oflag=direct"}}}) {
    SCOPED_TRACE(std::string(c.cache) + " " + c.flags.back());
    const DirectRun r = run_direct_dd(disk, c.cache, bs_, count_, c.flags);
    ASSERT_EQ(r.dd_blocks, count_);
    ASSERT_EQ(r.writes.size(), count_);
    EXPECT_EQ(flagged(r.writes), 0u);
    EXPECT_TRUE(r.summary["hazards"].empty()) << r.summary;
  }
}

}  // namespace
