// SPDX-License-Identifier: Apache-2.0
// writepath load / demo: mmap-load, odirect, dirty-throttle and kv-tier at small sizes, each
// checked against the physics the chapter describes. Needs root (scratch filesystems, sysctls).
#include <unistd.h>

#include <map>

#include "harness.h"

namespace {

using namespace wp::testing;
namespace fs = std::filesystem;
using nlohmann::json;

std::string read_proc_sys(const std::string& name) {
  std::string value = slurp("/proc/sys/" + name);
  return value.substr(0, value.find('\n'));
}

std::map<std::string, std::string> dirty_knobs() {
  std::map<std::string, std::string> values;
  for (const char* knob : {"vm/dirty_bytes", "vm/dirty_ratio", "vm/dirty_background_bytes",
                           "vm/dirty_background_ratio"})
    values[knob] = read_proc_sys(knob);
  return values;
}

// Limits low enough that the flood is throttled however fast the disk drains it: the kernel
// lets a writer run free until dirty pages pass the midpoint of background and limit (3 MiB),
// and a fast device kept a 256 MiB flood below 16 MiB's midpoint.
const std::vector<std::string> kSmallThrottle = {"--flood",       "256M", "--duration",   "2s",
                                                 "--dirty-limit", "4M",   "--background", "2M"};

TEST(LoadMmap, LazyReadsTheTensorEagerReadsTheFile) {
  WP_REQUIRE_ROOT();
  // 32 tensors of 1 MiB: a file well beyond any device readahead window.
  const json f = load_figures("mmap-load", {"--tensors", "32", "--tensor-size", "1M"});
  ASSERT_FALSE(f.empty());
  const std::uint64_t file = u64(f["file_bytes"]);
  EXPECT_GT(file, 32u << 20);
  EXPECT_EQ(f["views_agree"], true);
  const std::uint64_t lazy = u64(f["lazy"]["read_bytes"]);
  const std::uint64_t eager = u64(f["eager"]["read_bytes"]);
  EXPECT_GE(eager, file) << f.dump();
  EXPECT_GE(u64(f["prefetch"]["read_bytes"]), file) << f.dump();
  EXPECT_GE(lazy, 1u << 20) << "lazy read the tensor from storage: " << f.dump();
  // How far below the file's size lazy stays depends on the device's readahead window:
  // bench/run.sh scenarios reports eager / lazy.
  // The tensor's pages are in the process, the other 31 MiB are not.
  EXPECT_GE(f["lazy"]["rss_growth_bytes"].get<std::int64_t>(), 1 << 20) << f.dump();
  EXPECT_LT(f["lazy"]["rss_growth_bytes"].get<std::int64_t>(), 3 << 20) << f.dump();
  EXPECT_GE(f["eager"]["rss_growth_bytes"].get<std::int64_t>(), 32 << 20) << f.dump();
  EXPECT_GE(u64(f["lazy"]["major_faults"]), 1u) << f.dump();
}

TEST(LoadMmap, OddTensorSizeIsRejected) {
  auto r = run({writepath(), "load", "mmap-load", "--tensor-size", "4097B"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("even"), std::string::npos) << r.err;
}

TEST(LoadOdirect, UnalignedFailsAlignedWritesAndNothingIsCached) {
  WP_REQUIRE_ROOT();
  const json f = load_figures("odirect", {});
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f["unaligned"]["error"], "EINVAL") << f.dump();
  EXPECT_TRUE(f["unaligned"]["written_bytes"].is_null());
  EXPECT_TRUE(f["aligned"]["error"].is_null()) << f.dump();
  EXPECT_EQ(u64(f["aligned"]["written_bytes"]), 4096u);
  EXPECT_EQ(u64(f["resident_pages"]), 0u) << f.dump();
  EXPECT_EQ(u64(f["file_pages"]), 1u);
}

TEST(LoadOdirect, UnalignedSizeIsRejected) {
  auto r = run({writepath(), "load", "odirect", "--size", "6000B"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST(LoadDirtyThrottle, LoggerStallsAndTheSysctlsComeBack) {
  WP_REQUIRE_ROOT();
  const auto before = dirty_knobs();
  const json f = load_figures("dirty-throttle", kSmallThrottle);
  EXPECT_EQ(dirty_knobs(), before) << "vm.dirty_* not restored";
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f["sysctl_restored"], true) << f.dump();
  EXPECT_GE(u64(f["appends"]), 50u) << f.dump();
  // How much the logger's tail stalls behind its median depends on the disk: bench/run.sh
  // scenarios reports p99 / p50.
  EXPECT_GE(u64(f["log_p99_ns"]), u64(f["log_p50_ns"])) << f.dump();
  EXPECT_GE(u64(f["log_max_ns"]), u64(f["log_p99_ns"]));
  EXPECT_GT(u64(f["flood_bytes"]), 0u);
  EXPECT_GT(f["flood_mib_s"].get<double>(), 0.0);
}

TEST(LoadDirtyThrottle, InterruptedRunRestoresTheSysctls) {
  WP_REQUIRE_ROOT();
  const auto before = dirty_knobs();
  Background load({writepath(), "load", "dirty-throttle", "--duration", "30s", "--json"});
  // Until the run has lowered the limit (mkfs and mount come first), then Ctrl-C.
  ASSERT_TRUE(wait_until([&] {
    return read_proc_sys("vm/dirty_bytes") != before.at("vm/dirty_bytes");
  })) << "the run never set vm.dirty_bytes: "
      << load.err();
  EXPECT_EQ(load.stop(SIGINT), 130) << load.err();
  EXPECT_EQ(dirty_knobs(), before) << "vm.dirty_* not restored after Ctrl-C";
}

TEST(LoadDirtyThrottle, BackgroundNotBelowLimitIsRejected) {
  auto r =
      run({writepath(), "load", "dirty-throttle", "--dirty-limit", "16M", "--background", "16M"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST(LoadDirtyThrottle, DemoSeesBalanceDirtyPagesPauses) {
  WP_REQUIRE_ROOT();
  const auto before = dirty_knobs();
  const fs::path trace =
      fs::temp_directory_path() / ("wp_it_throttle_" + std::to_string(::getpid()) + ".json");
  std::vector<std::string> argv = {writepath(), "demo", "dirty-throttle", "-o", trace.string(),
                                   "--format",  "json"};
  argv.insert(argv.end(), kSmallThrottle.begin(), kSmallThrottle.end());
  auto r = run(argv);
  EXPECT_EQ(dirty_knobs(), before);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The explanation: the flood writer's throttle total is not zero.
  const auto flood = r.out.find("flood writer:");
  ASSERT_NE(flood, std::string::npos) << r.out;
  const std::string flood_line = r.out.substr(flood, r.out.find('\n', flood) - flood);
  EXPECT_EQ(flood_line.find("throttled 0ns"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("logger:"), std::string::npos) << r.out;

  // The full trace: some write of the flood thread was paused in balance_dirty_pages.
  std::uint64_t throttled_writes = 0;
  for (const auto& item : json_lines(slurp(trace)))
    if (item["type"] == "write" && item["comm"] == "flood" && u64(item["throttled_ns"]) > 0) {
      ++throttled_writes;
      EXPECT_GE(u64(item["throttle_events"]), 1u) << item.dump();
    }
  EXPECT_GE(throttled_writes, 1u);
  fs::remove(trace);
}

TEST(LoadKvTier, DirectLeavesNothingCachedBufferedLeavesEverything) {
  WP_REQUIRE_ROOT();
  const json f = load_figures("kv-tier", {"--blocks", "16", "--block-size", "256k"});
  ASSERT_FALSE(f.empty());
  const std::uint64_t bytes = 16u * 256 * 1024;
  for (const char* mode : {"direct", "buffered"}) {
    EXPECT_EQ(u64(f[mode]["verify_ok"]), 16u) << mode;
    EXPECT_EQ(u64(f[mode]["verify_failed"]), 0u) << mode;
    EXPECT_EQ(u64(f[mode]["file_bytes"]), bytes);
    EXPECT_GT(u64(f[mode]["write_p99_ns"]), 0u);
    EXPECT_GE(u64(f[mode]["write_p99_ns"]), u64(f[mode]["write_p50_ns"]));
  }
  EXPECT_LE(u64(f["direct"]["resident_bytes"]), 4096u * 2) << f.dump();
  EXPECT_GE(u64(f["buffered"]["resident_bytes"]), bytes * 9 / 10) << f.dump();
}

}  // namespace
