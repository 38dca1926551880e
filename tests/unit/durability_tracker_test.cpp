// SPDX-License-Identifier: Apache-2.0
// Durability tracker rules: FLUSH, FUA and write-cache-less devices.
#include "stitch/durability_tracker.h"
#include "stitch_fixture.h"

namespace wp::stitch_test {
namespace {

TEST_F(StitcherTest, BufferedWriteBecomesDurableAfterWritebackAndFlush) {
  feed(write_call(1000, 2000, 0, 8192, 2));
  feed(page_bio(5000, 0xb1, 2048, 0, 2));
  feed(issue(5100, 0x71, 2048, 8192));
  EXPECT_TRUE(out_.empty());
  feed(complete(5500, 0x71, 2048, 8192));
  EXPECT_TRUE(out_.empty());  // written, but only in the device's volatile cache
  flush(0xf1, 6000, 6300);

  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].pages, 2u);
  EXPECT_EQ(w[0].pages_pending, 0u);
  EXPECT_EQ(w[0].written_ns, Nanos{5500});
  EXPECT_EQ(w[0].durable_ns, Nanos{6300});
  EXPECT_EQ(w[0].durable_via, DurableVia::Flush);
  EXPECT_FALSE(w[0].direct);
  EXPECT_FALSE(w[0].sync);
  EXPECT_FALSE(w[0].incomplete);
  ASSERT_EQ(w[0].requests.size(), 1u);
  const RequestTimeline& r = w[0].requests[0];
  EXPECT_EQ(r.disk, kDisk);
  EXPECT_EQ(r.sector, 2048u);
  EXPECT_EQ(r.bytes, 8192u);
  EXPECT_EQ(r.bios, 1u);
  EXPECT_EQ(r.queue_ns, Nanos{5000});
  EXPECT_EQ(r.issue_ns, Nanos{5100});
  EXPECT_EQ(r.complete_ns, Nanos{5500});
  EXPECT_EQ(r.durable_ns, Nanos{6300});
  EXPECT_EQ(stitcher_.stats().writes, 1u);
  EXPECT_EQ(stitcher_.stats().requests, 2u);
}

TEST_F(StitcherTest, FlushIssuedBeforeDataCompletionDoesNotMakeDurable) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  feed(page_bio(5000, 0xb1, 2048, 0, 1));
  feed(issue(5100, 0x71, 2048, 4096));
  feed(flush_issue(5200, 0xf1));  // started before the data reached the device
  feed(complete(5500, 0x71, 2048, 4096));
  feed(flush_complete(5600, 0xf1));
  EXPECT_TRUE(out_.empty());
  flush(0xf1, 7000, 7100);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].durable_ns, Nanos{7100});
}

TEST_F(StitcherTest, FuaWriteIsDurableAtItsZeroByteSecondCompletion) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  BioEvent bio = page_bio(5000, 0xb1, 2048, 0, 1);
  bio.flags = req_flag::kPreflush | req_flag::kFua | req_flag::kSync;
  feed(bio);
  feed(issue(5100, 0x71, 2048, 4096, req_flag::kSync));  // the flush machinery cleared the bits
  feed(complete(5500, 0x71, 2048, 4096));
  EXPECT_TRUE(out_.empty());
  feed(complete(5700, 0x71, 2048, 0));  // post-flush done
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].written_ns, Nanos{5500});
  EXPECT_EQ(w[0].durable_ns, Nanos{5700});
  EXPECT_EQ(w[0].durable_via, DurableVia::Fua);
  EXPECT_EQ(w[0].requests[0].flags & req_flag::kFua, req_flag::kFua);
  EXPECT_EQ(rwbs(w[0].requests[0].op, w[0].requests[0].flags, 4096), "FWFS");
}

TEST_F(StitcherTest, ZeroByteCompletionWithoutFuaDoesNotMakeDurable) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  BioEvent bio = page_bio(5000, 0xb1, 2048, 0, 1);
  bio.flags = req_flag::kPreflush;
  feed(bio);
  io(0x71, 2048, 4096, 5100, 5500);
  feed(complete(5700, 0x71, 2048, 0));
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Written);
}

// blkdev_issue_flush() submits an empty PREFLUSH write; the flush machinery sends an FF
// request in its place and completes the empty write with no issue event, on whatever
// request pointer it got, here one a finished plain write used before.

TEST_F(StitcherTest, NativeFuaIsDurableAtDataCompletion) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  BioEvent bio = page_bio(5000, 0xb1, 2048, 0, 1);
  bio.flags = req_flag::kFua;
  feed(bio);
  feed(issue(5100, 0x71, 2048, 4096, req_flag::kFua));
  feed(complete(5500, 0x71, 2048, 4096));
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].durable_ns, Nanos{5500});
  EXPECT_EQ(w[0].durable_via, DurableVia::Fua);
}

TEST_F(StitcherTest, LatestRequestDecidesDurableTimeAndVia) {
  feed(write_call(1000, 2000, 0, 8192, 2));
  BioEvent fua = page_bio(5000, 0xb1, 2048, 0, 1);
  fua.flags = req_flag::kFua;
  feed(fua);
  feed(issue(5100, 0x71, 2048, 4096, req_flag::kFua));
  feed(complete(5200, 0x71, 2048, 4096));  // durable via FUA at 5200
  feed(page_bio(5300, 0xb2, 2056, 1, 1));
  io(0x72, 2056, 4096, 5400, 5500);
  EXPECT_TRUE(out_.empty());
  flush(0xf1, 5600, 5700);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].written_ns, Nanos{5500});
  EXPECT_EQ(w[0].durable_ns, Nanos{5700});
  EXPECT_EQ(w[0].durable_via, DurableVia::Flush);
  ASSERT_EQ(w[0].requests.size(), 2u);
  EXPECT_EQ(w[0].requests[0].durable_ns, Nanos{5200});
}

TEST_F(NoWriteCacheTest, DurableAtDataCompletion) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  feed(page_bio(5000, 0xb1, 2048, 0, 1));
  io(0x71, 2048, 4096, 5100, 5500);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].written_ns, Nanos{5500});
  EXPECT_EQ(w[0].durable_ns, Nanos{5500});
  EXPECT_EQ(w[0].durable_via, DurableVia::NoWriteCache);
}

}  // namespace
}  // namespace wp::stitch_test

// ---- the tracker on its own ----

namespace wp::stitch_test {
namespace {

using stitch::DeviceTable;
using stitch::DurabilityTracker;
using stitch::Request;

std::shared_ptr<Request> completed(DevT disk, Nanos complete_ns) {
  auto r = std::make_shared<Request>();
  r->tl.disk = disk;
  r->tl.op = ReqOp::Write;
  r->tl.complete_ns = complete_ns;
  r->data_done = true;
  return r;
}

class DurabilityTrackerTest : public ::testing::Test {
 protected:
  DurabilityTrackerTest()
      : tracker_(limits_, devices_, [this](Request& r) { durable_.push_back(&r); }) {
    devices_.add(DeviceInfo{kDisk, kDisk, "vda", true, false});
    devices_.add(DeviceInfo{kOtherDisk, kOtherDisk, "vdb", false, false});
  }
  static constexpr DevT kOtherDisk = make_dev(254, 0);
  StitchLimits limits_;
  DeviceTable devices_;
  std::vector<Request*> durable_;
  DurabilityTracker tracker_;
};

// Completions are learnt nearly, not exactly, in time order (close stamps from two CPUs swap,
// a completion is inferred late): the flush covers what completed before it started whichever
// came first, and nothing that completed after.
TEST_F(DurabilityTrackerTest, FlushCoversOnlyDataCompletedBeforeItStarted) {
  for (const bool late_first : {false, true}) {
    std::vector<Request*> durable;
    DurabilityTracker tracker(limits_, devices_, [&](Request& r) { durable.push_back(&r); });
    auto early = completed(kDisk, 100);
    auto late = completed(kDisk, 300);
    if (late_first) tracker.data_completed(late, 300);
    tracker.data_completed(early, 100);
    if (!late_first) tracker.data_completed(late, 300);
    tracker.flush_completed(kDisk, 200, 400, RequestTimeline{}, true);
    ASSERT_EQ(durable.size(), 1u) << "late first: " << late_first;
    EXPECT_EQ(durable[0], early.get());
    EXPECT_EQ(early->tl.durable_ns, Nanos{400});
    EXPECT_EQ(early->via, DurableVia::Flush);
    EXPECT_FALSE(late->tl.durable_ns);
    tracker.flush_completed(kDisk, 350, 500, RequestTimeline{}, true);
    ASSERT_EQ(durable.size(), 2u);
    EXPECT_EQ(late->tl.durable_ns, Nanos{500});
  }
}

TEST_F(DurabilityTrackerTest, PostFlushOfAFuaRequestMakesNothingElseDurable) {
  auto r = completed(kDisk, 100);
  tracker_.data_completed(r, 100);
  tracker_.flush_completed(kDisk, 150, 200, RequestTimeline{}, false);
  EXPECT_TRUE(durable_.empty());
  EXPECT_EQ(tracker_.flushes_within(kDisk, 0, 1000).size(), 1u);  // still seen by syncs
}

TEST_F(DurabilityTrackerTest, DiskWithoutVolatileCacheIsDurableAtCompletion) {
  auto r = completed(kOtherDisk, 100);
  tracker_.data_completed(r, 100);
  ASSERT_EQ(durable_.size(), 1u);
  EXPECT_EQ(r->via, DurableVia::NoWriteCache);
  EXPECT_EQ(r->tl.durable_ns, Nanos{100});
}

TEST_F(DurabilityTrackerTest, NativeFuaIsDurableAtCompletionAndOnlyOnce) {
  auto r = completed(kDisk, 100);
  r->fua_at_issue = true;
  tracker_.data_completed(r, 100);
  tracker_.make_durable(*r, 900, DurableVia::Flush);
  ASSERT_EQ(durable_.size(), 1u);
  EXPECT_EQ(r->via, DurableVia::Fua);
  EXPECT_EQ(r->tl.durable_ns, Nanos{100});
}

TEST_F(DurabilityTrackerTest, FlushesWithinAreByEndAndPerDisk) {
  tracker_.flush_completed(kDisk, 10, 50, RequestTimeline{}, true);
  tracker_.flush_completed(kDisk, 60, 80, RequestTimeline{}, true);
  tracker_.flush_completed(kOtherDisk, 20, 70, RequestTimeline{}, true);
  tracker_.flush_completed(kDisk, 90, 200, RequestTimeline{}, true);
  auto mine = tracker_.flushes_within(kDisk, 40, 100);
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(mine[0]->end, Nanos{50});
  EXPECT_EQ(mine[1]->end, Nanos{80});
  auto all = tracker_.flushes_within(0, 40, 100);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1]->end, Nanos{70});
}

}  // namespace
}  // namespace wp::stitch_test
