// SPDX-License-Identifier: Apache-2.0
#include "sinks/text_notes.h"

#include <algorithm>
#include <utility>

namespace wp {

std::string format_legend(const SinkOptions& /*options*/) {
  // Written once per output, not per item: a person reads it once, a script skips it.
  return "legend: request codes as blktrace's RWBS: a leading F = cache flush first (PREFLUSH),\n"
         "        then W write, R read, D discard, F cache flush, N other; after it F = FUA\n"
         "        (written through the cache), S sync, M metadata (journal, log). FF is a pure\n"
         "        cache flush, WS a sync write. sector: 512-byte units from the disk's start.\n"
         "        Times: +offset from the call's start. phases: they add up to the latency;\n"
         "        where phases ran together, marked (overlaps X), the shared time is counted\n"
         "        once, for the first of flush, journal, data-io, writeback.\n";
}

bool needs_legend(const Timeline& item) {
  if (const auto* write = std::get_if<WriteTimeline>(&item)) return !write->requests.empty();
  const auto* kept = std::get_if<SyncTimeline>(&item);
  if (!kept) return false;  // a name-change item shows no request
  const auto& sync = *kept;
  return !sync.requests.empty() || !sync.journal_requests.empty() || !sync.flushes.empty() ||
         !sync.commits.empty() || sync.phases.writeback_ns != 0 || sync.phases.data_io_ns != 0 ||
         sync.phases.journal_ns != 0 || sync.phases.flush_ns != 0;
}

namespace {

using Span = std::pair<Nanos, Nanos>;

bool spans_meet(const std::vector<Span>& a, const std::vector<Span>& b) {
  for (const Span& x : a)
    for (const Span& y : b)
      if (std::max(x.first, y.first) < std::min(x.second, y.second)) return true;
  return false;
}

}  // namespace

PhaseOverlaps phase_overlaps(const SyncTimeline& sync) {
  const Nanos start = sync.call.start_ns;
  const Nanos end = call_end(sync.call);
  std::array<std::vector<Span>, kSyncPhaseCount> spans;
  // As the stitcher bounds them (SyncAssembler), clipped to the call.
  auto add = [&](SyncPhase phase, std::optional<Nanos> lo, std::optional<Nanos> hi) {
    const Nanos from = std::max(lo.value_or(start), start);
    const Nanos to = std::min(hi.value_or(end), end);
    if (from < to) spans[static_cast<std::size_t>(phase)].emplace_back(from, to);
  };
  for (const RequestTimeline& r : sync.requests)
    add(SyncPhase::DataIo, request_start(r), r.complete_ns);
  for (const RequestTimeline& r : sync.journal_requests)
    add(SyncPhase::Journal, request_first_known(r), r.complete_ns);
  for (const JournalCommit& c : sync.commits) add(SyncPhase::Journal, first_known(c), c.end_ns);
  for (const RequestTimeline& f : sync.flushes)
    add(SyncPhase::Flush, request_start(f), f.complete_ns);

  PhaseOverlaps overlaps;
  for (const SyncPhaseInfo& a : kSyncPhases)
    for (const SyncPhaseInfo& b : kSyncPhases)
      if (a.phase != b.phase && spans_meet(spans[static_cast<std::size_t>(a.phase)],
                                           spans[static_cast<std::size_t>(b.phase)]))
        overlaps[static_cast<std::size_t>(a.phase)].push_back(b.phase);
  return overlaps;
}

}  // namespace wp
