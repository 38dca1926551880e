// SPDX-License-Identifier: Apache-2.0
// The facts about a kernel that hook planning consults, and nothing else: which tracepoints
// exist, the prototypes of their raw (BTF) forms, which functions fentry could attach to, and
// whether fentry attaches at all. The planner is a function of these facts and the user's
// options, so it can be exercised against any kernel described in a test; RunningKernelFacts
// (kernel_caps.h) reads them from the running kernel's BTF and tracefs.
#pragma once

#include <string>

namespace wp {

class KernelFacts {
 public:
  virtual ~KernelFacts() = default;

  // Whether a tracefs is mounted and its events/ readable here: classic tracepoints attach
  // through it (their ids are read there); tp_btf and raw_tp programs do not need it.
  virtual bool tracefs_available() const = 0;
  // True when tracefs has events/<category>/<event> (a classic tracepoint to attach to);
  // false for every event without tracefs.
  virtual bool tracepoint_exists(const std::string& category, const std::string& event) const = 0;
  // Number of arguments (without the ctx pointer) of `btf_trace_<event>` in vmlinux's BTF, or,
  // when `module` is not empty and vmlinux lacks it, in `module`'s BTF (the module built in
  // or loaded); -1 when that type does not exist (no tp_btf or raw_tp program can attach to
  // the event then).
  virtual int tracepoint_args(const std::string& event, const std::string& module) const = 0;
  // True when vmlinux's BTF has a function `name` (an fentry/fexit target).
  virtual bool has_function(const std::string& name) const = 0;
  // True when an enum of vmlinux's BTF, named or anonymous, has an enumerator `name`.
  virtual bool has_enumerator(const std::string& name) const = 0;
  // Whether an fentry program really attaches here. BTF can list every function while the
  // attach itself is refused (restricted ftrace, EPERM); that is found only by attaching.
  virtual bool fentry_attaches() const = 0;
  // Why it does not, for doctor ("attach: Operation not permitted"); "" when it does.
  virtual std::string fentry_error() const = 0;
};

// Whether a disk's in-flight count (/sys/block/X/inflight, diskstats' field 9) drops only after
// a request's block_rq_complete event fired, so that a disk showing no write in flight has
// delivered every write request's completion event it had begun. Decided from BTF: where
// blk_mq_in_flight_rw() exists (6.1 has it), blk-mq counts the tagged requests in state
// MQ_RQ_IN_FLIGHT, which a request leaves when it is marked complete, before its driver ends
// it and the event fires. Without it (6.18) the count is per CPU, from blk_account_io_start()
// to blk_account_io_done(), which __blk_mq_end_request() calls after blk_update_request()
// fired the event (at a flush sequence's end for a request inside one).
bool in_flight_outlasts_completion_event(const KernelFacts& facts);

}  // namespace wp
