// Journal tracker: jbd2 commits per device, from their phase events, kept for the syncs that
// overlap them. Rules: docs/ARCHITECTURE.md, "Stitching rules: journal";
// tests: tests/unit/journal_tracker_test.cpp.
#pragma once

#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "stitch/stitcher.h"
#include "stitch/timeline.h"

namespace wp::stitch {

class JournalTracker {
 public:
  explicit JournalTracker(const StitchLimits& limits) : limits_(limits) {}

  void on_journal(const JournalEvent& ev);
  void sweep(Nanos horizon);
  // Commits of `dev` (0: of every device) overlapping [start, end], by first known time. A
  // commit still open counts as running until `end`.
  std::vector<JournalCommit> overlapping(DevT dev, Nanos start, Nanos end) const;

 private:
  const StitchLimits& limits_;
  std::unordered_map<std::uint64_t, std::shared_ptr<JournalCommit>> open_;  // dev<<32 | tid
  std::unordered_map<DevT, std::deque<std::shared_ptr<JournalCommit>>> commits_;
};

}  // namespace wp::stitch
