// SPDX-License-Identifier: Apache-2.0
// Wait rules: each cause's rule on stacks shaped like 6.18's (as sched_switch sees them, the
// scheduler's and the hook's frames on top), their near misses, aggregation and ordering; and
// the wait chains to the journal commit and flushes.
#include "stitch/wait_rules.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "stitch_fixture.h"

namespace wp::stitch_test {
namespace {

using stitch::classify_sleep;
using stitch::frame_function;
using stitch::frames_below_scheduler;
using stitch::name_waits;
using stitch::SleepVerdict;

// A stack as the agent hands it over: the sched_switch hook's frames, then `frames`.
KernelStack stack(std::initializer_list<const char*> frames) {
  KernelStack s;
  std::uint64_t addr = 0xffffffff81000000;
  for (const char* f : {"bpf_prog_6deef7357e7b4530_on_switch+0x1c9", "bpf_trace_run4+0x79",
                        "__bpf_trace_sched_switch+0x10", "__traceiter_sched_switch+0x3c"}) {
    s.addrs.push_back(addr += 0x40);
    s.frames.emplace_back(f);
  }
  for (const char* f : frames) {
    s.addrs.push_back(addr += 0x40);
    s.frames.emplace_back(f);
  }
  return s;
}

OffCpuSleep sleep(KernelStack st, Nanos ns, std::uint32_t sleeps = 1, Nanos longest = 0) {
  OffCpuSleep s;
  s.ns = ns;
  s.sleeps = sleeps;
  s.longest_ns = longest != 0 ? longest : ns / sleeps;
  s.stack = std::move(st);
  return s;
}

// ext4 fsync waiting for its transaction's commit (6.18: jbd2_complete_transaction inlined
// into ext4_sync_file's fdatasync path is not; this is the journalled path).
KernelStack fsync_commit() {
  return stack({"__schedule+0x2b1", "schedule+0x27", "jbd2_log_wait_commit+0xee [jbd2]",
                "jbd2_complete_transaction+0x8a [jbd2]", "ext4_sync_file+0x1f2 [ext4]",
                "do_fsync+0x3b", "__x64_sys_fsync+0xf", "do_syscall_64+0x71",
                "entry_SYSCALL_64_after_hwframe+0x76"});
}
// fsync waiting for its data pages under writeback (file_write_and_wait_range).
KernelStack fsync_writeback() {
  return stack({"__schedule+0x2b1", "schedule+0x27", "io_schedule+0x46", "folio_wait_bit+0x120",
                "folio_wait_writeback+0x2a", "__filemap_fdatawait_range+0xac",
                "file_write_and_wait_range+0x8f", "ext4_sync_file+0xa0 [ext4]", "do_fsync+0x3b",
                "__x64_sys_fsync+0xf", "do_syscall_64+0x71",
                "entry_SYSCALL_64_after_hwframe+0x76"});
}
// A buffered write waiting for the file's i_rwsem (inode_lock inlined into the write_iter).
KernelStack write_inode_lock() {
  return stack({"__schedule+0x2b1", "schedule+0x27", "schedule_preempt_disabled+0x15",
                "rwsem_down_write_slowpath+0x27e", "down_write+0x5b",
                "ext4_buffered_write_iter+0x31 [ext4]", "vfs_write+0x29c",
                "__x64_sys_pwrite64+0xa3", "do_syscall_64+0x71",
                "entry_SYSCALL_64_after_hwframe+0x76"});
}
// A buffered write waiting for a locked page it is about to write into.
KernelStack write_page_lock() {
  return stack({"__schedule+0x2b1", "schedule+0x27", "io_schedule+0x46",
                "folio_wait_bit_common+0x167", "__folio_lock+0x17", "__filemap_get_folio+0x1d5",
                "ext4_write_begin+0x10a [ext4]", "generic_perform_write+0x151",
                "ext4_buffered_write_iter+0x68 [ext4]", "vfs_write+0x29c", "ksys_write+0x6b",
                "do_syscall_64+0x71"});
}
// A buffered write waiting for a page under writeback before rewriting it (stable pages).
KernelStack write_stable_page() {
  return stack({"__schedule+0x2b1", "schedule+0x27", "io_schedule+0x46", "folio_wait_bit+0x120",
                "folio_wait_writeback+0x2a", "folio_wait_stable+0x1f",
                "ext4_write_begin+0x14c [ext4]", "generic_perform_write+0x151",
                "ext4_buffered_write_iter+0x68 [ext4]", "vfs_write+0x29c"});
}
KernelStack write_dirty_throttle() {
  return stack({"__schedule+0x2b1", "schedule+0x27", "schedule_timeout+0x8f",
                "io_schedule_timeout+0x52", "balance_dirty_pages+0x3d6",
                "balance_dirty_pages_ratelimited_flags+0x2a8", "generic_perform_write+0x1c8",
                "ext4_buffered_write_iter+0x68 [ext4]", "vfs_write+0x29c"});
}
// A write starting a handle while the running transaction is locked for its commit.
KernelStack write_journal_locked() {
  return stack({"__schedule+0x2b1", "schedule+0x27", "wait_transaction_locked+0x8a [jbd2]",
                "add_transaction_credits+0x1c6 [jbd2]", "start_this_handle+0x110 [jbd2]",
                "jbd2__journal_start+0xff [jbd2]", "__ext4_journal_start_sb+0x106 [ext4]",
                "ext4_dirty_inode+0x38 [ext4]", "__mark_inode_dirty+0x5a",
                "generic_update_time+0x4e", "file_modified+0x8e",
                "ext4_buffered_write_iter+0x4d [ext4]", "vfs_write+0x29c"});
}
// The allocation of a page cache folio reclaiming, the reclaim waiting on writeback; under
// `reclaimer`: try_to_free_pages (direct) or try_to_free_mem_cgroup_pages (memcg).
KernelStack alloc_reclaim_writeback(const char* reclaimer) {
  return stack({"__schedule+0x2b1", "schedule+0x27", "io_schedule+0x46", "folio_wait_bit+0x120",
                "folio_wait_writeback+0x2a", "shrink_folio_list+0xba3",
                "shrink_inactive_list+0x1a8", "shrink_lruvec+0x2b2", "shrink_node+0x2f5",
                "do_try_to_free_pages+0xca", reclaimer, "__alloc_pages_slowpath+0x36b",
                "__alloc_pages_noprof+0x2fd", "filemap_alloc_folio_noprof+0x2c",
                "__filemap_get_folio+0x14b", "ext4_write_begin+0x10a [ext4]",
                "generic_perform_write+0x151"});
}
KernelStack alloc_compaction() {
  return stack({"__schedule+0x2b1", "schedule+0x27", "io_schedule+0x46",
                "folio_wait_bit_common+0x167", "__folio_lock+0x17", "migrate_pages_batch+0x5e2",
                "migrate_pages+0x9b1", "compact_zone+0x8a1", "compact_zone_order+0xa6",
                "try_to_compact_pages+0xb3", "__alloc_pages_direct_compact+0x8e",
                "__alloc_pages_slowpath+0x41d", "__alloc_pages_noprof+0x2fd"});
}
// fsync's writeback submitting bios, held at submission by `qos` frames.
KernelStack fsync_submit(std::initializer_list<const char*> qos) {
  KernelStack s = stack({"__schedule+0x2b1", "schedule+0x27", "io_schedule+0x46"});
  for (const char* f : qos) s.frames.emplace_back(f);
  for (const char* f :
       {"blk_mq_submit_bio+0x3c4", "__submit_bio+0x97", "submit_bio_noacct_nocheck+0x1a5",
        "ext4_io_submit+0x24 [ext4]", "ext4_do_writepages+0x3a1 [ext4]",
        "ext4_writepages+0xb7 [ext4]", "do_writepages+0xd2", "filemap_fdatawrite_wbc+0x4f",
        "__filemap_fdatawrite_range+0x58", "file_write_and_wait_range+0x5c",
        "ext4_sync_file+0xa0 [ext4]", "do_fsync+0x3b"})
    s.frames.emplace_back(f);
  s.addrs.resize(s.frames.size(), 0xffffffff81234567);
  return s;
}
// An O_DIRECT write waiting for its bios.
KernelStack dio_write() {
  return stack({"__schedule+0x2b1", "schedule+0x27", "io_schedule+0x46", "blk_io_schedule+0x1b",
                "__iomap_dio_rw+0x5a6", "iomap_dio_rw+0x12", "ext4_dio_write_iter+0x2e1 [ext4]",
                "vfs_write+0x29c", "ksys_write+0x6b"});
}
// fsync of a journal-less ext4 flushing the device cache itself.
KernelStack fsync_flush() {
  return stack({"__schedule+0x2b1", "schedule+0x27", "schedule_timeout+0x8f",
                "io_schedule_timeout+0x52", "__wait_for_common+0xa4", "submit_bio_wait+0x6a",
                "blkdev_issue_flush+0x47", "ext4_sync_file+0x17c [ext4]", "do_fsync+0x3b",
                "__x64_sys_fsync+0xf"});
}

SleepVerdict classify(const KernelStack& st, bool throttled = false,
                      SleepFlag flag = SleepFlag::None) {
  OffCpuSleep s = sleep(st, 1000);
  s.flag = flag;
  return classify_sleep(s, throttled);
}

TEST(WaitRules, FrameFunctionStripsOffsetModuleAndCloneSuffix) {
  EXPECT_EQ(frame_function("jbd2_log_wait_commit+0x9c [jbd2]"), "jbd2_log_wait_commit");
  EXPECT_EQ(frame_function("folio_wait_bit_common.constprop.0+0x1a2/0x370"),
            "folio_wait_bit_common");
  EXPECT_EQ(frame_function("schedule"), "schedule");
  EXPECT_EQ(frame_function(""), "");
}

TEST(WaitRules, SchedulerFramesAreDroppedFromTheTop) {
  KernelStack st = fsync_commit();
  st.frames.insert(st.frames.begin(), "");  // an address the symbolizer could not name
  st.addrs.insert(st.addrs.begin(), 0xffffffffc0000000);
  st.frames.insert(st.frames.begin() + 9, "");  // an unnamed frame below the first kept ones
  st.addrs.insert(st.addrs.begin() + 9, 0xffffffffc0de0000);
  auto frames = frames_below_scheduler(st);
  ASSERT_GE(frames.size(), 3u);
  EXPECT_EQ(frames[0], "jbd2_log_wait_commit+0xee [jbd2]");
  EXPECT_EQ(frames[1], "jbd2_complete_transaction+0x8a [jbd2]");
  EXPECT_EQ(frames[2], "0xffffffffc0de0000");
}

TEST(WaitRules, JournalCommit) {
  auto v = classify(fsync_commit());
  EXPECT_EQ(v.cause, WaitCause::JournalCommit);
  EXPECT_EQ(v.evidence, "jbd2_log_wait_commit");
  // xfs: fsync forcing the log, waiting for its iclog.
  auto x = classify(
      stack({"__schedule+0x2b1", "schedule+0x27", "xlog_wait_on_iclog+0x176 [xfs]",
             "xfs_log_force_seq+0x91 [xfs]", "xfs_file_fsync+0x1c5 [xfs]", "do_fsync+0x3b"}));
  EXPECT_EQ(x.cause, WaitCause::JournalCommit);
  EXPECT_EQ(x.evidence, "xlog_wait_on_iclog");
}

TEST(WaitRules, JournalCommitIsNotDeviceIoThoughIoScheduleIsInIt) {
  KernelStack st =
      stack({"__schedule+0x2b1", "schedule+0x27", "io_schedule+0x46", "bit_wait_io+0x11",
             "__wait_on_bit+0x42", "out_of_line_wait_on_bit+0x91", "jbd2_fc_wait_bufs+0x85 [jbd2]",
             "ext4_fc_commit+0x2d1 [ext4]", "ext4_sync_file+0x1f2 [ext4]"});
  EXPECT_EQ(classify(st).cause, WaitCause::JournalCommit);
  // A jbd2 stack waiting for I/O no rule names stays other, not device-io.
  auto v = classify(
      stack({"__schedule+0x2b1", "schedule+0x27", "io_schedule_timeout+0x52",
             "__wait_for_common+0xa4", "submit_bio_wait+0x6a", "jbd2_write_superblock+0x14e [jbd2]",
             "jbd2_journal_flush+0x1ba [jbd2]", "ext4_ioctl+0x3f2 [ext4]"}));
  EXPECT_EQ(v.cause, WaitCause::Other);
  EXPECT_EQ(v.evidence, "submit_bio_wait");
}

TEST(WaitRules, JournalSpace) {
  auto v = classify(write_journal_locked());
  EXPECT_EQ(v.cause, WaitCause::JournalSpace);
  EXPECT_EQ(v.evidence, "wait_transaction_locked");
  // Waiting for a commit to free log space is journal space, not the commit of its own data.
  auto space = classify(stack({"__schedule+0x2b1", "schedule+0x27", "jbd2_log_wait_commit+0xee",
                               "__jbd2_log_wait_for_space+0x1f8", "add_transaction_credits+0x2d9",
                               "start_this_handle+0x110", "jbd2__journal_start+0xff"}));
  EXPECT_EQ(space.cause, WaitCause::JournalSpace);
  EXPECT_EQ(space.evidence, "__jbd2_log_wait_for_space");
}

TEST(WaitRules, InodeLock) {
  auto v = classify(write_inode_lock());
  EXPECT_EQ(v.cause, WaitCause::InodeLock);
  EXPECT_EQ(v.evidence, "ext4_buffered_write_iter");
}

TEST(WaitRules, InodeLockNotAnotherRwsem) {
  // mmap_lock taken by a page fault while copying the user buffer: an rwsem under the write,
  // but not the inode's.
  auto v = classify(stack(
      {"__schedule+0x2b1", "schedule+0x27", "rwsem_down_read_slowpath+0x28e", "down_read+0x48",
       "lock_mm_and_find_vma+0x3a", "do_user_addr_fault+0x1b7", "exc_page_fault+0x75",
       "asm_exc_page_fault+0x26", "fault_in_readable+0x6b", "fault_in_iov_iter_readable+0x52",
       "generic_perform_write+0x9e", "ext4_buffered_write_iter+0x68 [ext4]"}));
  EXPECT_EQ(v.cause, WaitCause::Other);
  EXPECT_EQ(v.evidence, "rwsem_down_read_slowpath");
}

TEST(WaitRules, PageLock) {
  auto v = classify(write_page_lock());
  EXPECT_EQ(v.cause, WaitCause::PageLock);
  EXPECT_EQ(v.evidence, "folio_wait_bit_common");
}

TEST(WaitRules, PageLockVersusWritebackWait) {
  // Both wait on a folio bit; the one under folio_wait_writeback is writeback.
  EXPECT_EQ(classify(write_page_lock()).cause, WaitCause::PageLock);
  auto v = classify(write_stable_page());
  EXPECT_EQ(v.cause, WaitCause::WritebackWait);
  EXPECT_EQ(v.evidence, "folio_wait_writeback");
}

TEST(WaitRules, WritebackWait) {
  EXPECT_EQ(classify(fsync_writeback()).cause, WaitCause::WritebackWait);
  // The page-cache hook's flag decides it even without a telling frame.
  auto flagged = classify(stack({"__schedule+0x2b1", "schedule+0x27", "io_schedule+0x46"}), false,
                          SleepFlag::WritebackWait);
  EXPECT_EQ(flagged.cause, WaitCause::WritebackWait);
  EXPECT_EQ(flagged.evidence, "writeback:folio_wait_writeback") << "the hook that flagged it";
}

TEST(WaitRules, DirtyThrottle) {
  auto v = classify(write_dirty_throttle());
  EXPECT_EQ(v.cause, WaitCause::DirtyThrottle);
  EXPECT_EQ(v.evidence, "balance_dirty_pages");
  const auto flagged = classify(KernelStack{}, false, SleepFlag::DirtyThrottle);
  EXPECT_EQ(flagged.cause, WaitCause::DirtyThrottle);
  EXPECT_EQ(flagged.evidence, "writeback:balance_dirty_pages") << "the hook that flagged it";
}

TEST(WaitRules, DirectReclaim) {
  auto v = classify(alloc_reclaim_writeback("try_to_free_pages+0xd5"));
  EXPECT_EQ(v.cause, WaitCause::DirectReclaim);
  EXPECT_EQ(v.evidence, "shrink_folio_list");
}

TEST(WaitRules, MemcgReclaimOutranksItsWritebackWait) {
  // The hook may have flagged the writeback wait; the cgroup's reclaim is why it waited.
  auto v = classify(alloc_reclaim_writeback("try_to_free_mem_cgroup_pages+0x104"), false,
                    SleepFlag::WritebackWait);
  EXPECT_EQ(v.cause, WaitCause::MemcgReclaim);
  EXPECT_EQ(v.evidence, "try_to_free_mem_cgroup_pages");
}

TEST(WaitRules, Compaction) {
  auto v = classify(alloc_compaction());
  EXPECT_EQ(v.cause, WaitCause::Compaction);  // not the page lock migration waits on
  EXPECT_EQ(v.evidence, "compact_zone");
}

TEST(WaitRules, IoCost) {
  auto v = classify(fsync_submit({"ioc_rqos_throttle+0x2f5", "__rq_qos_throttle+0x20"}));
  EXPECT_EQ(v.cause, WaitCause::IoCost);
}

TEST(WaitRules, Wbt) {
  auto v = classify(fsync_submit({"rq_qos_wait+0xc5", "wbt_wait+0xb3", "__rq_qos_throttle+0x20"}));
  EXPECT_EQ(v.cause, WaitCause::Wbt);
  EXPECT_EQ(v.evidence, "wbt_wait");
}

TEST(WaitRules, RequestTag) {
  auto v = classify(fsync_submit({"blk_mq_get_tag+0x11f", "__blk_mq_alloc_requests+0x2a6"}));
  EXPECT_EQ(v.cause, WaitCause::RequestTag);
}

TEST(WaitRules, BlockThrottle) {
  auto dio = classify(dio_write(), true);
  EXPECT_EQ(dio.cause, WaitCause::BlockThrottle);
  EXPECT_EQ(dio.evidence, "timer:timer_start of throtl_pending_timer_fn");
  EXPECT_EQ(classify(fsync_writeback(), true).cause, WaitCause::BlockThrottle);
  // A throttled call's lock wait is still the lock's.
  EXPECT_EQ(classify(write_inode_lock(), true).cause, WaitCause::InodeLock);
}

TEST(WaitRules, DeviceIo) {
  auto dio = classify(dio_write());  // the same wait, no throttled bio
  EXPECT_EQ(dio.cause, WaitCause::DeviceIo);
  auto flush = classify(fsync_flush());
  EXPECT_EQ(flush.cause, WaitCause::DeviceIo);
  EXPECT_EQ(flush.evidence, "submit_bio_wait");
}

TEST(WaitRules, UnknownStaysOtherWithItsStack) {
  OffCpuEvent ev;
  ev.sleeps.push_back(sleep(stack({"__schedule+0x2b1", "schedule+0x27", "futex_do_wait+0x46",
                                   "__futex_wait+0x8a", "futex_wait+0x9a"}),
                            5000));
  auto waits = name_waits(ev);
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].cause, WaitCause::Other);
  EXPECT_EQ(waits[0].evidence, "futex_do_wait");
  ASSERT_EQ(waits[0].frames.size(), 3u);
  EXPECT_EQ(waits[0].frames[0], "futex_do_wait+0x46");
  EXPECT_EQ(classify(KernelStack{}).evidence, "no stack");
}

TEST(WaitRules, SleepsOfOneCauseAddUpAndLongestFirst) {
  OffCpuEvent ev;
  Waker jbd2{.pid = 321, .tid = 321, .comm = "jbd2/loop0-8", .kernel_thread = true, .stack = {}};
  Waker kworker{.pid = 55, .tid = 55, .comm = "kworker/u8:2", .kernel_thread = true, .stack = {}};
  OffCpuSleep commit_a = sleep(fsync_commit(), 300, 3, 150);
  commit_a.waker = kworker;
  KernelStack fc = stack({"__schedule+0x2b1", "schedule+0x27", "jbd2_log_wait_commit+0xee [jbd2]",
                          "ext4_fc_commit+0x1a0 [ext4]", "ext4_sync_file+0x1f2 [ext4]"});
  OffCpuSleep commit_b = sleep(fc, 250, 1, 250);
  commit_b.waker = jbd2;
  OffCpuSleep wb = sleep(fsync_writeback(), 400, 4, 120);
  ev.sleeps = {wb, commit_a, commit_b};
  auto waits = name_waits(ev);
  ASSERT_EQ(waits.size(), 2u);
  EXPECT_EQ(waits[0].cause, WaitCause::JournalCommit);
  EXPECT_EQ(waits[0].ns, 550u);
  EXPECT_EQ(waits[0].sleeps, 4u);
  EXPECT_EQ(waits[0].longest_ns, 250u);
  // Frames and waker are those of the longest sleep.
  ASSERT_FALSE(waits[0].frames.empty());
  EXPECT_EQ(waits[0].frames[1], "ext4_fc_commit+0x1a0 [ext4]");
  ASSERT_TRUE(waits[0].waker.has_value());
  EXPECT_EQ(waits[0].waker->comm, "jbd2/loop0-8");
  EXPECT_EQ(waits[1].cause, WaitCause::WritebackWait);
  EXPECT_EQ(waits[1].ns, 400u);
  EXPECT_EQ(waits[1].frames[0], "folio_wait_writeback+0x2a");
}

TEST(WaitRules, InodeLockTimedByContentionWithItsHolder) {
  OffCpuEvent ev;
  ev.sleeps.push_back(sleep(write_inode_lock(), 800, 2, 500));
  ev.inode_lock_ns = 900;  // contention_begin..end: the optimistic spin on CPU included
  ev.inode_lock_waits = 2;
  ev.inode_lock_holder = LockHolder{456, 457, "wp_workload"};
  auto waits = name_waits(ev);
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].cause, WaitCause::InodeLock);
  EXPECT_EQ(waits[0].ns, 900u);
  EXPECT_EQ(waits[0].sleeps, 2u);
  EXPECT_EQ(waits[0].evidence, "lock:contention_begin on the file's i_rwsem");
  EXPECT_EQ(waits[0].frames[0], "rwsem_down_write_slowpath+0x27e");
  ASSERT_TRUE(waits[0].holder.has_value());
  EXPECT_EQ(waits[0].holder->tid, 457u);
  // Contention alone (its sleeps had no slot) still names it, from the tracepoint.
  OffCpuEvent timed;
  timed.inode_lock_ns = 700;
  timed.inode_lock_waits = 1;
  timed.inode_lock_holder = LockHolder{456, 457, "wp_workload"};
  auto only = name_waits(timed);
  ASSERT_EQ(only.size(), 1u);
  EXPECT_EQ(only[0].sleeps, 1u);
  EXPECT_TRUE(only[0].frames.empty());
  EXPECT_EQ(only[0].holder->comm, "wp_workload");
}

TEST(WaitRules, ReclaimAndCompactionTimedByTracepoints) {
  OffCpuEvent ev;
  ev.sleeps.push_back(sleep(alloc_reclaim_writeback("try_to_free_pages+0xd5"), 100));
  ev.direct_reclaim_ns = 600;  // its scanning on CPU counts too
  ev.memcg_reclaim_ns = 300;
  ev.compaction_ns = 50;
  auto waits = name_waits(ev);
  ASSERT_EQ(waits.size(), 3u);
  EXPECT_EQ(waits[0].cause, WaitCause::DirectReclaim);
  EXPECT_EQ(waits[0].ns, 600u);
  EXPECT_EQ(waits[0].sleeps, 1u);
  EXPECT_EQ(waits[0].evidence, "vmscan:mm_vmscan_direct_reclaim");
  EXPECT_FALSE(waits[0].frames.empty());  // its sleep's stack stays
  EXPECT_EQ(waits[1].cause, WaitCause::MemcgReclaim);
  EXPECT_EQ(waits[1].evidence, "vmscan:mm_vmscan_memcg_reclaim");
  EXPECT_EQ(waits[1].sleeps, 0u);
  EXPECT_EQ(waits[2].cause, WaitCause::Compaction);
}

TEST(WaitRules, CauseNames) {
  EXPECT_STREQ(wait_cause_name(WaitCause::JournalCommit), "journal-commit");
  EXPECT_STREQ(wait_cause_name(WaitCause::BlockThrottle), "block-throttle");
  EXPECT_STREQ(wait_cause_name(WaitCause::RequestTag), "request-tag");
  EXPECT_STREQ(wait_cause_name(WaitCause::Other), "other");
}

// ---- through the stitcher: the call's causes and the chains ----

TEST_F(StitcherTest, JournalCommitWaitChainsToTheCommitAndItsFlushes) {
  // Commit 4 ends before the sleep could have ended; commit 5 is the one fsync waited for.
  feed(journal(900, 4, JournalPhase::Start));
  feed(journal(1100, 4, JournalPhase::End));
  feed(journal(1200, 5, JournalPhase::Start));
  flush(1, 1300, 1400);  // commit 5's pre-flush
  flush(2, 1600, 1700);  // and its commit block's
  feed(journal(1800, 5, JournalPhase::End));
  feed(journal(1900, 6, JournalPhase::Start));  // the next one, still running
  feed(offcpu_event(1000, kWriterTid, {sleep(fsync_commit(), 700)}));
  feed(causes_event(1000, kWriterTid, 700));
  feed(sync_call(Syscall::Fsync, 1000, 2000, kWriterTid));
  ASSERT_EQ(syncs().size(), 1u);
  const auto waits = syncs()[0].causes->waits;
  ASSERT_EQ(waits.size(), 1u);
  const WaitChain& chain = waits[0].chain;
  ASSERT_TRUE(chain.commit.has_value());
  EXPECT_EQ(chain.commit->transaction, 5u);
  EXPECT_EQ(chain.commit->end_ns, Nanos{1800});
  ASSERT_EQ(chain.flushes.size(), 2u);
  EXPECT_EQ(chain.flushes[0].issue_ns, Nanos{1300});
  EXPECT_EQ(chain.flushes[1].complete_ns, Nanos{1700});
}

TEST_F(StitcherTest, JournalCommitWaitChainsToTheCommitThatEndedBeforeTheWake) {
  // As traced on 6.18: jbd2_end_commit at +1.950, the waiter woken and the fsync returning
  // later; its one sleep (1.000 from a start at +0.030) outlasts the commit's end.
  feed(journal(1020, 2, JournalPhase::Start));
  feed(journal(1950, 2, JournalPhase::End));
  feed(offcpu_event(1000, kWriterTid, {sleep(fsync_commit(), 1000)}));
  feed(causes_event(1000, kWriterTid, 1000));
  feed(sync_call(Syscall::Fsync, 1000, 2040, kWriterTid));
  ASSERT_EQ(syncs().size(), 1u);
  const auto waits = syncs()[0].causes->waits;
  ASSERT_EQ(waits.size(), 1u);
  ASSERT_TRUE(waits[0].chain.commit.has_value());
  EXPECT_EQ(waits[0].chain.commit->transaction, 2u);
}

TEST_F(StitcherTest, WriteBlockedOnTheJournalChainsToTheRunningCommit) {
  feed(journal(1100, 9, JournalPhase::Start));
  feed(journal(1150, 9, JournalPhase::Locking));
  feed(offcpu_event(1000, kWriterTid, {sleep(write_journal_locked(), 100)}));
  feed(causes_event(1000, kWriterTid, 100));
  feed(write_call(1000, 1300, 0, -5, 0));  // failed writes are emitted at once
  ASSERT_EQ(writes().size(), 1u);
  const auto waits = writes()[0].causes->waits;
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].cause, WaitCause::JournalSpace);
  ASSERT_TRUE(waits[0].chain.commit.has_value());
  EXPECT_EQ(waits[0].chain.commit->transaction, 9u);
  EXPECT_FALSE(waits[0].chain.commit->end_ns.has_value());  // still committing at its return
}

TEST_F(StitcherTest, FlushWaitChainsToItsOwnFlush) {
  flush(0xf0, 1050, 1100);  // done before the wait could have ended (1000 + its 300)
  feed(flush_bio(1350, 0xb1, kFlusherTid));  // another thread's, ending after that
  flush(0xf1, 1360, 1450);
  feed(flush_bio(1500, 0xb2, kWriterTid));  // its own blkdev_issue_flush
  flush(0xf2, 1510, 1900);
  feed(offcpu_event(1000, kWriterTid, {sleep(fsync_flush(), 300)}));
  feed(causes_event(1000, kWriterTid, 300));
  feed(sync_call(Syscall::Fsync, 1000, 2000, kWriterTid));
  const auto waits = syncs()[0].causes->waits;
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].cause, WaitCause::DeviceIo);
  ASSERT_EQ(waits[0].chain.flushes.size(), 1u);
  EXPECT_EQ(waits[0].chain.flushes[0].submit_tid, kWriterTid);
  EXPECT_EQ(waits[0].chain.flushes[0].complete_ns, Nanos{1900});
  EXPECT_FALSE(waits[0].chain.commit.has_value());
}

}  // namespace
}  // namespace wp::stitch_test

namespace wp::stitch_test {
namespace {

using stitch::set_wake_contexts;
using stitch::wake_context;

// Stacks of 6.18 wakers: a flush completing in the block softirq on whatever task ran, the
// dirty-throttle pause's timer on the idle task, a kworker ending writeback.
TEST(WakeContext, AnInterruptWakeIsTheInterruptsNotTheTasks) {
  EXPECT_EQ(wake_context(stack({"try_to_wake_up+0x3b6", "complete+0x48", "blk_update_request+0xe0",
                                "blk_mq_end_request+0x1c", "blk_done_softirq+0x49",
                                "handle_softirqs+0xcd", "__irq_exit_rcu+0x8e",
                                "common_interrupt+0x3b", "asm_common_interrupt+0x22"})),
            WakeContext::Interrupt);
  EXPECT_EQ(wake_context(stack(
                {"try_to_wake_up+0x3b6", "hrtimer_wakeup+0x22", "__hrtimer_run_queues+0x12a",
                 "hrtimer_interrupt+0xfc", "__sysvec_apic_timer_interrupt+0x55",
                 "sysvec_apic_timer_interrupt+0x6d", "asm_sysvec_apic_timer_interrupt+0x1a"})),
            WakeContext::Timer)
      << "a timer, though it fired in an interrupt";
  EXPECT_EQ(wake_context(
                stack({"try_to_wake_up+0x3b6", "wake_page_function+0x7d", "__wake_up_common+0x72",
                       "folio_wake_bit+0x6d", "folio_end_writeback+0x12", "ext4_finish_bio+0x340",
                       "process_one_work+0x18c", "worker_thread+0x192"})),
            WakeContext::Task);
  EXPECT_EQ(wake_context(KernelStack{}), WakeContext::Task) << "no stack: nothing to say";
}

TEST(WakeContext, SetOnEverySleepsWaker) {
  OffCpuEvent ev;
  OffCpuSleep sleep;
  sleep.waker = Waker{};
  sleep.waker->stack =
      stack({"try_to_wake_up+0x3b6", "process_timeout+0x12", "call_timer_fn+0x2c"});
  ev.sleeps = {sleep, OffCpuSleep{}};
  set_wake_contexts(ev);
  EXPECT_EQ(ev.sleeps[0].waker->context, WakeContext::Timer);
  EXPECT_FALSE(ev.sleeps[1].waker);
}

}  // namespace
}  // namespace wp::stitch_test
