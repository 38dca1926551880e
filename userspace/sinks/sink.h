// SPDX-License-Identifier: Apache-2.0
// Output sinks: where finished timelines go. A sink renders; it never stitches, filters or
// reads the clock. The CLI picks one with make_sink() and feeds it timelines as the stitcher
// finishes them, then one summary at the end of the trace.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "analyze/read_diagnosis.h"
#include "analyze/summaries.h"
#include "common/program_cost.h"
#include "common/wall_clock.h"
#include "decode/events.h"
#include "stitch/stitcher.h"
#include "stitch/timeline.h"

namespace wp {

// End-of-trace totals.
struct TraceSummary {
  std::uint64_t events = 0;                           // records decoded
  std::uint64_t lost = 0;                             // records lost (ring buffer full), all hooks
  std::map<std::string, std::uint64_t> lost_by_hook;  // hook name → records lost there
  double lost_share = 0;    // lost / (events + lost): 0 when nothing was lost
  std::string lost_advice;  // what to do about the losses ("" when nothing was lost)
  // Request completions the kernel did not deliver to the hooks, found by the stitcher
  // (StitchStats::missed_completions): the items resting on them are incomplete.
  std::uint64_t missed_completions = 0;
  std::uint64_t writes = 0;             // write timelines emitted
  std::uint64_t fsyncs = 0;             // sync timelines emitted (every sync kind)
  std::uint64_t name_change_calls = 0;  // name-change timelines emitted (rename, unlink, ...)
  std::uint64_t reads = 0;              // read timelines emitted (read syscalls)
  std::uint64_t faults = 0;             // read timelines of page faults on file mappings
  std::uint64_t incomplete = 0;         // timelines emitted incomplete
  std::uint64_t aged_out = 0;           // of which emitted early: pending longer than the age limit
  std::uint64_t evicted = 0;            // of which emitted early: over the pending-writes cap
  std::uint64_t discarded = 0;    // writes whose pages the page cache dropped before writeback
  std::uint64_t memory_only = 0;  // writes to a file system in memory only (tmpfs, ramfs)
  std::uint64_t lost_writes = 0;  // writes whose writeback failed
  std::uint64_t lost_bytes = 0;
  std::map<DevT, DiskTotals> disks;        // every request completed, per disk
  Nanos duration_ns = 0;                   // wall time traced
  SyncPhaseSummary sync_phases;            // every sync call's phases: percentiles and histograms
  DirectIoSummary direct_io;               // O_DIRECT verdict per process and file
  ReadFileSummary read_files;              // with --reads: where each file's reads came from
  std::vector<ReadFinding> read_findings;  // and what that says (analyze/read_diagnosis.h)
  // Who delayed whom: the syncs' neighbours per victim and culprit, most delay first; and every
  // process's data written to the disks traced syncs were on, most bytes first (at most 10
  // each; stitch/neighbours.h).
  std::vector<NeighbourSummary::Row> neighbours;
  std::vector<OwnerIo> io_by_process;
  // Crash-consistency hazards the items showed, by rule (analyze/hazards.h); none: empty.
  std::map<std::string, std::uint64_t> hazards;
  // The same by the file each concerns and by process ("COMM PID").
  std::map<std::string, std::uint64_t> hazards_by_file;
  std::map<std::string, std::uint64_t> hazards_by_process;
  std::string hint;  // what the trace likely missed and how to see it ("": none)
  // A live trace on syscall tracepoints (the fallback where trampolines do not attach): which
  // hooks, and that every syscall of the machine took the slow path meanwhile ("": none).
  std::string slow_syscall_path;
  // Calls of traced processes that write by ways the trace does not stitch (copy_file_range,
  // the ring's unstitched ops, ...), counted in the kernel; only the calls counted on this kernel,
  // zeros included.
  std::map<std::string, std::uint64_t> untraced_calls;
  // What the BPF programs cost, when the kernel counted it (kernel.bpf_stats_enabled=1 during
  // a live trace); nullopt otherwise and for a recording.
  std::optional<BpfCost> bpf_cost;
};

enum class OutputFormat { Text, Json, Html, Perfetto };

struct SinkOptions {
  bool color = false;  // ANSI colors in text output; the CLI sets it when the stream is a tty
  std::vector<DeviceInfo> devices;  // names the Perfetto tracks ("vda 254:0"); else by number
  // Live output: text prints each item when its call returns and an update line later; JSON
  // writes an object per event of an item (--live). Else complete items only.
  bool live = false;
  bool timestamps = false;  // text: a wall-clock column (-T); needs `clock`
  // MONOTONIC → REALTIME/BOOTTIME at the start (a recording's: its header's); unknown for an
  // older recording (then no wall-clock times).
  std::optional<ClockOffsets> clock = std::nullopt;
  // Text: every item names its cgroup (set with --cgroup); otherwise items do once a second
  // cgroup has been seen.
  bool cgroups = false;
};

class Sink {
 public:
  virtual ~Sink();
  virtual void timeline(const Timeline& item) = 0;
  // The item, which the caller has no more use for: a sink that keeps it takes it over
  // (AsyncSink) instead of copying; the others render it as timeline() does.
  virtual void take(Timeline&& item) { timeline(item); }
  // A pending item's snapshot (Stitcher::set_progress), for live output: the complete item
  // comes later through timeline(), with `announced` set. Sinks of complete items ignore it.
  virtual void progress(ItemProgress, const Timeline&) {}
  // The clock offsets as re-measured during a live trace (about every second).
  virtual void clock(const ClockOffsets&) {}
  virtual void summary(const TraceSummary& totals) = 0;
  virtual void flush() = 0;
};

// The sink writes to `out`, which must outlive it.
std::unique_ptr<Sink> make_sink(OutputFormat format, std::ostream& out, const SinkOptions& options);

}  // namespace wp
