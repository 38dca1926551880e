// SPDX-License-Identifier: Apache-2.0
// Wait chains: a named wait linked to the timeline it waited on further down: the journal
// commit a journal wait waited for and the flushes that commit issued, or the flush a call
// waited for itself. Rules: docs/reference/stitching-rules.md, "Wait chains";
// tests: tests/unit/wait_rules_test.cpp.
#pragma once

#include <vector>

#include "stitch/durability_tracker.h"
#include "stitch/io_state.h"
#include "stitch/journal_tracker.h"

namespace wp::stitch {

class WaitChains {
 public:
  WaitChains(const DeviceTable& devices, const DurabilityTracker& durability,
             const JournalTracker& journal)
      : devices_(devices), durability_(durability), journal_(journal) {}

  // Fills the chain of each of `call`'s waits that has one (at the call's return: what it
  // waited on has finished, or is still running).
  void link(const SyscallEvent& call, std::vector<NamedWait>& waits) const;

 private:
  std::vector<RequestTimeline> flushes_of(DevT fs_dev, Nanos start, Nanos end) const;

  const DeviceTable& devices_;
  const DurabilityTracker& durability_;
  const JournalTracker& journal_;
};

}  // namespace wp::stitch
