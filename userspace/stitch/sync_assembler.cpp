// SPDX-License-Identifier: Apache-2.0
#include "stitch/sync_assembler.h"

#include <algorithm>
#include <unordered_set>

namespace wp::stitch {

void partition_phases(Nanos start, Nanos end, const PhaseIntervals& intervals, SyncPhases& phases,
                      std::vector<PhaseSegment>& segments) {
  struct Edge {
    Nanos at;
    SyncPhase phase;
    int delta;
  };
  std::vector<Edge> edges;
  for (SyncPhase p : kSyncPhasePrecedence) {
    for (const auto& [lo_raw, hi_raw] : intervals[static_cast<std::size_t>(p)]) {
      const Nanos lo = std::max(lo_raw, start);
      const Nanos hi = std::min(hi_raw, end);
      if (lo >= hi) continue;
      edges.push_back({lo, p, +1});
      edges.push_back({hi, p, -1});
    }
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.at < b.at; });
  std::array<int, kSyncPhasePrecedence.size()> active{};  // indexed by SyncPhase
  phases = SyncPhases{};
  Nanos prev = start;
  auto account = [&](Nanos until) {
    if (until <= prev) return;
    SyncPhase owner = SyncPhase::Other;
    for (SyncPhase p : kSyncPhasePrecedence) {
      if (active[static_cast<std::size_t>(p)] > 0) {
        owner = p;
        break;
      }
    }
    phase_total(phases, owner) += until - prev;
    if (!segments.empty() && segments.back().phase == owner) {
      segments.back().end_ns = until;
    } else {
      segments.push_back(PhaseSegment{owner, prev, until});
    }
    prev = until;
  };
  for (const Edge& e : edges) {
    account(e.at);
    active[static_cast<std::size_t>(e.phase)] += e.delta;
  }
  account(end);
}

SyncTimeline SyncAssembler::assemble(const SyscallEvent& ev) const {
  SyncTimeline s;
  s.call = ev;
  const Nanos start = ev.start_ns;
  const Nanos end = call_end(ev);
  PhaseIntervals intervals;
  auto& flush = intervals[static_cast<std::size_t>(SyncPhase::Flush)];
  auto& journal = intervals[static_cast<std::size_t>(SyncPhase::Journal)];
  auto& data_io = intervals[static_cast<std::size_t>(SyncPhase::DataIo)];
  auto& writeback = intervals[static_cast<std::size_t>(SyncPhase::Writeback)];

  // Its own bios: the data writeback it submitted.
  std::vector<std::shared_ptr<Request>> requests;
  std::unordered_set<const Request*> seen;
  std::optional<Nanos> last_bio;
  if (const auto* bios = history_.bios_of_thread(ev.tid)) {
    for (auto b = bios->rbegin(); b != bios->rend(); ++b) {
      const Bio& bio = **b;
      if (bio.ev.ts < start) break;
      if (bio.ev.ts > end || is_flush_bio(bio.ev)) continue;
      if (bio_of_another_uring_op(bio.ev, ev)) continue;
      // Writeback submission is of data; metadata bios are the journal's (below).
      if (!(bio.ev.flags & req_flag::kMeta) && (!last_bio || bio.ev.ts > *last_bio))
        last_bio = bio.ev.ts;
      // A request still in flight when the call returned was not waited for: writeback the
      // thread only kicked off (btrfs writes dirty btree pages out from inside a sync and
      // does not wait for them), not part of what the sync made safe.
      if (bio.request && !uncertain(*bio.request) &&
          (!bio.request->tl.complete_ns || *bio.request->tl.complete_ns > end))
        continue;
      if (bio.request && bio.request->tl.op != ReqOp::Flush &&
          seen.insert(bio.request.get()).second) {
        requests.push_back(bio.request);
        if (uncertain(*bio.request)) s.incomplete = true;
      }
    }
  }
  std::reverse(requests.begin(), requests.end());
  // Its metadata writes are the file system's log or journal written by the sync itself: from
  // the first one queued to the last one done is journal time (the log being written and
  // waited for), the time between them included.
  std::optional<std::pair<Nanos, Nanos>> metadata_span;
  for (const auto& r : requests) {
    const Nanos lo = request_start(r->tl).value_or(start);
    const Nanos hi = r->tl.complete_ns.value_or(end);
    if (r->tl.flags & req_flag::kMeta) {
      s.journal_requests.push_back(r->tl);
      const Nanos first = request_first_known(r->tl).value_or(lo);
      metadata_span = metadata_span ? std::pair{std::min(metadata_span->first, first),
                                                std::max(metadata_span->second, hi)}
                                    : std::pair{first, hi};
    } else {
      s.requests.push_back(r->tl);
      data_io.emplace_back(lo, hi);
    }
  }
  if (metadata_span) journal.push_back(*metadata_span);
  if (last_bio) writeback.emplace_back(start, *last_bio);

  // Flushes completing inside the call on its file system's disks (every disk's for sync(2)).
  const DevT fs_dev = ev.fs_dev != 0 ? ev.fs_dev : ev.dev;
  const std::vector<DevT> disks = fs_dev == 0 ? std::vector<DevT>{0} : devices_.disks_of(fs_dev);
  for (DevT disk : disks) {
    for (const FlushRecord* f : durability_.flushes_within(disk, start, end)) {
      s.flushes.push_back(f->request);
      flush.emplace_back(f->start, f->end);
    }
  }

  // Journal commits on its device overlapping the call, and its own xfs log force.
  s.commits = journal_.overlapping(fs_dev, start, end);
  for (const JournalCommit& c : s.commits)
    journal.emplace_back(first_known(c).value_or(start), c.end_ns.value_or(end));
  if (auto force = journal_.log_force_span(ev.tid, fs_dev, start, end)) journal.push_back(*force);

  partition_phases(start, end, intervals, s.phases, s.segments);
  return s;
}

}  // namespace wp::stitch
