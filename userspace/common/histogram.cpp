// SPDX-License-Identifier: Apache-2.0
#include "common/histogram.h"

#include <algorithm>
#include <bit>
#include <numeric>

namespace wp {

std::uint64_t nearest_rank(double q, std::uint64_t n) {
  // The slack keeps q·n that floating point lands a hair above an integer (0.99 · 100) on that
  // integer.
  const double wanted = std::clamp(q, 0.0, 1.0) * static_cast<double>(n);
  return std::clamp<std::uint64_t>(static_cast<std::uint64_t>(wanted + 0.999999), 1, n);
}

Nanos exact_quantile(const std::vector<Nanos>& sorted, double q) {
  if (sorted.empty()) return 0;
  return sorted[nearest_rank(q, sorted.size()) - 1];
}

void Log2Histogram::add(Nanos value) {
  buckets[value < 2 ? 0 : static_cast<std::size_t>(std::bit_width(value) - 1)] += 1;
}

std::uint64_t Log2Histogram::count() const {
  return std::accumulate(buckets.begin(), buckets.end(), std::uint64_t{0});
}

std::size_t LogLinearHistogram::bucket_of(Nanos value) {
  if (value < kSubBuckets) return static_cast<std::size_t>(value);
  const unsigned power = static_cast<unsigned>(std::bit_width(value)) - 1;  // 7..63
  const unsigned shift = power - kSubBucketBits;
  const std::size_t sub = static_cast<std::size_t>(value >> shift) - kSubBuckets;  // 0..127
  return kSubBuckets + shift * kSubBuckets + sub;
}

Nanos LogLinearHistogram::bucket_lower(std::size_t bucket) {
  if (bucket < kSubBuckets) return bucket;
  const std::size_t shift = (bucket - kSubBuckets) / kSubBuckets;
  const std::size_t sub = (bucket - kSubBuckets) % kSubBuckets;
  return static_cast<Nanos>(kSubBuckets + sub) << shift;
}

Nanos LogLinearHistogram::bucket_width(std::size_t bucket) {
  if (bucket < kSubBuckets) return 1;
  return Nanos{1} << ((bucket - kSubBuckets) / kSubBuckets);
}

void LogLinearHistogram::add(Nanos value) {
  buckets_[bucket_of(value)] += 1;
  count_ += 1;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  total_ = total_ > ~Nanos{0} - value ? ~Nanos{0} : total_ + value;
}

Nanos LogLinearHistogram::quantile(double q) const {
  if (count_ == 0) return 0;
  const std::uint64_t rank = nearest_rank(q, count_);
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    seen += buckets_[b];
    if (seen < rank) continue;
    // The middle of the bucket halves the worst error; the exact extremes keep a bucket that
    // holds the smallest or largest sample from answering past it.
    const Nanos middle = bucket_lower(b) + (bucket_width(b) - 1) / 2;
    return std::clamp(middle, min_, max_);
  }
  return max_;
}

Log2Histogram LogLinearHistogram::log2() const {
  Log2Histogram out;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    if (!buckets_[b]) continue;
    const Nanos lower = bucket_lower(b);
    out.buckets[lower < 2 ? 0 : static_cast<std::size_t>(std::bit_width(lower) - 1)] += buckets_[b];
  }
  return out;
}

}  // namespace wp
