// SPDX-License-Identifier: Apache-2.0
#include "probe/coverage.h"

#include <gtest/gtest.h>

#include <string>

#include "fake_kernel.h"

namespace wp {
namespace {

using namespace wp::testing;

const CoverageRow& row(const std::vector<CoverageRow>& rows, const std::string& what) {
  for (const auto& r : rows)
    if (r.what == what) return r;
  ADD_FAILURE() << "no coverage row " << what;
  static const CoverageRow none{};
  return none;
}

bool says(const CoverageRow& r, const std::string& text) {
  return r.detail.find(text) != std::string::npos;
}

Coverage coverage_on(const FakeKernel& kernel, const PlanOptions& options = {}) {
  return coverage_of(plan_hooks(kernel, options), kernel);
}

// What `writepath doctor` prints on the development machine: every traced syscall through its
// own tracepoints, the other ways of writing not traced but counted.
TEST(Coverage, ThisKernelStitchesTheTracedSyscallsAndCountsTheRest) {
  const Coverage c = coverage_on(kernel_6_18(), PlanOptions{.reads = true});
  ASSERT_EQ(c.write_paths.size(), kSyscallSlots.size() + kUringOps.size() + 6);
  for (const auto& slot : kSyscallSlots) {
    const CoverageRow& r = row(c.write_paths, slot.name);
    EXPECT_EQ(r.status, CoverageStatus::Stitched) << r.what << ": " << r.detail;
    EXPECT_EQ(
        r.detail.rfind(std::string("tracepoints syscalls:sys_enter/sys_exit_") + slot.name, 0), 0u)
        << r.detail;
  }
  EXPECT_TRUE(says(row(c.write_paths, "io_submit"), "one write per IOCB_CMD_PWRITE/PWRITEV iocb"));
  EXPECT_TRUE(says(row(c.write_paths, "msync"), "MS_ASYNC does no I/O"));
  EXPECT_TRUE(says(row(c.write_paths, "pwritev2"), "RWF_* flags per call"));
  EXPECT_EQ(row(c.write_paths, "mmap stores").status, CoverageStatus::Stitched);
  for (const char* what :
       {"other io_uring ops", "copy_file_range", "sendfile/splice into a file", "fallocate"})
    EXPECT_EQ(row(c.write_paths, what).status, CoverageStatus::NotTraced) << what;
  EXPECT_TRUE(says(row(c.write_paths, "sendfile/splice into a file"),
                   "trace counts its calls (sendfile, splice)"));
}

// The causes of slow calls, as --min-latency would trace them: whole on 6.18 and 6.1; without
// lock:contention_* (before 5.19) without the inode-lock wait.
TEST(Coverage, SlowCallCausesSayWhatTheStacksHooksServe) {
  for (const FakeKernel& kernel : {kernel_6_18(), kernel_6_1()}) {
    const Coverage c = coverage_on(kernel);
    const CoverageRow& r = row(c.write_paths, "slow-call causes (--min-latency)");
    EXPECT_EQ(r.status, CoverageStatus::Stitched) << r.detail;
    EXPECT_TRUE(says(r, "who woke it (sched_waking)")) << r.detail;
  }
  FakeKernel no_contention = kernel_6_18();
  no_contention.no_raw_tracepoint("contention_begin");
  const Coverage without = coverage_on(no_contention);
  const CoverageRow& old = row(without.write_paths, "slow-call causes (--min-latency)");
  EXPECT_EQ(old.status, CoverageStatus::Partial);
  EXPECT_TRUE(says(old, "no inode lock wait hook here")) << old.detail;
}

// Stores into a mapping are followed only by the folio variant of the page-dirtied hook.
// Stores are followed per write fault with the page-dirtied hook beside (for faults that read
// their folio in), partly without it, per dirtied folio where the kernel has no fault
// tracepoint, and not at all without either.
TEST(Coverage, MmapStoresFollowFaultsThenFolios) {
  const auto status = [](const PlanOptions& options, const FakeKernel& kernel) {
    return row(coverage_of(plan_hooks(kernel, options), kernel).write_paths, "mmap stores").status;
  };
  EXPECT_EQ(status({}, kernel_6_18()), CoverageStatus::Stitched);
  EXPECT_EQ(status({.failed = {"wp_dirty_folio"}}, kernel_6_18()), CoverageStatus::Partial);
  FakeKernel no_faults = kernel_6_18();
  no_faults.no_raw_tracepoint("page_fault_user").no_raw_tracepoint("page_fault_kernel");
  EXPECT_EQ(status({}, no_faults), CoverageStatus::Stitched);
  EXPECT_EQ(status({.failed = {"wp_store_folio"}}, no_faults), CoverageStatus::NotTraced);
}

// Every counted call belongs to exactly one unstitched path: a counter no row mentions would
// be counted and never explained.
TEST(Coverage, EveryUntracedCallIsCountedForOnePath) {
  const Coverage c = coverage_on(kernel_6_18());
  for (const auto& call : kUntracedCalls) {
    int rows = 0;
    for (const auto& r : c.write_paths)
      if (r.status == CoverageStatus::NotTraced && (says(r, std::string("(") + call.name + ")") ||
                                                    says(r, std::string("(") + call.name + ",") ||
                                                    says(r, std::string(" ") + call.name + ")")))
        ++rows;
    EXPECT_EQ(rows, 1) << call.name;
  }
}

// The io_uring ops are stitched where their submit and complete hooks are planned: 6.18 and
// Debian's 6.1 by their own prototypes; a kernel without the submit tracepoint traces none.
TEST(Coverage, IoUringOpsAreStitchedWhereTheirHooksArePlanned) {
  for (const FakeKernel& kernel : {kernel_6_18(), kernel_6_1()}) {
    const Coverage c = coverage_on(kernel);
    for (const auto& op : kUringOps) {
      const CoverageRow& r = row(c.write_paths, op.name);
      EXPECT_EQ(r.status, CoverageStatus::Stitched) << r.what << ": " << r.detail;
    }
  }
  const Coverage old_kernel = coverage_on(kernel_6_18().no_raw_tracepoint("io_uring_submit_req"));
  const CoverageRow& old = row(old_kernel.write_paths, "io_uring_write");
  EXPECT_EQ(old.status, CoverageStatus::NotTraced);
  EXPECT_TRUE(says(old, "no io_uring submit and complete hooks here")) << old.detail;
  const Coverage no_punt = coverage_on(kernel_6_18(), PlanOptions{.failed = {"wp_uring_punt"}});
  const CoverageRow& partial = row(no_punt.write_paths, "io_uring_write");
  EXPECT_EQ(partial.status, CoverageStatus::Partial);
  EXPECT_TRUE(says(partial, "no io_uring punt hook")) << partial.detail;
}

TEST(Coverage, CallWithoutItsCounterIsNotEvenCounted) {
  // The ring's unstitched ops are counted by the io_uring submit hook: none, no count.
  const Coverage without = coverage_on(kernel_without_io_uring());
  const CoverageRow& r = row(without.write_paths, "other io_uring ops");
  EXPECT_TRUE(says(r, "not even counted (io_uring_ops: no counter attached)")) << r.detail;
  EXPECT_FALSE(says(r, "trace counts its calls")) << r.detail;

  const Coverage c = coverage_on(kernel_6_18(), PlanOptions{.failed = {"wp_count_splice"}});
  const CoverageRow& splice = row(c.write_paths, "sendfile/splice into a file");
  EXPECT_TRUE(says(splice, "trace counts its calls (sendfile)")) << splice.detail;
  EXPECT_TRUE(says(splice, "not even counted (splice: no counter attached)")) << splice.detail;
}

TEST(Coverage, SyscallRowsNameTheVariantThatServesThem) {
  const Coverage fentry = coverage_on(kernel_6_1());
  EXPECT_EQ(row(fentry.write_paths, "pwrite64").detail, "fentry/fexit vfs_write");
  EXPECT_EQ(row(fentry.write_paths, "fsync").detail, "fentry/fexit vfs_fsync_range");
  // Debian's 6.1 inlines vfs_fsync_range into fdatasync(2): its entry function serves it.
  EXPECT_EQ(row(fentry.write_paths, "fdatasync").detail, "fentry/fexit __x64_sys_fdatasync");
  EXPECT_EQ(row(fentry.write_paths, "writev").detail, "fentry/fexit __x64_sys_writev");
  // sync(2)'s wrapper is an alias BTF lacks: the row names the function really hooked.
  EXPECT_EQ(row(fentry.write_paths, "sync").detail, "fentry/fexit __do_sys_sync");
  const Coverage tracepoints = coverage_on(kernel_6_1(), PlanOptions{.fentry = false});
  EXPECT_EQ(row(tracepoints.write_paths, "writev").detail,
            "tracepoints syscalls:sys_enter/sys_exit_writev");

  const Coverage raw = coverage_on(kernel_6_18(), PlanOptions{.raw_syscalls = true});
  EXPECT_EQ(row(raw.write_paths, "write").detail, "tp_btf raw_syscalls:sys_enter/sys_exit");
  EXPECT_EQ(row(raw.write_paths, "sync").status, CoverageStatus::Stitched);
}

// 6.18 has no writeback_dirty_page to fall back on: buffered writes cannot be followed.
TEST(Coverage, WithoutThePageDirtiedHookWritesArePartial) {
  const Coverage c = coverage_on(kernel_6_18(), PlanOptions{.failed = {"wp_dirty_folio"}});
  const CoverageRow& w = row(c.write_paths, "pwrite64");
  EXPECT_EQ(w.status, CoverageStatus::Partial);
  EXPECT_TRUE(says(w, "no page-dirtied hook")) << w.detail;
  EXPECT_EQ(row(c.write_paths, "fsync").status, CoverageStatus::Stitched);
  EXPECT_EQ(row(c.file_systems, "ext4 (jbd2)").status, CoverageStatus::Partial);
}

TEST(Coverage, Ext4IsStitchedWithEveryJbd2HookAndPartialWithout) {
  const Coverage all = coverage_on(kernel_6_18());
  const CoverageRow& full = row(all.file_systems, "ext4 (jbd2)");
  EXPECT_EQ(full.status, CoverageStatus::Stitched) << full.detail;
  EXPECT_EQ(full.detail,
            "data, flushes and journal commits with their phases; a slow call's journal wait "
            "linked to the commit it waited on");

  const Coverage one_missing =
      coverage_on(kernel_6_18(),
                  PlanOptions{.failed = {"wp_jbd2_commit_logging_btf", "wp_jbd2_commit_logging"}});
  const CoverageRow& partial = row(one_missing.file_systems, "ext4 (jbd2)");
  EXPECT_EQ(partial.status, CoverageStatus::Partial);
  EXPECT_TRUE(says(partial, "no journal commit_logging hook")) << partial.detail;

  FakeKernel no_jbd2 = kernel_6_18();
  no_jbd2.no_tracepoints("jbd2");
  for (const char* ev : {"jbd2_start_commit", "jbd2_commit_locking", "jbd2_commit_flushing",
                         "jbd2_commit_logging", "jbd2_end_commit"})
    no_jbd2.no_raw_tracepoint(ev);
  const Coverage without = coverage_on(no_jbd2);
  const CoverageRow& none = row(without.file_systems, "ext4 (jbd2)");
  EXPECT_EQ(none.status, CoverageStatus::Partial);
  EXPECT_TRUE(says(none, "jbd2 commits are not seen")) << none.detail;
  EXPECT_TRUE(says(none, "no jbd2:jbd2_start_commit tracepoint here")) << none.detail;
}

// xfs's log is stitched where the kernel has its log tracepoints; without them only its data
// and flushes are.
TEST(Coverage, XfsLogIsStitchedWithItsLogTracepoints) {
  FakeKernel kernel = kernel_6_1();
  const Coverage with_log = coverage_on(with_xfs_log_tracepoints(kernel));
  const CoverageRow& xfs = row(with_log.file_systems, "xfs");
  EXPECT_EQ(xfs.status, CoverageStatus::Stitched) << xfs.detail;
  EXPECT_TRUE(says(xfs, "log force and log writes as its journal phase")) << xfs.detail;

  const Coverage without = coverage_on(kernel_6_1().no_tracepoints("xfs"));
  const CoverageRow& none = row(without.file_systems, "xfs");
  EXPECT_EQ(none.status, CoverageStatus::Partial);
  EXPECT_TRUE(says(none, "its log (xlog) is not understood")) << none.detail;
  EXPECT_TRUE(says(none, "no xfs:xfs_log_force tracepoint here")) << none.detail;
}

// btrfs's log-tree and commit writes are read by the block layer's hooks, and its devices
// mapped by the agent; its inline extents need the btrfs inline-data and commit hooks
// (btrfs's own tracepoints, and the extent bits in BTF): stitched on 6.18, partial on a kernel
// without them, whose row says so.
TEST(Coverage, BtrfsIsStitchedThroughTheBlockLayerAndItsInlineHooks) {
  const Coverage c = coverage_on(kernel_6_18());
  const CoverageRow& btrfs = row(c.file_systems, "btrfs");
  EXPECT_EQ(btrfs.status, CoverageStatus::Stitched) << btrfs.detail;
  EXPECT_TRUE(says(btrfs, "as stat() does")) << btrfs.detail;
  EXPECT_EQ(row(c.file_systems, "others").status, CoverageStatus::Partial);

  const Coverage old = coverage_on(kernel_6_1());
  const CoverageRow& without = row(old.file_systems, "btrfs");
  EXPECT_EQ(without.status, CoverageStatus::Partial) << without.detail;
  EXPECT_TRUE(says(without, "files kept inline (up to max_inline bytes) stay dirty"))
      << without.detail;
  EXPECT_TRUE(says(without, "no btrfs:btrfs_transaction_commit tracepoint here")) << without.detail;
}

TEST(Coverage, NothingIsTracedWhenARequiredHookIsMissing) {
  const HookPlan plan = plan_hooks(kernel_5_10(), PlanOptions{});
  ASSERT_FALSE(plan.runnable());
  const Coverage c = coverage_of(plan, kernel_5_10());
  for (const auto& r : c.write_paths) EXPECT_EQ(r.status, CoverageStatus::NotTraced) << r.what;
  for (const auto& r : c.file_systems) EXPECT_EQ(r.status, CoverageStatus::NotTraced) << r.what;
}

TEST(Coverage, StatusNames) {
  EXPECT_STREQ(coverage_status_name(CoverageStatus::Stitched), "stitched");
  EXPECT_STREQ(coverage_status_name(CoverageStatus::Partial), "partial");
  EXPECT_STREQ(coverage_status_name(CoverageStatus::NotTraced), "not traced");
}

// The summary's untraced_calls: every counted call with its count, zeros included; a call
// without a counter is absent, not zero.
TEST(Coverage, UntracedTallyHoldsOnlyTheCountedCalls) {
  const HookPlan plan = plan_hooks(kernel_6_18(), PlanOptions{.failed = {"wp_count_fallocate"}});
  UntracedCounts counts{};
  counts[WP_UNTRACED_SPLICE] = 4;
  counts[WP_UNTRACED_FALLOCATE] = 9;  // a stale value: its counter is not in the plan
  const UntracedTally tally = untraced_tally(plan, counts);
  EXPECT_EQ(tally.counts[WP_UNTRACED_FALLOCATE], 0u);
  const auto named = untraced_by_name(tally);
  EXPECT_EQ(named.size(), kUntracedCalls.size() - 1);
  EXPECT_EQ(named.count("fallocate"), 0u);
  EXPECT_EQ(named.at("splice"), 4u);
  EXPECT_EQ(named.at("io_uring_ops"), 0u);
  EXPECT_EQ(named.at("sendfile"), 0u);
  EXPECT_TRUE(untraced_by_name(UntracedTally{}).empty());
}

}  // namespace
}  // namespace wp
