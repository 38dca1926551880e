// SPDX-License-Identifier: Apache-2.0
// Reads of a real file, cold and warm, held to what the kernel and the reader say without the
// tracer: the reader's own byte count and its /proc/self/io read_bytes (what it caused to be
// read from storage), and cachestat(2) of the file before and after.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <random>

#include "harness.h"

namespace {

using namespace wp::testing;

// cachestat(2)'s counts for a whole file (6.5+; syscall 451 on x86-64 and arm64).
struct CacheCounts {
  std::uint64_t cache = 0, dirty = 0, writeback = 0, evicted = 0, recently_evicted = 0;
};
std::optional<CacheCounts> cachestat(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct {
    std::uint64_t off = 0, len = 0;  // len 0: to the end of the file
  } range;
  CacheCounts counts;
  const long rc = ::syscall(451, fd, &range, &counts, 0);
  ::close(fd);
  if (rc != 0) return std::nullopt;
  return counts;
}

// Reads `path` whole in `bs`-byte read(2) calls (readv(2) into a page-aligned buffer with
// O_DIRECT, the third argument "direct") and prints its byte count and the change in its own
// /proc/self/io read_bytes: the reader's truth.
const char* kReader = R"(
import mmap, os, sys
def read_bytes():
    for line in open('/proc/self/io'):
        if line.startswith('read_bytes:'):
            return int(line.split()[1])
path, bs = sys.argv[1], int(sys.argv[2])
direct = len(sys.argv) > 3 and sys.argv[3] == 'direct'
before = read_bytes()
fd = os.open(path, os.O_RDONLY | (os.O_DIRECT if direct else 0))
buf = mmap.mmap(-1, bs)
total = 0
while True:
    n = os.readv(fd, [buf]) if direct else len(os.read(fd, bs))
    if not n:
        break
    total += n
os.close(fd)
print(total, read_bytes() - before)
)";

class ReadPath : public ScratchExt4 {
 protected:
  // The file, written and synced, its pages then dropped from the page cache.
  std::string cold_file(const std::string& name, std::size_t bytes) {
    const std::string path = file(name);
    std::vector<char> data(bytes);
    std::mt19937 rng(7);
    for (char& c : data) c = static_cast<char>(rng());
    std::ofstream(path, std::ios::binary).write(data.data(), static_cast<std::streamsize>(bytes));
    EXPECT_TRUE(sh("sync " + path));
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    ::close(fd);
    return path;
  }

  struct Reading {
    std::uint64_t bytes = 0, storage_bytes = 0;  // the reader's own counts
    std::vector<json> reads;                     // the trace's items of the file
    json summary;                                // the trace's summary line
    json file;  // the summary's read_files row of the file (null: none)
  };

  // The reader traced with `trace_flags` (--reads), reading `path` in `bs`-byte calls,
  // `mode` "" or "direct".
  Reading traced_read(const std::string& path, std::size_t bs, const std::string& mode = "",
                      const std::vector<std::string>& trace_flags = {"--reads"}) {
    const std::string trace = path + ".jsonl";
    std::vector<std::string> argv = {writepath(), "trace"};
    argv.insert(argv.end(), trace_flags.begin(), trace_flags.end());
    for (const std::string& arg :
         {std::string("--format"), std::string("json"), std::string("-o"), trace, std::string("--"),
          std::string("python3"), std::string("-c"), std::string(kReader), path, std::to_string(bs),
          mode})
      argv.push_back(arg);
    const RunResult r = run(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Reading out;
    for (const json& item : json_lines(slurp(trace)))
      if (item.value("type", "") == "read" && item["path"] == path)
        out.reads.push_back(item);
      else if (item.value("type", "") == "summary")
        out.summary = item;
    fs::remove(trace);
    if (out.summary.is_object())
      for (const json& row : out.summary["read_files"])
        if (row["path"] == path) out.file = row;
    std::istringstream(r.out) >> out.bytes >> out.storage_bytes;
    return out;
  }
};

TEST_F(ReadPath, AColdReadComesFromTheDeviceAndAWarmOneFromThePageCache) {
  constexpr std::size_t kBytes = 8 << 20, kPages = kBytes / 4096;
  const std::string path = cold_file("cold", kBytes);
  const auto before = cachestat(path);
  if (!before) GTEST_SKIP() << "no cachestat(2) here";
  ASSERT_EQ(before->cache, 0u) << "the file's pages were not dropped";

  const Reading cold = traced_read(path, 64 << 10);
  ASSERT_EQ(cold.bytes, kBytes);
  std::uint64_t bytes = 0, from_device = 0, cached = 0, readahead = 0;
  for (const json& r : cold.reads) {
    bytes += u64(r["bytes"]);
    from_device += u64(r["pages_from_device"]);
    cached += u64(r["pages_cached"]);
    readahead += u64(r["readahead_pages"]);
    EXPECT_EQ(u64(r["pages"]), u64(r["pages_from_device"]) + u64(r["pages_cached"])) << r.dump();
  }
  EXPECT_EQ(bytes, cold.bytes);
  // Every page came into the cache in the reader's calls: what it brought in equals what the
  // kernel says it read from storage, and what the cache holds after.
  EXPECT_EQ((from_device + readahead) * 4096, cold.storage_bytes);
  EXPECT_EQ(from_device + cached, kPages);
  // The summary's row of the file says the same, and its hit ratio is the share of the pages
  // the reads found in the cache.
  ASSERT_TRUE(cold.file.is_object()) << cold.summary.dump();
  EXPECT_EQ(u64(cold.file["bytes"]), kBytes);
  EXPECT_EQ(u64(cold.file["reads"]), cold.reads.size());
  EXPECT_EQ(u64(cold.file["pages_from_device"]), from_device);
  EXPECT_EQ(u64(cold.file["readahead_pages"]), readahead);
  // Every page was brought in by the reads or their readahead: no hit (JSON rounds to 1e-4).
  EXPECT_NEAR(cold.file["hit_ratio"].get<double>(),
              1.0 - std::min<double>(1.0, static_cast<double>(from_device + readahead) / kPages),
              1e-4);
  // Nobody else reads the file: every page its cache gained (cachestat(2)) the reads or their
  // readahead brought in. Not an equality: the machine may evict some of them meanwhile, and
  // on a busy machine it did, beyond what /proc/vmstat's reclaim counters showed.
  const auto after = cachestat(path);
  ASSERT_TRUE(after);
  EXPECT_LE(after->cache - before->cache, from_device + readahead);
  if (after->cache - before->cache != from_device + readahead)
    std::cout << "the file keeps " << after->cache << " of the " << from_device + readahead
              << " pages the cold read brought in\n";

  // Warm: every page the reads did not find cached they brought in, and storage agrees (pages
  // evicted under it are read again, and counted); when storage read nothing, neither did
  // the reads, and the file's hit ratio is 1.
  const auto before_warm = cachestat(path);
  ASSERT_TRUE(before_warm);
  const Reading warm = traced_read(path, 64 << 10);
  ASSERT_EQ(warm.bytes, kBytes);
  std::uint64_t warm_cached = 0, warm_from_device = 0, warm_readahead = 0;
  for (const json& r : warm.reads) {
    warm_from_device += u64(r["pages_from_device"]);
    warm_readahead += u64(r["readahead_pages"]);
    warm_cached += u64(r["pages_cached"]);
  }
  EXPECT_EQ(warm_cached + warm_from_device, kPages);
  EXPECT_EQ((warm_from_device + warm_readahead) * 4096, warm.storage_bytes);
  ASSERT_TRUE(warm.file.is_object()) << warm.summary.dump();
  if (warm.storage_bytes == 0) {
    EXPECT_EQ(warm_from_device, 0u);
    EXPECT_EQ(warm.file["hit_ratio"].get<double>(), 1.0);
  } else {
    std::cout << "the file kept " << before_warm->cache << " of " << kPages
              << " pages before the warm read, and lost some during it: " << warm_from_device
              << " came from the device\n";
  }
}

// O_DIRECT goes around the page cache: each read says so, counts no page as cached or brought
// in, and the file's cache stays empty while the reader's storage bytes are all it read.
TEST_F(ReadPath, ADirectReadIsShownGoingAroundThePageCache) {
  constexpr std::size_t kBytes = 4 << 20;
  const std::string path = cold_file("direct", kBytes);
  if (!cachestat(path)) GTEST_SKIP() << "no cachestat(2) here";
  const Reading direct = traced_read(path, 256 << 10, "direct");
  ASSERT_EQ(direct.bytes, kBytes);
  EXPECT_EQ(direct.storage_bytes, kBytes);
  std::uint64_t bytes = 0;
  for (const json& r : direct.reads) {
    EXPECT_TRUE(r["direct"].get<bool>()) << r.dump();
    EXPECT_EQ(r["syscall"], "readv") << r.dump();
    EXPECT_EQ(u64(r["pages_cached"]), 0u) << r.dump();
    EXPECT_EQ(u64(r["pages_from_device"]), 0u) << r.dump();
    EXPECT_EQ(u64(r["readahead_pages"]), 0u) << r.dump();
    bytes += u64(r["bytes"]);
  }
  EXPECT_EQ(bytes, kBytes);
  EXPECT_EQ(cachestat(path)->cache, 0u);
  ASSERT_TRUE(direct.file.is_object()) << direct.summary.dump();
  EXPECT_EQ(u64(direct.file["direct_bytes"]), kBytes);
  EXPECT_TRUE(direct.file["hit_ratio"].is_null()) << direct.file.dump();
}

// Reads are items only when asked for: a write trace of the same reader has none, and says
// no read in its summary.
TEST_F(ReadPath, WithoutReadsATraceMakesNoReadItem) {
  const std::string path = cold_file("unasked", 1 << 20);
  const Reading unasked = traced_read(path, 64 << 10, "", {});
  ASSERT_EQ(unasked.bytes, 1u << 20);
  EXPECT_TRUE(unasked.reads.empty());
  EXPECT_EQ(u64(unasked.summary["reads"]), 0u) << unasked.summary.dump();
}

}  // namespace
