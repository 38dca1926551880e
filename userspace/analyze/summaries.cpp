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

void ReadFileSummary::add(const ReadTimeline& read) {
  const SyscallEvent& call = read.call;
  const std::pair<DevT, std::uint64_t> key{call.dev, call.ino};
  auto it = by_file_.find(key);
  const bool kept = it != by_file_.end() || by_file_.size() < kFilesKept;
  if (kept && it == by_file_.end()) {
    it = by_file_.emplace(key, FileReads{}).first;
    it->second.dev = call.dev;
    it->second.ino = call.ino;
  } else if (!kept && !others_) {
    others_.emplace();
  }
  FileReads& f = kept ? it->second : *others_;
  if (kept && f.path.empty()) f.path = call.path;
  if (kept && readers_.insert({call.dev, call.ino, call.pid}).second) f.processes += 1;
  f.pages_from_device += read.pages_from_device;
  f.pages_cached += read.pages_cached;
  f.readahead_pages += read.readahead_pages;
  std::vector<std::uint8_t>* pages = kept ? &pages_[key] : nullptr;
  if (!read.requests.empty())
    count_requests(f, cursors_[kept ? key : std::pair<DevT, std::uint64_t>{}], read);
  if (read.fault) {
    (read.fault->major ? f.major_faults : f.minor_faults) += 1;
    f.fault_ns += latency_ns(call);
    f.fault_pages_in += read.pages_from_device + read.readahead_pages;
    if (pages) touch(f, *pages, read.first_page, 1, read.pages_from_device != 0);
    return;
  }
  f.reads += 1;
  f.latency_ns += latency_ns(call);
  if (call.ret < 0) {
    f.failed += 1;
    return;
  }
  const auto bytes = static_cast<std::uint64_t>(call.ret);
  f.bytes += bytes;
  if (call.file_flags & file_flag::kDirect) f.direct_bytes += bytes;
  f.sync_readaheads += read.sync_readaheads;
  f.async_readaheads += read.async_readaheads;
  if (pages && read.pages != 0 && read.page_cache && !(call.file_flags & file_flag::kDirect))
    touch(f, *pages, read.first_page, read.pages, read.pages_from_device == read.pages);
}

void ReadFileSummary::count_requests(FileReads& f, RequestCursor& cursor,
                                     const ReadTimeline& read) {
  constexpr std::size_t kRecent = 64;
  for (const RequestTimeline& r : read.requests) {
    if (r.op != ReqOp::Read || r.bytes == 0) continue;
    const auto identity = std::make_tuple(r.disk, r.sector, r.issue_ns.value_or(0));
    if (std::find(cursor.recent.begin(), cursor.recent.end(), identity) != cursor.recent.end())
      continue;
    cursor.recent.push_back(identity);
    if (cursor.recent.size() > kRecent) cursor.recent.pop_front();
    f.read_requests += 1;
    f.request_bytes += r.bytes;
    std::size_t bucket = 0;
    while (bucket + 1 < FileReads::kRequestSizeBuckets && r.bytes > (4096ull << bucket)) ++bucket;
    f.request_sizes[bucket] += 1;
    if (f.read_requests > 1 && r.disk == cursor.disk && r.sector == cursor.end_sector)
      f.sequential_requests += 1;
    cursor.disk = r.disk;
    cursor.end_sector = r.sector + (r.bytes + 511) / 512;
    // Requests come nearly in issue order: the part of this one after the device was last busy
    // for the file is new busy time.
    if (r.issue_ns && r.complete_ns && *r.complete_ns > *r.issue_ns) {
      const Nanos from = std::max(*r.issue_ns, cursor.busy_until);
      if (*r.complete_ns > from) f.device_ns += *r.complete_ns - from;
      cursor.busy_until = std::max(cursor.busy_until, *r.complete_ns);
    }
  }
}

void ReadFileSummary::touch(FileReads& f, std::vector<std::uint8_t>& pages, std::uint64_t first,
                            std::uint64_t count, bool from_device) {
  const std::uint64_t end = first + count;
  if (end > pages.size()) {
    if (pages_followed_ + (end - pages.size()) > kPagesFollowed) return;
    pages_followed_ += end - pages.size();
    pages.resize(end, 0);
  }
  f.pages_followed = true;
  for (std::uint64_t i = first; i < end; ++i) {
    if (!(pages[i] & kTouched)) f.pages_touched += 1;
    if (from_device && (pages[i] & kFromDevice)) f.pages_again += 1;
    pages[i] |= kTouched | (from_device ? kFromDevice : 0);
  }
}

std::vector<FileReads> ReadFileSummary::files() const {
  std::vector<FileReads> out;
  for (const auto& [key, f] : by_file_) out.push_back(f);
  // Faults exist on x86 alone (the exceptions tracepoints): 4 KiB pages.
  const auto weight = [](const FileReads& f) { return f.bytes + (f.fault_pages_in << 12); };
  std::stable_sort(out.begin(), out.end(),
                   [&](const FileReads& a, const FileReads& b) { return weight(a) > weight(b); });
  if (others_) out.push_back(*others_);
  return out;
}

void NeighbourSummary::add(const SyncTimeline& sync) {
  for (const Neighbour& n : sync.neighbours) {
    Row& row = rows_[{sync.call.pid, n.owner.pid, n.owner.cgroup_id}];
    if (row.syncs == 0) {
      row.culprit = n.owner;
      row.victim_pid = sync.call.pid;
    }
    row.victim_comm = sync.call.comm;
    row.victim_cgroup = sync.call.cgroup;
    row.culprit.comm = n.owner.comm;
    ++row.syncs;
    row.bytes += n.bytes;
    row.delay_ns += n.delay_ns;
  }
}

std::vector<NeighbourSummary::Row> NeighbourSummary::rows(std::size_t limit) const {
  std::vector<Row> out;
  for (const auto& [key, row] : rows_) out.push_back(row);
  std::stable_sort(out.begin(), out.end(),
                   [](const Row& a, const Row& b) { return a.delay_ns > b.delay_ns; });
  if (out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace wp
