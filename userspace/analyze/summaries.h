// SPDX-License-Identifier: Apache-2.0
// End-of-trace summaries computed from the stitched timelines (pure: timelines in, figures
// out): the fsync phase breakdown and the O_DIRECT verdict.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/histogram.h"
#include "stitch/timeline.h"

namespace wp {

struct PhaseStats {
  std::uint64_t count = 0;
  Nanos p50 = 0;  // within 1 % of exact (LogLinearHistogram)
  Nanos p99 = 0;
  Nanos max = 0;    // exact
  Nanos total = 0;  // exact
  Log2Histogram histogram;
};

// Per-phase figures of every sync call of the trace (fsync, fdatasync, …), in fixed memory: its
// latency and each of its phases (nearest-rank percentiles).
class SyncPhaseSummary {
 public:
  void add(const SyncTimeline& sync);
  std::uint64_t syncs() const { return latency_.count(); }
  PhaseStats latency() const;
  PhaseStats phase(SyncPhase p) const;

  // What the sinks print: the latency, then each phase in report order.
  struct Row {
    const char* name;      // "latency", "data_io"
    const char* json_key;  // "latency_ns", "data_io_ns"
    PhaseStats stats;
  };
  std::vector<Row> rows() const;

 private:
  LogLinearHistogram latency_;
  std::array<LogLinearHistogram, kSyncPhaseCount> phases_;  // indexed by SyncPhase
};

// Does O_DIRECT really bypass the page cache? Per process and file.
struct DirectIoVerdict {
  std::uint32_t pid = 0;
  std::string comm;
  DevT dev = 0;
  std::uint64_t ino = 0;
  std::string path;          // the file's path (from its first write that had one), or empty
  std::uint64_t writes = 0;  // direct writes that wrote something
  std::uint64_t bytes = 0;
  std::uint64_t pages_dirtied = 0;   // expected 0
  std::uint64_t buffered_bytes = 0;  // bytes of direct writes that dirtied pages anyway
  std::uint64_t einval = 0;          // attempts refused for misalignment
  std::uint64_t other_errors = 0;
  bool bypassed() const { return pages_dirtied == 0 && buffered_bytes == 0; }
};

class DirectIoSummary {
 public:
  void add(const WriteTimeline& write);
  std::vector<DirectIoVerdict> verdicts() const;  // ordered by pid, then file

 private:
  std::map<std::tuple<std::uint32_t, DevT, std::uint64_t>, DirectIoVerdict> by_file_;
};

}  // namespace wp
