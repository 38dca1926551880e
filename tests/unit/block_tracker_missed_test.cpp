// SPDX-License-Identifier: Apache-2.0
// Block tracker rules: completions the kernel did not deliver, found out by a pointer's next
// use, a flush sequence's end, a thread that waited, or counted at the end of the trace.
#include "stitch_fixture.h"

namespace wp::stitch_test {
namespace {

// A bio a sync call queued: file pages [index, index + pages) of thread `tid`.
BioEvent sync_page_bio(Nanos ts, std::uint64_t ptr, std::uint64_t sector, std::uint64_t index,
                       std::uint32_t pages, std::uint32_t tid) {
  BioEvent b = page_bio(ts, ptr, sector, index, pages, tid);
  b.why = SubmitWhy::SyncSyscall;
  return b;
}

// The test's one write: written at `written` by a completion inferred, durable at `durable`,
// and so marked incomplete.
void expect_durable_on_inference(const std::vector<WriteTimeline>& w, Nanos written,
                                 Nanos durable) {
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].written_ns, written);
  EXPECT_EQ(w[0].durable_ns, durable);
  EXPECT_TRUE(w[0].incomplete);
}

// The cache flush a sync call queued.
BioEvent sync_flush_bio(Nanos ts, std::uint64_t ptr, std::uint32_t tid) {
  BioEvent b = flush_bio(ts, ptr, tid);
  b.why = SubmitWhy::SyncSyscall;
  return b;
}

// An empty PREFLUSH write is never issued, so a missed completion of one leaves no lifetime
// open: the trace's end counts it from its bio, one request per bio as diskstats counts them
// (btrfs on a write-back loop device: diskstats one write request more than the summary, its
// bytes equal). Both completions delivered: nothing is added.
TEST_F(StitcherTest, AnEmptyPreflushWriteWhoseCompletionWasMissedIsCountedAtTheEnd) {
  feed(flush_bio(100, 0xb1, kWriterTid));
  feed(flush_bio(110, 0xb2, kWriterTid));
  flush(0xf1, 150, 300);            // one FF serves both
  feed(complete(310, 0x71, 0, 0));  // the first empty write ends; the second's never came
  const auto missed = stitcher_.stats().missed_completions;
  EXPECT_EQ(stitcher_.stats().disks.at(kDisk).write_requests, 1u);
  finish();
  EXPECT_EQ(stitcher_.stats().disks.at(kDisk).write_requests, 2u);
  EXPECT_EQ(stitcher_.stats().disks.at(kDisk).write_bytes, 0u);
  EXPECT_EQ(stitcher_.stats().missed_completions, missed + 1);
  finish();  // once
  EXPECT_EQ(stitcher_.stats().disks.at(kDisk).write_requests, 2u);
}

TEST_F(StitcherTest, EmptyPreflushWritesAllCompletedAddNothingAtTheEnd) {
  feed(complete(50, 0x70, 0, 0));  // a bio queued before the trace: no bio seen for it
  feed(flush_bio(100, 0xb1, kWriterTid));
  flush(0xf1, 150, 300);
  feed(complete(310, 0x71, 0, 0));
  const auto missed = stitcher_.stats().missed_completions;
  finish();
  EXPECT_EQ(stitcher_.stats().disks.at(kDisk).write_requests, 2u);
  EXPECT_EQ(stitcher_.stats().missed_completions, missed);
}

// A write's request, issued, its completion never delivered, no thread waiting on it and no
// later use of its pointer before the trace ended (the shape OracleSweep seed 41's rare failure
// had: 8 of 6,618 requests of a btrfs mmap round missing). Read once the hooks were detached, the
// disk had no write in flight: the request completed no later than that reading. The write is
// written then, incomplete, and the disk counts the request. A disk still busy says nothing.
class WriteIdleAtTheEnd : public StitcherTest {
 protected:
  // A write whose page the flusher queued, issued as request 0x71; no completion follows.
  void written_back_and_issued() {
    feed(write_call(1000, 2000, 0, 4096, 1));
    BioEvent bio = page_bio(5000, 0xb1, 2048, 0, 1, 400);
    bio.why = SubmitWhy::Background;
    feed(bio);
    feed(issue(5100, 0x71, 2048, 4096));
  }
};

TEST_F(WriteIdleAtTheEnd, AWriteRequestStillOpenOnAnIdleDiskCompletedUnseen) {
  written_back_and_issued();
  write_idle_at_end({kPart}, 9000);  // a partition: not the disk the request is on
  EXPECT_EQ(stitcher_.stats().missed_completions, 0u);
  write_idle_at_end({kDisk}, 9000);
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].written_ns, Nanos{9000});
  EXPECT_TRUE(w[0].incomplete);
  EXPECT_EQ(stitcher_.stats().missed_completions, 1u);
  EXPECT_EQ(stitcher_.stats().disks.at(kDisk).write_requests, 1u);
  EXPECT_EQ(stitcher_.stats().disks.at(kDisk).write_bytes, 4096u);
}

TEST_F(WriteIdleAtTheEnd, AWriteRequestStillOpenOnABusyDiskStaysOpen) {
  written_back_and_issued();
  io(0x72, 4096, 4096, 5200, 5300);  // another request, completed: nothing to infer
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_FALSE(w[0].written_ns);
  EXPECT_FALSE(w[0].incomplete);
  EXPECT_EQ(stitcher_.stats().missed_completions, 0u);
  EXPECT_EQ(stitcher_.stats().disks.at(kDisk).write_requests, 1u);
}

// The kernel sometimes runs no BPF program for a block_rq_complete event (6.18: completions in
// a softirq on top of some tasks; ftrace of the same run has them). Pointer 0x71 is issued for
// the write's pages and issued again for another request without a completion between: the
// first completed unseen, no later than the second issue. It is completed then, counted, and
// the write resting on it is incomplete: written and durable no earlier than the truth.
TEST_F(StitcherTest, PointerIssuedAgainWithoutCompletionInfersTheMissedOne) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  feed(page_bio(5000, 0xb1, 2048, 0, 1));
  feed(issue(5100, 0x71, 2048, 4096));
  feed(issue(6000, 0x71, 9000, 4096));  // a new request: the old one's completion never came
  flush(0xf1, 6100, 6200);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].written_ns, Nanos{6000});
  EXPECT_EQ(w[0].durable_ns, Nanos{6200});
  EXPECT_TRUE(w[0].incomplete);
  ASSERT_EQ(w[0].requests.size(), 1u);
  EXPECT_TRUE(w[0].requests[0].complete_inferred);
  EXPECT_EQ(w[0].requests[0].complete_ns, Nanos{6000});
  EXPECT_EQ(stitcher_.stats().missed_completions, 1u);
  EXPECT_EQ(stitcher_.stats().disks.at(kDisk).write_requests, 1u);  // as diskstats counts it
  EXPECT_EQ(stitcher_.stats().disks.at(kDisk).write_bytes, 4096u);
  feed(complete(6300, 0x71, 9000, 4096));  // the second request's own completion
  EXPECT_EQ(stitcher_.stats().disks.at(kDisk).write_requests, 2u);
  EXPECT_EQ(stitcher_.stats().missed_completions, 1u);
}

// Near miss: a request the driver handed back (block_rq_requeue) is inserted and issued again
// under its pointer as the same request, and completes once: nothing was missed.
TEST_F(StitcherTest, RequeuedRequestIssuedAgainIsTheSameRequest) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  feed(page_bio(5000, 0xb1, 2048, 0, 1));
  feed(issue(5100, 0x71, 2048, 4096));
  feed(rq(RequestEventKind::Requeue, 5150, 0x71, 2048, 4096));
  feed(rq(RequestEventKind::Insert, 5160, 0x71, 2048, 4096));
  feed(issue(5200, 0x71, 2048, 4096));
  feed(complete(5300, 0x71, 2048, 4096));
  flush(0xf1, 5400, 5500);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].written_ns, Nanos{5300});
  EXPECT_EQ(w[0].durable_ns, Nanos{5500});
  EXPECT_FALSE(w[0].incomplete);
  ASSERT_EQ(w[0].requests.size(), 1u);
  EXPECT_EQ(w[0].requests[0].issue_ns, Nanos{5100});
  EXPECT_FALSE(w[0].requests[0].complete_inferred);
  EXPECT_EQ(stitcher_.stats().missed_completions, 0u);
  EXPECT_EQ(stitcher_.stats().requests, 2u);  // the write and the flush
}

// The flush request is issued again while its last issue never completed: that flush ended
// unseen, before the second issue. Data completed before it started is durable then, marked
// incomplete (its durable time is an upper bound); the flushes count as diskstats counts them.
TEST_F(StitcherTest, FlushIssuedAgainWithoutCompletionEndedBeforeTheSecondIssue) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  feed(page_bio(5000, 0xb1, 2048, 0, 1));
  io(0x71, 2048, 4096, 5100, 5500);
  feed(flush_issue(5600, 0xf1));
  feed(flush_issue(7000, 0xf1));
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].durable_ns, Nanos{7000});
  EXPECT_TRUE(w[0].incomplete);
  feed(flush_complete(7100, 0xf1));
  EXPECT_EQ(stitcher_.stats().disks.at(kDisk).flush_requests, 2u);
  EXPECT_EQ(stitcher_.stats().missed_completions, 1u);
}

// A PREFLUSH/FUA write whose data completion was not delivered: the zero-byte end of its flush
// sequence comes only after its data completed, so its data is complete then, and the write is
// durable by the FUA sequence at the same time, incomplete.
TEST_F(StitcherTest, FlushSequenceEndWithoutDataCompletionInfersIt) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  BioEvent bio = page_bio(5000, 0xb1, 2048, 0, 1);
  bio.flags = req_flag::kPreflush | req_flag::kFua;
  feed(bio);
  feed(issue(5100, 0x71, 2048, 4096));
  feed(complete(5900, 0x71, 2048, 0));  // the flush sequence's end; the data's was missed
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].written_ns, Nanos{5900});
  EXPECT_EQ(w[0].durable_ns, Nanos{5900});
  EXPECT_TRUE(w[0].incomplete);
  EXPECT_EQ(stitcher_.stats().missed_completions, 1u);
  EXPECT_EQ(stitcher_.stats().disks.at(kDisk).write_requests, 1u);
  EXPECT_EQ(stitcher_.stats().unmatched_completes, 0u);
}

// A thread that waited for its bios found a missed completion too. fdatasync's writeback bio
// (thread 300) is issued as request 0x71, whose completion never comes; the thread then
// queues its cache flush, which it does only once its data ended: 0x71 completed before
// that. The write is written then and durable by the flush, marked incomplete; the sync
// lists the request; the disk counts it. (PostgreSQL's WAL, AppOracle: a later write of the
// same page was taken for this one's.)
TEST_F(StitcherTest, SyncsOwnRequestWithoutCompletionEndedBeforeTheSyncsFlush) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  feed(sync_page_bio(5000, 0xb1, 2048, 0, 1, 300));
  feed(issue(5100, 0x71, 2048, 4096));
  feed(sync_flush_bio(5300, 0xb2, 300));
  flush(0xf1, 5310, 5400);
  feed(sync_call(Syscall::Fdatasync, 4900, 6000, 300));
  expect_durable_on_inference(writes(), 5300, 5400);
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].requests.size(), 1u);
  EXPECT_TRUE(s[0].requests[0].complete_inferred);
  EXPECT_EQ(s[0].requests[0].complete_ns, Nanos{5300});
  EXPECT_EQ(stitcher_.stats().missed_completions, 1u);
  EXPECT_EQ(stitcher_.stats().disks.at(kDisk).write_requests, 1u);
  feed(issue(7000, 0x71, 9000, 4096));  // the pointer's next request: nothing more to infer
  EXPECT_EQ(stitcher_.stats().missed_completions, 1u);
}

// Without a cache flush in the call (an O_DIRECT write on a disk without a volatile cache),
// the bound is the call's end.
TEST_F(StitcherTest, DirectWritesOwnRequestWithoutCompletionEndedByTheCallsReturn) {
  BioEvent data = anon_bio(1200, 0xb1, 4096, 4096, kWriterTid);
  data.why = SubmitWhy::WriteSyscall;
  feed(data);
  feed(issue(1250, 0x71, 4096, 4096));
  SyscallEvent call = write_call(1000, 3000, 0, 4096, 0);
  call.file_flags |= file_flag::kDirect;
  feed(call);
  flush(0xf1, 3100, 3200);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].written_ns, Nanos{3000});
  EXPECT_EQ(w[0].durable_ns, Nanos{3200});
  EXPECT_TRUE(w[0].incomplete);
  EXPECT_EQ(stitcher_.stats().missed_completions, 1u);
}

// Near misses: a call that does not wait for its bios (sync_file_range), a request that also
// holds another thread's bio (this thread waited for its own part only), and a completion that
// did come. Nothing is inferred. (The fsyncs are of another file: a successful fsync of the
// file itself also waits for its pages queued before it, the test after this one.)
SyscallEvent fsync_of_another_file(Nanos start, Nanos end, std::uint32_t tid) {
  SyscallEvent call = sync_call(Syscall::Fsync, start, end, tid);
  call.ino = kIno + 1;
  return call;
}

TEST_F(StitcherTest, OnlyAWaitingCallsOwnOpenRequestsAreInferredComplete) {
  feed(sync_page_bio(1000, 0xb1, 2048, 0, 1, 300));
  feed(issue(1100, 0x71, 2048, 4096));
  feed(sync_call(Syscall::SyncFileRange, 900, 1200, 300));

  BioEvent mine = sync_page_bio(2000, 0xb2, 4096, 1, 1, 301);
  BioEvent theirs = sync_page_bio(2010, 0xb3, 4104, 2, 1, 302);
  feed(mine);
  feed(theirs);
  feed(issue(2100, 0x72, 4096, 8192));
  feed(fsync_of_another_file(1900, 2500, 301));

  feed(sync_page_bio(3000, 0xb4, 8192, 3, 1, 303));
  io(0x73, 8192, 4096, 3100, 3200);
  feed(fsync_of_another_file(2900, 3500, 303));

  // The thread's own bio from before its call (a sync_file_range's, still in flight) is no
  // part of the call's wait, however many of its bios came between.
  feed(sync_page_bio(4000, 0xb5, 10240, 4, 1, 304));
  feed(issue(4010, 0x74, 10240, 4096));
  feed(sync_call(Syscall::SyncFileRange, 3900, 4050, 304));
  for (std::uint64_t i = 0; i < 3; ++i) {
    feed(sync_page_bio(5000 + i * 10, 0xc0 + i, 12288 + i * 8, 10 + i, 1, 304));
  }
  io(0x75, 12288, 3 * 4096, 5100, 5200);
  feed(fsync_of_another_file(4900, 5500, 304));

  EXPECT_EQ(stitcher_.stats().missed_completions, 0u);
  auto s = syncs();
  ASSERT_EQ(s.size(), 5u);
  EXPECT_FALSE(s[2].requests.empty());
  for (const auto& sync : s)
    for (const auto& r : sync.requests) EXPECT_FALSE(r.complete_inferred) << sync.call.tid;
}

// A successful fsync of a file waited for the file's pages under writeback when it began, not
// only for the ones it queued: PostgreSQL's checkpointer queues a relation's pages with
// sync_file_range (request 0x71, completion never delivered) and fsyncs the file later. 0x71
// completed before the fsync's cache flush; the write is durable by that flush. Near misses,
// none inferred: a request the flusher queued during the call (0x72: the fsync may have found
// its pages clean), one that also holds another file's pages (0x73), one of another file
// (0x74), and the same shape under an fsync that failed (0x75).
TEST_F(StitcherTest, ASuccessfulFsyncEndedTheWritebackOfItsFileQueuedBeforeIt) {
  feed(write_call(1000, 1100, 0, 4096, 1));
  feed(sync_page_bio(1200, 0xb1, 2048, 0, 1, kWriterTid));
  feed(issue(1210, 0x71, 2048, 4096));
  feed(sync_call(Syscall::SyncFileRange, 1150, 1300, kWriterTid));

  BioEvent mixed = page_bio(1400, 0xb3, 8192, 5, 1);
  BioEvent other_file = page_bio(1410, 0xb4, 8200, 0, 1);
  other_file.ino = kIno + 1;
  feed(mixed);
  feed(other_file);
  feed(issue(1420, 0x73, 8192, 8192));
  BioEvent elsewhere = page_bio(1500, 0xb5, 12288, 0, 1);
  elsewhere.ino = kIno + 1;
  feed(elsewhere);
  feed(issue(1510, 0x74, 12288, 4096));

  feed(page_bio(2100, 0xb2, 4096, 3, 1));  // the flusher, during the call
  feed(issue(2110, 0x72, 4096, 4096));
  feed(sync_flush_bio(2300, 0xf0, 300));
  flush(0xf1, 2310, 2400);
  feed(sync_call(Syscall::Fsync, 2000, 2500, 300));

  expect_durable_on_inference(writes(), 2300, 2400);
  EXPECT_EQ(stitcher_.stats().missed_completions, 1u);

  feed(sync_page_bio(3000, 0xb6, 16384, 9, 1, 301));
  feed(issue(3010, 0x75, 16384, 4096));
  SyscallEvent failed = sync_call(Syscall::Fsync, 3500, 3600, 302);
  failed.ret = -5;
  feed(failed);
  EXPECT_EQ(stitcher_.stats().missed_completions, 1u);
}

}  // namespace
}  // namespace wp::stitch_test
