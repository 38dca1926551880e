// SPDX-License-Identifier: Apache-2.0
// What the text output explains besides the items themselves: the one-time legend of its codes
// and units, and which of a sync's phases ran at the same time.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "sinks/sink.h"

namespace wp {

// The legend the text sink prints once, before the first item with a request, flush, journal
// or phase line: blktrace's RWBS request codes as writepath prints them, what `sector` counts,
// and how phases share time. Each line ends in '\n'.
std::string format_legend(const SinkOptions& options);

// Whether `item` prints a line the legend explains (a request code or a phase line).
bool needs_legend(const Timeline& item);

// For each phase (indexed by SyncPhase), the other phases it ran at the same time as during the
// call, in report order: from the sync's data requests (queued to completed), its journal work
// (commits on the device, its own metadata writes) and its flushes (issued to completed).
// Writeback submission is left out: the timeline does not keep when its last bio was queued.
using PhaseOverlaps = std::array<std::vector<SyncPhase>, kSyncPhaseCount>;
PhaseOverlaps phase_overlaps(const SyncTimeline& sync);

}  // namespace wp
