// Which BPF program serves each hook on this kernel. The table lists, per hook, the program
// variants in order of preference; planning keeps the first whose tracepoint exists with the
// expected prototype (from BTF) and that has not already failed to attach.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "probe/kernel_caps.h"

namespace wp {

enum class AttachKind { Fentry, TpBtf, RawTp, Tracepoint };
const char* attach_kind_name(AttachKind kind);

// One way to serve a hook: the programs to load (a syscall needs its entry and exit
// programs together) and the tracepoints they attach to, one per program.
struct HookVariant {
  std::vector<std::string> programs;  // BPF program names in the skeleton
  AttachKind kind;
  std::string category;             // tracefs category of the tracepoints
  std::vector<std::string> events;  // tracepoint names, parallel to programs
  std::string module;               // kernel module whose BTF declares them ("" = vmlinux)
  int args = -1;                    // expected prototype arity (tp_btf/raw_tp); -1 = any
  // Syscall slots (bits in the order of bpf/syscall.bpf.c's wp_slot_syscall) that the raw
  // syscall programs serve when this variant is chosen.
  std::uint32_t raw_syscall_slots = 0;
};

struct Hook {
  std::string name;  // what doctor prints: "bio queue", "request issue", ...
  std::string layer;
  bool required;  // tracing cannot run without it
  std::vector<HookVariant> variants;
};

// The hooks writepath knows, in pipeline order.
const std::vector<Hook>& hook_table();

struct HookChoice {
  const Hook* hook = nullptr;
  const HookVariant* variant = nullptr;  // nullptr: no variant usable here
  std::string why;                       // why earlier variants were passed over
};

struct HookPlan {
  std::vector<HookChoice> choices;
  bool runnable() const;  // every required hook has a variant
  std::set<std::string> programs() const;
  std::uint32_t raw_syscall_slots() const;
};

struct PlanOptions {
  bool fentry = false;            // fentry/fexit can attach here and the user allows it
  std::string fentry_off_reason;  // why not, for doctor
  std::set<std::string> failed;   // programs that failed to load or attach in an earlier try
  bool causes = false;            // off-CPU accounting for slow calls (--min-latency)
  bool raw_syscalls = false;      // the raw syscall pair over per-syscall tracepoints
};

HookPlan plan_hooks(const KernelBtf& btf, const std::string& tracefs, const PlanOptions& options);

}  // namespace wp
