// SPDX-License-Identifier: Apache-2.0
// writepath load / demo kv-tier --engine io_uring: the blocks really go through the ring with
// O_DIRECT, checked without the tracer — strace counts the calls, /proc/diskstats the loop
// device's written sectors, fincore the files' pages in the page cache.
#include <unistd.h>

#include <map>

#include "harness.h"

namespace {

using namespace wp::testing;
namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::uint64_t kBlocks = 32;
constexpr std::uint64_t kBlockBytes = 256u << 10;

// Calls per syscall from `strace -c -o FILE`'s table ("% time seconds usecs/call calls
// [errors] syscall" rows).
std::map<std::string, std::uint64_t> strace_counts(const std::string& table) {
  std::map<std::string, std::uint64_t> calls;
  std::istringstream in(table);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::vector<std::string> cols;
    for (std::string col; row >> col;) cols.push_back(col);
    if (cols.size() < 5 || cols.back() == "syscall" || cols.back() == "total") continue;
    if (cols[3].find_first_not_of("0123456789") != std::string::npos) continue;
    calls[cols.back()] = std::stoull(cols[3]);
  }
  return calls;
}

// Sectors written to `device` (/dev/loopN) so far: /proc/diskstats' seventh counter.
std::uint64_t sectors_written(const std::string& device) {
  const std::string name = fs::path(device).filename().string();
  std::istringstream in(slurp("/proc/diskstats"));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::vector<std::string> cols;
    for (std::string col; row >> col;) cols.push_back(col);
    if (cols.size() > 9 && cols[2] == name) return std::stoull(cols[9]);
  }
  ADD_FAILURE() << name << " is not in /proc/diskstats";
  return 0;
}

// The file's bytes in the page cache, per fincore (util-linux).
std::uint64_t cached_bytes(const std::string& path) {
  RunResult r = run({"fincore", "--bytes", "--raw", "--noheadings", "--output", "RES", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? std::stoull(r.out) : ~0ull;
}

class LoadKvTierIoUring : public ScratchExt4 {};

TEST_F(LoadKvTierIoUring, BlocksGoThroughTheRingAroundThePageCache) {
  const std::string dir = file("kv-uring");
  const std::string strace_out = file("strace.txt");
  const std::uint64_t sectors_before = sectors_written(loop_);
  RunResult r = run({"strace",
                     "-f",
                     "-c",
                     "-o",
                     strace_out,
                     "-e",
                     "trace=io_uring_setup,io_uring_enter,pwrite64,pwritev,pwritev2,write",
                     writepath(),
                     "load",
                     "kv-tier",
                     "--json",
                     "--engine",
                     "io_uring",
                     "--iodepth",
                     "8",
                     "--blocks",
                     std::to_string(kBlocks),
                     "--block-size",
                     "256k",
                     "--dir",
                     dir,
                     "--keep"});
  const std::uint64_t sectors_after = sectors_written(loop_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json f = json::parse(r.out)["figures"];
  const std::uint64_t bytes = kBlocks * kBlockBytes;

  EXPECT_EQ(f["engine"], "io_uring");
  EXPECT_EQ(u64(f["iodepth"]), 8u);
  EXPECT_EQ(f["registered_buffers"], true) << "root may pin the buffers";
  for (const char* mode : {"direct", "buffered"}) {
    EXPECT_EQ(u64(f[mode]["verify_ok"]), kBlocks) << mode;
    EXPECT_EQ(u64(f[mode]["verify_failed"]), 0u) << mode;
    EXPECT_EQ(u64(f[mode]["file_bytes"]), bytes) << mode;
    EXPECT_GE(u64(f[mode]["write_p99_ns"]), u64(f[mode]["write_p50_ns"])) << mode;
    EXPECT_GT(u64(f[mode]["write_p50_ns"]), 0u) << mode;
  }

  // The calls: one ring per mode, a submission per block (no SQPOLL), and not one pwrite.
  const auto calls = strace_counts(slurp(strace_out));
  EXPECT_EQ(calls.count("io_uring_setup") ? calls.at("io_uring_setup") : 0, 2u)
      << slurp(strace_out);
  EXPECT_GE(calls.count("io_uring_enter") ? calls.at("io_uring_enter") : 0, 2 * kBlocks)
      << slurp(strace_out);
  for (const char* pwrite : {"pwrite64", "pwritev", "pwritev2"})
    EXPECT_EQ(calls.count(pwrite), 0u) << pwrite << ": " << slurp(strace_out);
  // write(2) only prints: far fewer calls than blocks.
  EXPECT_LT(calls.count("write") ? calls.at("write") : 0, kBlocks) << slurp(strace_out);

  // O_DIRECT: the blocks are on the device when the run ends (no fsync, no unmount), and
  // none of the direct file's pages is in the page cache; the buffered file's are.
  EXPECT_GE((sectors_after - sectors_before) * 512, bytes)
      << "sectors written to " << loop_ << ": " << sectors_after - sectors_before;
  EXPECT_EQ(cached_bytes(dir + "/kv-direct.bin"), 0u);
  EXPECT_GE(cached_bytes(dir + "/kv-buffered.bin"), bytes * 9 / 10);
  EXPECT_EQ(u64(f["direct"]["resident_bytes"]), 0u) << f.dump();
}

TEST(LoadKvTierEngine, UnknownEngineIsOneClearError) {
  auto r = run({writepath(), "load", "kv-tier", "--engine", "aio"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "writepath: kv-tier --engine aio: expected one of pwrite, io_uring\n");
  EXPECT_EQ(r.out, "");
}

TEST(LoadKvTierEngine, ZeroIodepthIsRefused) {
  auto r = run({writepath(), "load", "kv-tier", "--engine", "io_uring", "--iodepth", "0"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--iodepth 0: expected a count from 1 to 4096"), std::string::npos) << r.err;
}

TEST(LoadKvTierEngine, DemoExplainsOnlyWhatTheTraceShowsOfTheRing) {
  WP_REQUIRE_ROOT();
  RunResult r = run({writepath(), "demo", "kv-tier", "--engine", "io_uring", "--blocks", "8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const bool saw_none = r.out.find("the tracer saw no io_uring writes") != std::string::npos;
  const bool saw_ops = r.out.find("io_uring O_DIRECT: ") != std::string::npos;
  EXPECT_NE(saw_none, saw_ops) << r.out;
  if (saw_none) {
    EXPECT_EQ(r.out.find("bypassed"), std::string::npos) << r.out;
  } else {
    EXPECT_NE(r.out.find("io_uring O_DIRECT: 8 writes, 0 pages dirtied"), std::string::npos)
        << r.out;
  }
}

}  // namespace
