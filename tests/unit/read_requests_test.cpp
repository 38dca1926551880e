// SPDX-License-Identifier: Apache-2.0
// The read requests tracker (stitch/read_requests.h), driven through the whole stitcher: a read
// or a fault lists the requests of the bios its thread queued for it (by their tag), and waits
// for them to complete before it goes out.
#include <gtest/gtest.h>

#include "stitch/read_requests.h"
#include "stitch_fixture.h"

namespace wp {
namespace {

using namespace stitch_test;

constexpr std::uint32_t kReaderTid = 300;

// A read bio of the reader, queued for the call or fault that began at `start`.
BioEvent read_bio(Nanos ts, std::uint64_t ptr, std::uint64_t sector, std::uint32_t bytes,
                  Nanos start, SubmitWhy why = SubmitWhy::ReadCall) {
  BioEvent b = bio_of(ts, ptr, kReaderTid);
  b.op = ReqOp::Read;
  b.sector = sector;
  b.bytes = bytes;
  b.why = why;
  b.file_dev = kPart;
  b.ino = kIno;
  b.uring_tag = stitch::uring_tag_of(start);
  return b;
}

RequestEvent read_rq(RequestEventKind kind, Nanos ts, std::uint64_t ptr, std::uint64_t sector,
                     std::uint32_t bytes) {
  return rq(kind, ts, ptr, sector, bytes, ReqOp::Read);
}

ReadEvent read_call(Nanos start, Nanos end, std::uint64_t pos, std::int64_t ret) {
  ReadEvent ev;
  ev.call.syscall = Syscall::Read;
  ev.call.start_ns = start;
  ev.call.end_ns = end;
  ev.call.pid = ev.call.tid = kReaderTid;
  ev.call.dev = kPart;
  ev.call.ino = kIno;
  ev.call.file_flags = file_flag::kRegular;
  ev.call.pos = pos;
  ev.call.count = static_cast<std::uint64_t>(ret);
  ev.call.ret = ret;
  return ev;
}

using ReadRequests = StitcherTest;

// The request its miss went in completed inside the call; the readahead it started went in a
// second one that completed after: the item waits for it, then lists both in issue order.
TEST_F(ReadRequests, AReadListsItsRequestsAndWaitsForItsReadahead) {
  feed(read_bio(110, 0xb1, 800, 4096, 100));
  feed(read_bio(120, 0xb2, 808, 65536, 100));
  feed(read_rq(RequestEventKind::Issue, 130, 0xa1, 800, 4096));
  feed(read_rq(RequestEventKind::Issue, 140, 0xa2, 808, 65536));
  feed(read_rq(RequestEventKind::Complete, 150, 0xa1, 800, 4096));
  feed(read_call(100, 160, 0, 4096));
  EXPECT_TRUE(out_.empty()) << "its readahead's request is still at the device";
  feed(read_rq(RequestEventKind::Complete, 400, 0xa2, 808, 65536));
  ASSERT_EQ(out_.size(), 1u);
  const ReadTimeline& r = std::get<ReadTimeline>(out_[0]);
  ASSERT_EQ(r.requests.size(), 2u);
  EXPECT_EQ(r.requests[0].sector, 800u);
  EXPECT_EQ(*r.requests[0].complete_ns, 150u);
  EXPECT_EQ(r.requests[1].sector, 808u);
  EXPECT_EQ(*r.requests[1].complete_ns, 400u);
  EXPECT_EQ(r.requests[1].submit_why, SubmitWhy::ReadCall);
}

// A read that queued no bio (its pages were cached) goes out at its record, as before.
TEST_F(ReadRequests, ACachedReadGoesOutAtItsRecord) {
  feed(read_call(100, 160, 0, 4096));
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_TRUE(std::get<ReadTimeline>(out_[0]).requests.empty());
}

// Bios the thread queued for its earlier fault carry that fault's tag: the read that follows
// does not take them, the fault does.
TEST_F(ReadRequests, AFaultsBiosAreTheFaultsNotTheNextReads) {
  feed(read_bio(60, 0xb1, 900, 4096, 50, SubmitWhy::Fault));
  feed(read_rq(RequestEventKind::Issue, 70, 0xa1, 900, 4096));
  feed(read_rq(RequestEventKind::Complete, 90, 0xa1, 900, 4096));
  FaultEvent f;
  f.ts = 200;  // sent at the thread's next fault
  f.start_ns = 50;
  f.last_ns = 95;
  f.pid = f.tid = kReaderTid;
  f.dev = kPart;
  f.ino = kIno;
  f.index = 3;
  f.flags = WP_FAULT_FILLED;
  feed(read_call(100, 160, 0, 4096));
  feed(f);
  ASSERT_EQ(out_.size(), 2u);
  const ReadTimeline& read = std::get<ReadTimeline>(out_[0]);
  const ReadTimeline& fault = std::get<ReadTimeline>(out_[1]);
  EXPECT_TRUE(read.requests.empty());
  ASSERT_TRUE(fault.fault);
  ASSERT_EQ(fault.requests.size(), 1u);
  EXPECT_EQ(fault.requests[0].sector, 900u);
}

// A completion the kernel did not deliver holds the item no longer than kMaxWaitNs of event
// time: it goes out with the request as far as it was seen.
TEST_F(ReadRequests, ALostCompletionHoldsTheItemABoundedTime) {
  feed(read_bio(110, 0xb1, 800, 4096, 100));
  feed(read_rq(RequestEventKind::Issue, 130, 0xa1, 800, 4096));
  feed(read_call(100, 160, 0, 4096));
  EXPECT_TRUE(out_.empty());
  feed(read_call(200, 300, 4096, 4096));  // cached: out at once, never behind another
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_EQ(std::get<ReadTimeline>(out_[0]).call.start_ns, 200u);
  feed(read_call(160 + stitch::ReadRequestTracker::kMaxWaitNs,
                 170 + stitch::ReadRequestTracker::kMaxWaitNs, 8192, 4096));
  ASSERT_EQ(out_.size(), 3u);
  const ReadTimeline& r = std::get<ReadTimeline>(out_[2]);
  EXPECT_EQ(r.call.start_ns, 100u) << "the held read leaves once its wait is over";
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_FALSE(r.requests[0].complete_ns);
}

// A write request and a read request at the same sectors: each takes its own kind of bio.
TEST_F(ReadRequests, ReadAndWriteBiosNeverGoInEachOthersRequests) {
  feed(page_bio(105, 0xc1, 800, 0, 1));
  feed(read_bio(110, 0xb1, 800, 4096, 100));
  feed(read_rq(RequestEventKind::Issue, 130, 0xa1, 800, 4096));
  feed(issue(131, 0xa2, 800, 4096));
  feed(read_rq(RequestEventKind::Complete, 150, 0xa1, 800, 4096));
  feed(complete(151, 0xa2, 800, 4096));
  feed(read_call(100, 160, 0, 4096));
  const ReadTimeline* read = nullptr;
  for (const Timeline& t : out_)
    if (const auto* r = std::get_if<ReadTimeline>(&t)) read = r;
  ASSERT_TRUE(read);
  ASSERT_EQ(read->requests.size(), 1u);
  EXPECT_EQ(read->requests[0].op, ReqOp::Read);
  EXPECT_EQ(read->requests[0].bios, 1u);
}

// The trace's end lets every held item out.
TEST_F(ReadRequests, TheEndLetsHeldItemsOut) {
  feed(read_bio(110, 0xb1, 800, 4096, 100));
  feed(read_call(100, 160, 0, 4096));
  EXPECT_TRUE(out_.empty()) << "its bio is in no request yet";
  finish();
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_TRUE(std::get<ReadTimeline>(out_[0]).requests.empty());
}

}  // namespace
}  // namespace wp
