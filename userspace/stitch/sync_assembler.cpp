#include "stitch/sync_assembler.h"

#include <algorithm>
#include <unordered_set>

namespace wp::stitch {

void partition_phases(Nanos start, Nanos end, const PhaseIntervals& intervals, SyncPhases& phases,
                      std::vector<PhaseSegment>& segments) {
  struct Edge {
    Nanos at;
    int phase;
    int delta;
  };
  std::vector<Edge> edges;
  for (int p = 0; p < 4; ++p) {
    for (const auto& [lo_raw, hi_raw] : intervals[p]) {
      const Nanos lo = std::max(lo_raw, start);
      const Nanos hi = std::min(hi_raw, end);
      if (lo >= hi) continue;
      edges.push_back({lo, p, +1});
      edges.push_back({hi, p, -1});
    }
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.at < b.at; });
  std::array<Nanos, kSyncPhaseCount> totals{};
  std::array<int, 4> active{};
  Nanos prev = start;
  auto account = [&](Nanos until) {
    if (until <= prev) return;
    int owner = static_cast<int>(SyncPhase::Other);
    for (int p = 0; p < 4; ++p) {
      if (active[p] > 0) {
        owner = p;
        break;
      }
    }
    totals[owner] += until - prev;
    const auto phase = static_cast<SyncPhase>(owner);
    if (!segments.empty() && segments.back().phase == phase) {
      segments.back().end_ns = until;
    } else {
      segments.push_back(PhaseSegment{phase, prev, until});
    }
    prev = until;
  };
  for (const Edge& e : edges) {
    account(e.at);
    active[e.phase] += e.delta;
  }
  account(end);
  phases.flush_ns = totals[static_cast<int>(SyncPhase::Flush)];
  phases.journal_ns = totals[static_cast<int>(SyncPhase::Journal)];
  phases.data_io_ns = totals[static_cast<int>(SyncPhase::DataIo)];
  phases.writeback_ns = totals[static_cast<int>(SyncPhase::Writeback)];
  phases.other_ns = totals[static_cast<int>(SyncPhase::Other)];
}

SyncTimeline SyncAssembler::assemble(const SyscallEvent& ev) const {
  SyncTimeline s;
  s.call = ev;
  const Nanos start = ev.start_ns;
  const Nanos end = std::max(ev.end_ns, ev.start_ns);
  PhaseIntervals intervals;
  auto& flush = intervals[static_cast<int>(SyncPhase::Flush)];
  auto& journal = intervals[static_cast<int>(SyncPhase::Journal)];
  auto& data_io = intervals[static_cast<int>(SyncPhase::DataIo)];
  auto& writeback = intervals[static_cast<int>(SyncPhase::Writeback)];

  // Its own bios: the data writeback it submitted.
  std::vector<std::shared_ptr<Request>> requests;
  std::unordered_set<const Request*> seen;
  std::optional<Nanos> last_bio;
  if (const auto* bios = block_.bios_of_thread(ev.tid)) {
    for (auto b = bios->rbegin(); b != bios->rend(); ++b) {
      const Bio& bio = **b;
      if (bio.ev.ts < start) break;
      if (bio.ev.ts > end || is_flush_bio(bio.ev)) continue;
      if (!last_bio || bio.ev.ts > *last_bio) last_bio = bio.ev.ts;
      if (bio.request && bio.request->tl.op != ReqOp::Flush &&
          seen.insert(bio.request.get()).second) {
        requests.push_back(bio.request);
        if (bio.request->lost_tracking) s.incomplete = true;
      }
    }
  }
  std::reverse(requests.begin(), requests.end());
  for (const auto& r : requests) {
    s.requests.push_back(r->tl);
    data_io.emplace_back(request_start(r->tl).value_or(start), r->tl.complete_ns.value_or(end));
  }
  if (last_bio) writeback.emplace_back(start, *last_bio);

  // Flushes on its device completing inside the call.
  for (const FlushRecord* f :
       durability_.flushes_within(ev.dev == 0 ? 0 : devices_.disk_of(ev.dev), start, end)) {
    s.flushes.push_back(f->request);
    flush.emplace_back(f->start, f->end);
  }

  // Journal commits on its device overlapping the call.
  s.commits = journal_.overlapping(ev.dev, start, end);
  for (const JournalCommit& c : s.commits)
    journal.emplace_back(first_known(c), c.end_ns.value_or(end));

  partition_phases(start, end, intervals, s.phases, s.segments);
  return s;
}

}  // namespace wp::stitch
