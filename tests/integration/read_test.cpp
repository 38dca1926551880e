// SPDX-License-Identifier: Apache-2.0
// Reads of a real file, cold and warm, held to what the kernel and the reader say without the
// tracer: the reader's own byte count and its /proc/self/io read_bytes (what it caused to be
// read from storage), and cachestat(2) of the file before and after.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fmt/format.h>

#include <random>

#include "harness.h"

namespace {

using namespace wp::testing;

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

  // A real reader, `command` (run by sh, in the scratch file system), traced with --reads: every
  // read item, what the command printed, and its shell's /proc/self/io read_bytes change (the
  // reaped commands' own reads from storage: the kernel's count, page faults included).
  struct ShellReading {
    std::vector<json> reads, faults;
    std::string out;
    std::uint64_t storage_bytes = 0;
  };
  ShellReading traced_shell(const std::string& command) {
    const std::string trace = file("shell.jsonl");
    const std::string script = "io() { sed -n 's/^read_bytes: //p' /proc/$$/io; }; a=$(io); " +
                               command + "; b=$(io); echo \"storage $((b - a))\"";
    const std::string dir = fs::path(trace).parent_path().string();
    const RunResult r = run({writepath(), "trace", "--reads", "--format", "json", "-o", trace, "--",
                             "sh", "-c", "cd " + dir + " && " + script});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    ShellReading out;
    for (const json& item : json_lines(slurp(trace)))
      if (item.value("type", "") == "read")
        out.reads.push_back(item);
      else if (item.value("type", "") == "fault")
        out.faults.push_back(item);
    fs::remove(trace);
    out.out = r.out;
    const std::size_t at = r.out.rfind("storage ");
    EXPECT_NE(at, std::string::npos) << r.out;
    if (at != std::string::npos) out.storage_bytes = std::stoull(r.out.substr(at + 8));
    return out;
  }
};

// What a reader's items say of one file, summed.
struct FileSum {
  std::uint64_t bytes = 0, pages = 0, from_device = 0, cached = 0, readahead = 0;
};
FileSum sum_of(const std::vector<json>& reads, const std::string& path) {
  FileSum sum;
  for (const json& r : reads) {
    if (!path.empty() && r["path"] != path) continue;
    sum.bytes += u64(r["bytes"]);
    sum.pages += u64(r["pages"]);
    sum.from_device += u64(r["pages_from_device"]);
    sum.cached += u64(r["pages_cached"]);
    sum.readahead += u64(r["readahead_pages"]);
  }
  return sum;
}

// Real readers from Debian, each on cold files, held to their own counts and the kernel's:
// tar reads every byte of each file it archives; fio says how many bytes it read (and, with
// its mmap engine, how many major faults its job took); sqlite3 scans a table. Every page of a cold
// file its reads span had to come from the device, by them or their readahead; and what all the
// items brought in is part of what the kernel counts the reader read from storage (/proc/PID/io
// read_bytes: also its page faults, and its metadata blocks).
TEST_F(ReadPath, RealReadersOfColdFilesAreHeldToTheirOwnCounts) {
  constexpr std::size_t kSizes[] = {12 << 10, 1 << 20, 3 << 20};
  std::vector<std::string> archived;
  ASSERT_TRUE(sh("mkdir -p " + file("tree")));
  for (std::size_t i = 0; i < std::size(kSizes); ++i)
    archived.push_back(cold_file("tree/part" + std::to_string(i), kSizes[i]));
  if (!cachestat(archived.back())) GTEST_SKIP() << "no cachestat(2) here";
  // (Through a pipe: GNU tar reads no file data when its archive is /dev/null.)
  const ShellReading tar = traced_shell("tar cf - tree | cat > /dev/null && echo archived");
  ASSERT_NE(tar.out.find("archived"), std::string::npos) << tar.out;
  std::uint64_t brought_in = 0;
  for (std::size_t i = 0; i < archived.size(); ++i) {
    const FileSum f = sum_of(tar.reads, archived[i]);
    EXPECT_EQ(f.bytes, kSizes[i]) << archived[i];
    EXPECT_GE(f.from_device + f.readahead, kSizes[i] / 4096) << archived[i];
    // Each read's pages are those found and those brought in; tar's 10 KiB reads share
    // pages at their edges, so together they span at least the file's.
    EXPECT_EQ(f.pages, f.from_device + f.cached) << archived[i];
    EXPECT_GE(f.pages, kSizes[i] / 4096) << archived[i];
  }
  const FileSum all_tar = sum_of(tar.reads, "");
  brought_in = all_tar.from_device + all_tar.readahead;
  EXPECT_LE(brought_in * 4096, tar.storage_bytes) << tar.out;

  // fio, sequential and random pread64 (psync) of a cold file; fio drops the file's cache
  // itself before the job (invalidate=1).
  const std::string data = cold_file("fio.dat", 8 << 20);
  for (const std::string rw : {"read", "randread"}) {
    const ShellReading fio =
        traced_shell("fio --name=r --filename=" + data + " --rw=" + rw +
                     " --bs=16k --size=8M --ioengine=psync --thread --output-format=json");
    const std::size_t json_at = fio.out.find('{');
    ASSERT_NE(json_at, std::string::npos) << fio.out;
    const json report = json::parse(fio.out.substr(json_at, fio.out.rfind("storage") - json_at));
    const std::uint64_t fio_bytes = u64(report["jobs"][0]["read"]["io_bytes"]);
    const FileSum f = sum_of(fio.reads, data);
    EXPECT_EQ(f.bytes, fio_bytes) << rw;
    EXPECT_GE(f.from_device + f.readahead, 1u) << rw << ": a cold file";
    const FileSum all = sum_of(fio.reads, "");
    EXPECT_LE((all.from_device + all.readahead) * 4096, fio.storage_bytes) << rw << fio.out;
  }

  // fio reading a cold file through a mapping (its mmap engine copies from it): the faults on
  // the file are major exactly as often as fio's own count of its job's major faults, and
  // bring in at least every byte fio read.
  const std::string mapped = cold_file("fio-mmap.dat", 8 << 20);
  const ShellReading fio_mmap = traced_shell("fio --name=m --filename=" + mapped +
                                             " --rw=read --bs=64k --size=8M --ioengine=mmap "
                                             "--output-format=json");
  {
    const std::size_t json_at = fio_mmap.out.find('{');
    ASSERT_NE(json_at, std::string::npos) << fio_mmap.out;
    const json job = json::parse(
        fio_mmap.out.substr(json_at, fio_mmap.out.rfind("storage") - json_at))["jobs"][0];
    std::uint64_t major = 0, pages_in = 0;
    for (const json& f : fio_mmap.faults) {
      if (f["path"] != mapped) continue;
      major += f["fault"]["major"].get<bool>();
      pages_in += u64(f["pages_from_device"]) + u64(f["readahead_pages"]);
    }
    EXPECT_EQ(major, u64(job["majf"])) << job.dump();
    EXPECT_GE(pages_in * 4096, u64(job["read"]["io_bytes"]));
    EXPECT_LE(pages_in * 4096, fio_mmap.storage_bytes) << fio_mmap.out;
  }

  // sqlite3 scanning a table of a cold database.
  const std::string db = file("scan.db");
  ASSERT_TRUE(sh("sqlite3 " + db +
                 " 'create table t(b); insert into t select randomblob(4000) from "
                 "generate_series(1, 1000);' && sync " +
                 db + " && dd if=" + db + " iflag=nocache count=0 status=none"));
  const ShellReading scan = traced_shell("sqlite3 " + db + " 'select sum(length(b)) from t'");
  EXPECT_NE(scan.out.find("4000000"), std::string::npos) << scan.out;
  const FileSum f = sum_of(scan.reads, db);
  EXPECT_GE(f.from_device + f.readahead, 1000u) << "its 1,000 rows, one page each at least";
  EXPECT_LE((f.from_device + f.readahead) * 4096, scan.storage_bytes) << scan.out;
}

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

// procfs and sysfs have no page cache: each read of /proc/PID/status or of a sysfs attribute is
// made up when asked. Their reads are shown finding nothing cached and bringing nothing in;
// a regular file just written, read by the same cat, is found cached.
TEST_F(ReadPath, AProcOrSysfsFileIsNotTakenForAPageCacheHit) {
  const std::string warm = file("warm.txt");
  ASSERT_TRUE(sh("head -c 8192 /dev/urandom > " + warm));
  const std::string sysfs = "/sys/kernel/mm/transparent_hugepage/enabled";
  const ShellReading cat =
      traced_shell("cat /proc/self/status " + sysfs + " " + warm + " > /dev/null");
  std::size_t proc = 0, sys = 0;
  std::uint64_t warm_cached = 0;
  for (const json& r : cat.reads) {
    const std::string path = r["path"].is_string() ? r["path"].get<std::string>() : "";
    if (u64(r["bytes"]) == 0) continue;
    if (path == warm) warm_cached += u64(r["pages_cached"]);
    const bool is_proc = path.starts_with("/proc/") && path.ends_with("/status");
    if (!is_proc && path != sysfs) continue;
    ++(is_proc ? proc : sys);
    EXPECT_EQ(u64(r["pages_cached"]), 0u) << r.dump();
    EXPECT_EQ(u64(r["pages_from_device"]), 0u) << r.dump();
  }
  EXPECT_GE(proc, 1u) << cat.out;
  EXPECT_GE(sys, 1u) << cat.out;
  EXPECT_EQ(warm_cached, 2u) << "the written file's two pages, found in the page cache";
}

// Touches one byte of each page of a file through a read-only mapping, in page order or
// shuffled by the seed (0: in order), and prints the change across the touching of its own
// major and minor fault counts (getrusage) and /proc/self/io read_bytes: the reader's truth.
const char* kMapper = R"(
import mmap, os, random, resource, sys
def read_bytes():
    for line in open('/proc/self/io'):
        if line.startswith('read_bytes:'):
            return int(line.split()[1])
path, seed = sys.argv[1], int(sys.argv[2])
fd = os.open(path, os.O_RDONLY)
size = os.fstat(fd).st_size
m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
pages = list(range(size // 4096))
if seed:
    random.Random(seed).shuffle(pages)
r0, b0 = resource.getrusage(resource.RUSAGE_SELF), read_bytes()
total = 0
for p in pages:
    total += m[p * 4096]
r1, b1 = resource.getrusage(resource.RUSAGE_SELF), read_bytes()
print(r1.ru_majflt - r0.ru_majflt, r1.ru_minflt - r0.ru_minflt, b1 - b0, total)
)";

// A mapped file read through page faults, cold then warm, in order and in a random order
// (the seed is printed): each fault item is held to the reader's own counts. Its major faults
// on the file are exactly its getrusage major faults over the touching (no other file is cold,
// and anonymous memory faults minor without swap); the pages its faults brought in are what
// /proc/self/io says it read from storage and what cachestat(2) finds cached after; a warm
// pass faults minor only, unless pages were evicted meanwhile (storage says so).
TEST_F(ReadPath, FaultsOnAMappedFileAreHeldToTheReadersOwnCounts) {
  constexpr std::size_t kBytes = 6 << 20;
  const unsigned seed = std::random_device{}() % 100000 + 1;
  std::cout << "shuffled pass seed " << seed << "\n";
  for (const unsigned order : {0u, seed}) {
    const std::string path = cold_file("mapped" + std::to_string(order), kBytes);
    if (!cachestat(path)) GTEST_SKIP() << "no cachestat(2) here";
    for (const bool warm : {false, true}) {
      const std::string trace = path + ".jsonl";
      const RunResult r = run({writepath(), "trace", "--reads", "--format", "json", "-o", trace,
                               "--", "python3", "-c", kMapper, path, std::to_string(order)});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      std::uint64_t majflt = 0, minflt = 0, storage = 0;
      std::istringstream(r.out) >> majflt >> minflt >> storage;
      std::uint64_t major = 0, minor = 0, from_device = 0, readahead = 0;
      for (const json& item : json_lines(slurp(trace))) {
        if (item.value("type", "") != "fault" || item["path"] != path) continue;
        EXPECT_EQ(item["syscall"], "page_fault") << item.dump();
        EXPECT_EQ(u64(item["pages_from_device"]) + u64(item["pages_cached"]), 1u) << item.dump();
        ++(item["fault"]["major"].get<bool>() ? major : minor);
        from_device += u64(item["pages_from_device"]);
        readahead += u64(item["readahead_pages"]);
      }
      fs::remove(trace);
      const std::string pass = fmt::format("{} pass, order {}", warm ? "warm" : "cold", order);
      EXPECT_EQ(major, majflt) << pass << ": " << r.out;
      EXPECT_LE(minor, minflt) << pass;
      EXPECT_EQ((from_device + readahead) * 4096, storage) << pass;
      if (warm) {
        // What the cold pass brought in may since have been evicted (the kernel read it again,
        // and storage counted it): anything the warm pass brought in, storage agreed to above.
        if (from_device + readahead != 0)
          std::cout << pass << ": " << from_device + readahead << " pages read again\n";
        EXPECT_GE(minor, 1u) << pass;
        continue;
      }
      EXPECT_GE(major, 1u) << pass;
      EXPECT_LE(cachestat(path)->cache, from_device + readahead) << pass;
      EXPECT_GT(cachestat(path)->cache, 0u) << pass;
    }
  }
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

// PyTorch's torch.load of a cold checkpoint (Debian's python3-torch: a zip archive of four
// 4 MiB tensors, read by its own reader): the reads of the checkpoint gave the loader at least
// the tensors' bytes, brought them in from the device, and their read requests carried no more
// than the loader's own /proc/self/io read_bytes across the load; cachestat(2) then holds no
// more than they brought in.
const char* kTorchLoader = R"(
import sys, torch
def read_bytes():
    for line in open('/proc/self/io'):
        if line.startswith('read_bytes:'):
            return int(line.split()[1])
path, mode = sys.argv[1], sys.argv[2]
if mode == 'save':
    torch.manual_seed(7)
    torch.save({'w%d' % i: torch.randn(1024, 1024) for i in range(4)}, path)
else:
    before = read_bytes()
    state = torch.load(path)
    print(sum(t.numel() * t.element_size() for t in state.values()), read_bytes() - before)
)";

TEST_F(ReadPath, TorchLoadOfAColdCheckpointIsHeldToItsOwnCounts) {
  if (!sh("/usr/bin/python3 -c 'import torch' 2>/dev/null"))
    GTEST_SKIP() << "python3-torch not installed";
  const std::string path = file("model.pt");
  const RunResult save = run({"/usr/bin/python3", "-c", kTorchLoader, path, "save"});
  ASSERT_EQ(save.exit_code, 0) << save.err;
  ASSERT_TRUE(sh("sync " + path + " && vmtouch -qe " + path));
  const auto before = cachestat(path);
  if (!before) GTEST_SKIP() << "no cachestat(2) here";
  ASSERT_EQ(before->cache, 0u);
  const std::string trace = file("torch.jsonl");
  const RunResult load = run({writepath(), "trace", "--reads", "--format", "json", "-o", trace,
                              "--", "/usr/bin/python3", "-c", kTorchLoader, path, "load"});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  std::uint64_t tensor_bytes = 0, storage = 0;
  std::istringstream(load.out) >> tensor_bytes >> storage;
  ASSERT_EQ(tensor_bytes, 16u << 20) << load.out;
  std::uint64_t bytes = 0, brought_in = 0, request_bytes = 0;
  for (const json& item : json_lines(slurp(trace))) {
    const std::string type = item.value("type", "");
    if ((type != "read" && type != "fault") || item["path"] != path) continue;
    bytes += u64(item["bytes"]) * (type == "read");
    brought_in += u64(item["pages_from_device"]) + u64(item["readahead_pages"]);
    for (const json& rq : item["requests"]) request_bytes += u64(rq["bytes"]);
  }
  const auto after = cachestat(path);
  ASSERT_TRUE(after);
  std::printf(
      "[ torch    ] tensors %llu bytes; read %llu bytes, %llu pages brought in, requests "
      "%llu bytes; read_bytes %llu; cached after %llu pages\n",
      static_cast<unsigned long long>(tensor_bytes), static_cast<unsigned long long>(bytes),
      static_cast<unsigned long long>(brought_in), static_cast<unsigned long long>(request_bytes),
      static_cast<unsigned long long>(storage), static_cast<unsigned long long>(after->cache));
  EXPECT_GE(bytes, tensor_bytes);
  EXPECT_GE(brought_in * 4096, tensor_bytes) << "a cold checkpoint";
  EXPECT_LE(request_bytes, storage);
  EXPECT_GE(request_bytes, tensor_bytes);
  EXPECT_LE(after->cache, brought_in);
  // Reclaim may take some back before cachestat looks (other tests and the VM guests share the
  // box's memory): what stayed is at most what the reads brought in, and it is said when less.
  if (after->cache * 4096 < tensor_bytes)
    std::printf("[ torch    ] %llu pages reclaimed after the load\n",
                static_cast<unsigned long long>(brought_in - after->cache));
}

// fio's io_uring engine, buffered, on a cold file (sequential and random, queue depth 4 and
// 1): each op is a read item of syscall io_uring_read, as many as fio's own I/O count and with
// its bytes; together they brought the cold file in, and their read requests carried no more
// than storage read for the shell (its /proc/PID/io read_bytes, fio's reaped in).
TEST_F(ReadPath, IoUringReadsAreHeldToFiosOwnCounts) {
  const std::string data = cold_file("uring.dat", 8 << 20);
  for (const std::string rw : {"read", "randread"}) {
    ASSERT_TRUE(sh("vmtouch -qe " + data));
    const std::string depth = rw == "read" ? "4" : "1";
    const ShellReading fio =
        traced_shell("fio --name=u --filename=" + data + " --rw=" + rw +
                     " --bs=16k --size=8M --ioengine=io_uring --iodepth=" + depth +
                     " --thread --output-format=json");
    const std::size_t json_at = fio.out.find('{');
    ASSERT_NE(json_at, std::string::npos) << fio.out;
    const json job =
        json::parse(fio.out.substr(json_at, fio.out.rfind("storage") - json_at))["jobs"][0];
    std::uint64_t ops = 0, bytes = 0, brought_in = 0, request_bytes = 0;
    for (const json& r : fio.reads) {
      if (r["path"] != data) continue;
      EXPECT_EQ(r["syscall"], "io_uring_read") << r.dump();
      EXPECT_FALSE(r["io_uring"].is_null()) << r.dump();
      ++ops;
      bytes += u64(r["bytes"]);
      brought_in += u64(r["pages_from_device"]) + u64(r["readahead_pages"]);
      for (const json& rq : r["requests"]) request_bytes += u64(rq["bytes"]);
    }
    std::printf(
        "[ io_uring ] %s: %llu items, %llu bytes (fio: %llu ios, %llu bytes); pages in "
        "%llu, requests %llu bytes, storage %llu\n",
        rw.c_str(), static_cast<unsigned long long>(ops), static_cast<unsigned long long>(bytes),
        static_cast<unsigned long long>(u64(job["read"]["total_ios"])),
        static_cast<unsigned long long>(u64(job["read"]["io_bytes"])),
        static_cast<unsigned long long>(brought_in), static_cast<unsigned long long>(request_bytes),
        static_cast<unsigned long long>(fio.storage_bytes));
    EXPECT_EQ(ops, u64(job["read"]["total_ios"])) << rw;
    EXPECT_EQ(bytes, u64(job["read"]["io_bytes"])) << rw;
    EXPECT_GE(brought_in, 1u) << rw << ": a cold file";
    EXPECT_GE(request_bytes, 4096u) << rw << ": a cold file's ops queued bios";
    EXPECT_LE(request_bytes, fio.storage_bytes) << rw;
  }
}

// PostgreSQL, a real reader: a sequential scan of a table whose file was dropped from the page
// cache (the server restarted, so its shared buffers are empty too). Its backend reads each
// block it does not hold with one 8 KiB pread64 (PostgreSQL 15), and EXPLAIN (BUFFERS) counts
// those as "Shared Read Blocks": the backend's pread64 items on the table's file are exactly
// those, their pages came from the device or its readahead, the read requests of all its items
// carried what its /proc/PID/io read_bytes says it caused storage to read, and the diagnosis
// names the table's file as cold storage.
TEST_F(ReadPath, PostgresqlColdScanIsHeldToItsOwnBufferCounts) {
  const std::string bin = "/usr/lib/postgresql/15/bin";
  if (!fs::exists(bin + "/pg_ctl") || !have("runuser") || !have("vmtouch"))
    GTEST_SKIP() << "PostgreSQL 15 or vmtouch not installed";
  const std::string dir = file("pg");
  const std::string u = "runuser -u postgres -- ";
  const std::string start = u + bin + "/pg_ctl -D " + dir + "/data -o \"-k " + dir +
                            " -c listen_addresses='' -c shared_buffers=16MB\" -l " + dir +
                            "/pg.log -w start >/dev/null";
  const std::string psql = bin + "/psql -X -h " + dir + " -U postgres -qAt ";
  ASSERT_TRUE(sh("mkdir -p " + dir + " && chmod 755 " + fs::path(dir).parent_path().string() +
                 " && chown postgres " + dir + " && " + u + bin + "/initdb -D " + dir +
                 "/data -A trust -U postgres >/dev/null && " + start));
  struct Stop {
    std::string cmd;
    ~Stop() { sh(cmd); }
  } stop{u + bin + "/pg_ctl -D " + dir + "/data -m fast -w stop >/dev/null 2>&1"};
  ASSERT_TRUE(sh(psql + "-c \"CREATE TABLE t AS SELECT g, repeat('x', 200) AS v FROM "
                        "generate_series(1, 60000) g\" -c CHECKPOINT"));
  const RunResult where = run({"sh", "-c", psql + "-c \"SELECT pg_relation_filepath('t')\""});
  ASSERT_EQ(where.exit_code, 0) << where.err;
  const std::string table = dir + "/data/" + where.out.substr(0, where.out.find('\n'));
  // Its shared buffers emptied by a restart, its file's pages dropped.
  ASSERT_TRUE(sh(stop.cmd + " && vmtouch -qe " + table + " && " + start));
  const auto before = cachestat(table);
  if (!before) GTEST_SKIP() << "no cachestat(2) here";
  ASSERT_EQ(before->cache, 0u);

  const std::string trace = file("pg.jsonl");
  Background tracer(
      {writepath(), "trace", "--reads", "--comm", "postgres", "--format", "json", "-o", trace});
  ASSERT_TRUE(tracer.wait_attached()) << tracer.err();
  const std::string script = file("scan.sql");
  std::ofstream(script) << "SET max_parallel_workers_per_gather = 0;\n"
                           "SELECT 'pid ' || pg_backend_pid() AS pid \\gset\n"
                           "\\echo :pid\n"
                           "\\setenv PID :pid\n"
                           "\\! echo before $(sed -n 's/^read_bytes: //p' /proc/${PID#pid }/io)\n"
                           "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT count(*) FROM t;\n"
                           "\\! echo after $(sed -n 's/^read_bytes: //p' /proc/${PID#pid }/io)\n";
  const RunResult scan = run({"sh", "-c", psql + "-f " + script});
  ASSERT_EQ(scan.exit_code, 0) << scan.err;
  ASSERT_EQ(tracer.stop(), 0) << tracer.err();
  std::uint32_t pid = 0;
  std::uint64_t storage_before = 0, storage_after = 0;
  std::istringstream lines(scan.out);
  std::string plan_text;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("pid "))
      pid = static_cast<std::uint32_t>(std::stoul(line.substr(4)));
    else if (line.starts_with("before "))
      storage_before = std::stoull(line.substr(7));
    else if (line.starts_with("after "))
      storage_after = std::stoull(line.substr(6));
    else
      plan_text += line + "\n";
  }
  ASSERT_NE(pid, 0u) << scan.out;
  const json plan = json::parse(plan_text)[0]["Plan"];
  const std::uint64_t shared_read = u64(plan["Shared Read Blocks"]);
  ASSERT_GT(shared_read, 100u) << plan.dump();

  std::uint64_t preads = 0, bytes = 0, brought_in = 0, request_bytes = 0;
  std::optional<json> summary;
  for (const json& item : json_lines(slurp(trace))) {
    if (item.value("type", "") == "summary") summary = item;
    if (item.value("type", "") != "read" || u64(item["pid"]) != pid) continue;
    for (const json& rq : item["requests"]) request_bytes += u64(rq["bytes"]);
    if (item["path"] != table) continue;
    preads += item["syscall"] == "pread64";
    bytes += u64(item["bytes"]);
    brought_in += u64(item["pages_from_device"]) + u64(item["readahead_pages"]);
  }
  const std::uint64_t storage = storage_after - storage_before;
  std::printf(
      "[ postgres ] shared read blocks %llu, pread64 items %llu, pages brought in %llu, "
      "read_bytes %llu, its requests' bytes %llu\n",
      static_cast<unsigned long long>(shared_read), static_cast<unsigned long long>(preads),
      static_cast<unsigned long long>(brought_in), static_cast<unsigned long long>(storage),
      static_cast<unsigned long long>(request_bytes));
  EXPECT_EQ(preads, shared_read) << "EXPLAIN's shared read blocks";
  EXPECT_EQ(bytes, shared_read * 8192);
  EXPECT_GE(brought_in * 4096, shared_read * 8192) << "a cold file: every block came in";
  EXPECT_GE(storage, shared_read * 8192) << scan.out;
  // The backend's reads' requests carried the bios its read_bytes counts (its queries of the
  // catalog may add a few of their own, also in its items).
  EXPECT_LE(request_bytes, storage + (256u << 10)) << scan.out;
  EXPECT_GE(request_bytes + (256u << 10), storage) << scan.out;
  ASSERT_TRUE(summary);
  bool cold = false;
  for (const json& f : (*summary)["read_findings"])
    cold |= f["path"] == table && f["finding"] == "cold-storage";
  EXPECT_TRUE(cold) << (*summary)["read_findings"].dump();
}

}  // namespace
