// SPDX-License-Identifier: Apache-2.0
// Call context rules: causes and throttling pauses reach the call they belong to.
#include "stitch/call_context.h"

#include <initializer_list>

#include "stitch_fixture.h"

namespace wp::stitch_test {
namespace {

TEST_F(StitcherTest, CausesOfASlowWriteAddUpToItsLatency) {
  CausesEvent causes;
  causes.ts = 9000;
  causes.start_ns = 1000;
  causes.tid = kWriterTid;
  causes.throttle_ns = 5000;
  causes.writeback_wait_ns = 1000;
  causes.blocked_ns = 500;
  causes.runnable_ns = 250;
  ThrottleEvent pause;
  pause.ts = 1500;
  pause.tid = kWriterTid;
  pause.pause_ms = 5;
  pause.dirty = 900;
  pause.limit = 800;
  ThrottleEvent before = pause;
  before.ts = 500;  // an earlier call's pause
  feed(before);
  feed(pause);
  feed(causes);
  feed(write_call(1000, 9000, 0, -5, 0));  // failed writes are emitted at once
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  ASSERT_TRUE(w[0].causes.has_value());
  const SlowCauses& c = *w[0].causes;
  EXPECT_EQ(c.throttle_ns, 5000u);
  EXPECT_EQ(c.on_cpu_ns, 8000u - 5000 - 1000 - 500 - 250);
  EXPECT_EQ(c.on_cpu_ns + c.throttle_ns + c.writeback_wait_ns + c.blocked_ns + c.runnable_ns,
            8000u);
  ASSERT_EQ(w[0].throttles.size(), 1u);
  EXPECT_EQ(w[0].throttles[0].ts, Nanos{1500});
  EXPECT_EQ(w[0].throttles[0].dirty_pages, 900u);
  EXPECT_EQ(w[0].throttles[0].limit_pages, 800u);
}

TEST_F(StitcherTest, CausesOfAnotherCallAreNotAttached) {
  CausesEvent causes;
  causes.start_ns = 777;  // not this call's start
  causes.tid = kWriterTid;
  causes.blocked_ns = 100;
  feed(causes);
  feed(sync_call(Syscall::Fsync, 1000, 2000, kWriterTid));
  ASSERT_EQ(syncs().size(), 1u);
  EXPECT_FALSE(syncs()[0].causes.has_value());
  // And they are gone: the thread's next call does not pick them up either.
  feed(sync_call(Syscall::Fsync, 3000, 4000, kWriterTid));
  EXPECT_FALSE(syncs()[1].causes.has_value());
}

// A sleep with `frames` under the scheduler's, `ns` long.
OffCpuSleep sleep_in(std::initializer_list<const char*> frames, Nanos ns) {
  OffCpuSleep s;
  s.ns = s.longest_ns = ns;
  s.sleeps = 1;
  for (const char* f : {"__schedule+0x2b1", "schedule+0x27", "io_schedule+0x46"})
    s.stack.frames.emplace_back(f);
  for (const char* f : frames) s.stack.frames.emplace_back(f);
  s.stack.addrs.resize(s.stack.frames.size(), 0xffffffff81000000);
  return s;
}

TEST_F(StitcherTest, OffCpuSleepsReachTheirCallAsNamedWaits) {
  OffCpuEvent ev =
      offcpu_event(1000, kWriterTid,
                   {sleep_in({"folio_wait_bit_common+0x167", "__folio_lock+0x17"}, 100),
                    sleep_in({"folio_wait_bit+0x120", "folio_wait_writeback+0x2a",
                              "__filemap_fdatawait_range+0xac", "ext4_sync_file+0xa0 [ext4]"},
                             300)});
  ev.unslotted_ns = 40;
  feed(ev);
  feed(causes_event(1000, kWriterTid, 440));
  feed(sync_call(Syscall::Fsync, 1000, 2000, kWriterTid));
  ASSERT_EQ(syncs().size(), 1u);
  const auto c = syncs()[0].causes;
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->blocked_ns, 440u);
  ASSERT_EQ(c->sleeps.size(), 2u);
  EXPECT_EQ(c->sleeps[0].ns, 300u);  // longest first
  EXPECT_EQ(c->sleeps[1].ns, 100u);
  EXPECT_EQ(c->unslotted_ns, 40u);
  ASSERT_EQ(c->waits.size(), 2u);
  EXPECT_EQ(c->waits[0].cause, WaitCause::WritebackWait);
  EXPECT_EQ(c->waits[1].cause, WaitCause::PageLock);
  EXPECT_FALSE(c->waits[0].chain.commit.has_value());
}

TEST_F(StitcherTest, OffCpuOfAnotherCallIsNotAttached) {
  // Not this call's start.
  feed(offcpu_event(777, kWriterTid, {sleep_in({"jbd2_log_wait_commit+0xee [jbd2]"}, 300)}));
  feed(causes_event(1000, kWriterTid, 300));
  feed(sync_call(Syscall::Fsync, 1000, 2000, kWriterTid));
  ASSERT_TRUE(syncs()[0].causes.has_value());
  EXPECT_TRUE(syncs()[0].causes->waits.empty());
  EXPECT_TRUE(syncs()[0].causes->sleeps.empty());
}

}  // namespace
}  // namespace wp::stitch_test

// ---- the holder on its own ----

namespace wp::stitch_test {
namespace {

TEST(CallContext, CausesGoToTheCallWithTheirStartTimeOnlyAndOnce) {
  stitch::CallContext calls;
  CausesEvent c;
  c.ts = 900;
  c.start_ns = 100;
  c.tid = kWriterTid;
  c.blocked_ns = 300;
  c.runnable_ns = 100;
  calls.on_causes(c);
  SyscallEvent other = write_call(50, 900, 0, 4096, 1);  // same thread, another start
  EXPECT_FALSE(calls.take_causes(other));
  calls.on_causes(c);
  SyscallEvent call = write_call(100, 900, 0, 4096, 1);
  auto causes = calls.take_causes(call);
  ASSERT_TRUE(causes);
  EXPECT_EQ(causes->blocked_ns, 300u);
  EXPECT_EQ(causes->runnable_ns, 100u);
  EXPECT_EQ(causes->on_cpu_ns, 400u);  // 800 of latency, 400 off CPU
  EXPECT_FALSE(calls.take_causes(call));
}

TEST(CallContext, ThrottlePausesOutsideTheCallAreDropped) {
  stitch::CallContext calls;
  ThrottleEvent t;
  t.tid = kWriterTid;
  t.pause_ms = 4;
  for (Nanos ts : {Nanos{50}, Nanos{150}, Nanos{250}, Nanos{950}}) {
    t.ts = ts;
    calls.on_throttle(t);
  }
  auto pauses = calls.take_throttles(write_call(100, 900, 0, 4096, 1));
  ASSERT_EQ(pauses.size(), 2u);
  EXPECT_EQ(pauses[0].ts, Nanos{150});
  EXPECT_EQ(pauses[1].ts, Nanos{250});
  EXPECT_TRUE(calls.take_throttles(write_call(1000, 1100, 0, 4096, 1)).empty());
}

}  // namespace
}  // namespace wp::stitch_test
