// SPDX-License-Identifier: Apache-2.0
// The hooks writepath knows and, per hook, its variants in order of preference (hook_plan.h).
// Each variant is written with designated initializers: a field left out takes its default.
#include <fmt/format.h>

#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "decode/syscalls.h"
#include "probe/hook_plan.h"

namespace wp {
namespace {

using K = AttachKind;

// Syscall slots (decode/syscalls.h, from WP_SYSCALL_TABLE): bit i is kSyscallSlots[i].
constexpr std::uint32_t kVfsSlots = WP_VFS_SLOTS;
constexpr std::uint32_t kReadSlots = WP_READ_SLOTS;
constexpr std::uint32_t kOtherSlots = ((1u << WP_SYSCALL_SLOTS) - 1) & ~kVfsSlots & ~kReadSlots;

// fentry/fexit on the entry function of each syscall of `slots` (syscall_entry_function).
HookVariant syscall_entry_variant(std::uint32_t slots) {
  HookVariant entry{.kind = K::Fentry, .syscall_entry = true};
  for (std::size_t i = 0; i < kSyscallSlots.size(); ++i) {
    if (!(slots & (1u << i))) continue;
    const std::string name = kSyscallSlots[i].name;
    entry.programs.push_back({.name = "wp_fentry_" + name, .event = name});
    entry.programs.push_back({.name = "wp_fexit_" + name, .event = name});
  }
  return entry;
}

// Syscalls of `slots`: the entry functions of each (fentry and fexit) where trampolines attach,
// else the perf tracepoints of each syscall (an entry and an exit program apiece), else the
// raw syscall tracepoints (one program pair for all of them).
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
//
// Where trampolines attach, fentry/fexit on each syscall's entry function come before all of
// them: only that syscall's callers pay, where any enabled syscall tracepoint puts every thread
// of the machine on the slow syscall path (a bystander's getppid x1.47 in a Debian 6.12 guest,
// counted in instructions: make bench-vm).
std::vector<HookVariant> syscall_variants(std::uint32_t slots) {
  HookVariant raw{.kind = K::TpBtf,
                  .category = "raw_syscalls",
                  .programs =
                      {
                          {.name = "wp_sys_enter", .event = "sys_enter"},
                          {.name = "wp_sys_exit", .event = "sys_exit"},
                      },
                  .args = 2,
                  .raw_syscall_slots = slots};
  HookVariant per_syscall{.kind = K::Tracepoint, .category = "syscalls"};
  for (std::size_t i = 0; i < kSyscallSlots.size(); ++i) {
    if (!(slots & (1u << i))) continue;
    const std::string name = kSyscallSlots[i].name;
    per_syscall.programs.push_back({.name = "wp_enter_" + name, .event = "sys_enter_" + name});
    per_syscall.programs.push_back({.name = "wp_exit_" + name, .event = "sys_exit_" + name});
  }
  HookVariant cast = per_syscall;
  for (auto& program : cast.programs)  // wp_enter_write -> wp_enter_cast_write
    program.name.insert(program.name.find('_', 3) + 1, "cast_");
  cast.kfunc = "bpf_rdonly_cast";
  return {syscall_entry_variant(slots), cast, per_syscall, raw};
}

// write/pwrite64/fsync/fdatasync: fentry/fexit on vfs_write and vfs_fsync_range first.
std::vector<HookVariant> vfs_variants() {
  HookVariant vfs{.kind = K::Fentry,
                  .programs = {
                      {.name = "wp_vfs_write_enter", .event = "vfs_write"},
                      {.name = "wp_vfs_write_exit", .event = "vfs_write"},
                      {.name = "wp_vfs_fsync_enter", .event = "vfs_fsync_range"},
                      {.name = "wp_vfs_fsync_exit", .event = "vfs_fsync_range"},
                  }};
  std::vector<HookVariant> out{vfs};
  for (auto& v : syscall_variants(kVfsSlots)) out.push_back(std::move(v));
  return out;
}

// `btf` and, for a kernel whose BTF lacks the tracepoint's prototype, the same program built
// as raw_tp (named _raw for _btf).
std::vector<HookVariant> with_raw_twin(const HookVariant& btf) {
  HookVariant raw = btf;
  raw.kind = AttachKind::RawTp;
  for (auto& program : raw.programs) program.name.replace(program.name.rfind("_btf"), 4, "_raw");
  return {btf, raw};
}

std::vector<Hook> build_table() {
  std::vector<Hook> t;
  t.push_back({.name = "write/sync syscalls",
               .layer = "syscall",
               .required = true,
               .variants = vfs_variants()});
  t.push_back({.name = "other write/sync calls",
               .layer = "syscall",
               .variants = syscall_variants(kOtherSlots)});
  // Reads: layer "read", planned with --reads (PlanOptions::reads).
  t.push_back({.name = "read syscalls", .layer = "read", .variants = syscall_variants(kReadSlots)});
  t.push_back({.name = "fork follow",
               .layer = "syscall",
               .variants = {{.kind = K::TpBtf,
                             .category = "sched",
                             .programs = {{.name = "wp_fork", .event = "sched_process_fork"}},
                             .args = 2}}});
  // Any arity: 6.1 passes (task), 6.18 (task, group_dead); the program reads only current.
  t.push_back(
      {.name = "process exit",
       .layer = "syscall",
       .variants = {{.kind = K::TpBtf,
                     .category = "sched",
                     .programs = {{.name = "wp_process_exit", .event = "sched_process_exit"}},
                     .args = kAnyArity}}});

  // io_uring write and sync ops (bpf/uring.bpf.c). v6.3 renamed io_uring_submit_sqe (req,
  // force_nonblock) to io_uring_submit_req (req); io_uring_complete took the CQE itself instead
  // of its fields (ctx, req, cqe against 6.1's seven arguments).
  t.push_back(
      {.name = "io_uring submit",
       .layer = "syscall",
       .variants = {{.kind = K::TpBtf,
                     .category = "io_uring",
                     .programs = {{.name = "wp_uring_submit_req", .event = "io_uring_submit_req"}},
                     .args = 1},
                    {.kind = K::TpBtf,
                     .category = "io_uring",
                     .programs = {{.name = "wp_uring_submit_sqe", .event = "io_uring_submit_sqe"}},
                     .args = 2}}});
  t.push_back(
      {.name = "io_uring punt",
       .layer = "syscall",
       .variants = {{.kind = K::TpBtf,
                     .category = "io_uring",
                     .programs = {{.name = "wp_uring_punt", .event = "io_uring_queue_async_work"}},
                     .args = 2}}});
  t.push_back(
      {.name = "io_uring complete",
       .layer = "syscall",
       .variants = {
           {.kind = K::TpBtf,
            .category = "io_uring",
            .programs = {{.name = "wp_uring_complete_cqe", .event = "io_uring_complete"}},
            .args = 3},
           {.kind = K::TpBtf,
            .category = "io_uring",
            .programs = {{.name = "wp_uring_complete_fields", .event = "io_uring_complete"}},
            .args = 7}}});

  t.push_back(
      {.name = "page dirtied",
       .layer = "pagecache",
       .variants = {{.kind = K::TpBtf,
                     .category = "writeback",
                     .programs = {{.name = "wp_dirty_folio", .event = "writeback_dirty_folio"}},
                     .args = 2},
                    {.kind = K::TpBtf,
                     .category = "writeback",
                     .programs = {{.name = "wp_dirty_page", .event = "writeback_dirty_page"}},
                     .args = 2}}});
  // Stores into shared file mappings: each write fault names the page stored into (x86's
  // exceptions tracepoints, since v3.18); elsewhere the folio a store dirtied, whole. Before
  // v5.17 (no writeback_dirty_folio) stores are not followed.
  t.push_back(
      {.name = "mmap stores",
       .layer = "pagecache",
       .variants = {{.kind = K::TpBtf,
                     .category = "exceptions",
                     .programs =
                         {
                             {.name = "wp_store_fault_user", .event = "page_fault_user"},
                             {.name = "wp_store_fault_kernel", .event = "page_fault_kernel"},
                         },
                     .args = 3},
                    {.kind = K::TpBtf,
                     .category = "writeback",
                     .programs = {{.name = "wp_store_folio", .event = "writeback_dirty_folio"}},
                     .args = 2}}});
  // Classic only, so it needs tracefs: the record's dirty, limit and per-device fields are
  // computed by the tracepoint's TP_fast_assign from arguments that v6.15 folded into struct
  // dirty_throttle_control (12 arguments on 6.1, 8 on 6.18).
  t.push_back({.name = "dirty throttling",
               .layer = "pagecache",
               .variants = {{.kind = K::Tracepoint,
                             .category = "writeback",
                             .programs = {{.name = "wp_balance_dirty_pages",
                                           .event = "balance_dirty_pages"}}}}});
  t.push_back(
      {.name = "writeback wait",
       .layer = "pagecache",
       .variants = {
           {.kind = K::TpBtf,
            .category = "writeback",
            .programs = {{.name = "wp_folio_wait_writeback", .event = "folio_wait_writeback"}},
            .args = 2},
           {.kind = K::TpBtf,
            .category = "writeback",
            .programs = {{.name = "wp_wait_on_page_writeback", .event = "wait_on_page_writeback"}},
            .args = 2}}});
  // A dirty folio dropped from the page cache unwritten (truncate, unlink): discarded writes.
  t.push_back({.name = "page discarded",
               .layer = "pagecache",
               .variants = {{.kind = K::TpBtf,
                             .category = "filemap",
                             .programs = {{.name = "wp_discard_folio",
                                           .event = "mm_filemap_delete_from_page_cache"}},
                             .args = 1}}});

  // What a traced read found missing in the page cache and brought in, and its readahead.
  t.push_back({.name = "page cache fill",
               .layer = "read",
               .variants = {
                   {.kind = K::TpBtf,
                    .category = "filemap",
                    .programs = {{.name = "wp_cache_add", .event = "mm_filemap_add_to_page_cache"}},
                    .args = 1}}});
  // Faults on file mappings (bpf/fault.bpf.h): each opened at its entry (x86's exceptions
  // tracepoints; arm64 has none), named a file's and counted by the filemap hooks inside it.
  // mm_filemap_fault and mm_filemap_map_pages came in v6.x: without them no fault is a file's.
  // Layer "fault", planned with the read layer; a kernel without it still traces reads. serve
  // counts major faults at mm_filemap_fault alone: the entry hooks would run on every page
  // fault of the machine, fault-around's only name a fault's pages.
  t.push_back({.name = "file fault entry",
               .layer = "fault",
               .items_only = true,
               .variants = {{.kind = K::TpBtf,
                             .category = "exceptions",
                             .programs =
                                 {
                                     {.name = "wp_read_fault_user", .event = "page_fault_user"},
                                     {.name = "wp_read_fault_kernel", .event = "page_fault_kernel"},
                                 },
                             .args = 3}}});
  t.push_back(
      {.name = "file fault",
       .layer = "fault",
       .variants = {{.kind = K::TpBtf,
                     .category = "filemap",
                     .programs = {{.name = "wp_filemap_fault", .event = "mm_filemap_fault"}},
                     .args = 2}}});
  t.push_back({.name = "file fault-around",
               .layer = "fault",
               .items_only = true,
               .variants = {
                   {.kind = K::TpBtf,
                    .category = "filemap",
                    .programs = {{.name = "wp_filemap_map_pages", .event = "mm_filemap_map_pages"}},
                    .args = 3}}});
  // Layer "readahead": the readaheads a read started, sync or async. The readahead tracepoints
  // are recent (after v6.12: Debian's 6.1 and 6.12 have neither, their BTF no
  // btf_trace_page_cache_sync_ra). Without them a read's pages are still told cached from
  // brought in (the fills above) and its readahead pages counted: only how many readaheads it
  // ran goes unknown, which --reads says at its start.
  t.push_back({.name = "readahead",
               .layer = "readahead",
               .items_only = true,
               .variants = {{.kind = K::TpBtf,
                             .category = "readahead",
                             .programs = {{.name = "wp_sync_ra", .event = "page_cache_sync_ra"},
                                          {.name = "wp_async_ra", .event = "page_cache_async_ra"}},
                             .args = 4}}});

  for (const std::string event : {"writeback_start", "writeback_written"})
    t.push_back({.name = "flusher " + event.substr(10),
                 .layer = "pagecache",
                 .variants = {{.kind = K::TpBtf,
                               .category = "writeback",
                               .programs = {{.name = "wp_" + event, .event = event}},
                               .args = 2}}});

  t.push_back({.name = "bio queue",
               .layer = "block",
               .required = true,
               .variants = with_raw_twin(
                   {.kind = K::TpBtf,
                    .category = "block",
                    .programs = {{.name = "wp_bio_queue_btf", .event = "block_bio_queue"}},
                    .args = 1})});
  t.push_back({.name = "bio split",
               .layer = "block",
               .variants = with_raw_twin(
                   {.kind = K::TpBtf,
                    .category = "block",
                    .programs = {{.name = "wp_bio_split_btf", .event = "block_split"}},
                    .args = 2})});
  // Write bios that failed: on a bio-based device (dm, md) the only failure there is.
  t.push_back({.name = "bio failure",
               .layer = "block",
               .variants = with_raw_twin(
                   {.kind = K::TpBtf,
                    .category = "block",
                    .programs = {{.name = "wp_bio_complete_btf", .event = "block_bio_complete"}},
                    .args = 2})});
  // v5.11 dropped the request_queue argument of block_rq_insert/issue/requeue: arity picks.
  for (const std::string what : {"insert", "issue", "requeue"}) {
    std::vector<HookVariant> variants = with_raw_twin(
        {.kind = K::TpBtf,
         .category = "block",
         .programs = {{.name = "wp_rq_" + what + "_btf", .event = "block_rq_" + what}},
         .args = 1});
    variants.push_back(
        {.kind = K::RawTp,
         .category = "block",
         .programs = {{.name = "wp_rq_" + what + "_raw_q", .event = "block_rq_" + what}},
         .args = 2});
    // A requeue is rare, and without its hook a re-issue reads as a missed completion.
    t.push_back({.name = "request " + what,
                 .layer = "block",
                 .required = what != "requeue",
                 .variants = variants});
  }
  t.push_back({.name = "request complete",
               .layer = "block",
               .required = true,
               .variants = with_raw_twin(
                   {.kind = K::TpBtf,
                    .category = "block",
                    .programs = {{.name = "wp_rq_complete_btf", .event = "block_rq_complete"}},
                    .args = 3})});

  for (const std::string event : {"jbd2_start_commit", "jbd2_commit_locking",
                                  "jbd2_commit_flushing", "jbd2_commit_logging", "jbd2_end_commit"})
    t.push_back({.name = "journal " + event.substr(5),
                 .layer = "journal",
                 // tp_btf in vmlinux or jbd2's module BTF; the classic tracepoint where there
                 // is no module BTF (CONFIG_DEBUG_INFO_BTF_MODULES=n, or without CAP_SYS_ADMIN,
                 // which reading module BTF ids needs) but tracefs is there.
                 .variants = {{.kind = K::TpBtf,
                               .category = "jbd2",
                               .module = "jbd2",
                               .programs = {{.name = "wp_" + event + "_btf", .event = event}},
                               .args = 2},
                              {.kind = K::Tracepoint,
                               .category = "jbd2",
                               .programs = {{.name = "wp_" + event, .event = event}}}}});

  // xfs's log (v5.14 added the iclog events; Debian's 6.1 and 6.18 have all three): a sync's
  // log force, and each log write issued and completed, for the sync's journal phase.
  t.push_back(
      {.name = "xfs log",
       .layer = "xfs-log",
       .variants = {
           {.kind = K::TpBtf,
            .category = "xfs",
            .module = "xfs",
            .programs =
                {
                    {.name = "wp_xfs_log_force_btf", .event = "xfs_log_force"},
                    {.name = "wp_xlog_iclog_sync_btf", .event = "xlog_iclog_sync"},
                    {.name = "wp_xlog_iclog_sync_done_btf", .event = "xlog_iclog_sync_done"},
                },
            .args = kAnyArity},
           {.kind = K::Tracepoint,
            .category = "xfs",
            .programs = {
                {.name = "wp_xfs_log_force", .event = "xfs_log_force"},
                {.name = "wp_xlog_iclog_sync", .event = "xlog_iclog_sync"},
                {.name = "wp_xlog_iclog_sync_done", .event = "xlog_iclog_sync_done"},
            }}}});

  // Data btrfs keeps inline in its tree, and the transaction commits that write it (btrfs built
  // in here, a module on Debian's kernels: planned when loaded before the trace starts). The
  // inline hook needs the extent-bit enumerators in BTF too, which 6.1 has as macros.
  t.push_back(
      {.name = "btrfs inline data",
       .layer = "inline",
       .variants = {{.kind = K::TpBtf,
                     .category = "btrfs",
                     .module = "btrfs",
                     .programs = {{.name = "wp_btrfs_inline", .event = "btrfs_clear_extent_bit"}},
                     .args = 4,
                     .enumerators = {std::begin(kBtrfsInlineEnumerators),
                                     std::end(kBtrfsInlineEnumerators)}}}});
  t.push_back(
      {.name = "btrfs commit",
       .layer = "inline",
       .variants = {{.kind = K::TpBtf,
                     .category = "btrfs",
                     .module = "btrfs",
                     .programs = {{.name = "wp_btrfs_commit", .event = "btrfs_transaction_commit"}},
                     .args = 1}}});

  // FUSE's request tracepoints (6.18 has them, Debian's 6.1 not): which daemon answered a
  // call's write or fsync. Built in here, the fuse module's BTF on a modular kernel.
  t.push_back({.name = "fuse replies",
               .layer = "fuse",
               .variants = {{.kind = K::TpBtf,
                             .category = "fuse",
                             .module = "fuse",
                             .programs =
                                 {
                                     {.name = "wp_fuse_request_send", .event = "fuse_request_send"},
                                     {.name = "wp_fuse_request_end", .event = "fuse_request_end"},
                                 },
                             .args = 1}}});

  // Only with --min-latency: it runs on every context switch of the machine.
  t.push_back(
      {.name = "off-CPU time",
       .layer = "sched",
       .variants = {{.kind = K::TpBtf,
                     .category = "sched",
                     .programs = {{.name = "wp_sched_switch", .event = "sched_switch"}},
                     .args = 4},
                    {.kind = K::TpBtf,
                     .category = "sched",
                     .programs = {{.name = "wp_sched_switch_pre518", .event = "sched_switch"}},
                     .args = 3}}});

  // Only with --min-latency and stacks on (bpf/sched.bpf.c): where slow calls slept, who woke
  // them, and the call-wide waits named by tracepoints. The programs read no argument beyond
  // the first, so any arity serves: 6.1 and 6.18 differ only in timer_start's (3 against 2).
  t.push_back({.name = "sleep wakers",
               .layer = "offcpu",
               .variants = {{.kind = K::TpBtf,
                             .category = "sched",
                             .programs = {{.name = "wp_sched_waking", .event = "sched_waking"}},
                             .args = 1}}});
  // lock:contention_* appeared in v5.19: an older kernel plans the inode-lock wait out.
  t.push_back({.name = "inode lock wait",
               .layer = "offcpu",
               .variants = {{.kind = K::TpBtf,
                             .category = "lock",
                             .programs =
                                 {
                                     {.name = "wp_contention_begin", .event = "contention_begin"},
                                     {.name = "wp_contention_end", .event = "contention_end"},
                                 },
                             .args = 2}}});
  t.push_back(
      {.name = "direct reclaim",
       .layer = "offcpu",
       .variants = {
           {.kind = K::TpBtf,
            .category = "vmscan",
            .programs =
                {
                    {.name = "wp_direct_reclaim_begin", .event = "mm_vmscan_direct_reclaim_begin"},
                    {.name = "wp_direct_reclaim_end", .event = "mm_vmscan_direct_reclaim_end"},
                },
            .args = kAnyArity}}});
  t.push_back(
      {.name = "memcg reclaim",
       .layer = "offcpu",
       .variants = {
           {.kind = K::TpBtf,
            .category = "vmscan",
            .programs =
                {
                    {.name = "wp_memcg_reclaim_begin", .event = "mm_vmscan_memcg_reclaim_begin"},
                    {.name = "wp_memcg_reclaim_end", .event = "mm_vmscan_memcg_reclaim_end"},
                },
            .args = kAnyArity}}});
  t.push_back(
      {.name = "compaction",
       .layer = "offcpu",
       .variants = {{.kind = K::TpBtf,
                     .category = "compaction",
                     .programs =
                         {
                             {.name = "wp_compaction_begin", .event = "mm_compaction_begin"},
                             {.name = "wp_compaction_end", .event = "mm_compaction_end"},
                         },
                     .args = kAnyArity}}});
  t.push_back(
      {.name = "blk-throttle",
       .layer = "offcpu",
       .variants = {{.kind = K::TpBtf,
                     .category = "timer",
                     .programs = {{.name = "wp_throtl_timer_start", .event = "timer_start"}},
                     .args = kAnyArity}}});
  // Counters only: calls of traced processes that write by ways nothing above stitches
  // (WP_UNTRACED_TABLE, bpf/untraced.bpf.c), so the summary can say what went untraced. One
  // hook each, so a kernel lacking one tracepoint loses only that count. (The ring's unstitched
  // ops are counted by the io_uring submit hook: no counter of their own.)
  for (const UntracedCall& call : kUntracedCalls)
    if (call.event)
      t.push_back(
          {.name = std::string("count ") + call.name,
           .layer = "untraced",
           .variants = {{.kind = K::Fentry,
                         .programs = {{.name = std::string("wp_fentry_count_") + call.name,
                                       .event = call.event}},
                         .syscall_entry = true},
                        {.kind = K::Tracepoint,
                         .category = "syscalls",
                         .programs = {{.name = std::string("wp_count_") + call.name,
                                       .event = std::string("sys_enter_") + call.event}}}}});

  // Name-change calls of traced processes (bpf/namespace.bpf.c, WP_NAME_CHANGE_TABLE): the items
  // the crash-consistency rules read, an entry and an exit program per syscall. Two hooks: the
  // calls every architecture has, and the older ones only some keep (arm64's table has no
  // rename, link, unlink, rmdir, mkdir, creat or open: only their *at forms), so a kernel
  // without those loses only them. Their entry functions where trampolines attach, else classic
  // tracepoints: on the raw pair they would run on every syscall of every process. Items only:
  // serve counts writes and syncs, and under it these would send a record per rename, unlink
  // and close of every process of the machine for its agent to drop (the guest's cost meter: a
  // bystander's rename +11,500 instructions).
  {
    const std::set<std::string> legacy = {"rename", "link",  "unlink", "rmdir",
                                          "mkdir",  "creat", "open"};
    HookVariant current{.kind = K::Tracepoint, .category = "syscalls"};
    HookVariant older = current;
    HookVariant current_entry{.kind = K::Fentry, .syscall_entry = true};
    HookVariant older_entry = current_entry;
#define WP_NAME_CHANGE_HOOK_(call, Name, value, op, d1, n1, d2, n2, flags, fd) \
  for (const char* side : {"enter", "exit"}) {                                 \
    HookVariant& v = legacy.contains(#call) ? older : current;                 \
    v.programs.push_back({.name = fmt::format("wp_ns_{}_{}", side, #call),     \
                          .event = fmt::format("sys_{}_{}", side, #call)});    \
  }                                                                            \
  for (const char* side : {"fentry", "fexit"})                                 \
    (legacy.contains(#call) ? older_entry : current_entry)                     \
        .programs.push_back({.name = fmt::format("wp_ns_{}_{}", side, #call), .event = #call});
    WP_NAME_CHANGE_TABLE(WP_NAME_CHANGE_HOOK_)
#undef WP_NAME_CHANGE_HOOK_
    t.push_back({.name = "namespace calls",
                 .layer = "namespace",
                 .items_only = true,
                 .variants = {current_entry, current}});
    t.push_back({.name = "namespace calls (older)",
                 .layer = "namespace",
                 .items_only = true,
                 .variants = {older_entry, older}});
  }

  t.push_back({.name = "nvme submit",
               .layer = "nvme",
               .variants = {{.kind = K::TpBtf,
                             .category = "nvme",
                             .module = "nvme_core",
                             .programs = {{.name = "wp_nvme_setup_cmd", .event = "nvme_setup_cmd"}},
                             .args = 2}}});
  t.push_back(
      {.name = "nvme complete",
       .layer = "nvme",
       .variants = {{.kind = K::TpBtf,
                     .category = "nvme",
                     .module = "nvme_core",
                     .programs = {{.name = "wp_nvme_complete_rq", .event = "nvme_complete_rq"}},
                     .args = 1}}});
  return t;
}

}  // namespace

const std::vector<Hook>& hook_table() {
  static const std::vector<Hook> table = build_table();
  return table;
}

}  // namespace wp
