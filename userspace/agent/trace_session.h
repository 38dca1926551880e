// SPDX-License-Identifier: Apache-2.0
// `writepath trace`: hooks → ring buffer → decode → stitch → sink, until a duration, a signal
// or the traced command's exit ends it. `writepath record`: hooks → ring buffer → trace file,
// nothing else.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "decode/events.h"
#include "sinks/sink.h"

namespace wp {

// The ring buffer's default size. Measured (bench/run.sh soak and saturation): 32 MiB loses
// nothing under one writer flat out, and since the buffer is mapped into the agent twice
// (64 MiB of its RSS), a steady 20k writes/s logger under `trace` peaks at ~130 MiB of RSS;
// 64 MiB put that at ~260 MiB for no fewer losses.
constexpr std::uint64_t kDefaultRingBytes = 32ull << 20;

struct TraceOptions {
  std::vector<std::uint32_t> pids;
  std::optional<std::string> comm;
  std::optional<std::string> cgroup;
  // --container: a container's id (a prefix) or name; its cgroup is filtered as --cgroup's.
  std::optional<std::string> container;
  // --pod: a Kubernetes pod's uid (a prefix) or name; its cgroup is filtered as --cgroup's.
  std::optional<std::string> pod;
  // --namespace: a Kubernetes namespace; its pods' cgroups are filtered as --cgroup's.
  std::optional<std::string> k8s_namespace;
  std::optional<std::string> dev;
  std::optional<std::string> file;
  Nanos min_latency_ns = 0;
  std::optional<Nanos> duration_ns;
  OutputFormat format = OutputFormat::Text;
  std::string output;                // "" = stdout
  std::vector<std::string> command;  // `-- CMD ARGS…`
  // --children: also the descendants of the -p/--comm processes, those alive at the start and
  // those forked later (a command's children are always followed).
  bool children = false;
  bool no_fentry = false;     // keep to tracepoints even where fentry attaches
  bool raw_syscalls = false;  // the raw syscall pair over per-syscall tracepoints
  // --reads: the read path's hooks too, an item per read of a regular file. Off by default:
  // a reader makes far more calls than a writer, and a write trace should not lose its
  // records to them.
  bool reads = false;
  std::string record_path;  // also write the raw records to this trace file
  // Only write the raw records to record_path: no decoding, stitching or output (record).
  bool record_only = false;
  std::uint64_t buffer_bytes = kDefaultRingBytes;  // ring buffer size (--buffer-size)
  // Off-CPU causes for calls at least this slow; 0: the same as min_latency_ns (and none
  // when that is 0 too: the sched_switch hook runs on every context switch).
  Nanos causes_min_ns = 0;
  // With causes: also the kernel stacks slow calls slept with, their wakers and the call-wide
  // waits (--no-stacks: off).
  bool stacks = true;
  // The command marks its measured phase (common/trace_phase.h: writepath load does, after
  // its set-up): only calls between its begin and end marks are traced.
  bool command_marks_phase = false;
  // Live output (text: each item when its call returns, then update lines; JSON: the event
  // stream). Off: complete items only.
  bool live = false;
  bool timestamps = false;  // text: the -T wall-clock column
  // writepath audit: print only the crash-consistency hazards (as text, or JSON with
  // OutputFormat::Json) and exit with kExitHazards when there are any.
  bool audit = false;
  // Sees every timeline the sink gets (writepath demo keeps them to explain the run).
  std::function<void(const Timeline&)> observer;
};

// Runs the trace; returns the exit code (the command's own when one was given). Throws
// Failure for bad usage and runtime failures.
int run_trace(const TraceOptions& options);

}  // namespace wp
