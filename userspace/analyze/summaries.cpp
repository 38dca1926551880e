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

void SyncPhaseSummary::add(const SyncTimeline& sync) {
  const SyncPhases& p = sync.phases;
  latency_.push_back(sync.call.end_ns - sync.call.start_ns);
  writeback_.push_back(p.writeback_ns);
  data_io_.push_back(p.data_io_ns);
  journal_.push_back(p.journal_ns);
  flush_.push_back(p.flush_ns);
  other_.push_back(p.other_ns);
}

PhaseStats SyncPhaseSummary::phase(std::size_t index) const {
  const std::vector<Nanos>* all[] = {&latency_, &writeback_, &data_io_,
                                     &journal_, &flush_,     &other_};
  PhaseStats s;
  if (index >= std::size(all) || all[index]->empty()) return s;
  std::vector<Nanos> v = *all[index];
  std::sort(v.begin(), v.end());
  auto rank = [&v](double q) {
    std::size_t i = static_cast<std::size_t>(q * static_cast<double>(v.size()) + 0.999999);
    return v[std::clamp<std::size_t>(i, 1, v.size()) - 1];
  };
  s.count = v.size();
  s.p50 = rank(0.50);
  s.p99 = rank(0.99);
  s.max = v.back();
  s.total = std::accumulate(v.begin(), v.end(), Nanos{0});
  for (Nanos x : v) s.histogram.add(x);
  return s;
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
  v.bytes += static_cast<std::uint64_t>(call.ret);
  v.pages_dirtied += call.pages_dirtied;
  // The filesystem took the buffered path for this one (e.g. ext4 for some unaligned or
  // extending writes, or a file with data=journal): its bytes went through the page cache.
  if (call.pages_dirtied > 0) v.buffered_bytes += static_cast<std::uint64_t>(call.ret);
}

std::vector<DirectIoVerdict> DirectIoSummary::verdicts() const {
  std::vector<DirectIoVerdict> out;
  for (const auto& [key, v] : by_file_) out.push_back(v);
  return out;
}

}  // namespace wp
