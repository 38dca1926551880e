// SPDX-License-Identifier: Apache-2.0
// The phases of a sync call's latency, defined once: the enum, every name a phase goes by in
// the outputs, the order phases are reported in and the order they take precedence in. The
// stitcher, the summaries and every sink iterate these tables rather than listing phases.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "decode/events.h"

namespace wp {

// In the order they are reported: the order of the write path (the caller submits writeback,
// its data I/O runs, the journal commits, the disk's cache is flushed), the rest last.
enum class SyncPhase : std::uint8_t { Writeback, DataIo, Journal, Flush, Other };
inline constexpr std::size_t kSyncPhaseCount = 5;

// Partition of a sync's latency: these add up to end_ns - start_ns exactly.
struct SyncPhases {
  Nanos writeback_ns = 0;  // the caller submitting data writeback
  Nanos data_io_ns = 0;    // its data requests in flight
  Nanos journal_ns = 0;    // a journal commit on the device running
  Nanos flush_ns = 0;      // a cache FLUSH (or FUA post-flush) in flight
  Nanos other_ns = 0;
};

// One stretch of a sync call spent in one phase. A sync's segments tile [start_ns, end_ns] in
// time order with no gaps, adjacent segments of one phase merged: sinks draw them as they are.
struct PhaseSegment {
  SyncPhase phase = SyncPhase::Other;
  Nanos start_ns = 0;
  Nanos end_ns = 0;
};

struct SyncPhaseInfo {
  SyncPhase phase;
  const char* name;       // "data_io": JSON segments, summary rows, HTML classes
  const char* json_key;   // "data_io_ns": JSON and Perfetto totals, summary keys
  const char* text_name;  // "data-io": a sync's phase line in text output
  const char* label;      // "data I/O": Perfetto slices
  const char* title;      // "Data I/O": HTML legend
  const char* about;      // HTML: what the time went to
  Nanos SyncPhases::*total;
};

inline constexpr std::array<SyncPhaseInfo, kSyncPhaseCount> kSyncPhases = {{
    {SyncPhase::Writeback, "writeback", "writeback_ns", "writeback", "writeback", "Writeback",
     "the caller submitting its dirty pages to the block layer", &SyncPhases::writeback_ns},
    {SyncPhase::DataIo, "data_io", "data_io_ns", "data-io", "data I/O", "Data I/O",
     "its data requests in flight on the device", &SyncPhases::data_io_ns},
    {SyncPhase::Journal, "journal", "journal_ns", "journal", "journal", "Journal",
     "a filesystem journal commit running on the device", &SyncPhases::journal_ns},
    {SyncPhase::Flush, "flush", "flush_ns", "flush", "flush", "Cache flush",
     "the disk emptying its volatile write cache (FLUSH or FUA)", &SyncPhases::flush_ns},
    {SyncPhase::Other, "other", "other_ns", "other", "other", "Other",
     "anything else: CPU time, locks, waiting to be scheduled", &SyncPhases::other_ns},
}};

constexpr bool sync_phases_in_enum_order() {
  for (std::size_t i = 0; i < kSyncPhases.size(); ++i)
    if (static_cast<std::size_t>(kSyncPhases[i].phase) != i) return false;
  return true;
}
static_assert(sync_phases_in_enum_order(), "kSyncPhases is indexed by SyncPhase");

constexpr const SyncPhaseInfo& sync_phase_info(SyncPhase p) {
  return kSyncPhases[static_cast<std::size_t>(p)];
}

inline Nanos& phase_total(SyncPhases& phases, SyncPhase p) {
  return phases.*sync_phase_info(p).total;
}
inline Nanos phase_total(const SyncPhases& phases, SyncPhase p) {
  return phases.*sync_phase_info(p).total;
}

// The phases that compete for a sync's time, highest precedence first: where they overlap the
// time is the first one's (a flush in flight outranks a journal commit, which outranks data
// I/O, then writeback submission). Time none of them covers is Other.
inline constexpr std::array<SyncPhase, kSyncPhaseCount - 1> kSyncPhasePrecedence = {
    SyncPhase::Flush, SyncPhase::Journal, SyncPhase::DataIo, SyncPhase::Writeback};

static_assert(static_cast<std::size_t>(SyncPhase::Other) == kSyncPhasePrecedence.size(),
              "the competing phases come first, so that they index arrays of their own");

inline const char* sync_phase_name(SyncPhase p) {
  return sync_phase_info(p).name;
}
inline const char* sync_phase_label(SyncPhase p) {
  return sync_phase_info(p).label;
}

}  // namespace wp
