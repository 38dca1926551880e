// SPDX-License-Identifier: Apache-2.0
// Which BPF program serves each hook on a kernel. The table lists, per hook, the program
// variants in order of preference; planning keeps the first whose tracepoint exists with the
// expected prototype (from BTF) and that has not already failed to attach. Planning is a pure
// function of the kernel's facts (kernel_facts.h) and the options: no BTF, tracefs or
// environment is read here. How a variant is chosen: docs/ARCHITECTURE.md, "Hooks: how a
// variant is chosen".
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "probe/kernel_facts.h"

namespace wp {

enum class AttachKind { Fentry, TpBtf, RawTp, Tracepoint };
const char* attach_kind_name(AttachKind kind);

// A variant whose programs read no argument whose position differs between kernels: any
// prototype arity serves.
inline constexpr int kAnyArity = -1;

// A program of a variant and where it attaches.
struct HookProgram {
  std::string name;   // BPF program name in the skeleton
  std::string event;  // the tracepoint it attaches to (fentry/fexit: the kernel function)
};

// One way to serve a hook: the programs to load together (a syscall needs its entry and exit
// programs). Written with designated initializers (hook_table.cpp), so a field left out takes
// the default below.
struct HookVariant {
  AttachKind kind;
  std::string category = "";  // tracefs category of the tracepoints ("" for fentry)
  std::string module = "";    // kernel module whose BTF declares them ("" = vmlinux)
  std::vector<HookProgram> programs = {};
  int args = kAnyArity;  // expected prototype arity (tp_btf/raw_tp)
  // Syscall slots (bits in the order of bpf/syscall.bpf.c's wp_slot_syscall) that the raw
  // syscall programs serve when this variant is chosen.
  std::uint32_t raw_syscall_slots = 0;
  // A kfunc the programs call, which vmlinux BTF must declare ("" = none): libbpf 1.1 leaves
  // a missing weak kfunc unresolved, and a kernel without it refuses the program.
  std::string kfunc = "";
  // Enumerators the agent hands the programs from vmlinux BTF before load (anonymous enums,
  // which CO-RE cannot relocate); without one of them the programs would do nothing.
  std::vector<std::string> enumerators = {};
  // fentry/fexit on syscalls' entry functions: each program's event is a syscall's name, and it
  // attaches to the architecture's entry function for it (syscall_entry_function).
  bool syscall_entry = false;
};

// btrfs's io tree and extent bits the inline-extent hook matches (bpf/inline.bpf.c): the tree
// first, then the bits it clears at once.
inline constexpr const char* kBtrfsInlineEnumerators[] = {
    "IO_TREE_INODE_IO", "EXTENT_DELALLOC", "EXTENT_DELALLOC_NEW", "EXTENT_CLEAR_META_RESV",
    "EXTENT_CLEAR_DATA_RESV"};

struct Hook {
  std::string name;  // what doctor prints: "bio queue", "request issue", ...
  std::string layer;
  bool required = false;  // tracing cannot run without it
  // A hook only trace's items need: serve counts in the kernel without it (the read path's
  // fault entries and readahead, the namespace calls).
  bool items_only = false;
  std::vector<HookVariant> variants = {};
};

// The hooks writepath knows, in pipeline order.
const std::vector<Hook>& hook_table();

// What doctor prints for a variant: its kind and first tracepoint (or function), and how many
// more it attaches to, e.g. "tracepoint syscalls:sys_enter_write (+7)". `syscall_prefix` names
// a syscall-entry variant's functions (HookPlan::syscall_prefix).
std::string variant_summary(const HookVariant& variant, std::string_view syscall_prefix = "");

// The prefix of the syscalls' entry functions in this kernel's BTF ("__x64_sys_" on x86-64,
// "__arm64_sys_" on arm64), or "" when it has none (a kernel without syscall wrappers, whose
// sys_NAME functions take the arguments themselves: those are not planned).
std::string syscall_entry_prefix(const KernelFacts& facts);

// The function fentry attaches to for `syscall` ("writev") with `prefix`: PREFIX+NAME where BTF
// has it, else for a syscall without arguments its body __do_sys_NAME; "" when neither is there.
std::string syscall_entry_function(const KernelFacts& facts, std::string_view prefix,
                                   const std::string& syscall);

struct HookChoice {
  const Hook* hook = nullptr;
  const HookVariant* variant = nullptr;  // nullptr: no variant usable here
  std::string why;                       // why earlier variants were passed over
  bool for_want_of_tracefs = false;      // a variant was passed over only for lack of tracefs
  bool not_wanted = false;  // left out because the command needs it not (not the kernel's lack)
};

struct HookPlan {
  std::vector<HookChoice> choices;
  std::string syscall_prefix;  // syscall_entry_prefix of the kernel planned for
  // Each planned syscall-entry program and its function (syscall_entry_function): their
  // sections name none, so the agent sets it before load.
  std::map<std::string, std::string> entry_functions;
  bool runnable() const;  // every required hook has a variant
  // The hooks of `layer` no variant of which is usable here (those not wanted left out).
  std::vector<const HookChoice*> unplanned(std::string_view layer) const;
  std::set<std::string> programs() const;
  std::uint32_t raw_syscall_slots() const;
  // A hook of the read layer is planned: reads are traced (and so are their block requests).
  bool traces_reads() const;
  // The hooks planned on syscall tracepoints (syscalls:* or the raw pair): while any is
  // attached, every syscall of every thread of the machine takes the kernel's slow path.
  std::vector<std::string> syscall_tracepoint_hooks() const;
  std::string summary(const HookChoice& choice) const;  // variant_summary, or "-"
  // The hooks on syscall tracepoints and why their trampolines were passed over, "HOOKS (why)",
  // or "" when there are none.
  std::string slow_syscall_path() const;
  // One line on what the syscall hooks cost everyone else: "syscall plan: trampolines ..." or
  // "syscall plan: syscall tracepoints for HOOKS (why): ... slow path".
  std::string syscall_plan() const;
};

struct PlanOptions {
  bool fentry = true;         // the user allows fentry/fexit where they attach (--no-fentry)
  bool raw_syscalls = false;  // the raw syscall pair over per-syscall tracepoints
  bool causes = false;        // off-CPU accounting for slow calls (--min-latency)
  bool stacks = true;         // with causes: sleep stacks, wakers, call-wide waits (--no-stacks)
  bool reads = false;         // the read path's hooks (layers "read" and "fault"): --reads
  bool metrics = false;       // serve: counted in the kernel, so no items_only hook
  // blk-throttle's throtl_pending_timer_fn is in kallsyms (the blk-throttle hook needs it).
  bool throtl_timer_known = false;
  // Programs planned as if they had failed to load or attach: those that did in an earlier
  // try, and those disabled on purpose (WRITEPATH_DISABLE_PROGRAMS, read by the caller).
  std::set<std::string> failed = {};
};

HookPlan plan_hooks(const KernelFacts& facts, const PlanOptions& options);

// What a missing tracefs costs in this plan, a line per cost naming the hooks that would have
// used a classic tracepoint: "write/sync syscalls, other write/sync calls: via raw
// sys_enter/sys_exit (…)", "dirty throttling, count fallocate: not traced". Empty when tracefs
// was there or nothing wanted it.
std::vector<std::string> tracefs_costs(const HookPlan& plan);

// The program names of a comma-separated list ("a,b"); empty items are skipped.
std::set<std::string> parse_program_list(std::string_view list);

}  // namespace wp
