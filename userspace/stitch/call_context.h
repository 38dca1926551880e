// SPDX-License-Identifier: Apache-2.0
// Per-thread facts that arrive before a syscall's own record: the off-CPU causes of a slow
// call, where it slept (its stacks, named into waits by stitch/wait_rules.h) and the
// dirty-throttling pauses inside a write. Held per thread until the record of
// the call they belong to takes them. Tests: tests/unit/call_context_test.cpp.
#pragma once

#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

#include "stitch/timeline.h"

namespace wp::stitch {

class CallContext {
 public:
  void on_causes(const CausesEvent& ev) { causes_by_tid_[ev.tid] = ev; }
  // Arrives just before the CausesEvent of the same call.
  void on_offcpu(const OffCpuEvent& ev) { offcpu_by_tid_[ev.tid] = ev; }
  void on_throttle(const ThrottleEvent& ev);
  // A FUSE daemon answered a request of the thread's call in progress.
  void on_fuse(const FuseReplyEvent& ev) { fuse_by_tid_[ev.tid] = ev; }
  // What was recorded for this call, taken out (a later call of the thread never sees it):
  // with its OffCpuEvent of the same tid and start, its sleeps and named waits (no chains).
  std::optional<SlowCauses> take_causes(const SyscallEvent& ev);
  std::vector<ThrottlePause> take_throttles(const SyscallEvent& ev);
  // The daemon that answered this call's last FUSE request, taken out.
  std::optional<FuseDaemon> take_fuse(const SyscallEvent& ev);

 private:
  static constexpr std::size_t kMaxPausesPerThread = 256;
  std::unordered_map<std::uint32_t, CausesEvent> causes_by_tid_;
  std::unordered_map<std::uint32_t, OffCpuEvent> offcpu_by_tid_;
  std::unordered_map<std::uint32_t, std::deque<ThrottlePause>> throttles_by_tid_;
  std::unordered_map<std::uint32_t, FuseReplyEvent> fuse_by_tid_;
};

}  // namespace wp::stitch
