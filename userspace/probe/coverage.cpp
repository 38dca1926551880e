// SPDX-License-Identifier: Apache-2.0
#include "probe/coverage.h"

#include <fmt/format.h>

#include <utility>

namespace wp {
namespace {

// A way of writing a file that no hook stitches: the counters that at least count its calls
// (names of kUntracedCalls), the kernel's own tracepoints a hook for it could attach to, and
// what a trace misses of it.
struct UnstitchedPath {
  const char* what;
  std::vector<const char*> counted_by;
  std::vector<std::pair<const char*, const char*>> kernel_tracepoints;  // (category, event)
  const char* missed;
};

const std::vector<UnstitchedPath>& unstitched_paths() {
  static const std::vector<UnstitchedPath> paths = {
      {"other io_uring ops",
       {"io_uring_ops"},
       {},
       "splice, fallocate, send-zc and the rest of the ring's ops reach files unseen (only "
       "write, writev, write_fixed, fsync and sync_file_range are stitched)"},
      {"copy_file_range", {"copy_file_range"}, {}, "the kernel copies (or reflinks) the data"},
      {"sendfile/splice into a file",
       {"sendfile", "splice"},
       {},
       "the kernel moves the data from the pipe or file"},
      {"fallocate", {"fallocate"}, {}, "zeroing and preallocation write no data through a write"},
  };
  return paths;
}

// A file system and what the trace understands of its own writes: the hook layer that reads
// its journal (nullptr: none), a tracepoint of its own (tells whether it is in this kernel),
// what the trace stitches with that layer, and what it misses without it.
struct FileSystemDef {
  const char* what;
  const char* journal_layer;
  std::pair<const char*, const char*> own_tracepoint;  // (nullptr, nullptr): none
  const char* stitched;
  const char* missed;
  // The layer whose hooks follow data it keeps inside its metadata (btrfs's inline extents),
  // and what is lost without them; nullptr: none of its own.
  const char* inline_layer = nullptr;
  const char* inline_missed = nullptr;
};

const std::vector<FileSystemDef>& file_systems() {
  static const std::vector<FileSystemDef> defs = {
      {"ext4 (jbd2)",
       "journal",
       {"jbd2", "jbd2_start_commit"},
       "data, flushes and journal commits with their phases; a slow call's journal wait "
       "linked to the commit it waited on",
       "jbd2 commits are not seen: their time counts as other"},
      {"xfs",
       "xfs-log",
       {"xfs", "xfs_log_force"},
       "data, flushes, and a sync's log force and log writes as its journal phase",
       "its log (xlog) is not understood: log writes count as data-io or other"},
      // The block layer's hooks see btrfs's log tree and superblock writes (REQ_META bios of
      // the syncing thread); its devices are mapped from /sys/fs/btrfs by the agent.
      {"btrfs",
       "block",
       {"btrfs", "btrfs_transaction_commit"},
       "data, flushes on its devices, and a sync's log-tree or commit writes as its journal "
       "phase; small files' inline extents followed to the commit that writes them; items "
       "carry the subvolume's device, as stat() does",
       "its log-tree and transaction writes are not seen",
       "inline",
       "no btrfs inline data or commit hook: files kept inline (up to max_inline bytes) stay "
       "dirty"},
      {"others",
       nullptr,
       {nullptr, nullptr},
       "",
       "page cache and block layer only: a journal of their own is not understood"},
  };
  return defs;
}

bool plans(const HookPlan& plan, const std::string& program) {
  return plan.programs().count(program) > 0;
}

const HookChoice* choice_of(const HookPlan& plan, const std::string& hook) {
  for (const auto& c : plan.choices)
    if (c.hook->name == hook) return &c;
  return nullptr;
}

bool hook_chosen(const HookPlan& plan, const std::string& hook) {
  const HookChoice* c = choice_of(plan, hook);
  return c && c->variant;
}

// Whether the plan counts the untraced call named `name`: its own counter program, or the
// hook that counts it (the io_uring submit hook counts the ring's unstitched ops).
bool counted_by_plan(const HookPlan& plan, const std::string& name) {
  for (const UntracedCall& call : kUntracedCalls)
    if (name == call.name)
      return call.hook ? hook_chosen(plan, call.hook)
                       : plans(plan, "wp_count_" + name) || plans(plan, "wp_fentry_count_" + name);
  return false;
}

// How the plan serves a traced syscall, or "" when it does not.
std::string served_by(const HookPlan& plan, std::size_t slot) {
  const SyscallSlot& s = kSyscallSlots[slot];
  if (s.vfs && plans(plan, s.is_write ? "wp_vfs_write_enter" : "wp_vfs_fsync_enter"))
    return s.is_write ? "fentry/fexit vfs_write" : "fentry/fexit vfs_fsync_range";
  if (plan.raw_syscall_slots() & (1u << slot)) return "tp_btf raw_syscalls:sys_enter/sys_exit";
  const std::string name = s.name;
  if (plans(plan, "wp_fentry_" + name) && plans(plan, "wp_fexit_" + name))
    return fmt::format("fentry/fexit {}", plan.entry_functions.at("wp_fentry_" + name));
  if ((plans(plan, "wp_enter_" + name) && plans(plan, "wp_exit_" + name)) ||
      (plans(plan, "wp_enter_cast_" + name) && plans(plan, "wp_exit_cast_" + name)))
    return fmt::format("tracepoints syscalls:sys_enter/sys_exit_{}", name);
  return "";
}

// Why the trace as a whole stitches nothing ("" when it runs), or what every buffered write
// lacks.
constexpr const char* kNotRunnable = "a required hook has no variant here: tracing cannot run";
constexpr const char* kNoDirtyHook =
    "no page-dirtied hook: buffered writes are not followed to the disk";

std::vector<CoverageRow> syscall_rows(const HookPlan& plan) {
  std::vector<CoverageRow> rows;
  const bool dirty = hook_chosen(plan, "page dirtied");
  for (std::size_t slot = 0; slot < kSyscallSlots.size(); ++slot) {
    const SyscallSlot& s = kSyscallSlots[slot];
    CoverageRow row{s.name, CoverageStatus::NotTraced, ""};
    const std::string via = served_by(plan, slot);
    if (!plan.runnable()) {
      row.detail = kNotRunnable;
    } else if (via.empty()) {
      row.detail = "no hook serves it here (see hooks)";
    } else if (s.is_write && !dirty) {
      row.status = CoverageStatus::Partial;
      row.detail = fmt::format("{}; {}", via, kNoDirtyHook);
    } else {
      row.status = CoverageStatus::Stitched;
      row.detail = via;
    }
    if (s.syscall == Syscall::IoSubmit && !via.empty()) {
      row.detail += fmt::format(
          "; one write per IOCB_CMD_PWRITE/PWRITEV iocb (the first {} of a call), its O_DIRECT "
          "bios shared out in iocb order; IOCB_CMD_FSYNC/FDSYNC are not followed",
          WP_AIO_MAX_IOCBS);
    }
    if (s.syscall == Syscall::Pwritev2 && !via.empty())
      row.detail += "; its RWF_* flags per call (RWF_DSYNC/RWF_SYNC/RWF_APPEND as the open flags)";
    if (s.syscall == Syscall::Msync && !via.empty())
      row.detail += "; the file is the mapping's at the start address (MS_ASYNC does no I/O)";
    rows.push_back(std::move(row));
  }
  return rows;
}

// Stores into a shared mapping are made in write faults, outside any syscall: each fault is a
// record where x86's exceptions tracepoints are planned (and a fault that reads its folio in
// sends it when that folio is dirtied, in the page-dirtied hook); elsewhere each folio a store
// dirtied is (writeback_dirty_page, before v5.17, is not followed for stores).
CoverageRow mmap_store_row(const HookPlan& plan) {
  CoverageRow row{"mmap stores", CoverageStatus::NotTraced, ""};
  constexpr const char* kItems =
      "one write item per process, file and writeback cycle, followed to msync's, fsync's or "
      "the flusher's requests";
  if (!plan.runnable()) {
    row.detail = kNotRunnable;
  } else if (plans(plan, "wp_store_fault_user") && plans(plan, "wp_dirty_folio")) {
    row.status = CoverageStatus::Stitched;
    row.detail = std::string(
                     "tp_btf exceptions:page_fault_* in the storing task, the pages each "
                     "write fault made writable (a large folio whole where the fault "
                     "mapped it so): ") +
                 kItems;
  } else if (plans(plan, "wp_store_fault_user")) {
    row.status = CoverageStatus::Partial;
    row.detail =
        "no writeback_dirty_folio hook here: a store into a page its fault reads in is not "
        "followed";
  } else if (plans(plan, "wp_store_folio")) {
    row.status = CoverageStatus::Stitched;
    row.detail = std::string(
                     "tp_btf writeback_dirty_folio in the storing task (no fault "
                     "tracepoint here), each dirtied folio whole: ") +
                 kItems;
  } else {
    row.detail =
        "no fault or writeback_dirty_folio hook here: stores into mappings are not followed";
  }
  return row;
}

// The io_uring ops: stitched with their submit and complete hooks; without the punt hook an op
// punted to io-wq after a partial inline try may miss the pages that try dirtied.
std::vector<CoverageRow> uring_rows(const HookPlan& plan) {
  std::vector<CoverageRow> rows;
  const bool hooks = hook_chosen(plan, "io_uring submit") && hook_chosen(plan, "io_uring complete");
  for (const SyscallSlot& op : kUringOps) {
    CoverageRow row{op.name, CoverageStatus::NotTraced, ""};
    if (!plan.runnable()) {
      row.detail = kNotRunnable;
    } else if (!hooks) {
      row.detail = "no io_uring submit and complete hooks here (see hooks)";
    } else {
      std::vector<std::string> lacks;
      if (op.is_write && !hook_chosen(plan, "page dirtied")) lacks.push_back(kNoDirtyHook);
      if (!hook_chosen(plan, "io_uring punt"))
        lacks.push_back("no io_uring punt hook: pages dirtied before a punt to io-wq are missed");
      row.status = lacks.empty() ? CoverageStatus::Stitched : CoverageStatus::Partial;
      row.detail = "tp_btf io_uring submit/complete: inline, io-wq and SQPOLL issue";
      for (const auto& lack : lacks) row.detail += "; " + lack;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string joined(const std::vector<std::string>& parts) {
  return fmt::format("{}", fmt::join(parts, ", "));
}

// --min-latency's causes of a slow call, as a plan with them on would serve them here (doctor
// plans without: they run on every context switch and wakeup). The sleep stacks' hooks
// (layer "offcpu") each add a part; blk-throttle's also needs its timer function in kallsyms.
CoverageRow causes_row(const HookPlan& traced, const KernelFacts& facts) {
  const HookPlan plan =
      plan_hooks(facts, PlanOptions{.causes = true, .stacks = true, .throtl_timer_known = true});
  CoverageRow row{"slow-call causes (--min-latency)", CoverageStatus::NotTraced, ""};
  if (!traced.runnable()) {
    row.detail = kNotRunnable;
    return row;
  }
  if (!hook_chosen(plan, "off-CPU time")) {
    row.detail = "no sched_switch hook here: no on-CPU/off-CPU split of slow calls";
    return row;
  }
  std::vector<std::string> missing;
  for (const auto& c : plan.choices)
    if (c.hook->layer == "offcpu" && !c.variant) missing.push_back(c.hook->name);
  row.status = missing.empty() ? CoverageStatus::Stitched : CoverageStatus::Partial;
  row.detail =
      "tp_btf sched_switch: on CPU, throttled, writeback wait, blocked, runnable; with stacks "
      "(not --no-stacks) the kernel stacks each slow call slept with, who woke it "
      "(sched_waking), its i_rwsem waits and holder (lock:contention_*), direct and memcg "
      "reclaim, compaction and blk-throttle (timer_start of throtl_pending_timer_fn, once per "
      "arming), frames named from /proc/kallsyms";
  if (!missing.empty()) row.detail += fmt::format("; no {} hook here", joined(missing));
  return row;
}

// Whether the kernel has a tracepoint, in tracefs or (without tracefs) in its BTF.
bool kernel_has_tracepoint(const KernelFacts& facts, const char* category, const char* event) {
  return facts.tracepoint_exists(category, event) || facts.tracepoint_args(event, category) >= 0;
}

CoverageRow unstitched_row(const UnstitchedPath& path, const HookPlan& plan,
                           const KernelFacts& facts) {
  std::vector<std::string> counted, uncounted;
  for (const char* call : path.counted_by)
    (counted_by_plan(plan, call) ? counted : uncounted).push_back(call);
  std::string detail = path.missed;
  if (!counted.empty()) detail += fmt::format("; trace counts its calls ({})", joined(counted));
  if (!uncounted.empty())
    detail += fmt::format("; not even counted ({}: no counter attached)", joined(uncounted));
  if (!path.kernel_tracepoints.empty()) {
    std::vector<std::string> present;
    for (const auto& [category, event] : path.kernel_tracepoints)
      if (kernel_has_tracepoint(facts, category, event))
        present.push_back(fmt::format("{}:{}", category, event));
    detail += present.empty()
                  ? fmt::format("; this kernel has no {} tracepoints",
                                path.kernel_tracepoints.front().first)
                  : fmt::format("; this kernel has {}, no hook uses it yet", joined(present));
  }
  return {path.what, CoverageStatus::NotTraced, detail};
}

CoverageRow file_system_row(const FileSystemDef& fs, const HookPlan& plan,
                            const KernelFacts& facts) {
  CoverageRow row{fs.what, CoverageStatus::NotTraced, ""};
  if (!plan.runnable()) {
    row.detail = kNotRunnable;
    return row;
  }
  const auto [category, event] = fs.own_tracepoint;
  // The module of a file system's tracepoints is named like their category (jbd2, xfs, btrfs).
  const bool in_kernel = !category || kernel_has_tracepoint(facts, category, event);
  std::vector<std::string> journal_hooks, missing;
  if (fs.journal_layer)
    for (const auto& c : plan.choices)
      if (c.hook->layer == fs.journal_layer)
        (c.variant ? journal_hooks : missing).push_back(c.hook->name);
  std::vector<std::string> lacks;
  if (!hook_chosen(plan, "page dirtied")) lacks.push_back(kNoDirtyHook);
  if (fs.inline_layer) {
    for (const auto& c : plan.choices)
      if (c.hook->layer == fs.inline_layer && !c.variant) {
        lacks.push_back(fs.inline_missed);
        break;
      }
  }
  if (fs.journal_layer && !journal_hooks.empty() && missing.empty()) {
    row.status = lacks.empty() ? CoverageStatus::Stitched : CoverageStatus::Partial;
    row.detail = fs.stitched;
  } else {
    row.status = CoverageStatus::Partial;
    row.detail = "data and flushes";
    if (fs.journal_layer && !journal_hooks.empty())
      lacks.push_back(fmt::format("no {} hook", joined(missing)));
    else
      lacks.push_back(fs.missed);
  }
  if (!in_kernel)
    lacks.push_back(
        fmt::format("no {}:{} tracepoint here (not built or not loaded)", category, event));
  for (const auto& lack : lacks) row.detail += "; " + lack;
  return row;
}

}  // namespace

const char* coverage_status_name(CoverageStatus status) {
  switch (status) {
    case CoverageStatus::Stitched: return "stitched";
    case CoverageStatus::Partial: return "partial";
    case CoverageStatus::NotTraced: return "not traced";
  }
  return "?";
}

Coverage coverage_of(const HookPlan& plan, const KernelFacts& facts) {
  Coverage out;
  out.write_paths = syscall_rows(plan);
  out.write_paths.push_back(mmap_store_row(plan));
  for (auto& row : uring_rows(plan)) out.write_paths.push_back(std::move(row));
  for (const auto& path : unstitched_paths())
    out.write_paths.push_back(unstitched_row(path, plan, facts));
  out.write_paths.push_back(causes_row(plan, facts));
  for (const auto& fs : file_systems())
    out.file_systems.push_back(file_system_row(fs, plan, facts));
  return out;
}

UntracedTally untraced_tally(const HookPlan& plan, const UntracedCounts& counts) {
  UntracedTally tally;
  for (std::size_t i = 0; i < kUntracedCalls.size(); ++i)
    if (counted_by_plan(plan, kUntracedCalls[i].name)) {
      tally.counted |= 1ull << i;
      tally.counts[i] = counts[i];
    }
  return tally;
}

}  // namespace wp
