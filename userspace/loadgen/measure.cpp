// SPDX-License-Identifier: Apache-2.0
#include "loadgen/measure.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <numeric>
#include <sstream>
#include <utility>

#include "common/histogram.h"
#include "loadgen/context.h"

namespace wp::loadgen {
namespace fs = std::filesystem;

Nanos Stopwatch::elapsed_ns() const {
  return static_cast<Nanos>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now() - start_)
                                .count());
}

LatencySummary summarize(std::vector<Nanos> samples) {
  LatencySummary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.count = samples.size();
  s.p50 = exact_quantile(samples, 0.50);
  s.p99 = exact_quantile(samples, 0.99);
  s.max = samples.back();
  s.mean = std::accumulate(samples.begin(), samples.end(), Nanos{0}) / samples.size();
  return s;
}

AlignedBuffer::AlignedBuffer(std::size_t length) : length_(length) {
  void* map = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) throw LoadError(fmt::format("mmap: {}", std::strerror(errno)));
  data_ = static_cast<char*>(map);
}

AlignedBuffer::~AlignedBuffer() {
  ::munmap(data_, length_);
}

UniqueFd open_file(const fs::path& path, int flags, mode_t mode) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  if (fd < 0) throw LoadError(fmt::format("open {}: {}", path.string(), std::strerror(errno)));
  return UniqueFd(fd);
}

void write_all(int fd, const void* data, std::size_t size, off_t offset) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::pwrite(fd, p, size, offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw LoadError(fmt::format("write: {}", std::strerror(errno)));
    }
    p += n;
    size -= static_cast<std::size_t>(n);
    offset += n;
  }
}

void read_all(int fd, void* data, std::size_t size, off_t offset) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::pread(fd, p, size, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw LoadError(fmt::format("read: {}", n < 0 ? std::strerror(errno) : "EOF"));
    p += n;
    size -= static_cast<std::size_t>(n);
    offset += n;
  }
}

void fsync_or_throw(int fd, const char* what) {
  if (::fsync(fd) != 0) throw LoadError(fmt::format("{}: {}", what, std::strerror(errno)));
}

void fdatasync_or_throw(int fd, const char* what) {
  if (::fdatasync(fd) != 0) throw LoadError(fmt::format("{}: {}", what, std::strerror(errno)));
}

std::optional<FileCacheStat> file_cachestat(int fd) {
  // cachestat(2) has no glibc wrapper yet: syscall 451 on every architecture (asm-generic).
  struct Range {
    std::uint64_t off = 0, len = 0;  // len 0: to the end of the file
  } range;
  struct Stat {
    std::uint64_t cache, dirty, writeback, evicted, recently_evicted;
  } st{};
  if (::syscall(451, fd, &range, &st, 0) != 0) return std::nullopt;
  return FileCacheStat{st.cache, st.dirty, st.writeback};
}

std::optional<std::uint64_t> file_pending_bytes(int fd) {
  const auto st = file_cachestat(fd);
  if (!st) return std::nullopt;
  return (st->dirty + st->writeback) * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::uint64_t meminfo_bytes(const std::string& field) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  const std::string key = field + ":";
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      std::istringstream fields(line.substr(key.size()));
      std::uint64_t kib = 0;
      fields >> kib;
      return kib * 1024;
    }
  }
  return 0;
}

Residency page_cache_residency(const fs::path& path) {
  Residency r;
  UniqueFd fd = open_file(path, O_RDONLY);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || st.st_size == 0) return r;
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t length = static_cast<std::size_t>(st.st_size);
  void* map = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (map == MAP_FAILED) throw LoadError(fmt::format("mmap: {}", std::strerror(errno)));
  std::vector<unsigned char> vec((length + page - 1) / page);
  int rc = ::mincore(map, length, vec.data());
  ::munmap(map, length);
  if (rc != 0) throw LoadError(fmt::format("mincore: {}", std::strerror(errno)));
  r.total_pages = vec.size();
  r.resident_pages = static_cast<std::uint64_t>(
      std::count_if(vec.begin(), vec.end(), [](unsigned char v) { return v & 1; }));
  return r;
}

void drop_page_cache(int fd) {
  if (::fdatasync(fd) != 0) throw LoadError(fmt::format("fdatasync: {}", std::strerror(errno)));
  int rc = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  if (rc != 0) throw LoadError(fmt::format("posix_fadvise: {}", std::strerror(rc)));
}

ProcessCounters process_counters() {
  ProcessCounters c;
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  c.major_faults = static_cast<std::uint64_t>(ru.ru_majflt);
  c.minor_faults = static_cast<std::uint64_t>(ru.ru_minflt);
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  c.rss_bytes = resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  std::ifstream io("/proc/self/io");
  c.io_accounted = io.is_open();
  std::string key;
  std::uint64_t value = 0;
  while (io >> key >> value) {
    if (key == "read_bytes:") c.read_bytes = value;
    if (key == "write_bytes:") c.write_bytes = value;
  }
  return c;
}

std::string read_sysctl(const std::string& name) {
  std::ifstream in("/proc/sys/" + name);
  std::string value;
  std::getline(in, value);
  if (!in && value.empty()) throw LoadError(fmt::format("cannot read /proc/sys/{}", name));
  return value;
}

void fill_pattern(std::vector<char>& buffer, std::uint64_t seed) {
  std::uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (auto& c : buffer) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x);
  }
}

std::uint32_t crc32(const void* data, std::size_t size) {
  static constexpr auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t crc = 0xffffffffu;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

double mib_per_s(std::uint64_t bytes, Nanos ns) {
  return ns ? static_cast<double>(bytes) / (1024.0 * 1024.0) / (static_cast<double>(ns) / 1e9)
            : 0.0;
}

}  // namespace wp::loadgen
