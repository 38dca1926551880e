// SPDX-License-Identifier: Apache-2.0
#include "analyze/summaries.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <numeric>

namespace wp {

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
  if (v.path.empty()) v.path = call.path;
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
