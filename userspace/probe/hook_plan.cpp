// SPDX-License-Identifier: Apache-2.0
#include "probe/hook_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "decode/syscalls.h"

namespace wp {

const char* attach_kind_name(AttachKind kind) {
  switch (kind) {
    case AttachKind::Fentry: return "fentry";
    case AttachKind::TpBtf: return "tp_btf";
    case AttachKind::RawTp: return "raw_tp";
    case AttachKind::Tracepoint: return "tracepoint";
  }
  return "?";
}

namespace {

HookVariant tracepoint(const std::string& program, const std::string& category,
                       const std::string& event) {
  return {{program}, AttachKind::Tracepoint, category, {event}, "", -1};
}

HookVariant btf_or_raw(const std::string& program, AttachKind kind, const std::string& category,
                       const std::string& event, int args, const std::string& module = "") {
  return {{program}, kind, category, {event}, module, args};
}

// Syscall slots (decode/syscalls.h, from WP_SYSCALL_TABLE): bit i is kSyscallSlots[i].
constexpr std::uint32_t kVfsSlots = WP_VFS_SLOTS;
constexpr std::uint32_t kOtherSlots = ((1u << WP_SYSCALL_SLOTS) - 1) & ~kVfsSlots;

// Syscalls of `slots`: the perf tracepoints of each syscall (an entry and an exit program
// apiece), else the raw syscall tracepoints (one program pair for all of them).
//
// Chosen by measurement (bench/run.sh variants, 5 interleaved rounds on the 6.18 dev box,
// ratio to untraced): a program on the raw pair runs on *every* syscall of every process,
// which cost a bystander's getppid() x1.79, against x1.21 with per-syscall tracepoints (the
// kernel checks a bitmap and runs nothing); a traced cached 4 KiB pwrite cost x1.65 on the raw
// pair against x2.53 per syscall. The tax on every other syscall on the machine weighs more
// for a tool left running, so per-syscall tracepoints come first; --raw-syscalls chooses the
// raw pair for tracing a write-heavy process where little else runs.
//
// Per-syscall tracepoints come twice: programs that make the file a BTF pointer with the
// bpf_rdonly_cast kfunc (v6.2) and read it with plain loads, and programs that probe-read it.
// bench/run.sh programs, kernel.bpf_stats_enabled on the 6.18 dev box: the programs of a
// traced cached pwrite took 617 ns with probe reads and 443 ns with the cast.
std::vector<HookVariant> syscall_variants(std::uint32_t slots) {
  HookVariant raw{{"wp_sys_enter", "wp_sys_exit"},
                  AttachKind::TpBtf,
                  "raw_syscalls",
                  {"sys_enter", "sys_exit"},
                  "",
                  2,
                  slots};
  HookVariant per_syscall{{}, AttachKind::Tracepoint, "syscalls", {}, "", -1, 0};
  for (std::size_t i = 0; i < kSyscallSlots.size(); ++i) {
    if (!(slots & (1u << i))) continue;
    const std::string name = kSyscallSlots[i].name;
    per_syscall.programs.push_back("wp_enter_" + name);
    per_syscall.events.push_back("sys_enter_" + name);
    per_syscall.programs.push_back("wp_exit_" + name);
    per_syscall.events.push_back("sys_exit_" + name);
  }
  HookVariant cast = per_syscall;
  for (auto& program : cast.programs)  // wp_enter_write -> wp_enter_cast_write
    program.insert(program.find('_', 3) + 1, "cast_");
  cast.kfunc = "bpf_rdonly_cast";
  return {cast, per_syscall, raw};
}

// write/pwrite64/fsync/fdatasync: fentry/fexit on vfs_write and vfs_fsync_range first.
std::vector<HookVariant> vfs_variants() {
  HookVariant vfs{
      {"wp_vfs_write_enter", "wp_vfs_write_exit", "wp_vfs_fsync_enter", "wp_vfs_fsync_exit"},
      AttachKind::Fentry,
      "",
      {"vfs_write", "vfs_write", "vfs_fsync_range", "vfs_fsync_range"},
      "",
      -1,
      0};
  std::vector<HookVariant> out{vfs};
  for (auto& v : syscall_variants(kVfsSlots)) out.push_back(std::move(v));
  return out;
}

std::vector<Hook> build_table() {
  using K = AttachKind;
  std::vector<Hook> t;
  t.push_back({"write/sync syscalls", "syscall", true, vfs_variants()});
  t.push_back({"other write/sync calls", "syscall", false, syscall_variants(kOtherSlots)});
  t.push_back({"fork follow",
               "syscall",
               false,
               {btf_or_raw("wp_fork", K::TpBtf, "sched", "sched_process_fork", 2)}});
  // Any arity: 6.1 passes (task), 6.18 (task, group_dead); the program reads only current.
  t.push_back({"process exit",
               "syscall",
               false,
               {btf_or_raw("wp_process_exit", K::TpBtf, "sched", "sched_process_exit", -1)}});

  // io_uring write and sync ops (syscall.bpf.c, "io_uring ops"). v6.3 renamed
  // io_uring_submit_sqe (req, force_nonblock) to io_uring_submit_req (req); io_uring_complete
  // took the CQE itself instead of its fields (ctx, req, cqe against 6.1's seven arguments).
  t.push_back(
      {"io_uring submit",
       "syscall",
       false,
       {btf_or_raw("wp_uring_submit_req", K::TpBtf, "io_uring", "io_uring_submit_req", 1),
        btf_or_raw("wp_uring_submit_sqe", K::TpBtf, "io_uring", "io_uring_submit_sqe", 2)}});
  t.push_back(
      {"io_uring punt",
       "syscall",
       false,
       {btf_or_raw("wp_uring_punt", K::TpBtf, "io_uring", "io_uring_queue_async_work", 2)}});
  t.push_back(
      {"io_uring complete",
       "syscall",
       false,
       {btf_or_raw("wp_uring_complete_cqe", K::TpBtf, "io_uring", "io_uring_complete", 3),
        btf_or_raw("wp_uring_complete_fields", K::TpBtf, "io_uring", "io_uring_complete", 7)}});

  t.push_back({"page dirtied",
               "pagecache",
               false,
               {btf_or_raw("wp_dirty_folio", K::TpBtf, "writeback", "writeback_dirty_folio", 2),
                btf_or_raw("wp_dirty_page", K::TpBtf, "writeback", "writeback_dirty_page", 2)}});
  // Stores into shared file mappings: each write fault names the page stored into (x86's
  // exceptions tracepoints, since v3.18); elsewhere the folio a store dirtied, whole. Before
  // v5.17 (no writeback_dirty_folio) stores are not followed.
  t.push_back({"mmap stores",
               "pagecache",
               false,
               {{{"wp_store_fault_user", "wp_store_fault_kernel"},
                 K::TpBtf,
                 "exceptions",
                 {"page_fault_user", "page_fault_kernel"},
                 "",
                 3},
                btf_or_raw("wp_store_folio", K::TpBtf, "writeback", "writeback_dirty_folio", 2)}});
  // Classic only, so it needs tracefs: the record's dirty, limit and per-device fields are
  // computed by the tracepoint's TP_fast_assign from arguments that v6.15 folded into struct
  // dirty_throttle_control (12 arguments on 6.1, 8 on 6.18).
  t.push_back({"dirty throttling",
               "pagecache",
               false,
               {tracepoint("wp_balance_dirty_pages", "writeback", "balance_dirty_pages")}});
  t.push_back(
      {"writeback wait",
       "pagecache",
       false,
       {btf_or_raw("wp_folio_wait_writeback", K::TpBtf, "writeback", "folio_wait_writeback", 2),
        btf_or_raw("wp_wait_on_page_writeback", K::TpBtf, "writeback", "wait_on_page_writeback",
                   2)}});
  // A dirty folio dropped from the page cache unwritten (truncate, unlink): discarded writes.
  t.push_back({"page discarded",
               "pagecache",
               false,
               {btf_or_raw("wp_discard_folio", K::TpBtf, "filemap",
                           "mm_filemap_delete_from_page_cache", 1)}});

  for (const char* ev : {"writeback_start", "writeback_written"})
    t.push_back({std::string("flusher ") + (ev + 10),
                 "pagecache",
                 false,
                 {btf_or_raw(std::string("wp_") + ev, K::TpBtf, "writeback", ev, 2)}});

  t.push_back({"bio queue",
               "block",
               true,
               {btf_or_raw("wp_bio_queue_btf", K::TpBtf, "block", "block_bio_queue", 1),
                btf_or_raw("wp_bio_queue_raw", K::RawTp, "block", "block_bio_queue", 1)}});
  t.push_back({"bio split",
               "block",
               false,
               {btf_or_raw("wp_bio_split_btf", K::TpBtf, "block", "block_split", 2),
                btf_or_raw("wp_bio_split_raw", K::RawTp, "block", "block_split", 2)}});
  // Write bios that failed: on a bio-based device (dm, md) the only failure there is.
  t.push_back({"bio failure",
               "block",
               false,
               {btf_or_raw("wp_bio_complete_btf", K::TpBtf, "block", "block_bio_complete", 2),
                btf_or_raw("wp_bio_complete_raw", K::RawTp, "block", "block_bio_complete", 2)}});
  // v5.11 dropped the request_queue argument of block_rq_insert/issue/requeue: arity picks.
  for (const char* ev : {"insert", "issue", "requeue"}) {
    std::string event = std::string("block_rq_") + ev;
    std::string base = std::string("wp_rq_") + ev;
    // A requeue is rare, and without its hook a re-issue reads as a missed completion.
    t.push_back({std::string("request ") + ev,
                 "block",
                 std::string(ev) != "requeue",
                 {btf_or_raw(base + "_btf", K::TpBtf, "block", event, 1),
                  btf_or_raw(base + "_raw", K::RawTp, "block", event, 1),
                  btf_or_raw(base + "_raw_q", K::RawTp, "block", event, 2)}});
  }
  t.push_back({"request complete",
               "block",
               true,
               {btf_or_raw("wp_rq_complete_btf", K::TpBtf, "block", "block_rq_complete", 3),
                btf_or_raw("wp_rq_complete_raw", K::RawTp, "block", "block_rq_complete", 3)}});

  for (const char* ev : {"jbd2_start_commit", "jbd2_commit_locking", "jbd2_commit_flushing",
                         "jbd2_commit_logging", "jbd2_end_commit"})
    t.push_back({std::string("journal ") + (ev + 5),
                 "journal",
                 false,
                 // tp_btf in vmlinux or jbd2's module BTF; the classic tracepoint where there
                 // is no module BTF (CONFIG_DEBUG_INFO_BTF_MODULES=n, or without CAP_SYS_ADMIN,
                 // which reading module BTF ids needs) but tracefs is there.
                 {btf_or_raw(std::string("wp_") + ev + "_btf", K::TpBtf, "jbd2", ev, 2, "jbd2"),
                  tracepoint(std::string("wp_") + ev, "jbd2", ev)}});

  // xfs's log (v5.14 added the iclog events; Debian's 6.1 and 6.18 have all three): a sync's
  // log force, and each log write issued and completed, for the sync's journal phase.
  t.push_back({"xfs log",
               "xfs-log",
               false,
               {{{"wp_xfs_log_force_btf", "wp_xlog_iclog_sync_btf", "wp_xlog_iclog_sync_done_btf"},
                 K::TpBtf,
                 "xfs",
                 {"xfs_log_force", "xlog_iclog_sync", "xlog_iclog_sync_done"},
                 "xfs",
                 -1},
                {{"wp_xfs_log_force", "wp_xlog_iclog_sync", "wp_xlog_iclog_sync_done"},
                 K::Tracepoint,
                 "xfs",
                 {"xfs_log_force", "xlog_iclog_sync", "xlog_iclog_sync_done"},
                 "",
                 -1}}});

  // Data btrfs keeps inline in its tree, and the transaction commits that write it (btrfs built
  // in here, a module on Debian's kernels: planned when loaded before the trace starts). The
  // inline hook needs the extent-bit enumerators in BTF too, which 6.1 has as macros.
  {
    HookVariant inline_extent =
        btf_or_raw("wp_btrfs_inline", K::TpBtf, "btrfs", "btrfs_clear_extent_bit", 4, "btrfs");
    inline_extent.enumerators.assign(std::begin(kBtrfsInlineEnumerators),
                                     std::end(kBtrfsInlineEnumerators));
    t.push_back({"btrfs inline data", "inline", false, {inline_extent}});
  }
  t.push_back(
      {"btrfs commit",
       "inline",
       false,
       {btf_or_raw("wp_btrfs_commit", K::TpBtf, "btrfs", "btrfs_transaction_commit", 1, "btrfs")}});

  // FUSE's request tracepoints (6.18 has them, Debian's 6.1 not): which daemon answered a
  // call's write or fsync. Built in here, the fuse module's BTF on a modular kernel.
  t.push_back({"fuse replies",
               "fuse",
               false,
               {{{"wp_fuse_request_send", "wp_fuse_request_end"},
                 K::TpBtf,
                 "fuse",
                 {"fuse_request_send", "fuse_request_end"},
                 "fuse",
                 1}}});

  // Only with --min-latency: it runs on every context switch of the machine.
  t.push_back({"off-CPU time",
               "sched",
               false,
               {btf_or_raw("wp_sched_switch", K::TpBtf, "sched", "sched_switch", 4),
                btf_or_raw("wp_sched_switch_pre518", K::TpBtf, "sched", "sched_switch", 3)}});

  // Only with --min-latency and stacks on (bpf/sched.bpf.c): where slow calls slept, who woke
  // them, and the call-wide waits named by tracepoints. The programs read no argument beyond
  // the first, so any arity serves: 6.1 and 6.18 differ only in timer_start's (3 against 2).
  t.push_back({"sleep wakers",
               "offcpu",
               false,
               {btf_or_raw("wp_sched_waking", K::TpBtf, "sched", "sched_waking", 1)}});
  // lock:contention_* appeared in v5.19: an older kernel plans the inode-lock wait out.
  t.push_back({"inode lock wait",
               "offcpu",
               false,
               {{{"wp_contention_begin", "wp_contention_end"},
                 K::TpBtf,
                 "lock",
                 {"contention_begin", "contention_end"},
                 "",
                 2}}});
  t.push_back({"direct reclaim",
               "offcpu",
               false,
               {{{"wp_direct_reclaim_begin", "wp_direct_reclaim_end"},
                 K::TpBtf,
                 "vmscan",
                 {"mm_vmscan_direct_reclaim_begin", "mm_vmscan_direct_reclaim_end"},
                 "",
                 -1}}});
  t.push_back({"memcg reclaim",
               "offcpu",
               false,
               {{{"wp_memcg_reclaim_begin", "wp_memcg_reclaim_end"},
                 K::TpBtf,
                 "vmscan",
                 {"mm_vmscan_memcg_reclaim_begin", "mm_vmscan_memcg_reclaim_end"},
                 "",
                 -1}}});
  t.push_back({"compaction",
               "offcpu",
               false,
               {{{"wp_compaction_begin", "wp_compaction_end"},
                 K::TpBtf,
                 "compaction",
                 {"mm_compaction_begin", "mm_compaction_end"},
                 "",
                 -1}}});
  t.push_back({"blk-throttle",
               "offcpu",
               false,
               {btf_or_raw("wp_throtl_timer_start", K::TpBtf, "timer", "timer_start", -1)}});
  // Counters only: calls of traced processes that write by ways nothing above stitches
  // (WP_UNTRACED_TABLE), so the summary can say what went untraced. One hook each, so a kernel
  // lacking one tracepoint loses only that count. (The ring's unstitched ops are counted by
  // the io_uring submit hook: no counter of their own.)
  for (const UntracedCall& call : kUntracedCalls)
    if (call.event)
      t.push_back({std::string("count ") + call.name,
                   "untraced",
                   false,
                   {tracepoint(std::string("wp_count_") + call.name, "syscalls",
                               std::string("sys_enter_") + call.event)}});

  // Namespace calls of traced processes (bpf/namespace.bpf.c, WP_NAMESPACE_TABLE): the items
  // the crash-consistency rules read, an entry and an exit program per syscall. Two hooks: the
  // calls every architecture has, and the older ones only some keep (arm64's table has no
  // rename, link, unlink, rmdir, mkdir, creat or open: only their *at forms), so a kernel
  // without those loses only them. Classic tracepoints only: on the raw pair they would run
  // on every syscall of every process.
  {
    const std::set<std::string> legacy = {"rename", "link",  "unlink", "rmdir",
                                          "mkdir",  "creat", "open"};
    HookVariant current{{}, K::Tracepoint, "syscalls", {}, "", -1};
    HookVariant older = current;
#define WP_NAMESPACE_HOOK_(name, Name, value, op, d1, n1, d2, n2, flags, fd) \
  for (const char* side : {"enter", "exit"}) {                               \
    HookVariant& v = legacy.contains(#name) ? older : current;               \
    v.programs.push_back(fmt::format("wp_ns_{}_{}", side, #name));           \
    v.events.push_back(fmt::format("sys_{}_{}", side, #name));               \
  }
    WP_NAMESPACE_TABLE(WP_NAMESPACE_HOOK_)
#undef WP_NAMESPACE_HOOK_
    t.push_back({"namespace calls", "namespace", false, {current}});
    t.push_back({"namespace calls (older)", "namespace", false, {older}});
  }

  t.push_back(
      {"nvme submit",
       "nvme",
       false,
       {btf_or_raw("wp_nvme_setup_cmd", K::TpBtf, "nvme", "nvme_setup_cmd", 2, "nvme_core")}});
  t.push_back(
      {"nvme complete",
       "nvme",
       false,
       {btf_or_raw("wp_nvme_complete_rq", K::TpBtf, "nvme", "nvme_complete_rq", 1, "nvme_core")}});
  return t;
}

constexpr const char* kNoTracefs = "no tracefs";

std::string fentry_off_reason(const KernelFacts& facts, const PlanOptions& options) {
  if (!options.fentry) return "off (--no-fentry)";
  if (!facts.fentry_attaches()) return fmt::format("unavailable ({})", facts.fentry_error());
  return "";
}

// Why a variant cannot serve here, or "" when it can.
std::string unusable_reason(const Hook& hook, const HookVariant& v, const KernelFacts& facts,
                            const PlanOptions& options) {
  for (const auto& program : v.programs)
    if (options.failed.count(program)) return fmt::format("{} failed to load or attach", program);
  if (!v.kfunc.empty() && !facts.has_function(v.kfunc))
    return fmt::format("no kfunc {} in BTF", v.kfunc);
  for (const auto& name : v.enumerators)
    if (!facts.has_enumerator(name)) return fmt::format("no enumerator {} in BTF", name);
  for (const auto& event : v.events) {
    if (v.kind == AttachKind::Fentry) {
      if (std::string off = fentry_off_reason(facts, options); !off.empty()) return off;
      if (!facts.has_function(event)) return fmt::format("no function {} in BTF", event);
      continue;
    }
    if (v.kind == AttachKind::Tracepoint) {
      // The write path's syscalls have the raw pair to fall back on; the untraced calls'
      // counters have no raw form and stay on their own tracepoints.
      if (options.raw_syscalls && hook.layer == "syscall" && v.category == "syscalls")
        return "passed over (--raw-syscalls)";
      if (!facts.tracefs_available()) return std::string(kNoTracefs);
      if (!facts.tracepoint_exists(v.category, event))
        return fmt::format("no tracepoint {}:{}", v.category, event);
      continue;
    }
    int args = facts.tracepoint_args(event, v.module);
    if (args < 0) {
      if (!v.module.empty()) return fmt::format("no {} BTF for {}", v.module, event);
      return fmt::format("no btf_trace_{} in BTF", event);
    }
    if (v.args >= 0 && args != v.args)
      return fmt::format("{} takes {} args, not {}", event, args, v.args);
  }
  return "";
}

}  // namespace

const std::vector<Hook>& hook_table() {
  static const std::vector<Hook> table = build_table();
  return table;
}

std::string variant_summary(const HookVariant& v) {
  std::string out =
      v.category.empty()
          ? fmt::format("{} {}", attach_kind_name(v.kind), v.events.front())
          : fmt::format("{} {}:{}", attach_kind_name(v.kind), v.category, v.events.front());
  if (v.events.size() > 1) out += fmt::format(" (+{})", v.events.size() - 1);
  if (!v.kfunc.empty()) out += fmt::format(" with {}", v.kfunc);
  return out;
}

bool HookPlan::runnable() const {
  for (const auto& c : choices)
    if (c.hook->required && !c.variant) return false;
  return true;
}

std::set<std::string> HookPlan::programs() const {
  std::set<std::string> out;
  for (const auto& c : choices)
    if (c.variant) out.insert(c.variant->programs.begin(), c.variant->programs.end());
  return out;
}

std::uint32_t HookPlan::raw_syscall_slots() const {
  std::uint32_t slots = 0;
  for (const auto& c : choices)
    if (c.variant) slots |= c.variant->raw_syscall_slots;
  return slots;
}

HookPlan plan_hooks(const KernelFacts& facts, const PlanOptions& options) {
  HookPlan plan;
  for (const auto& hook : hook_table()) {
    HookChoice choice{&hook, nullptr, ""};
    if (hook.layer == "sched" && !options.causes) {
      choice.why = "only with --min-latency (slow-call causes)";
      plan.choices.push_back(std::move(choice));
      continue;
    }
    if (hook.layer == "offcpu" && (!options.causes || !options.stacks)) {
      choice.why =
          options.causes ? "off (--no-stacks)" : "only with --min-latency (slow-call causes)";
      plan.choices.push_back(std::move(choice));
      continue;
    }
    if (hook.name == "blk-throttle" && !options.throtl_timer_known) {
      choice.why = "no throtl_pending_timer_fn in /proc/kallsyms";
      plan.choices.push_back(std::move(choice));
      continue;
    }
    for (const auto& v : hook.variants) {
      std::string reason = unusable_reason(hook, v, facts, options);
      if (reason.empty()) {
        choice.variant = &v;
        break;
      }
      if (reason == kNoTracefs) choice.for_want_of_tracefs = true;
      // Variants of one kind often fail for one reason (no tracefs for both per-syscall
      // variants): say it once.
      std::string passed = fmt::format("{}: {}", attach_kind_name(v.kind), reason);
      if (choice.why == passed || choice.why.ends_with("; " + passed)) continue;
      if (!choice.why.empty()) choice.why += "; ";
      choice.why += passed;
    }
    plan.choices.push_back(std::move(choice));
  }
  return plan;
}

std::vector<std::string> tracefs_costs(const HookPlan& plan) {
  // Hooks that pay the same cost share a line, in plan order.
  std::vector<std::pair<std::string, std::string>> costs;  // (cost, hooks)
  for (const auto& c : plan.choices) {
    if (!c.for_want_of_tracefs) continue;
    const std::string cost =
        !c.variant ? "not traced"
        : c.variant->raw_syscall_slots
            ? "via raw sys_enter/sys_exit (every syscall of every thread pays a filter)"
            : fmt::format("via {}", variant_summary(*c.variant));
    auto it = std::find_if(costs.begin(), costs.end(),
                           [&cost](const auto& entry) { return entry.first == cost; });
    if (it == costs.end())
      costs.emplace_back(cost, c.hook->name);
    else
      it->second += ", " + c.hook->name;
  }
  std::vector<std::string> out;
  for (const auto& [cost, hooks] : costs) out.push_back(fmt::format("{}: {}", hooks, cost));
  return out;
}

std::set<std::string> parse_program_list(std::string_view list) {
  std::set<std::string> out;
  for (std::size_t at = 0; at <= list.size();) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    if (comma > at) out.emplace(list.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

}  // namespace wp
