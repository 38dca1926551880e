// SPDX-License-Identifier: Apache-2.0
// Fixed-size histograms of nanoseconds and nearest-rank percentiles: the one implementation of
// quantiles for the summaries (bounded memory, any number of samples) and the load generator
// (exact, over the samples it kept).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/nanos.h"

namespace wp {

// The 1-based rank of the nearest-rank q-quantile of n samples (n > 0): the smallest value
// with at least q·n samples at or below it.
std::uint64_t nearest_rank(double q, std::uint64_t n);

// The exact nearest-rank q-quantile of `sorted` (ascending; 0 when empty).
Nanos exact_quantile(const std::vector<Nanos>& sorted, double q);

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

}  // namespace wp
