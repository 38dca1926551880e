// SPDX-License-Identifier: Apache-2.0
// The randomized read sweep: each round draws, from its seed, a file system (ext4, xfs,
// btrfs), an I/O scheduler, the loop device's read_ahead_kb, a read pattern (sequential read(2)
// or random pread64 of a block size, or a mapping touched in order or at random) and whether
// the file starts cold or warm, runs the reader under `writepath trace --reads` on a fresh loop
// device, and holds the read and fault items of its file to truths the tracer did not compute:
// the reader's own byte count, getrusage major faults and /proc/self/io read_bytes, the loop
// device's read sectors in /proc/diskstats, and cachestat(2) of the file before and after. A
// failing round prints its seed: WRITEPATH_READ_SWEEP_SEEDS=SEED reruns exactly it.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fmt/format.h>

#include <random>

#include "harness.h"

namespace wp::testing {
namespace {

struct Round {
  std::uint64_t seed = 0;
  std::string fs, scheduler, pattern;
  unsigned read_ahead_kb = 128;
  std::size_t bs = 4096;
  std::size_t file_bytes = 4 << 20;
  bool warm = false;

  std::string describe() const {
    return fmt::format("seed {}: {}, {}, read_ahead_kb {}, {} {} B over {} KiB, {}", seed, fs,
                       scheduler, read_ahead_kb, pattern, bs, file_bytes >> 10,
                       warm ? "warm" : "cold");
  }
};

template <class T>
const T& pick(std::mt19937_64& rng, const std::vector<T>& from) {
  return from[std::uniform_int_distribution<std::size_t>(0, from.size() - 1)(rng)];
}

Round draw(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Round r;
  r.seed = seed;
  r.fs = pick<std::string>(rng, {"ext4", "xfs", "btrfs"});
  r.scheduler = pick<std::string>(rng, {"none", "mq-deadline", "kyber"});
  r.read_ahead_kb = pick<unsigned>(rng, {0, 4, 16, 128, 512, 2048});
  r.pattern = pick<std::string>(rng, {"read", "pread-random", "mmap", "mmap-random"});
  r.bs = pick<std::size_t>(rng, {4096, 16384, 65536, 1 << 20});
  r.file_bytes = pick<std::size_t>(rng, {1 << 20, 4 << 20, (6 << 20) + 1234});
  r.warm = std::uniform_int_distribution<int>(0, 2)(rng) == 0;
  return r;
}

std::vector<std::uint64_t> seeds() {
  if (const char* fixed = std::getenv("WRITEPATH_READ_SWEEP_SEEDS")) {
    std::vector<std::uint64_t> out;
    std::istringstream in(fixed);
    for (std::string s; std::getline(in, s, ',');)
      if (!s.empty()) out.push_back(std::stoull(s));
    return out;
  }
  return {5, 12, 19, 28, 31, 44, 57, 62, 75, 88, 93, 106};
}

// Reads the file by the pattern and prints what it got and its own counters' change across
// the reading: bytes, major faults, /proc/self/io read_bytes.
const char* kReader = R"(
import mmap, os, random, resource, sys
def read_bytes():
    for line in open('/proc/self/io'):
        if line.startswith('read_bytes:'):
            return int(line.split()[1])
path, pattern, bs, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
fd = os.open(path, os.O_RDONLY)
size = os.fstat(fd).st_size
m = mmap.mmap(fd, size, prot=mmap.PROT_READ) if pattern.startswith('mmap') else None
r0, b0 = resource.getrusage(resource.RUSAGE_SELF).ru_majflt, read_bytes()
got = 0
if pattern == 'read':
    while True:
        n = len(os.read(fd, bs))
        if not n:
            break
        got += n
elif pattern == 'pread-random':
    for _ in range(max(1, size // bs // 2)):
        got += len(os.pread(fd, bs, rng.randrange(0, (size + bs - 1) // bs) * bs))
else:
    pages = list(range((size + 4095) // 4096))
    if pattern == 'mmap-random':
        pages = [rng.choice(pages) for _ in range(len(pages) // 2)]
    for p in pages:
        got += m[p * 4096] >= 0
print(got, resource.getrusage(resource.RUSAGE_SELF).ru_majflt - r0, read_bytes() - b0)
)";

std::optional<std::uint64_t> cached_pages(const std::string& path) {
  const auto counts = cachestat(path);
  return counts ? std::optional{counts->cache} : std::nullopt;
}

// One round: its violations, each a line.
std::vector<std::string> run_round(const Round& r) {
  ScratchFs disk(r.fs, mkfs_of(r.fs));
  if (!disk.ready()) return {"could not make a " + r.fs + " on a loop device"};
  if (!disk.set_queue("scheduler", r.scheduler) ||
      !disk.set_queue("read_ahead_kb", std::to_string(r.read_ahead_kb)))
    return {"could not set the queue knobs of " + disk.loop_name()};
  const std::string path = disk.file("data");
  if (!sh(fmt::format("head -c {} /dev/urandom > {} && sync {}", r.file_bytes, path, path)))
    return {"could not write the file"};
  // Cold: its pages dropped. Warm: read through once, untraced, and held so by cachestat.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  if (r.warm && !sh("cat " + path + " > /dev/null")) return {"could not warm the file"};
  const std::uint64_t file_pages = (r.file_bytes + 4095) / 4096;
  const auto before = cached_pages(path);
  if (!before) return {"no cachestat(2) here"};
  if (*before != (r.warm ? file_pages : 0))
    return {fmt::format("the file starts with {} of {} pages cached", *before, file_pages)};

  const std::string trace =
      (fs::temp_directory_path() / fmt::format("wp_read_sweep_{}.jsonl", ::getpid())).string();
  const DiskCounters disk_before = disk_counters(disk.loop_name());
  const RunResult run_result =
      run({writepath(), "trace", "--reads", "--format", "json", "-o", trace, "--", "python3", "-c",
           kReader, path, r.pattern, std::to_string(r.bs), std::to_string(r.seed)});
  const DiskCounters disk_after = disk_counters(disk.loop_name());
  const std::string traced = slurp(trace);
  fs::remove(trace);
  if (run_result.exit_code != 0) return {"trace failed: " + run_result.err};
  std::vector<std::string> v;
  std::uint64_t got = 0, majflt = 0, storage = 0;
  std::istringstream(run_result.out) >> got >> majflt >> storage;
  std::uint64_t bytes = 0, major = 0, from_device = 0, readahead = 0, cached = 0;
  // Cold: a page an item found cached was brought in before it, by an earlier item's
  // readahead or its read of that page: at each item, the pages found cached that no earlier
  // item spanned are at most the readahead before it.
  std::set<std::uint64_t> spanned;
  std::uint64_t cached_unspanned = 0;
  // The read requests the items list: each once (a request two items' bios merged into is in
  // both), on the loop device, in order of their stages.
  std::set<std::pair<std::uint64_t, std::uint64_t>> requests;  // (sector, issue)
  std::uint64_t request_bytes = 0;
  for (const json& item : json_lines(traced)) {
    const std::string type = item.value("type", "");
    if ((type != "read" && type != "fault") || item["path"] != path) continue;
    if (type == "read") bytes += u64(item["bytes"]);
    if (type == "fault" && item["fault"]["major"].get<bool>()) ++major;
    const std::uint64_t first = u64(item["offset"]) / 4096, n = u64(item["pages"]);
    std::uint64_t seen = 0;
    for (std::uint64_t p = first; p < first + n; ++p) seen += !spanned.insert(p).second;
    const std::uint64_t found = u64(item["pages_cached"]);
    cached_unspanned += found > seen ? found - seen : 0;
    if (!r.warm && cached_unspanned > readahead)
      v.push_back(
          fmt::format("a cold round's item found {} pages cached that no item before "
                      "it read, their readahead brought {}: {}",
                      cached_unspanned, readahead, item.dump()));
    for (const json& rq : item["requests"]) {
      if (rq["dev"] != device_number("/dev/" + disk.loop_name()))
        v.push_back("a read request on another device: " + rq.dump());
      const std::uint64_t issue = rq["issue_ns"].is_null() ? 0 : u64(rq["issue_ns"]);
      if (rq["complete_ns"].is_null() || issue == 0 || u64(rq["complete_ns"]) < issue)
        v.push_back("a read request not issued then completed: " + rq.dump());
      if (requests.insert({u64(rq["sector"]), issue}).second) request_bytes += u64(rq["bytes"]);
    }
    // A page the item put in the cache came in a bio it queued, so in one of its requests.
    if (u64(item["pages_from_device"]) != 0 && item["requests"].empty())
      v.push_back("an item brought pages in and lists no request: " + item.dump());
    from_device += u64(item["pages_from_device"]);
    readahead += u64(item["readahead_pages"]);
    cached += found;
    if (u64(item["pages"]) != u64(item["pages_from_device"]) + u64(item["pages_cached"]))
      v.push_back("an item's pages are not from-device + cached: " + item.dump());
  }
  const std::uint64_t brought_in = from_device + readahead;
  const std::uint64_t window = std::max<std::uint64_t>(r.read_ahead_kb * 1024ull, 4096);
  if (!r.pattern.starts_with("mmap") && bytes != got)
    v.push_back(fmt::format("the reads got {} bytes, the reader {}", bytes, got));
  if (major != majflt)
    v.push_back(fmt::format("{} major faults traced, getrusage says {}", major, majflt));
  // What the items brought in against what the reader caused to be read from storage, and
  // what the disk read: within one readahead window (the disk also reads metadata).
  const std::uint64_t disk_bytes = (disk_after.read_sectors - disk_before.read_sectors) * 512;
  if (brought_in * 4096 > storage + window || storage > brought_in * 4096 + window)
    v.push_back(
        fmt::format("{} pages brought in, /proc/self/io read_bytes {}", brought_in, storage));
  // Its requests against what it caused storage to read and the disk read: the same bios.
  if (request_bytes > storage + window || storage > request_bytes + window)
    v.push_back(fmt::format("its read requests carried {} bytes, /proc/self/io read_bytes {}",
                            request_bytes, storage));
  if (request_bytes > disk_bytes)
    v.push_back(fmt::format("its read requests carried {} bytes, the disk read {}", request_bytes,
                            disk_bytes));
  if (brought_in * 4096 > disk_bytes + window)
    v.push_back(fmt::format("{} pages brought in, the disk read {} bytes", brought_in, disk_bytes));
  // Warm: nothing from the device unless storage read something (pages evicted meanwhile).
  if (r.warm && storage == 0 && brought_in != 0)
    v.push_back(
        fmt::format("a warm round brought in {} pages while storage read none", brought_in));
  if (!r.warm && from_device + cached == 0 && got != 0)
    v.push_back("a cold round's reader got bytes, and no item says where from");
  // What the file keeps is what it had and what the items brought in (less any evicted).
  const auto after = cached_pages(path);
  if (!after || *after > *before + brought_in)
    v.push_back(fmt::format("cachestat: {} pages cached after, {} before, {} brought in",
                            after.value_or(0), *before, brought_in));
  return v;
}

TEST(ReadSweep, EveryReadAndFaultHoldsAgainstTheKernelsOwnCounts) {
  WP_REQUIRE_ROOT();
  for (std::uint64_t seed : seeds()) {
    const Round r = draw(seed);
    const std::vector<std::string> v = run_round(r);
    std::printf("[ sweep    ] %s: %zu violations\n", r.describe().c_str(), v.size());
    std::string shown;
    for (std::size_t i = 0; i < v.size() && i < 12; ++i) shown += "\n  " + v[i];
    EXPECT_TRUE(v.empty()) << r.describe() << " (rerun: WRITEPATH_READ_SWEEP_SEEDS=" << seed << ")"
                           << shown;
  }
}

}  // namespace
}  // namespace wp::testing
