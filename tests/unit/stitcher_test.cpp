// The stitcher as a whole: names of its states and phases, and the dispatcher's bounds.
#include "stitch_fixture.h"

namespace wp::stitch_test {
namespace {

TEST(Names, WriteStatesAndVias) {
  EXPECT_STREQ(write_state_name(WriteState::Failed), "failed");
  EXPECT_STREQ(write_state_name(WriteState::Dirty), "dirty");
  EXPECT_STREQ(write_state_name(WriteState::Written), "written");
  EXPECT_STREQ(write_state_name(WriteState::Durable), "durable");
  EXPECT_STREQ(write_state_name(WriteState::Discarded), "discarded");
  EXPECT_STREQ(durable_via_name(DurableVia::Flush), "flush");
  EXPECT_STREQ(durable_via_name(DurableVia::Fua), "fua");
  EXPECT_STREQ(durable_via_name(DurableVia::NoWriteCache), "no-write-cache");
  EXPECT_STREQ(durable_via_name(DurableVia::None), "");
}

TEST(Names, SyncPhases) {
  EXPECT_STREQ(sync_phase_name(SyncPhase::DataIo), "data_io");
  EXPECT_STREQ(sync_phase_label(SyncPhase::DataIo), "data I/O");
  EXPECT_STREQ(sync_phase_name(SyncPhase::Flush), "flush");
  EXPECT_STREQ(sync_phase_name(SyncPhase::Other), "other");
}

TEST_F(SmallLimitsTest, SweepKeepsNoHistoryPastTheWindow) {
  // A flush older than history_ns is gone: a later sync does not see it.
  flush(0xf1, 100, 200);
  feed(LostEvent{1000, 0});  // time moves on by more than history_ns (500)
  feed(sync_call(Syscall::Fsync, 150, 1100, 300));
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(s[0].flushes.empty());
}

// ---- cgroups: the kernel names a thread's cgroup once, before its first item's record ----

TEST_F(StitcherTest, ItemsCarryTheCgroupTheirThreadWasLastNamedIn) {
  feed(CgroupEvent{10, kWriterTid, kWriterTid, 0xc1});
  feed(sync_call(Syscall::Fsync, 20, 30, kWriterTid));
  // The thread moved to another cgroup: the kernel names it again before its next record.
  feed(CgroupEvent{40, kWriterTid, kWriterTid, 0xc2});
  feed(sync_call(Syscall::Fsync, 50, 60, kWriterTid));
  feed(sync_call(Syscall::Fsync, 70, 80, 555));  // never named: no cgroup
  auto s = syncs();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].call.cgroup_id, 0xc1u);
  EXPECT_EQ(s[1].call.cgroup_id, 0xc2u);
  EXPECT_EQ(s[2].call.cgroup_id, 0u);
}

TEST_F(StitcherTest, AThreadNeverNamedTakesItsProcesssCgroup) {
  // An io-wq worker issuing its ring owner's ops: a thread of the owner's process.
  feed(CgroupEvent{10, kWriterTid, kWriterTid, 0xc1});
  SyscallEvent worker_sync = sync_call(Syscall::Fsync, 20, 30, kWriterTid + 1);
  worker_sync.pid = kWriterTid;
  feed(worker_sync);
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].call.cgroup_id, 0xc1u);
}

TEST_F(StitcherTest, WritesOfOneThreadInTwoCgroupsAreNotOneBatch) {
  feed(CgroupEvent{5, kWriterTid, kWriterTid, 0xc1});
  feed(write_call(10, 20, 0, 4096, 1));
  feed(CgroupEvent{25, kWriterTid, kWriterTid, 0xc2});
  feed(write_call(30, 40, 4096, 4096, 1));
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].call.cgroup_id, 0xc1u);
  EXPECT_EQ(w[1].call.cgroup_id, 0xc2u);
}

}  // namespace
}  // namespace wp::stitch_test
