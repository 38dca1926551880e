// End-of-trace summaries computed from the stitched timelines (pure: timelines in, figures
// out): the fsync phase breakdown and the O_DIRECT verdict.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "stitch/timeline.h"

namespace wp {

// log2 histogram of nanoseconds: bucket i counts values in [2^i, 2^(i+1)) ns; bucket 0 also
// takes 0 and 1.
struct Log2Histogram {
  std::array<std::uint64_t, 64> buckets{};
  void add(Nanos value);
  std::uint64_t count() const;
};

// Log-linear (HDR-style) histogram of nanoseconds, fixed size whatever the number of samples:
// a long trace makes millions of sync calls and must not keep one sample per call. Values
// below 2^kSubBucketBits are counted exactly; each power of two above is cut into
// 2^kSubBucketBits linear sub-buckets, so a bucket's width is at most 1/128 of its lower bound
// and a quantile (the middle of its bucket) is within 0.4 % of the exact nearest-rank value.
// Count, min, max and total are exact.
class LogLinearHistogram {
 public:
  static constexpr unsigned kSubBucketBits = 7;
  static constexpr std::size_t kSubBuckets = std::size_t{1} << kSubBucketBits;  // 128
  // [0, 128) one bucket per value, then 128 per power of two from 2^7 to 2^63.
  static constexpr std::size_t kBuckets = kSubBuckets + (64 - kSubBucketBits) * kSubBuckets;

  void add(Nanos value);
  std::uint64_t count() const { return count_; }
  Nanos min() const { return count_ ? min_ : 0; }
  Nanos max() const { return max_; }
  // Sum of every value; saturates at 2^64 - 1 rather than wrapping.
  Nanos total() const { return total_; }
  // Nearest-rank quantile, q in [0, 1] (0 for an empty histogram).
  Nanos quantile(double q) const;
  // The same samples in power-of-two buckets: each log-linear bucket lies inside one.
  Log2Histogram log2() const;

  // The 1-based rank of the nearest-rank q-quantile of n samples (n > 0).
  static std::uint64_t nearest_rank(double q, std::uint64_t n);

  static std::size_t bucket_of(Nanos value);
  static Nanos bucket_lower(std::size_t bucket);
  static Nanos bucket_width(std::size_t bucket);

 private:
  std::array<std::uint64_t, kBuckets> buckets_{};
  std::uint64_t count_ = 0;
  Nanos min_ = ~Nanos{0};
  Nanos max_ = 0;
  Nanos total_ = 0;
};

struct PhaseStats {
  std::uint64_t count = 0;
  Nanos p50 = 0;  // within 1 % of exact (LogLinearHistogram)
  Nanos p99 = 0;
  Nanos max = 0;    // exact
  Nanos total = 0;  // exact
  Log2Histogram histogram;
};

// Per-phase figures of every sync call of the trace (fsync, fdatasync, …), in fixed memory: its
// latency and each of its phases (nearest-rank percentiles).
class SyncPhaseSummary {
 public:
  void add(const SyncTimeline& sync);
  std::uint64_t syncs() const { return latency_.count(); }
  PhaseStats latency() const;
  PhaseStats phase(SyncPhase p) const;

  // What the sinks print: the latency, then each phase in report order.
  struct Row {
    const char* name;      // "latency", "data_io"
    const char* json_key;  // "latency_ns", "data_io_ns"
    PhaseStats stats;
  };
  std::vector<Row> rows() const;

 private:
  LogLinearHistogram latency_;
  std::array<LogLinearHistogram, kSyncPhaseCount> phases_;  // indexed by SyncPhase
};

// Does O_DIRECT really bypass the page cache? Per process and file.
struct DirectIoVerdict {
  std::uint32_t pid = 0;
  std::string comm;
  DevT dev = 0;
  std::uint64_t ino = 0;
  std::uint64_t writes = 0;  // direct writes that wrote something
  std::uint64_t bytes = 0;
  std::uint64_t pages_dirtied = 0;   // expected 0
  std::uint64_t buffered_bytes = 0;  // bytes of direct writes that dirtied pages anyway
  std::uint64_t einval = 0;          // attempts refused for misalignment
  std::uint64_t other_errors = 0;
  bool bypassed() const { return pages_dirtied == 0 && buffered_bytes == 0; }
};

class DirectIoSummary {
 public:
  void add(const WriteTimeline& write);
  std::vector<DirectIoVerdict> verdicts() const;  // ordered by pid, then file

 private:
  std::map<std::tuple<std::uint32_t, DevT, std::uint64_t>, DirectIoVerdict> by_file_;
};

}  // namespace wp
