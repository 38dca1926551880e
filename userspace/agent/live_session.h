// SPDX-License-Identifier: Apache-2.0
// The one way a command traces the running kernel (trace, record, audit, serve; doctor starts
// its sessions the same way): capabilities → filters → plan → session → naming → loop →
// summary. A command brings only what is its own: its filter's criteria, its outputs and sink,
// its signals and what it does on them, its command or exporter, its hint.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "agent/pipeline.h"
#include "agent/session_loop.h"
#include "agent/summary_builder.h"
#include "agent/trace_session_symbols.h"
#include "probe/bpf_session.h"
#include "probe/kernel_caps.h"
#include "record/trace_file.h"
#include "sinks/sink.h"

namespace wp {

// Capabilities: the running kernel, or the Failure of one this process cannot trace on (no
// privileges, no BTF), one line each.
KernelCaps tracing_kernel();

// serve's kernel side (bpf/metrics.bpf.c): writes and syncs aggregated in the kernel, a plain
// write emitted only when at least `slow_ns` slow (0: not for that) or 1 in `sample`; with
// `comm`, the metrics keyed by the caller's name too.
KernelFilter metrics_filter(std::uint32_t sample, Nanos slow_ns = 0, bool comm = false);
// serve's `sample` unless told otherwise (--durability-sample), the one doctor checks.
constexpr std::uint32_t kDefaultDurabilitySample = 16;

// --reads (trace and serve) stands on the read layer's hooks: without the page-cache fill,
// every page a read brought in would pass for one it found cached. Throws a Failure naming the
// first one the plan has no variant for.
void require_read_hooks(const HookPlan& plan);
// Reads without faults: a kernel lacking a fault hook (arm64 has no page_fault_user; the
// filemap fault tracepoints are v6.x's) still follows read calls; says on stderr what it cannot
// see.
void warn_without_fault_hooks(const HookPlan& plan);

struct LiveSessionOptions {
  HookPrefs prefs = {};  // the user's say in the plan (WRITEPATH_DISABLE_PROGRAMS is added to it)
  // decode → stitch → sink; none: the records only go to a recording (record).
  Sink* sink = nullptr;
  std::vector<DeviceInfo> devices = {};
  Nanos min_latency_ns = 0;
  std::function<void(const Timeline&)> observer = {};  // sees what the sink gets
  bool item_progress = false;  // pending writes' snapshots to the sink (live output)
  // Items of a writer in another mount namespace carry the host's path of their file too.
  bool host_paths = false;
  BpfSession::RecordHandler on_record = {};  // sees each record first (serve counts them)
  // When the hooks cannot be attached: false, a Failure is thrown; true, error() says why
  // (doctor reports it).
  bool keep_failure = false;
};

// What the end of a session says.
struct SessionEnd {
  std::optional<TraceSummary> summary;  // with a pipeline
  LossReport loss;
};

class LiveSession {
 public:
  // Filters, plan, session and naming: the agent's own calls are filtered out, the hooks are
  // planned for `caps`, loaded and attached with `filter`, and from then on the cgroups and
  // kernel addresses the records carry are named to the pipeline and the recording.
  LiveSession(const KernelCaps& caps, KernelFilter filter, LiveSessionOptions options);
  LiveSession(const LiveSession&) = delete;
  LiveSession& operator=(const LiveSession&) = delete;

  bool attached() const { return planned_.session != nullptr; }
  const std::string& error() const { return planned_.error; }
  const HookPlan& plan() const { return planned_.plan; }
  BpfSession& bpf() { return *planned_.session; }
  // Detaches and frees the programs now; the plan stays (doctor times calls without them).
  void close() { planned_.session.reset(); }
  // From now on the records, their names, the losses and the counts at the end also go to
  // this trace file, which its errors name `path`.
  void record_to(std::unique_ptr<TraceFileWriter> recording, std::string path);
  const TraceFileWriter* recording() const { return recording_.get(); }
  // What the summary says beyond the events; a command adds its own facts (trace: the hint).
  SummaryBuilder& summary() { return summary_; }

  // Loop: the session loop, with what only the command does in `own` (its signals, timer,
  // watched descriptors and start; a detach that runs before the hooks' and a flush after
  // the recording's). The records' side, losses and clock are filled in here.
  SessionLoop loop(SessionLoopOptions own);
  // Summary, once `loop` has run (`span`: what it returned): the kernel's counts at the end go
  // to the summary and the recording, the pipeline ends (its summary to the sink), and every
  // output is written out.
  SessionEnd finish(const SessionLoop& loop, Nanos span);

 private:
  void on_record(std::span<const std::byte> record);
  void name_cgroup(const CgroupName& name);
  void name_kernel_address(const KernelSymbolName& symbol);
  void flush();

  KernelFilter filter_;
  std::string cgroup2_;  // where the cgroup2 hierarchy is mounted: host paths and names look there
  BpfSession::RecordHandler first_;
  std::unique_ptr<Pipeline> pipeline_;
  std::unique_ptr<TraceFileWriter> recording_;  // made once the hooks are known
  std::string recording_path_;
  SummaryBuilder summary_;
  // The cgroup ids and kernel addresses the records name get their names here, once each:
  // into the recording (before the first record naming them) and the pipeline.
  CgroupNamer cgroup_namer_;
  std::unique_ptr<KernelAddressNamer> address_namer_;  // with stacks on
  PlannedSession planned_;
  std::function<void()> own_flush_;
  std::vector<DeviceInfo> devices_;  // whose in-flight writes the end reads
};

}  // namespace wp
