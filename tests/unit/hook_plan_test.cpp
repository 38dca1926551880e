// SPDX-License-Identifier: Apache-2.0
#include "probe/hook_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fake_kernel.h"

namespace wp {
namespace {

// What the plan of a command that traces no reads (serve) says of the read hooks.
const std::string kNoReads = "only with --reads";
// The slots a plan without reads (serve's, and these tests' PlanOptions{}) serves.
constexpr std::uint32_t kWriteAndSyncSlots = ((1u << WP_SYSCALL_SLOTS) - 1) & ~WP_READ_SLOTS;

using namespace wp::testing;

// One line of doctor's hook table: the hook, the variant used ("-": none), and why earlier
// variants were passed over.
using Row = std::tuple<std::string, std::string, std::string>;

Row row_of(const HookPlan& plan, const HookChoice& c) {
  return {c.hook->name, plan.summary(c), c.why};
}

const HookChoice& choice(const HookPlan& plan, const std::string& hook) {
  for (const auto& c : plan.choices)
    if (c.hook->name == hook) return c;
  ADD_FAILURE() << "no hook " << hook;
  static const HookChoice none;
  return none;
}

Row row(const HookPlan& plan, const std::string& hook) {
  return row_of(plan, choice(plan, hook));
}

std::vector<Row> rows(const HookPlan& plan) {
  std::vector<Row> out;
  for (const auto& c : plan.choices) out.push_back(row_of(plan, c));
  return out;
}

const std::string kNoFentryHere = "fentry: unavailable (load: Operation not permitted)";
const std::string kNoCauses = "only with --min-latency (slow-call causes)";

// Exactly what `writepath doctor` prints on the development machine.
TEST(HookPlan, ThisKernelUsesSyscallTracepointsAndTpBtf) {
  const HookPlan plan = plan_hooks(kernel_6_18(), PlanOptions{});
  const std::vector<Row> expected = {
      {"write/sync syscalls", "tracepoint syscalls:sys_enter_write (+5) with bpf_rdonly_cast",
       kNoFentryHere},
      {"other write/sync calls", "tracepoint syscalls:sys_enter_writev (+21) with bpf_rdonly_cast",
       kNoFentryHere},
      {"read syscalls", "-", kNoReads},
      {"fork follow", "tp_btf sched:sched_process_fork", ""},
      {"process exit", "tp_btf sched:sched_process_exit", ""},
      {"io_uring submit", "tp_btf io_uring:io_uring_submit_req", ""},
      {"io_uring punt", "tp_btf io_uring:io_uring_queue_async_work", ""},
      {"io_uring complete", "tp_btf io_uring:io_uring_complete", ""},
      {"page dirtied", "tp_btf writeback:writeback_dirty_folio", ""},
      {"mmap stores", "tp_btf exceptions:page_fault_user (+1)", ""},
      {"dirty throttling", "tracepoint writeback:balance_dirty_pages", ""},
      {"writeback wait", "tp_btf writeback:folio_wait_writeback", ""},
      {"page discarded", "tp_btf filemap:mm_filemap_delete_from_page_cache", ""},
      {"page cache fill", "-", kNoReads},
      {"file fault entry", "-", kNoReads},
      {"file fault", "-", kNoReads},
      {"file fault-around", "-", kNoReads},
      {"readahead", "-", kNoReads},
      {"flusher start", "tp_btf writeback:writeback_start", ""},
      {"flusher written", "tp_btf writeback:writeback_written", ""},
      {"bio queue", "tp_btf block:block_bio_queue", ""},
      {"bio split", "tp_btf block:block_split", ""},
      {"bio failure", "tp_btf block:block_bio_complete", ""},
      {"request insert", "tp_btf block:block_rq_insert", ""},
      {"request issue", "tp_btf block:block_rq_issue", ""},
      {"request requeue", "tp_btf block:block_rq_requeue", ""},
      {"request complete", "tp_btf block:block_rq_complete", ""},
      {"journal start_commit", "tp_btf jbd2:jbd2_start_commit", ""},
      {"journal commit_locking", "tp_btf jbd2:jbd2_commit_locking", ""},
      {"journal commit_flushing", "tp_btf jbd2:jbd2_commit_flushing", ""},
      {"journal commit_logging", "tp_btf jbd2:jbd2_commit_logging", ""},
      {"journal end_commit", "tp_btf jbd2:jbd2_end_commit", ""},
      {"xfs log", "tp_btf xfs:xfs_log_force (+2)", ""},
      {"btrfs inline data", "tp_btf btrfs:btrfs_clear_extent_bit", ""},
      {"btrfs commit", "tp_btf btrfs:btrfs_transaction_commit", ""},
      {"fuse replies", "tp_btf fuse:fuse_request_send (+1)", ""},
      {"off-CPU time", "-", kNoCauses},
      {"sleep wakers", "-", kNoCauses},
      {"inode lock wait", "-", kNoCauses},
      {"direct reclaim", "-", kNoCauses},
      {"memcg reclaim", "-", kNoCauses},
      {"compaction", "-", kNoCauses},
      {"blk-throttle", "-", kNoCauses},
      {"count copy_file_range", "tracepoint syscalls:sys_enter_copy_file_range", kNoFentryHere},
      {"count sendfile", "tracepoint syscalls:sys_enter_sendfile64", kNoFentryHere},
      {"count splice", "tracepoint syscalls:sys_enter_splice", kNoFentryHere},
      {"count fallocate", "tracepoint syscalls:sys_enter_fallocate", kNoFentryHere},
      {"namespace calls", "tracepoint syscalls:sys_enter_renameat (+25)", kNoFentryHere},
      {"namespace calls (older)", "tracepoint syscalls:sys_enter_rename (+13)", kNoFentryHere},
      {"nvme submit", "-", "tp_btf: no nvme_core BTF for nvme_setup_cmd"},
      {"nvme complete", "-", "tp_btf: no nvme_core BTF for nvme_complete_rq"},
  };
  EXPECT_EQ(rows(plan), expected);
  EXPECT_TRUE(plan.runnable());
  EXPECT_EQ(plan.raw_syscall_slots(), 0u);  // the raw pair is not loaded at all
  EXPECT_EQ(plan.programs().count("wp_sys_enter"), 0u);
  EXPECT_EQ(plan.programs().count("wp_vfs_write_enter"), 0u);
  // The entries that read the file through bpf_rdonly_cast, not their probe-read twins.
  EXPECT_EQ(plan.programs().count("wp_enter_cast_pwrite64"), 1u);
  EXPECT_EQ(plan.programs().count("wp_enter_pwrite64"), 0u);
  EXPECT_EQ(plan.programs().count("wp_exit_cast_sync"), 1u);
  EXPECT_EQ(plan.programs().count("wp_exit_sync"), 0u);
}

// bpf_rdonly_cast came in 6.2: 6.1 gets the entries that probe-read the file, and doctor says
// why; a cast entry that fails to load falls back to them too.
TEST(HookPlan, SyscallEntriesCastTheFileOnlyWhereTheKernelHasTheKfunc) {
  const HookPlan debian = plan_hooks(kernel_6_1(), PlanOptions{.fentry = false});
  EXPECT_EQ(row(debian, "other write/sync calls"),
            Row("other write/sync calls", "tracepoint syscalls:sys_enter_writev (+21)",
                "fentry: off (--no-fentry); tracepoint: no kfunc bpf_rdonly_cast in BTF"));
  EXPECT_EQ(debian.programs().count("wp_enter_pwrite64"), 1u);
  EXPECT_EQ(debian.programs().count("wp_enter_cast_pwrite64"), 0u);

  PlanOptions options;
  options.failed = {"wp_enter_cast_writev"};
  const HookPlan failed = plan_hooks(kernel_6_18(), options);
  EXPECT_EQ(row(failed, "other write/sync calls"),
            Row("other write/sync calls", "tracepoint syscalls:sys_enter_writev (+21)",
                kNoFentryHere + "; tracepoint: wp_enter_cast_writev failed to load or attach"));
  EXPECT_EQ(failed.programs().count("wp_enter_writev"), 1u);
  EXPECT_EQ(failed.programs().count("wp_enter_cast_pwrite64"), 1u);  // its own hook still casts
}

// v6.3 renamed io_uring_submit_sqe to io_uring_submit_req; io_uring_complete's arguments
// changed from the CQE's fields to the CQE: BTF's arity picks each program.
TEST(HookPlan, IoUringHooksFollowTheKernelsPrototypes) {
  const HookPlan current = plan_hooks(kernel_6_18(), PlanOptions{});
  EXPECT_EQ(current.programs().count("wp_uring_submit_req"), 1u);
  EXPECT_EQ(current.programs().count("wp_uring_complete_cqe"), 1u);
  EXPECT_EQ(current.programs().count("wp_uring_submit_sqe"), 0u);
  const HookPlan debian = plan_hooks(kernel_6_1(), PlanOptions{});
  EXPECT_EQ(row(debian, "io_uring submit"),
            Row("io_uring submit", "tp_btf io_uring:io_uring_submit_sqe",
                "tp_btf: no btf_trace_io_uring_submit_req in BTF"));
  EXPECT_EQ(row(debian, "io_uring complete"),
            Row("io_uring complete", "tp_btf io_uring:io_uring_complete",
                "tp_btf: io_uring_complete takes 7 args, not 3"));
  EXPECT_EQ(debian.programs().count("wp_uring_complete_fields"), 1u);
  const HookPlan old = plan_hooks(kernel_5_10(), PlanOptions{});
  EXPECT_EQ(
      old.programs().count("wp_uring_submit_req") + old.programs().count("wp_uring_submit_sqe"),
      0u);
}

TEST(HookPlan, SlowCallCausesUseTheFourArgumentSchedSwitch) {
  const HookPlan plan = plan_hooks(kernel_6_18(), PlanOptions{.causes = true});
  EXPECT_EQ(row(plan, "off-CPU time"), Row("off-CPU time", "tp_btf sched:sched_switch", ""));
  EXPECT_EQ(plan.programs().count("wp_sched_switch"), 1u);
  EXPECT_EQ(plan.programs().count("wp_sched_switch_pre518"), 0u);
}

// Stacks (the default with --min-latency): the wakers and the call-wide waits, each by BTF;
// blk-throttle only where kallsyms named its timer function.
TEST(HookPlan, SleepStacksPlanWakersAndCallWideWaits) {
  const std::set<std::string> offcpu = {"wp_sched_waking",       "wp_contention_begin",
                                        "wp_contention_end",     "wp_direct_reclaim_begin",
                                        "wp_direct_reclaim_end", "wp_memcg_reclaim_begin",
                                        "wp_memcg_reclaim_end",  "wp_compaction_begin",
                                        "wp_compaction_end",     "wp_throtl_timer_start"};
  for (const FakeKernel& kernel : {kernel_6_18(), kernel_6_1()}) {
    const HookPlan plan =
        plan_hooks(kernel, PlanOptions{.causes = true, .throtl_timer_known = true});
    for (const auto& program : offcpu) EXPECT_EQ(plan.programs().count(program), 1u) << program;
    EXPECT_EQ(row(plan, "inode lock wait"),
              Row("inode lock wait", "tp_btf lock:contention_begin (+1)", ""));
    EXPECT_EQ(row(plan, "blk-throttle"), Row("blk-throttle", "tp_btf timer:timer_start", ""));
  }
  const HookPlan no_symbol = plan_hooks(kernel_6_18(), PlanOptions{.causes = true});
  EXPECT_EQ(row(no_symbol, "blk-throttle"),
            Row("blk-throttle", "-", "no throtl_pending_timer_fn in /proc/kallsyms"));
  EXPECT_EQ(no_symbol.programs().count("wp_sched_waking"), 1u);
}

TEST(HookPlan, NoStacksOptionLeavesOnlyTheOffCpuSplit) {
  const HookPlan plan = plan_hooks(
      kernel_6_18(), PlanOptions{.causes = true, .stacks = false, .throtl_timer_known = true});
  EXPECT_EQ(plan.programs().count("wp_sched_switch"), 1u);
  EXPECT_EQ(row(plan, "sleep wakers"), Row("sleep wakers", "-", "off (--no-stacks)"));
  EXPECT_EQ(row(plan, "blk-throttle"), Row("blk-throttle", "-", "off (--no-stacks)"));
  EXPECT_EQ(plan.programs().count("wp_contention_begin"), 0u);
}

// Before 5.19 there is no lock:contention_*: the inode-lock wait is planned out, the rest stay.
TEST(HookPlan, InodeLockWaitNeedsTheContentionTracepoints) {
  const HookPlan plan = plan_hooks(kernel_5_10(), PlanOptions{.causes = true});
  EXPECT_EQ(row(plan, "inode lock wait"),
            Row("inode lock wait", "-", "tp_btf: no btf_trace_contention_begin in BTF"));
  EXPECT_EQ(plan.programs().count("wp_direct_reclaim_begin"), 1u);
}

TEST(HookPlan, Debian61UsesFentryAndNvmeTracepoints) {
  const HookPlan plan = plan_hooks(kernel_6_1(), PlanOptions{});
  EXPECT_EQ(row(plan, "write/sync syscalls"),
            Row("write/sync syscalls", "fentry vfs_write (+3)", ""));
  const HookChoice& vfs = choice(plan, "write/sync syscalls");
  ASSERT_NE(vfs.variant, nullptr);
  std::vector<std::string> names;
  for (const auto& program : vfs.variant->programs) names.push_back(program.name);
  EXPECT_EQ(names, (std::vector<std::string>{"wp_vfs_write_enter", "wp_vfs_write_exit",
                                             "wp_vfs_fsync_enter", "wp_vfs_fsync_exit"}));
  // The VFS serves only write/pwrite64/fsync; the others are on their entry functions
  // (fdatasync too: 6.1 inlines vfs_fsync_range into it).
  EXPECT_EQ(row(plan, "other write/sync calls"),
            Row("other write/sync calls", "fentry __x64_sys_writev (+21)", ""));
  EXPECT_EQ(plan.programs().count("wp_enter_write"), 0u);
  EXPECT_EQ(plan.programs().count("wp_enter_writev"), 0u);
  EXPECT_EQ(plan.programs().count("wp_fentry_writev"), 1u);
  EXPECT_EQ(row(plan, "nvme submit"), Row("nvme submit", "tp_btf nvme:nvme_setup_cmd", ""));
  EXPECT_EQ(row(plan, "nvme complete"), Row("nvme complete", "tp_btf nvme:nvme_complete_rq", ""));
  EXPECT_EQ(row(plan, "request issue"), Row("request issue", "tp_btf block:block_rq_issue", ""));
  EXPECT_TRUE(plan.runnable());
}

TEST(HookPlan, NoFentryOptionKeepsTheWritePathOnTracepoints) {
  const HookPlan plan = plan_hooks(kernel_6_1(), PlanOptions{.fentry = false});
  EXPECT_EQ(row(plan, "write/sync syscalls"),
            Row("write/sync syscalls", "tracepoint syscalls:sys_enter_write (+5)",
                "fentry: off (--no-fentry); tracepoint: no kfunc bpf_rdonly_cast in BTF"));
  EXPECT_EQ(plan.programs().count("wp_vfs_write_enter"), 0u);
  // The user's choice is named even where fentry would not attach anyway.
  EXPECT_EQ(std::get<2>(row(plan_hooks(kernel_6_18(), PlanOptions{.fentry = false}),
                            "write/sync syscalls")),
            "fentry: off (--no-fentry)");
}

// Without a VFS function the write path's calls take their entry functions; without those
// too, their tracepoints.
TEST(HookPlan, FentryNeedsTheFunctionInBtf) {
  FakeKernel kernel = kernel_6_1();
  kernel.no_function("vfs_fsync_range");
  EXPECT_EQ(row(plan_hooks(kernel, PlanOptions{}), "write/sync syscalls"),
            Row("write/sync syscalls", "fentry __x64_sys_write (+5)",
                "fentry: no function vfs_fsync_range in BTF"));
  kernel.no_function("__x64_sys_fsync");
  EXPECT_EQ(row(plan_hooks(kernel, PlanOptions{}), "write/sync syscalls"),
            Row("write/sync syscalls", "tracepoint syscalls:sys_enter_write (+5)",
                "fentry: no function vfs_fsync_range in BTF; "
                "fentry: no function __x64_sys_fsync in BTF; "
                "tracepoint: no kfunc bpf_rdonly_cast in BTF"));
}

// 5.10's block tracepoints take the request_queue first: request insert/issue have a raw_tp
// program for that prototype, bio queue has none, so tracing cannot run there.
TEST(HookPlan, Kernel510TakesRawTpForTheOldRequestPrototypeOrNothing) {
  const HookPlan plan = plan_hooks(kernel_5_10(), PlanOptions{.causes = true});
  EXPECT_EQ(row(plan, "request issue"), Row("request issue", "raw_tp block:block_rq_issue",
                                            "tp_btf: block_rq_issue takes 2 args, not 1; "
                                            "raw_tp: block_rq_issue takes 2 args, not 1"));
  EXPECT_EQ(plan.programs().count("wp_rq_issue_raw_q"), 1u);
  EXPECT_EQ(plan.programs().count("wp_rq_insert_raw_q"), 1u);
  EXPECT_EQ(plan.programs().count("wp_rq_requeue_raw_q"), 1u);
  EXPECT_EQ(plan.programs().count("wp_rq_issue_raw"), 0u);
  EXPECT_EQ(row(plan, "request complete"),
            Row("request complete", "tp_btf block:block_rq_complete", ""));
  EXPECT_EQ(row(plan, "bio queue"), Row("bio queue", "-",
                                        "tp_btf: block_bio_queue takes 2 args, not 1; "
                                        "raw_tp: block_bio_queue takes 2 args, not 1"));
  EXPECT_EQ(row(plan, "bio split"), Row("bio split", "-",
                                        "tp_btf: block_split takes 3 args, not 2; "
                                        "raw_tp: block_split takes 3 args, not 2"));
  EXPECT_FALSE(plan.runnable());

  EXPECT_EQ(row(plan, "page dirtied"), Row("page dirtied", "tp_btf writeback:writeback_dirty_page",
                                           "tp_btf: no btf_trace_writeback_dirty_folio in BTF"));
  EXPECT_EQ(row(plan, "writeback wait"),
            Row("writeback wait", "tp_btf writeback:wait_on_page_writeback",
                "tp_btf: no btf_trace_folio_wait_writeback in BTF"));
  EXPECT_EQ(row(plan, "off-CPU time"), Row("off-CPU time", "tp_btf sched:sched_switch",
                                           "tp_btf: sched_switch takes 3 args, not 4"));
  EXPECT_EQ(plan.programs().count("wp_sched_switch_pre518"), 1u);
  EXPECT_EQ(row(plan, "nvme submit"),
            Row("nvme submit", "-", "tp_btf: no nvme_core BTF for nvme_setup_cmd"));
  EXPECT_EQ(row(plan, "write/sync syscalls"),
            Row("write/sync syscalls", "fentry vfs_write (+3)", ""));
}

// Discarded writes need the page-cache deletion tracepoint's BTF form; without it tracing
// still runs, and writes whose pages are dropped stay dirty.
TEST(HookPlan, PageDiscardedUsesTheFilemapDeletionTracepointOrNothing) {
  EXPECT_EQ(row(plan_hooks(kernel_6_1(), PlanOptions{}), "page discarded"),
            Row("page discarded", "tp_btf filemap:mm_filemap_delete_from_page_cache", ""));
  FakeKernel kernel = kernel_6_18();
  kernel.no_raw_tracepoint("mm_filemap_delete_from_page_cache");
  const HookPlan plan = plan_hooks(kernel, PlanOptions{});
  EXPECT_EQ(
      row(plan, "page discarded"),
      Row("page discarded", "-", "tp_btf: no btf_trace_mm_filemap_delete_from_page_cache in BTF"));
  EXPECT_EQ(plan.programs().count("wp_discard_folio"), 0u);
  EXPECT_TRUE(plan.runnable());
}

// Stores into mappings are followed per write fault where the kernel has x86's exceptions
// tracepoints, else per dirtied folio (arm64), else not at all (before folios).
TEST(HookPlan, MmapStoresUseFaultsThenDirtiedFoliosThenNothing) {
  const HookPlan faults = plan_hooks(kernel_6_18(), PlanOptions{});
  EXPECT_EQ(faults.programs().count("wp_store_fault_kernel"), 1u);
  EXPECT_EQ(faults.programs().count("wp_store_folio"), 0u);

  FakeKernel no_faults = kernel_6_18();
  no_faults.no_raw_tracepoint("page_fault_user").no_raw_tracepoint("page_fault_kernel");
  const HookPlan folios = plan_hooks(no_faults, PlanOptions{});
  EXPECT_EQ(row(folios, "mmap stores"), Row("mmap stores", "tp_btf writeback:writeback_dirty_folio",
                                            "tp_btf: no btf_trace_page_fault_user in BTF"));
  EXPECT_EQ(folios.programs().count("wp_store_fault_user"), 0u);

  FakeKernel old = kernel_5_10();
  old.no_raw_tracepoint("page_fault_user").no_raw_tracepoint("page_fault_kernel");
  EXPECT_EQ(std::get<1>(row(plan_hooks(old, PlanOptions{}), "mmap stores")), "-");
}

// btrfs's inline-extent hook matches anonymous enumerators the agent reads from BTF before
// load: a kernel whose BTF lacks one (Debian's 6.1 has the extent bits as macros) plans it out
// and says why; the commit hook needs only its tracepoint.
TEST(HookPlan, BtrfsInlineDataNeedsTheExtentBitsInBtf) {
  FakeKernel without_bits = with_current_prototypes()
                                .fentry(false, "load: Operation not permitted")
                                .raw_tracepoint("btrfs_clear_extent_bit", 4)
                                .raw_tracepoint("btrfs_transaction_commit", 1);
  for (const char* name : kBtrfsInlineEnumerators)
    if (std::string(name) != "EXTENT_DELALLOC_NEW") without_bits.enumerator(name);
  const HookPlan plan = plan_hooks(without_bits, PlanOptions{});
  EXPECT_EQ(row(plan, "btrfs inline data"),
            Row("btrfs inline data", "-", "tp_btf: no enumerator EXTENT_DELALLOC_NEW in BTF"));
  EXPECT_EQ(row(plan, "btrfs commit"),
            Row("btrfs commit", "tp_btf btrfs:btrfs_transaction_commit", ""));
}

// xfs's log hook needs all three of its tracepoints (xfs built in, or its module loaded before
// the trace starts: Debian's 6.1 as the VM suite boots it has no xfs loaded); without them it
// is planned out and tracing still runs.
TEST(HookPlan, XfsLogUsesItsTracepointsOrNothing) {
  FakeKernel with_xfs = kernel_6_1();
  const HookPlan planned = plan_hooks(with_xfs_log_tracepoints(with_xfs), PlanOptions{});
  EXPECT_EQ(row(planned, "xfs log"), Row("xfs log", "tp_btf xfs:xfs_log_force (+2)", ""));
  EXPECT_EQ(planned.programs().count("wp_xlog_iclog_sync_done_btf"), 1u);
  EXPECT_EQ(planned.programs().count("wp_xlog_iclog_sync_done"), 0u);

  const HookPlan without = plan_hooks(kernel_6_1(), PlanOptions{});
  EXPECT_EQ(row(without, "xfs log"),
            Row("xfs log", "-",
                "tp_btf: no xfs BTF for xfs_log_force; tracepoint: no tracepoint "
                "xfs:xfs_log_force"));
  EXPECT_EQ(without.programs().count("wp_xfs_log_force"), 0u);
  EXPECT_EQ(without.programs().count("wp_xfs_log_force_btf"), 0u);
  EXPECT_TRUE(without.runnable());

  FakeKernel one_missing = kernel_6_18();
  one_missing.no_tracepoint("xfs", "xlog_iclog_sync_done")
      .no_raw_tracepoint("xlog_iclog_sync_done");
  EXPECT_EQ(row(plan_hooks(one_missing, PlanOptions{}), "xfs log"),
            Row("xfs log", "-",
                "tp_btf: no xfs BTF for xlog_iclog_sync_done; tracepoint: no tracepoint "
                "xfs:xlog_iclog_sync_done"));
}

// Module BTF unreadable (CONFIG_DEBUG_INFO_BTF_MODULES=n, or its ids need CAP_SYS_ADMIN):
// jbd2 and xfs as modules fall back to their classic tracepoints, which need tracefs.
TEST(HookPlan, ModuleTracepointsWithoutModuleBtfUseClassicTracepoints) {
  FakeKernel k = kernel_5_10();  // no module BTF
  const HookPlan plan = plan_hooks(with_xfs_log_tracepoints(k, "unreadable"), PlanOptions{});
  EXPECT_EQ(row(plan, "journal end_commit"),
            Row("journal end_commit", "tracepoint jbd2:jbd2_end_commit",
                "tp_btf: no jbd2 BTF for jbd2_end_commit"));
  EXPECT_EQ(row(plan, "xfs log"), Row("xfs log", "tracepoint xfs:xfs_log_force (+2)",
                                      "tp_btf: no xfs BTF for xfs_log_force"));
  EXPECT_EQ(plan.programs().count("wp_jbd2_end_commit"), 1u);
  EXPECT_EQ(plan.programs().count("wp_jbd2_end_commit_btf"), 0u);

  k.no_tracefs();
  const HookPlan bare = plan_hooks(k, PlanOptions{});
  EXPECT_EQ(row(bare, "journal end_commit"),
            Row("journal end_commit", "-",
                "tp_btf: no jbd2 BTF for jbd2_end_commit; tracepoint: no tracefs"));
}

// No tracefs (not mounted, or not readable without root): every hook with a tp_btf or raw_tp
// form keeps it; the write path's syscalls take the raw pair, and the plan says what that and
// the tracefs-only hooks cost.
TEST(HookPlan, WithoutTracefsThePlanUsesBtfHooksAndSaysWhatItCosts) {
  FakeKernel k = kernel_6_18();
  k.no_tracefs();
  const HookPlan plan = plan_hooks(k, PlanOptions{});
  EXPECT_TRUE(plan.runnable());
  EXPECT_EQ(row(plan, "write/sync syscalls"),
            Row("write/sync syscalls", "tp_btf raw_syscalls:sys_enter (+1)",
                kNoFentryHere + "; tracepoint: no tracefs"));
  EXPECT_EQ(row(plan, "dirty throttling"), Row("dirty throttling", "-", "tracepoint: no tracefs"));
  for (const char* hook : {"process exit", "flusher start", "journal end_commit", "xfs log"})
    EXPECT_EQ(std::get<2>(row(plan, hook)), "") << hook;
  EXPECT_EQ(plan.raw_syscall_slots(), kWriteAndSyncSlots);  // every slot planned, raw
  for (const auto& program : plan.programs())
    EXPECT_EQ(program.find("wp_enter_"), std::string::npos) << program;
  const std::vector<std::string> costs = tracefs_costs(plan);
  EXPECT_EQ(costs, (std::vector<std::string>{
                       "write/sync syscalls, other write/sync calls: via raw sys_enter/sys_exit "
                       "(every syscall of every thread pays a filter)",
                       "dirty throttling, count copy_file_range, count sendfile, count splice, "
                       "count fallocate, namespace calls, namespace calls (older): not traced"}));

  EXPECT_TRUE(tracefs_costs(plan_hooks(kernel_6_18(), PlanOptions{})).empty());
  // --raw-syscalls asked for the raw pair: not a cost of tracefs.
  const auto raw = tracefs_costs(plan_hooks(k, PlanOptions{.raw_syscalls = true}));
  ASSERT_FALSE(raw.empty());
  EXPECT_EQ(raw[0].rfind("dirty throttling, count copy_file_range", 0), 0u) << raw[0];
  EXPECT_EQ(raw.size(), 1u);
}

// A kernel built without CONFIG_FTRACE_SYSCALLS has no syscalls:* tracepoints; the raw
// syscall pair serves every slot then.
TEST(HookPlan, KernelWithoutSyscallTracepointsUsesTheRawSyscallPair) {
  FakeKernel kernel = kernel_6_18();
  kernel.no_tracepoints("syscalls");
  const HookPlan plan = plan_hooks(kernel, PlanOptions{});
  EXPECT_EQ(row(plan, "write/sync syscalls"),
            Row("write/sync syscalls", "tp_btf raw_syscalls:sys_enter (+1)",
                kNoFentryHere + "; tracepoint: no tracepoint syscalls:sys_enter_write"));
  EXPECT_EQ(row(plan, "other write/sync calls"),
            Row("other write/sync calls", "tp_btf raw_syscalls:sys_enter (+1)",
                kNoFentryHere + "; tracepoint: no tracepoint syscalls:sys_enter_writev"));
  EXPECT_EQ(plan.raw_syscall_slots(), kWriteAndSyncSlots);  // every slot planned
  EXPECT_TRUE(plan.runnable());

  kernel.no_raw_tracepoint("sys_enter");
  const HookPlan neither = plan_hooks(kernel, PlanOptions{});
  EXPECT_EQ(std::get<1>(row(neither, "write/sync syscalls")), "-");
  EXPECT_FALSE(neither.runnable());
}

// With fentry serving three syscalls at the VFS, the raw pair carries only the others (a kernel
// whose BTF has no syscall entry functions); with those, none.
TEST(HookPlan, RawSyscallPairServesOnlyTheSlotsFentryDoesNot) {
  FakeKernel kernel = kernel_6_1();
  for (const auto& slot : kSyscallSlots) kernel.no_function(std::string("__x64_sys_") + slot.name);
  const HookPlan plan = plan_hooks(kernel, PlanOptions{.raw_syscalls = true});
  EXPECT_EQ(row(plan, "write/sync syscalls"),
            Row("write/sync syscalls", "fentry vfs_write (+3)", ""));
  // write, pwrite64, fsync are slots 0, 1, 5.
  constexpr std::uint32_t kFentrySlots = (1u << 0) | (1u << 1) | (1u << 5);
  EXPECT_EQ(plan.raw_syscall_slots(), kWriteAndSyncSlots & ~kFentrySlots);
  EXPECT_EQ(plan_hooks(kernel_6_1(), PlanOptions{.raw_syscalls = true}).raw_syscall_slots(), 0u);
}

// What `writepath doctor --raw-syscalls` prints here.
TEST(HookPlan, RawSyscallsOptionPassesOverPerSyscallTracepoints) {
  const HookPlan plan = plan_hooks(kernel_6_18(), PlanOptions{.raw_syscalls = true});
  EXPECT_EQ(row(plan, "write/sync syscalls"),
            Row("write/sync syscalls", "tp_btf raw_syscalls:sys_enter (+1)",
                kNoFentryHere + "; tracepoint: passed over (--raw-syscalls)"));
  EXPECT_EQ(row(plan, "other write/sync calls"),
            Row("other write/sync calls", "tp_btf raw_syscalls:sys_enter (+1)",
                kNoFentryHere + "; tracepoint: passed over (--raw-syscalls)"));
  EXPECT_EQ(plan.raw_syscall_slots(), kWriteAndSyncSlots);
  EXPECT_EQ(plan.programs().count("wp_sys_enter"), 1u);
  EXPECT_EQ(plan.programs().count("wp_sys_exit"), 1u);
  EXPECT_EQ(plan.programs().count("wp_enter_write"), 0u);
  // The untraced calls' counters have no raw form: they keep their own tracepoints.
  EXPECT_EQ(row(plan, "count fallocate"),
            Row("count fallocate", "tracepoint syscalls:sys_enter_fallocate", kNoFentryHere));
  EXPECT_EQ(plan.programs().count("wp_count_fallocate"), 1u);
}

// The ring's unstitched ops are counted by the io_uring submit hook, not a counter of their
// own; a kernel without io_uring (CONFIG_IO_URING=n) keeps the other counters.
TEST(HookPlan, RingOpsAreCountedByTheSubmitHookAndNeedNoCounter) {
  const HookPlan with = plan_hooks(kernel_6_18(), PlanOptions{});
  EXPECT_EQ(with.programs().count("wp_count_io_uring_ops"), 0u);
  for (const auto& r : rows(with)) EXPECT_NE(std::get<0>(r), "count io_uring_ops");
  EXPECT_NE(std::get<1>(row(with, "io_uring submit")), "-");
  const HookPlan without = plan_hooks(kernel_without_io_uring(), PlanOptions{});
  EXPECT_EQ(std::get<1>(row(without, "io_uring submit")), "-");
  EXPECT_EQ(without.programs().count("wp_count_fallocate"), 1u);
  EXPECT_TRUE(without.runnable());
}

// What WRITEPATH_DISABLE_PROGRAMS=... writepath doctor prints here: disabled programs are
// planned as if they had failed, and the next variant is taken.
TEST(HookPlan, DisabledProgramsArePlannedAsIfTheyFailed) {
  PlanOptions options;
  options.failed = parse_program_list(
      "wp_bio_queue_btf,wp_bio_split_btf,wp_rq_insert_btf,wp_rq_issue_btf,wp_rq_complete_btf,"
      "wp_dirty_folio");
  const HookPlan plan = plan_hooks(kernel_6_18(), options);
  EXPECT_EQ(row(plan, "bio queue"), Row("bio queue", "raw_tp block:block_bio_queue",
                                        "tp_btf: wp_bio_queue_btf failed to load or attach"));
  EXPECT_EQ(row(plan, "bio split"), Row("bio split", "raw_tp block:block_split",
                                        "tp_btf: wp_bio_split_btf failed to load or attach"));
  EXPECT_EQ(row(plan, "request insert"), Row("request insert", "raw_tp block:block_rq_insert",
                                             "tp_btf: wp_rq_insert_btf failed to load or attach"));
  EXPECT_EQ(row(plan, "request issue"), Row("request issue", "raw_tp block:block_rq_issue",
                                            "tp_btf: wp_rq_issue_btf failed to load or attach"));
  EXPECT_EQ(row(plan, "request complete"),
            Row("request complete", "raw_tp block:block_rq_complete",
                "tp_btf: wp_rq_complete_btf failed to load or attach"));
  EXPECT_EQ(plan.programs().count("wp_rq_issue_raw"), 1u);
  EXPECT_EQ(plan.programs().count("wp_rq_issue_raw_q"), 0u);
  EXPECT_EQ(row(plan, "page dirtied"), Row("page dirtied", "-",
                                           "tp_btf: wp_dirty_folio failed to load or attach; "
                                           "tp_btf: no btf_trace_writeback_dirty_page in BTF"));
  EXPECT_TRUE(plan.runnable());  // page dirtied is not required

  options.failed.insert("wp_bio_queue_raw");
  EXPECT_FALSE(plan_hooks(kernel_6_18(), options).runnable());
}

TEST(HookPlan, DisabledSyscallProgramFailsItsWholeVariant) {
  PlanOptions options;
  options.failed = {"wp_exit_cast_fsync", "wp_exit_fsync"};
  const HookPlan plan = plan_hooks(kernel_6_18(), options);
  EXPECT_EQ(row(plan, "write/sync syscalls"),
            Row("write/sync syscalls", "tp_btf raw_syscalls:sys_enter (+1)",
                kNoFentryHere + "; tracepoint: wp_exit_cast_fsync failed to load or attach; "
                                "tracepoint: wp_exit_fsync failed to load or attach"));
  EXPECT_EQ(row(plan, "other write/sync calls"),
            Row("other write/sync calls",
                "tracepoint syscalls:sys_enter_writev (+21) with bpf_rdonly_cast", kNoFentryHere));
  constexpr std::uint32_t kVfsSlots = (1u << 0) | (1u << 1) | (1u << 5);
  EXPECT_EQ(plan.raw_syscall_slots(), kVfsSlots);
}

TEST(HookPlan, ProgramListSkipsEmptyItems) {
  EXPECT_EQ(parse_program_list("a,b"), (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(parse_program_list(",a,,b,"), (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(parse_program_list("wp_fork"), (std::set<std::string>{"wp_fork"}));
  EXPECT_TRUE(parse_program_list("").empty());
  EXPECT_TRUE(parse_program_list(",,").empty());
}

// Reads are trace's: its plan serves the read syscalls (per-syscall tracepoints, or the raw
// pair with the rest) and the page cache's fill and readahead hooks; serve's plans none of them.
TEST(HookPlan, ReadHooksArePlannedOnlyWhenReadsAreAskedFor) {
  const HookPlan without = plan_hooks(kernel_6_18(), PlanOptions{});
  for (const char* hook : {"read syscalls", "page cache fill", "readahead"})
    EXPECT_EQ(row(without, hook), Row(hook, "-", kNoReads)) << hook;
  EXPECT_EQ(without.programs().count("wp_enter_cast_read"), 0u);

  const HookPlan with = plan_hooks(kernel_6_18(), PlanOptions{.reads = true});
  EXPECT_EQ(std::get<1>(row(with, "read syscalls")),
            "tracepoint syscalls:sys_enter_read (+9) with bpf_rdonly_cast");
  EXPECT_EQ(std::get<1>(row(with, "page cache fill")),
            "tp_btf filemap:mm_filemap_add_to_page_cache");
  EXPECT_EQ(std::get<1>(row(with, "readahead")), "tp_btf readahead:page_cache_sync_ra (+1)");
  EXPECT_EQ(with.programs().count("wp_enter_cast_pread64"), 1u);

  const HookPlan raw = plan_hooks(kernel_6_18(), PlanOptions{.raw_syscalls = true, .reads = true});
  EXPECT_EQ(raw.raw_syscall_slots(), (1u << WP_SYSCALL_SLOTS) - 1);
  EXPECT_TRUE(with.unplanned("read").empty());
  EXPECT_TRUE(with.unplanned("fault").empty());
  EXPECT_EQ(std::get<1>(row(with, "file fault")), "tp_btf filemap:mm_filemap_fault");
}

// serve --reads counts in the kernel: the read syscalls, the page-cache fill and filemap_fault,
// but none of the hooks only trace's items need (the fault entry on every page fault of the
// machine, fault-around, readahead), and a plan without them lacks nothing.
TEST(HookPlan, ServeReadsPlansNoHookOnlyItemsNeed) {
  const HookPlan plan = plan_hooks(kernel_6_18(), PlanOptions{.reads = true, .metrics = true});
  const std::string kItemsOnly = "trace's items only (serve counts without it)";
  for (const char* hook : {"file fault entry", "file fault-around", "readahead"})
    EXPECT_EQ(row(plan, hook), Row(hook, "-", kItemsOnly)) << hook;
  EXPECT_EQ(std::get<1>(row(plan, "page cache fill")),
            "tp_btf filemap:mm_filemap_add_to_page_cache");
  EXPECT_EQ(std::get<1>(row(plan, "file fault")), "tp_btf filemap:mm_filemap_fault");
  EXPECT_EQ(plan.programs().count("wp_enter_cast_pread64"), 1u);
  EXPECT_EQ(plan.programs().count("wp_read_fault_user"), 0u);
  EXPECT_TRUE(plan.unplanned("read").empty());
  EXPECT_TRUE(plan.unplanned("fault").empty());
  // trace --reads still plans them all.
  const HookPlan traced = plan_hooks(kernel_6_18(), PlanOptions{.reads = true});
  EXPECT_EQ(traced.programs().count("wp_read_fault_user"), 1u);
}

// serve counts writes and syncs: the namespace calls' items (renames, unlinks, closes) are
// trace's alone, and under serve no program runs on them.
TEST(HookPlan, ServePlansNoNamespaceCall) {
  const HookPlan plan = plan_hooks(kernel_6_1(), PlanOptions{.metrics = true});
  for (const char* hook : {"namespace calls", "namespace calls (older)"})
    EXPECT_EQ(row(plan, hook), Row(hook, "-", "trace's items only (serve counts without it)"))
        << hook;
  for (const auto& program : plan.programs())
    EXPECT_FALSE(program.starts_with("wp_ns_")) << program;
  EXPECT_TRUE(plan.runnable());
  const HookPlan traced = plan_hooks(kernel_6_1(), PlanOptions{});
  EXPECT_EQ(traced.programs().count("wp_ns_fentry_renameat"), 1u);
}

// A kernel without the page-cache fill's tracepoint: the plan names the read hook it lacks
// (trace --reads refuses on it), and still traces writes.
TEST(HookPlan, AKernelWithoutThePageCacheFillLacksAReadHook) {
  const HookPlan plan = plan_hooks(kernel_6_18().no_raw_tracepoint("mm_filemap_add_to_page_cache"),
                                   PlanOptions{.reads = true});
  const auto missing = plan.unplanned("read");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0]->hook->name, "page cache fill");
  EXPECT_TRUE(plan.runnable());
  EXPECT_TRUE(plan.unplanned("syscall").empty());
}

// A kernel without the filemap fault tracepoints (before v6.x) still traces reads: only the
// fault layer is missing, which trace --reads warns of rather than refuses.
TEST(HookPlan, AKernelWithoutFilemapFaultTracepointsLacksOnlyTheFaultHooks) {
  const HookPlan plan = plan_hooks(
      kernel_6_18().no_raw_tracepoint("mm_filemap_fault").no_raw_tracepoint("mm_filemap_map_pages"),
      PlanOptions{.reads = true});
  EXPECT_TRUE(plan.unplanned("read").empty());
  const auto missing = plan.unplanned("fault");
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_EQ(missing[0]->hook->name, "file fault");
  EXPECT_EQ(missing[1]->hook->name, "file fault-around");
}

// Debian's 6.1 and 6.12 have no readahead tracepoints: the reads are still traced (their fills
// tell cached from brought in), and only the readahead layer is missing.
TEST(HookPlan, AKernelWithoutReadaheadTracepointsLacksOnlyTheReadaheadHook) {
  const HookPlan plan =
      plan_hooks(kernel_6_18().no_raw_tracepoint("page_cache_sync_ra"), PlanOptions{.reads = true});
  EXPECT_TRUE(plan.unplanned("read").empty());
  EXPECT_TRUE(plan.traces_reads());
  const auto missing = plan.unplanned("readahead");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0]->hook->name, "readahead");
}

// ---- trampolines: no syscall tracepoint where fentry attaches ---------------------------------

// What `writepath doctor` plans in the Debian 6.1 guest, reads included: every hook that follows
// or counts a syscall is on trampolines, each program aimed at its syscall's entry function.
TEST(HookPlan, TrampolinePlanPutsNoProgramOnASyscallTracepoint) {
  const HookPlan plan = plan_hooks(kernel_6_1(), PlanOptions{.reads = true});
  EXPECT_TRUE(plan.syscall_tracepoint_hooks().empty());
  EXPECT_EQ(plan.slow_syscall_path(), "");
  EXPECT_EQ(plan.syscall_plan().rfind("syscall plan: trampolines, no syscall tracepoint", 0), 0u)
      << plan.syscall_plan();
  EXPECT_EQ(row(plan, "other write/sync calls"),
            Row("other write/sync calls", "fentry __x64_sys_writev (+21)", ""));
  EXPECT_EQ(row(plan, "read syscalls"), Row("read syscalls", "fentry __x64_sys_read (+9)", ""));
  EXPECT_EQ(row(plan, "namespace calls"),
            Row("namespace calls", "fentry __x64_sys_renameat (+25)", ""));
  EXPECT_EQ(row(plan, "count fallocate"), Row("count fallocate", "fentry __x64_sys_fallocate", ""));
  EXPECT_EQ(plan.raw_syscall_slots(), 0u);
  for (const auto& p : plan.programs()) {
    EXPECT_NE(p.rfind("wp_enter_", 0), 0u) << p;
    EXPECT_NE(p.rfind("wp_count_", 0), 0u) << p;
    EXPECT_NE(p.rfind("wp_ns_enter_", 0), 0u) << p;
    EXPECT_NE(p, "wp_sys_enter");
  }
  const auto targets = plan.entry_functions;
  EXPECT_EQ(targets.at("wp_fentry_writev"), "__x64_sys_writev");
  EXPECT_EQ(targets.at("wp_fexit_fdatasync"), "__x64_sys_fdatasync");
  EXPECT_EQ(targets.at("wp_fentry_pread64"), "__x64_sys_pread64");
  // sync(2) takes no arguments: x86-64's wrapper is an alias BTF lacks, its body serves.
  EXPECT_EQ(targets.at("wp_fentry_sync"), "__do_sys_sync");
  EXPECT_EQ(targets.at("wp_ns_fexit_rename"), "__x64_sys_rename");
  EXPECT_EQ(targets.at("wp_fentry_count_sendfile"), "__x64_sys_sendfile64");
  // The VFS programs name their functions in their sections: no target to set.
  EXPECT_EQ(targets.count("wp_vfs_write_enter"), 0u);
  // Every planned entry program has its target, and nothing else does.
  for (const auto& [program, function] : targets) {
    EXPECT_EQ(plan.programs().count(program), 1u) << program;
    EXPECT_TRUE(function.starts_with("__x64_sys_") || function == "__do_sys_sync") << function;
  }
  // A syscall with arguments never falls back to its body, which takes them unwrapped.
  FakeKernel no_writev = kernel_6_1();
  no_writev.no_function("__x64_sys_writev").function("__do_sys_writev");
  EXPECT_EQ(syscall_entry_function(no_writev, "__x64_sys_", "writev"), "");
  EXPECT_EQ(std::get<2>(row(plan_hooks(no_writev, PlanOptions{}), "other write/sync calls")),
            "fentry: no function __x64_sys_writev in BTF; "
            "tracepoint: no kfunc bpf_rdonly_cast in BTF");
}

// The wrappers' prefix is the one BTF declares, whatever this build's architecture: an arm64
// kernel's functions are __arm64_sys_*.
TEST(HookPlan, SyscallEntryFunctionsAreNamedFromBtf) {
  FakeKernel arm64 = with_current_prototypes();
  for (const auto& slot : kSyscallSlots) arm64.no_function(std::string("__x64_sys_") + slot.name);
  arm64.no_function("__x64_sys_write");
  with_syscall_entries(arm64.fentry(true), "__arm64_sys_");
  EXPECT_EQ(syscall_entry_prefix(arm64), "__arm64_sys_");
  const HookPlan plan = plan_hooks(arm64, PlanOptions{});
  EXPECT_EQ(std::get<1>(row(plan, "other write/sync calls")), "fentry __arm64_sys_writev (+21)");
  EXPECT_EQ(plan.entry_functions.at("wp_fentry_msync"), "__arm64_sys_msync");
}

// A kernel whose BTF has no syscall wrappers: the entry variants are passed over, the
// tracepoints serve, and the plan says what they cost.
TEST(HookPlan, WithoutEntryFunctionsThePlanFallsBackToTracepointsAndSaysSo) {
  FakeKernel kernel = with_current_prototypes();
  kernel.fentry(true);
  for (const auto& slot : kSyscallSlots) kernel.no_function(std::string("__x64_sys_") + slot.name);
  EXPECT_EQ(syscall_entry_prefix(kernel), "");
  const HookPlan plan = plan_hooks(kernel, PlanOptions{});
  EXPECT_EQ(row(plan, "write/sync syscalls"),
            Row("write/sync syscalls", "fentry vfs_write (+3)", ""));
  EXPECT_EQ(row(plan, "other write/sync calls"),
            Row("other write/sync calls", "tracepoint syscalls:sys_enter_writev (+21)",
                "fentry: no syscall entry functions (__x64_sys_*, __arm64_sys_*) in BTF; "
                "tracepoint: no kfunc bpf_rdonly_cast in BTF"));
  EXPECT_EQ(plan.entry_functions.size(), 0u);
  EXPECT_EQ(plan.syscall_plan().rfind("syscall plan: syscall tracepoints for other write/sync "
                                      "calls, ",
                                      0),
            0u)
      << plan.syscall_plan();
}

// The development machine (fentry refused): the whole fallback, and why.
TEST(HookPlan, TheFallbackNamesItsSyscallTracepointsAndWhy) {
  const HookPlan plan = plan_hooks(kernel_6_18(), PlanOptions{});
  const std::vector<std::string> hooks = plan.syscall_tracepoint_hooks();
  ASSERT_GE(hooks.size(), 4u);
  EXPECT_EQ(hooks[0], "write/sync syscalls");
  EXPECT_EQ(hooks[1], "other write/sync calls");
  EXPECT_NE(std::find(hooks.begin(), hooks.end(), "namespace calls"), hooks.end());
  EXPECT_NE(std::find(hooks.begin(), hooks.end(), "count fallocate"), hooks.end());
  EXPECT_NE(plan.slow_syscall_path().find("(" + kNoFentryHere + ")"), std::string::npos)
      << plan.slow_syscall_path();
  EXPECT_NE(plan.syscall_plan().find("every syscall of every thread on the machine takes the "
                                     "kernel's slow path"),
            std::string::npos);
}

}  // namespace
}  // namespace wp
