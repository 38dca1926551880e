// SPDX-License-Identifier: Apache-2.0
#include "stitch/call_context.h"

#include <algorithm>
#include <utility>

#include "stitch/wait_rules.h"

namespace wp::stitch {

void CallContext::on_throttle(const ThrottleEvent& ev) {
  auto& pauses = throttles_by_tid_[ev.tid];
  pauses.push_back(ThrottlePause{ev.ts, ev.pause_ms, ev.dirty, ev.limit});
  if (pauses.size() > kMaxPausesPerThread) pauses.pop_front();
}

std::optional<SlowCauses> CallContext::take_causes(const SyscallEvent& ev) {
  std::optional<OffCpuEvent> offcpu;
  if (auto o = offcpu_by_tid_.find(ev.tid); o != offcpu_by_tid_.end()) {
    if (o->second.start_ns == ev.start_ns) offcpu = std::move(o->second);
    offcpu_by_tid_.erase(o);
  }
  auto it = causes_by_tid_.find(ev.tid);
  if (it == causes_by_tid_.end()) return std::nullopt;
  CausesEvent c = it->second;
  causes_by_tid_.erase(it);
  if (c.start_ns != ev.start_ns) return std::nullopt;
  SlowCauses out;
  out.throttle_ns = c.throttle_ns;
  out.writeback_wait_ns = c.writeback_wait_ns;
  out.blocked_ns = c.blocked_ns;
  out.runnable_ns = c.runnable_ns;
  const Nanos latency = ev.end_ns > ev.start_ns ? ev.end_ns - ev.start_ns : 0;
  const Nanos off = c.throttle_ns + c.writeback_wait_ns + c.blocked_ns + c.runnable_ns;
  out.on_cpu_ns = latency > off ? latency - off : 0;
  if (offcpu) {
    stitch::set_wake_contexts(*offcpu);
    out.waits = stitch::name_waits(*offcpu);
    out.sleeps = std::move(offcpu->sleeps);
    // Longest first, whatever order a trace file or an older agent wrote them in.
    std::stable_sort(out.sleeps.begin(), out.sleeps.end(),
                     [](const OffCpuSleep& a, const OffCpuSleep& b) { return a.ns > b.ns; });
    out.unslotted_ns = offcpu->unslotted_ns;
  }
  return out;
}

std::vector<ThrottlePause> CallContext::take_throttles(const SyscallEvent& ev) {
  std::vector<ThrottlePause> found;
  auto it = throttles_by_tid_.find(ev.tid);
  if (it == throttles_by_tid_.end()) return found;
  for (const auto& p : it->second)
    if (p.ts >= ev.start_ns && p.ts <= ev.end_ns) found.push_back(p);
  throttles_by_tid_.erase(it);
  return found;
}

std::optional<FuseDaemon> CallContext::take_fuse(const SyscallEvent& ev) {
  const auto it = fuse_by_tid_.find(ev.tid);
  if (it == fuse_by_tid_.end()) return std::nullopt;
  std::optional<FuseDaemon> daemon;
  // A reply to an earlier call of the thread (its record lost) is no answer to this one.
  if (it->second.start_ns == ev.start_ns)
    daemon = FuseDaemon{it->second.daemon_pid, it->second.daemon_tid, it->second.daemon_comm,
                        it->second.error};
  fuse_by_tid_.erase(it);
  return daemon;
}

}  // namespace wp::stitch
