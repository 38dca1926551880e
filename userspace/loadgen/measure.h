// SPDX-License-Identifier: Apache-2.0
// Measurements and small I/O helpers shared by the scenarios.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/fd.h"
#include "common/nanos.h"

namespace wp::loadgen {

// Monotonic time since construction.
class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  Nanos elapsed_ns() const;
  double elapsed_s() const { return static_cast<double>(elapsed_ns()) / 1e9; }

 private:
  std::chrono::steady_clock::time_point start_;
};

struct LatencySummary {
  std::uint64_t count = 0;
  Nanos p50 = 0;
  Nanos p99 = 0;
  Nanos max = 0;
  Nanos mean = 0;
};
LatencySummary summarize(std::vector<Nanos> samples);  // nearest-rank percentiles

// Page-aligned anonymous memory (mmap): what O_DIRECT needs of a buffer.
class AlignedBuffer {
 public:
  explicit AlignedBuffer(std::size_t length);
  ~AlignedBuffer();
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  char* data() const { return data_; }

 private:
  char* data_ = nullptr;
  std::size_t length_;
};

// open(2) that throws LoadError with the path and errno text.
UniqueFd open_file(const std::filesystem::path& path, int flags, mode_t mode = 0644);
// pwrite/pread every byte or throw LoadError.
void write_all(int fd, const void* data, std::size_t size, off_t offset);
// How much of a large content a scenario moves per write(2) or read(2): 1 MiB, big enough
// that the call count stays small, small enough to keep the buffer cheap.
constexpr std::uint64_t kChunkBytes = 1u << 20;
void read_all(int fd, void* data, std::size_t size, off_t offset);
void fsync_or_throw(int fd, const char* what = "fsync");
void fdatasync_or_throw(int fd, const char* what = "fdatasync");

// /proc/meminfo field in bytes ("Dirty", "Writeback", "Cached").
std::uint64_t meminfo_bytes(const std::string& field);

// cachestat(2) of the whole file (Linux 6.5+), in pages: nullopt where the kernel has none.
struct FileCacheStat {
  std::uint64_t cached = 0, dirty = 0, writeback = 0;
};
std::optional<FileCacheStat> file_cachestat(int fd);

// The bytes of the file's own pages that are dirty or under writeback, from cachestat(2)
// (Linux 6.5+): nullopt where the kernel has no cachestat. Unlike meminfo's Dirty, no other
// process's pages count.
std::optional<std::uint64_t> file_pending_bytes(int fd);

// How many of the file's pages are in the page cache (mincore).
struct Residency {
  std::uint64_t resident_pages = 0;
  std::uint64_t total_pages = 0;
};
Residency page_cache_residency(const std::filesystem::path& path);

// Writes back and drops the file's pages from the page cache (fdatasync + fadvise DONTNEED).
void drop_page_cache(int fd);

struct ProcessCounters {
  std::uint64_t major_faults = 0;
  std::uint64_t minor_faults = 0;
  std::uint64_t rss_bytes = 0;
  std::uint64_t read_bytes = 0;   // /proc/self/io read_bytes: what came from storage
  std::uint64_t write_bytes = 0;  // /proc/self/io write_bytes: what it dirtied or wrote to storage
  bool io_accounted = false;      // the kernel has /proc/self/io (CONFIG_TASK_IO_ACCOUNTING)
};
ProcessCounters process_counters();

std::string read_sysctl(const std::string& name);

// Deterministic bytes for a file's content (a block's checksum then tells what is wrong).
void fill_pattern(std::vector<char>& buffer, std::uint64_t seed);
std::uint32_t crc32(const void* data, std::size_t size);

double mib_per_s(std::uint64_t bytes, Nanos ns);

}  // namespace wp::loadgen
