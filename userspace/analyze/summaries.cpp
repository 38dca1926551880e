#include "analyze/summaries.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <numeric>

namespace wp {

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

std::uint64_t LogLinearHistogram::nearest_rank(double q, std::uint64_t n) {
  // The smallest value with at least q·n samples at or below it; the slack keeps q·n that
  // floating point lands a hair above an integer (0.99 · 100) on that integer.
  const double wanted = std::clamp(q, 0.0, 1.0) * static_cast<double>(n);
  return std::clamp<std::uint64_t>(static_cast<std::uint64_t>(wanted + 0.999999), 1, n);
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

namespace {

PhaseStats stats_of(const LogLinearHistogram& h) {
  PhaseStats s;
  if (h.count() == 0) return s;
  s.count = h.count();
  s.p50 = h.quantile(0.50);
  s.p99 = h.quantile(0.99);
  s.max = h.max();
  s.total = h.total();
  s.histogram = h.log2();
  return s;
}

}  // namespace

void SyncPhaseSummary::add(const SyncTimeline& sync) {
  latency_.add(latency_ns(sync.call));
  for (const SyncPhaseInfo& info : kSyncPhases)
    phases_[static_cast<std::size_t>(info.phase)].add(sync.phases.*info.total);
}

PhaseStats SyncPhaseSummary::latency() const {
  return stats_of(latency_);
}

PhaseStats SyncPhaseSummary::phase(SyncPhase p) const {
  return stats_of(phases_[static_cast<std::size_t>(p)]);
}

std::vector<SyncPhaseSummary::Row> SyncPhaseSummary::rows() const {
  std::vector<Row> rows = {{"latency", "latency_ns", latency()}};
  for (const SyncPhaseInfo& info : kSyncPhases)
    rows.push_back({info.name, info.json_key, phase(info.phase)});
  return rows;
}

void DirectIoSummary::add(const WriteTimeline& write) {
  if (!write.direct) return;
  const SyscallEvent& call = write.call;
  DirectIoVerdict& v = by_file_[{call.pid, call.dev, call.ino}];
  v.pid = call.pid;
  v.comm = call.comm;
  v.dev = call.dev;
  v.ino = call.ino;
  if (call.ret < 0) {
    (call.ret == -EINVAL ? v.einval : v.other_errors) += 1;
    return;
  }
  v.writes += 1;
  v.bytes += bytes_written(call);
  v.pages_dirtied += call.pages_dirtied;
  // The filesystem took the buffered path for this one (e.g. ext4 for some unaligned or
  // extending writes, or a file with data=journal): its bytes went through the page cache.
  if (call.pages_dirtied > 0) v.buffered_bytes += bytes_written(call);
}

std::vector<DirectIoVerdict> DirectIoSummary::verdicts() const {
  std::vector<DirectIoVerdict> out;
  for (const auto& [key, v] : by_file_) out.push_back(v);
  return out;
}

}  // namespace wp
