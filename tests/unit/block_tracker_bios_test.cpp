// SPDX-License-Identifier: Apache-2.0
// Block tracker rules: the pending bios a request claims (merges, splits) and whose the request
// is; bios no request claims.
#include "stitch_fixture.h"

namespace wp::stitch_test {
namespace {

TEST_F(StitcherTest, BackMergedBiosAreClaimedByOneRequest) {
  feed(write_call(1000, 2000, 0, 8192, 2));
  feed(page_bio(5000, 0xb1, 2048, 0, 1));
  feed(page_bio(5010, 0xb2, 2056, 1, 1));  // back-merged into the same request
  feed(rq(RequestEventKind::Insert, 5050, 0x71, 2048, 8192));
  io(0x71, 2048, 8192, 5100, 5500);
  flush(0xf1, 5600, 5700);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  ASSERT_EQ(w[0].requests.size(), 1u);
  EXPECT_EQ(w[0].requests[0].bios, 2u);
  EXPECT_EQ(w[0].requests[0].queue_ns, Nanos{5000});
  EXPECT_EQ(w[0].requests[0].insert_ns, Nanos{5050});
  EXPECT_EQ(w[0].requests[0].issue_ns, Nanos{5100});
  EXPECT_EQ(stitcher_.stats().requests, 2u);  // one data lifetime across insert and issue
}

// Two fsyncs of threads 300 and 301 on one file: 301's bio, queued first, is back-merged
// into a request whose lowest sector is 300's bio (queued later). The request is 301's by
// queue time; 300 is listed as another submitter, and each fsync owns it.
TEST_F(StitcherTest, MergedRequestSubmitterIsItsEarliestQueuedBio) {
  BioEvent later = page_bio(1500, 0xb1, 2048, 0, 1, 300);
  later.why = SubmitWhy::SyncSyscall;
  BioEvent earlier = page_bio(1400, 0xb2, 2056, 1, 1, 301);
  earlier.why = SubmitWhy::SyncSyscall;
  feed(earlier);
  feed(later);
  io(0x71, 2048, 8192, 1600, 1700);
  feed(sync_call(Syscall::Fsync, 1300, 2000, 301));
  feed(sync_call(Syscall::Fsync, 1450, 2100, 300));
  auto s = syncs();
  ASSERT_EQ(s.size(), 2u);
  for (const auto& sync : s) {
    ASSERT_EQ(sync.requests.size(), 1u) << "tid " << sync.call.tid;
    const RequestTimeline& r = sync.requests[0];
    EXPECT_EQ(r.bios, 2u);
    EXPECT_EQ(r.queue_ns, Nanos{1400});
    EXPECT_EQ(r.submit_tid, 301u);
    EXPECT_EQ(r.submit_why, SubmitWhy::SyncSyscall);
    ASSERT_EQ(r.other_submitters.size(), 1u);
    EXPECT_EQ(r.other_submitters[0].tid, 300u);
    EXPECT_EQ(r.other_submitters[0].why, SubmitWhy::SyncSyscall);
  }
}

// One thread's bios merged into one request: one submitter, no others.
TEST_F(StitcherTest, RequestOfOneThreadsBiosHasNoOtherSubmitters) {
  feed(page_bio(1500, 0xb1, 2048, 0, 1, 300));
  feed(page_bio(1400, 0xb2, 2056, 1, 1, 300));
  io(0x71, 2048, 8192, 1600, 1700);
  feed(sync_call(Syscall::Fsync, 1300, 2000, 300));
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].requests.size(), 1u);
  EXPECT_EQ(s[0].requests[0].submit_tid, 300u);
  EXPECT_TRUE(s[0].requests[0].other_submitters.empty());
}

TEST_F(StitcherTest, OlderOfTwoPendingBiosOnTheSameSectorIsClaimedFirst) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  feed(page_bio(1500, 0xb1, 2048, 0, 1));  // older: claimed by the first request
  feed(page_bio(1600, 0xb2, 2048, 0, 1));
  io(0x71, 2048, 4096, 1700, 1800);
  flush(0xf1, 1900, 2100);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].requests[0].queue_ns, Nanos{1500});
  EXPECT_EQ(w[0].requests[0].bios, 1u);
}

TEST_F(StitcherTest, SplitBioPiecesGoToTheirOwnRequests) {
  feed(write_call(1000, 2000, 0, 4 * 4096, 4));
  feed(page_bio(5000, 0xb1, 2048, 0, 4));  // 16 KiB, split at 8 KiB by the queue limits
  BioEvent piece;
  piece.ts = 5001;
  piece.bio = 0xb9;
  piece.tid = kFlusherTid;
  piece.bdev = kPart;
  piece.disk = kDisk;
  piece.sector = 2048;
  piece.bytes = 8192;
  piece.kind = BioKind::Split;
  feed(piece);
  BioEvent remainder = page_bio(5002, 0xb1, 2064, 0, 4);  // requeued: full extent list again
  remainder.bytes = 8192;
  feed(remainder);

  io(0x71, 2048, 8192, 5100, 5500);
  flush(0xf1, 5600, 5700);
  EXPECT_TRUE(out_.empty());  // pages 2 and 3 still pending
  io(0x72, 2064, 8192, 5800, 5900);
  flush(0xf1, 6000, 6100);

  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].written_ns, Nanos{5900});
  EXPECT_EQ(w[0].durable_ns, Nanos{6100});
  ASSERT_EQ(w[0].requests.size(), 2u);
  EXPECT_EQ(w[0].requests[0].sector, 2048u);
  EXPECT_EQ(w[0].requests[0].bios, 1u);
  EXPECT_EQ(w[0].requests[0].queue_ns, Nanos{5000});  // the piece keeps its parent's queue time
  EXPECT_EQ(w[0].requests[1].sector, 2064u);
  EXPECT_EQ(w[0].requests[1].bios, 1u);
  EXPECT_EQ(stitcher_.stats().orphan_bios, 0u);
}

TEST_F(StitcherTest, SplitPieceAloneLeavesRemainderPagesPending) {
  feed(write_call(1000, 2000, 0, 4 * 4096, 4));
  feed(page_bio(5000, 0xb1, 2048, 0, 4));
  BioEvent piece;
  piece.ts = 5001;
  piece.bio = 0xb9;
  piece.bdev = kPart;
  piece.disk = kDisk;
  piece.sector = 2048;
  piece.bytes = 8192;
  piece.kind = BioKind::Split;
  feed(piece);
  io(0x71, 2048, 8192, 5100, 5500);
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Dirty);
  EXPECT_EQ(w[0].pages_pending, 2u);
}

// The kernel side walks at most a few bvecs of a split clone (it has no bvec count of its
// own): a piece whose extents stop short takes its pages from its parent's complete list.
TEST_F(StitcherTest, TruncatedSplitPieceTakesItsPagesFromItsParent) {
  for (std::uint64_t page = 0; page < 64; ++page) {
    feed(write_call(1000 + page * 10, 1005 + page * 10, page * 4096, 4096, 1));
  }
  feed(page_bio(5000, 0xb1, 2048, 0, 64));  // the whole run, one exact extent
  BioEvent piece = page_bio(5001, 0xb9, 2048, 0, 17);
  piece.bytes = 40 * 4096;  // 40 pages, of which its own walk listed 17
  piece.bio_flags |= bio_flag::kTruncated;
  piece.kind = BioKind::Split;
  feed(piece);
  BioEvent remainder = page_bio(5002, 0xb1, 2048 + 40 * 8, 40, 24);
  feed(remainder);
  io(0x71, 2048, 40 * 4096, 5100, 5500);
  io(0x72, 2048 + 40 * 8, 24 * 4096, 5100, 5600);
  flush(0xf1, 5700, 5800);
  auto w = writes();
  ASSERT_EQ(w.size(), 64u);
  for (const auto& write : w) {
    EXPECT_EQ(write.state, WriteState::Durable) << "offset " << write.call.pos;
    EXPECT_EQ(write.durable_ns, Nanos{5800});
  }
  EXPECT_EQ(stitcher_.stats().orphan_bios, 0u);
}

TEST_F(SmallLimitsTest, UnclaimedBioBecomesOrphan) {
  feed(page_bio(1000, 0xb1, 2048, 0, 1));
  feed(flush_bio(1000, 0xb2, 300));
  feed(LostEvent{1600, 0});  // time moves past history_ns
  EXPECT_EQ(stitcher_.stats().orphan_bios, 2u);
  // A request issued now finds nothing to claim.
  io(0x71, 2048, 4096, 1700, 1800);
  feed(write_call(900, 1900, 0, 4096, 1));
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Dirty);
}

}  // namespace
}  // namespace wp::stitch_test
