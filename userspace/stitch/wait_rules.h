// SPDX-License-Identifier: Apache-2.0
// Wait rules: what a slow call waited on, named from the kernel stacks it went to sleep with and
// the tracepoint-timed waits of the call (OffCpuEvent). Pure: one event in, NamedWaits out.
// Rules: docs/reference/stitching-rules.md, "Wait causes"; tests:
// tests/unit/wait_rules_test.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "decode/events.h"
#include "stitch/timeline.h"

namespace wp::stitch {

// The function a symbolized frame names: "jbd2_log_wait_commit+0x9c [jbd2]" and
// "folio_wait_bit_common.constprop.0+0x1a2/0x370" give "jbd2_log_wait_commit" and
// "folio_wait_bit_common" (a compiler clone's suffix is the same function).
std::string_view frame_function(std::string_view frame);

// The scheduler's own frames (schedule, io_schedule, the wait-bit helpers, …) and the tracing
// frames above them: how a thread sleeps, never why.
bool is_scheduler_frame(std::string_view function);

// The frames of `stack` from its first frame that is not the scheduler's, innermost first; an
// address the symbolizer could not name is shown as its hex address.
std::vector<std::string> frames_below_scheduler(const KernelStack& stack);

// The cause of one sleep, and the function (or flag) that decided it.
struct SleepVerdict {
  WaitCause cause = WaitCause::Other;
  std::string evidence;
};
// `blk_throttled`: bios of the call went over a cgroup I/O limit (its I/O waits are then the
// throttle's).
SleepVerdict classify_sleep(const OffCpuSleep& sleep, bool blk_throttled);

// Every cause of the call, longest first, one per cause: the sleeps of one cause summed, its
// frames and waker from its longest sleep; the tracepoint-timed waits (i_rwsem contention,
// reclaim, compaction) merged into their cause.
std::vector<NamedWait> name_waits(const OffCpuEvent& ev);

// Where a wakeup came from, by the waker's stack: a timer if a timer's expiry ran the wakeup
// (hrtimer_wakeup, process_timeout, call_timer_fn), else an interrupt if an interrupt or
// softirq entry is in it (the waker's comm is then whatever the interrupt landed on), else the
// waker's own code. A stack not read (no frames) is taken as the task's.
WakeContext wake_context(const KernelStack& waker_stack);
// Sets every waker's context in `ev` (its sleeps'), before its waits are named.
void set_wake_contexts(OffCpuEvent& ev);

}  // namespace wp::stitch
