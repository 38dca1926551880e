// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <array>

#include "agent/explain/explain.h"
#include "agent/explain/lines.h"
#include "common/units.h"
#include "loadgen/measure.h"

namespace wp::explain {

std::vector<std::string> explain_wal(const loadgen::ScenarioResult& result,
                                     const std::vector<Timeline>& timelines) {
  std::vector<Nanos> latency;
  std::array<std::vector<Nanos>, kSyncPhaseCount> phase_ns;  // indexed by SyncPhase
  Nanos all_ns = 0, flush_journal_ns = 0;
  std::size_t with_flush = 0, with_commit = 0;
  for (const auto& item : timelines) {
    const auto* sync = std::get_if<SyncTimeline>(&item);
    if (!sync || sync->call.syscall != Syscall::Fsync) continue;
    const SyncPhases& p = sync->phases;
    latency.push_back(latency_ns(sync->call));
    for (const SyncPhaseInfo& phase : kSyncPhases)
      phase_ns[static_cast<std::size_t>(phase.phase)].push_back(p.*phase.total);
    all_ns += latency.back();
    flush_journal_ns += p.flush_ns + p.journal_ns;
    with_flush += !sync->flushes.empty();
    with_commit += !sync->commits.empty();
  }
  std::vector<std::string> out;
  out.push_back(fmt::format("{} fsyncs traced (the log made {})", latency.size(),
                            result.figures.value("count", std::uint64_t{0})));
  if (latency.empty()) return out;
  std::string p50s;
  for (const SyncPhaseInfo& phase : kSyncPhases) {
    p50s += fmt::format(
        "{}{} {}", p50s.empty() ? "" : ", ", phase.text_name,
        human_duration(loadgen::summarize(phase_ns[static_cast<std::size_t>(phase.phase)]).p50));
  }
  out.push_back(fmt::format("per fsync, p50 of each phase: {} (fsync p50 {})", p50s,
                            human_duration(loadgen::summarize(latency).p50)));
  out.push_back(fmt::format(
      "journal + flush: {:.0f}% of all fsync time — the fixed round trip, whatever the record "
      "size",
      all_ns ? 100.0 * static_cast<double>(flush_journal_ns) / static_cast<double>(all_ns) : 0.0));
  out.push_back(fmt::format("{} of them waited for a journal commit, {} for a cache flush",
                            with_commit, with_flush));
  out.push_back(durable_writes_line(timelines));
  return out;
}

}  // namespace wp::explain
