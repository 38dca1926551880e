// SPDX-License-Identifier: Apache-2.0
// Sync assembler: a sync call's timeline from what the trackers below hold when its record
// arrives (at its exit): the data requests carrying bios its thread submitted during the
// call, the flushes completing on its disk inside the call, and the journal commits on its
// device overlapping it; then the partition of its latency into phases.
// Rules: docs/reference/stitching-rules.md, "Syncs"; tests: tests/unit/sync_assembler_test.cpp.
#pragma once

#include <array>
#include <utility>
#include <vector>

#include "stitch/durability_tracker.h"
#include "stitch/io_state.h"
#include "stitch/journal_tracker.h"

namespace wp::stitch {

// Intervals per competing phase (every phase but Other), indexed by SyncPhase.
using PhaseIntervals =
    std::array<std::vector<std::pair<Nanos, Nanos>>, kSyncPhasePrecedence.size()>;

// Splits [start, end] among the phases by precedence (kSyncPhasePrecedence: a flush in flight
// outranks a journal commit, which outranks data I/O, then writeback submission); time no
// interval covers is `other`. The segments tile [start, end], so the totals add up exactly.
void partition_phases(Nanos start, Nanos end, const PhaseIntervals& intervals, SyncPhases& phases,
                      std::vector<PhaseSegment>& segments);

class SyncAssembler {
 public:
  SyncAssembler(const DeviceTable& devices, const BioHistory& history,
                const DurabilityTracker& durability, const JournalTracker& journal)
      : devices_(devices), history_(history), durability_(durability), journal_(journal) {}

  // The timeline of sync call `ev` (causes and incomplete are the caller's to set).
  SyncTimeline assemble(const SyscallEvent& ev) const;

 private:
  const DeviceTable& devices_;
  const BioHistory& history_;
  const DurabilityTracker& durability_;
  const JournalTracker& journal_;
};

}  // namespace wp::stitch
