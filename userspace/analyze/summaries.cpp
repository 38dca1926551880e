#include "analyze/summaries.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <numeric>

namespace wp {

void SyncPhaseSummary::add(const SyncTimeline& sync) {
  const SyncPhases& p = sync.phases;
  phases_[0].add(sync.call.end_ns - sync.call.start_ns);
  phases_[1].add(p.writeback_ns);
  phases_[2].add(p.data_io_ns);
  phases_[3].add(p.journal_ns);
  phases_[4].add(p.flush_ns);
  phases_[5].add(p.other_ns);
}

PhaseStats SyncPhaseSummary::phase(std::size_t index) const {
  PhaseStats s;
  if (index >= phases_.size() || phases_[index].count() == 0) return s;
  const LogLinearHistogram& h = phases_[index];
  s.count = h.count();
  s.p50 = h.quantile(0.50);
  s.p99 = h.quantile(0.99);
  s.max = h.max();
  s.total = h.total();
  s.histogram = h.log2();
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
