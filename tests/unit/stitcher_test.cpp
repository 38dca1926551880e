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

}  // namespace
}  // namespace wp::stitch_test
