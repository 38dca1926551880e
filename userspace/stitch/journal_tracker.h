// SPDX-License-Identifier: Apache-2.0
// Journal tracker: jbd2 commits per device, from their phase events, kept for the syncs that
// overlap them; xfs log forces per thread and log write completions per device, for the syncs
// that forced the log. Rules: docs/reference/stitching-rules.md, "Journals";
// tests: tests/unit/journal_tracker_test.cpp.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "stitch/stitcher.h"
#include "stitch/timeline.h"

namespace wp::stitch {

class JournalTracker {
 public:
  explicit JournalTracker(const StitchLimits& limits) : limits_(limits) {}

  void on_journal(const JournalEvent& ev);
  void on_fs_log(const FsLogEvent& ev);
  void sweep(Nanos horizon);
  // The part of [start, end] thread `tid` spent in an xfs log force of `dev`: from its first
  // force inside the window to the last log write completing on `dev` after it inside the
  // window; none when it forced nothing, or nothing was written (already on disk).
  std::optional<std::pair<Nanos, Nanos>> log_force_span(std::uint32_t tid, DevT dev, Nanos start,
                                                        Nanos end) const;
  // Commits of `dev` (0: of every device) overlapping [start, end], by first known time. A
  // commit still open counts as running until `end`.
  std::vector<JournalCommit> overlapping(DevT dev, Nanos start, Nanos end) const;

 private:
  const StitchLimits& limits_;
  std::unordered_map<std::uint64_t, std::shared_ptr<JournalCommit>> open_;  // dev<<32 | tid
  std::unordered_map<DevT, std::deque<std::shared_ptr<JournalCommit>>> commits_;
  struct LogForce {
    Nanos ts = 0;
    DevT dev = 0;
  };
  std::unordered_map<std::uint32_t, std::deque<LogForce>> forces_;  // by forcing thread
  std::unordered_map<DevT, std::deque<Nanos>> log_writes_done_;
};

}  // namespace wp::stitch
