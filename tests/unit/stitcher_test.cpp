// The stitcher driven by synthetic event sequences: one or more tests per stitching rule.
#include "stitch/stitcher.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace wp {
namespace {

constexpr DevT kDisk = make_dev(253, 0);
constexpr DevT kPart = make_dev(253, 1);  // the filesystem's device, a partition of kDisk
constexpr std::uint64_t kIno = 42;
constexpr std::uint32_t kWriterTid = 100;
constexpr std::uint32_t kFlusherTid = 7;  // a writeback kworker
constexpr std::uint32_t kJournalTid = 8;  // jbd2

SyscallEvent write_call(Nanos start, Nanos end, std::uint64_t pos, std::int64_t ret,
                        std::uint32_t pages_dirtied) {
  SyscallEvent ev;
  ev.start_ns = start;
  ev.end_ns = end;
  ev.pid = kWriterTid;
  ev.tid = kWriterTid;
  ev.comm = "writer";
  ev.syscall = Syscall::Pwrite64;
  ev.fd = 3;
  ev.dev = kPart;
  ev.ino = kIno;
  ev.file_flags = file_flag::kRegular;
  ev.ret = ret;
  ev.pos = pos;
  ev.count = ret > 0 ? static_cast<std::uint64_t>(ret) : 4096;
  ev.pages_dirtied = pages_dirtied;
  return ev;
}

SyscallEvent sync_call(Syscall which, Nanos start, Nanos end, std::uint32_t tid) {
  SyscallEvent ev;
  ev.start_ns = start;
  ev.end_ns = end;
  ev.pid = tid;
  ev.tid = tid;
  ev.syscall = which;
  ev.dev = kPart;
  ev.ino = kIno;
  return ev;
}

// A writeback bio of file pages [index, index + pages) at `sector`.
BioEvent page_bio(Nanos ts, std::uint64_t ptr, std::uint64_t sector, std::uint64_t index,
                  std::uint32_t pages, std::uint32_t tid = kFlusherTid) {
  BioEvent ev;
  ev.ts = ts;
  ev.bio = ptr;
  ev.pid = tid;
  ev.tid = tid;
  ev.bdev = kPart;
  ev.disk = kDisk;
  ev.sector = sector;
  ev.bytes = pages * 4096;
  ev.op = ReqOp::Write;
  ev.file_dev = kPart;
  ev.ino = kIno;
  ev.nr_extents = 1;
  ev.extents[0] = Extent{index, pages};
  return ev;
}

// A bio with user pages (O_DIRECT) or metadata: no file extents.
BioEvent anon_bio(Nanos ts, std::uint64_t ptr, std::uint64_t sector, std::uint32_t bytes,
                  std::uint32_t tid) {
  BioEvent ev;
  ev.ts = ts;
  ev.bio = ptr;
  ev.pid = tid;
  ev.tid = tid;
  ev.bdev = kPart;
  ev.disk = kDisk;
  ev.sector = sector;
  ev.bytes = bytes;
  ev.op = ReqOp::Write;
  ev.bio_flags = bio_flag::kAnon;
  return ev;
}

BioEvent flush_bio(Nanos ts, std::uint64_t ptr, std::uint32_t tid) {
  BioEvent ev;
  ev.ts = ts;
  ev.bio = ptr;
  ev.pid = tid;
  ev.tid = tid;
  ev.bdev = kPart;
  ev.disk = kDisk;
  ev.bytes = 0;
  ev.op = ReqOp::Write;
  ev.flags = req_flag::kPreflush | req_flag::kSync;
  ev.bio_flags = bio_flag::kNoFile;
  return ev;
}

RequestEvent rq(RequestEventKind kind, Nanos ts, std::uint64_t ptr, std::uint64_t sector,
                std::uint32_t bytes, ReqOp op = ReqOp::Write, std::uint32_t flags = 0) {
  RequestEvent ev;
  ev.ts = ts;
  ev.rq = ptr;
  ev.disk = kDisk;
  ev.op = op;
  ev.flags = flags;
  ev.bytes = bytes;
  ev.sector = sector;
  ev.kind = kind;
  return ev;
}

RequestEvent issue(Nanos ts, std::uint64_t ptr, std::uint64_t sector, std::uint32_t bytes,
                   std::uint32_t flags = 0) {
  return rq(RequestEventKind::Issue, ts, ptr, sector, bytes, ReqOp::Write, flags);
}

RequestEvent complete(Nanos ts, std::uint64_t ptr, std::uint64_t sector, std::uint32_t bytes) {
  return rq(RequestEventKind::Complete, ts, ptr, sector, bytes);
}

RequestEvent flush_issue(Nanos ts, std::uint64_t ptr) {
  return rq(RequestEventKind::Issue, ts, ptr, 0, 0, ReqOp::Flush, req_flag::kPreflush);
}

RequestEvent flush_complete(Nanos ts, std::uint64_t ptr) {
  return rq(RequestEventKind::Complete, ts, ptr, 0, 0, ReqOp::Flush, req_flag::kPreflush);
}

JournalEvent journal(Nanos ts, std::uint32_t transaction, JournalPhase phase) {
  JournalEvent ev;
  ev.ts = ts;
  ev.dev = kPart;
  ev.transaction = transaction;
  ev.phase = phase;
  ev.tid = kJournalTid;
  return ev;
}

class StitcherTest : public ::testing::Test {
 protected:
  explicit StitcherTest(StitchLimits limits = {}) : stitcher_(limits) {
    stitcher_.add_device(DeviceInfo{kDisk, kDisk, "vda", true, false});
    stitcher_.add_device(DeviceInfo{kPart, kDisk, "vda1", true, false});
  }

  void feed(const Event& ev) { stitcher_.feed(ev, out_); }
  void finish() { stitcher_.finish(out_); }

  // Issue + complete of one data request.
  void io(std::uint64_t ptr, std::uint64_t sector, std::uint32_t bytes, Nanos issued,
          Nanos completed) {
    feed(issue(issued, ptr, sector, bytes));
    feed(complete(completed, ptr, sector, bytes));
  }
  void flush(std::uint64_t ptr, Nanos issued, Nanos completed) {
    feed(flush_issue(issued, ptr));
    feed(flush_complete(completed, ptr));
  }

  std::vector<WriteTimeline> writes() const {
    std::vector<WriteTimeline> found;
    for (const auto& t : out_) {
      if (const auto* w = std::get_if<WriteTimeline>(&t)) found.push_back(*w);
    }
    return found;
  }
  std::vector<SyncTimeline> syncs() const {
    std::vector<SyncTimeline> found;
    for (const auto& t : out_) {
      if (const auto* s = std::get_if<SyncTimeline>(&t)) found.push_back(*s);
    }
    return found;
  }

  Stitcher stitcher_;
  std::vector<Timeline> out_;
};

Nanos phase_sum(const SyncPhases& p) {
  return p.writeback_ns + p.data_io_ns + p.journal_ns + p.flush_ns + p.other_ns;
}

// ---- names ----

TEST(Names, WriteStatesAndVias) {
  EXPECT_STREQ(write_state_name(WriteState::Failed), "failed");
  EXPECT_STREQ(write_state_name(WriteState::Dirty), "dirty");
  EXPECT_STREQ(write_state_name(WriteState::Written), "written");
  EXPECT_STREQ(write_state_name(WriteState::Durable), "durable");
  EXPECT_STREQ(durable_via_name(DurableVia::Flush), "flush");
  EXPECT_STREQ(durable_via_name(DurableVia::Fua), "fua");
  EXPECT_STREQ(durable_via_name(DurableVia::NoWriteCache), "no-write-cache");
  EXPECT_STREQ(durable_via_name(DurableVia::None), "");
}

// ---- buffered writes ----

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

TEST_F(StitcherTest, OSyncFlagSetsSync) {
  SyscallEvent call = write_call(1000, 2000, 0, 100, 1);
  call.file_flags |= file_flag::kDsync;
  feed(call);
  finish();
  ASSERT_EQ(writes().size(), 1u);
  EXPECT_TRUE(writes()[0].sync);
  EXPECT_EQ(writes()[0].state, WriteState::Dirty);
}

TEST_F(StitcherTest, WriteWithoutFlushStaysWrittenAndEndsWrittenAtFinish) {
  feed(write_call(1000, 2000, 4096, 4096, 1));  // page 1
  feed(page_bio(5000, 0xb1, 2056, 1, 1));
  io(0x71, 2056, 4096, 5100, 5500);
  EXPECT_TRUE(out_.empty());
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Written);
  EXPECT_EQ(w[0].written_ns, Nanos{5500});
  EXPECT_FALSE(w[0].durable_ns.has_value());
  EXPECT_EQ(w[0].durable_via, DurableVia::None);
  EXPECT_FALSE(w[0].incomplete);  // not finishing in time is a normal result
  EXPECT_EQ(stitcher_.stats().incomplete, 0u);
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

TEST_F(StitcherTest, BioCompletedBeforeWriteRecordArrivesCounts) {
  // Writeback during a long (throttled) write: the I/O ends before the syscall exits.
  feed(page_bio(1500, 0xb1, 2048, 0, 2));
  io(0x71, 2048, 8192, 1600, 1800);
  flush(0xf1, 1900, 2000);
  EXPECT_TRUE(out_.empty());
  feed(write_call(1000, 3000, 0, 8192, 2));
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].written_ns, Nanos{1800});
  EXPECT_EQ(w[0].durable_ns, Nanos{2000});
  ASSERT_EQ(w[0].requests.size(), 1u);
  EXPECT_EQ(w[0].requests[0].issue_ns, Nanos{1600});
}

TEST_F(StitcherTest, BioQueuedBeforeWriteStartDoesNotCount) {
  // Completed before the record arrives, and in flight when it arrives: neither counts.
  feed(page_bio(500, 0xb1, 2048, 0, 1));
  io(0x71, 2048, 4096, 600, 1800);
  feed(page_bio(900, 0xb2, 2056, 1, 1));
  feed(issue(950, 0x72, 2056, 4096));
  feed(write_call(1000, 3000, 0, 8192, 2));
  feed(complete(4000, 0x72, 2056, 4096));
  flush(0xf1, 5000, 5100);
  EXPECT_TRUE(out_.empty());
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Dirty);
  EXPECT_EQ(w[0].pages, 2u);
  EXPECT_EQ(w[0].pages_pending, 2u);
  EXPECT_TRUE(w[0].requests.empty());
}

TEST_F(StitcherTest, PartiallyWrittenBackWriteReportsPendingPages) {
  feed(write_call(1000, 2000, 0, 4 * 4096, 4));
  feed(page_bio(5000, 0xb1, 2048, 0, 1));
  io(0x71, 2048, 4096, 5100, 5500);
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Dirty);
  EXPECT_EQ(w[0].pages, 4u);
  EXPECT_EQ(w[0].pages_pending, 3u);
  EXPECT_EQ(w[0].requests.size(), 1u);
}

TEST_F(StitcherTest, RedirtiedPageIsSharedByBothWriters) {
  feed(write_call(100, 110, 0, 4096, 1));  // dirties page 0
  feed(write_call(200, 210, 100, 50, 0));  // rewrites inside page 0: no dirty event
  feed(page_bio(1000, 0xb1, 2048, 0, 1));
  io(0x71, 2048, 4096, 1100, 1500);
  flush(0xf1, 1600, 1700);
  auto w = writes();
  ASSERT_EQ(w.size(), 2u);
  for (const auto& write : w) {
    EXPECT_EQ(write.state, WriteState::Durable);
    EXPECT_EQ(write.pages, 1u);
    EXPECT_EQ(write.written_ns, Nanos{1500});
    EXPECT_EQ(write.durable_ns, Nanos{1700});
  }
  EXPECT_EQ(w[0].call.pages_dirtied, 1u);
  EXPECT_EQ(w[1].call.pages_dirtied, 0u);
}

TEST_F(StitcherTest, WriteSpanningPagesNeedsEveryPage) {
  // 6000 bytes at offset 3000 cover pages 0..2.
  feed(write_call(1000, 2000, 3000, 6000, 3));
  feed(page_bio(5000, 0xb1, 2048, 0, 2));
  io(0x71, 2048, 8192, 5100, 5500);
  flush(0xf1, 5600, 5700);
  EXPECT_TRUE(out_.empty());
  feed(page_bio(6000, 0xb2, 2064, 2, 1));
  io(0x72, 2064, 4096, 6100, 6500);
  flush(0xf1, 6600, 6700);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].pages, 3u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].written_ns, Nanos{6500});
  EXPECT_EQ(w[0].durable_ns, Nanos{6700});
  EXPECT_EQ(w[0].requests.size(), 2u);
}

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

TEST_F(StitcherTest, PartialCompletionsAddUp) {
  feed(write_call(1000, 2000, 0, 8192, 2));
  feed(page_bio(5000, 0xb1, 2048, 0, 2));
  feed(issue(5100, 0x71, 2048, 8192));
  feed(complete(5300, 0x71, 2048, 4096));
  flush(0xf1, 5400, 5450);  // after a partial completion only: not durable
  EXPECT_TRUE(out_.empty());
  feed(complete(5500, 0x71, 2056, 4096));
  flush(0xf1, 5600, 5700);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].written_ns, Nanos{5500});
  EXPECT_EQ(w[0].requests[0].complete_ns, Nanos{5500});
  EXPECT_EQ(w[0].durable_ns, Nanos{5700});
}

TEST_F(StitcherTest, ErrorCompletionDoesNotWritePages) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  feed(page_bio(5000, 0xb1, 2048, 0, 1));
  feed(issue(5100, 0x71, 2048, 4096));
  RequestEvent failed = complete(5500, 0x71, 2048, 4096);
  failed.error = -5;
  feed(failed);
  flush(0xf1, 5600, 5700);
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Dirty);
  EXPECT_EQ(w[0].pages_pending, 1u);
  EXPECT_TRUE(w[0].requests.empty());
}

// ---- flushes, FUA, write cache ----

TEST_F(StitcherTest, FlushCompletingWithoutIssueEvent) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  feed(page_bio(5000, 0xb1, 2048, 0, 1));
  io(0x71, 2048, 4096, 5100, 5500);
  feed(flush_complete(6000, 0xf1));  // no insert/issue: starts and ends at 6000
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].durable_ns, Nanos{6000});
  EXPECT_EQ(w[0].durable_via, DurableVia::Flush);
}

TEST_F(StitcherTest, ReusedFlushRequestPointerIsTwoLifetimes) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  feed(page_bio(5000, 0xb1, 2048, 0, 1));
  feed(issue(5100, 0x71, 2048, 4096));
  feed(flush_issue(6000, 0xf1));
  feed(complete(6050, 0x71, 2048, 4096));  // after the first flush started
  feed(flush_complete(6100, 0xf1));
  EXPECT_TRUE(out_.empty());
  flush(0xf1, 6200, 6300);  // same pointer, second lifetime
  feed(sync_call(Syscall::Fsync, 5900, 6400, 555));

  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].durable_ns, Nanos{6300});
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].flushes.size(), 2u);
  EXPECT_EQ(s[0].flushes[0].issue_ns, Nanos{6000});
  EXPECT_EQ(s[0].flushes[0].complete_ns, Nanos{6100});
  EXPECT_EQ(s[0].flushes[1].issue_ns, Nanos{6200});
  EXPECT_EQ(s[0].flushes[1].complete_ns, Nanos{6300});
  EXPECT_EQ(s[0].flushes[1].op, ReqOp::Flush);
  EXPECT_EQ(stitcher_.stats().requests, 3u);
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
TEST_F(StitcherTest, EmptyPreflushWriteOnReusedPointerIsNotThatRequestsFlushSequence) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  feed(page_bio(5000, 0xb1, 2048, 0, 1));
  io(0x71, 2048, 4096, 5100, 5500);  // plain write, data done, no PREFLUSH/FUA
  feed(flush_bio(5600, 0xb2, kWriterTid));
  flush(0xf1, 5650, 6000);  // the FF sent for that empty PREFLUSH write
  ASSERT_EQ(writes().size(), 1u);
  EXPECT_EQ(writes()[0].durable_ns, Nanos{6000});
  feed(complete(6010, 0x71, 0, 0));  // the empty write completing, pointer 0x71 reused
  feed(sync_call(Syscall::Fsync, 5550, 6020, kWriterTid));
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].flushes.size(), 1u);  // the FF only
  EXPECT_EQ(s[0].flushes[0].op, ReqOp::Flush);
  EXPECT_EQ(s[0].flushes[0].complete_ns, Nanos{6000});
  // The pointer's old lifetime is closed: a later zero-byte completion links nothing.
  const auto unmatched = stitcher_.stats().unmatched_completes;
  feed(complete(6100, 0x71, 0, 0));
  EXPECT_EQ(stitcher_.stats().unmatched_completes, unmatched);  // (another empty write)
}

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

class NoWriteCacheTest : public StitcherTest {
 protected:
  NoWriteCacheTest() {
    stitcher_.add_device(DeviceInfo{kDisk, kDisk, "vda", false, false});
    stitcher_.add_device(DeviceInfo{kPart, kDisk, "vda1", false, false});
  }
};

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

// ---- O_DIRECT ----

TEST_F(StitcherTest, DirectWriteOwnsItsThreadsBiosInTheWindow) {
  feed(anon_bio(900, 0xb3, 9000, 4096, kWriterTid));  // same thread, before the call
  io(0x73, 9000, 4096, 950, 1000);
  feed(anon_bio(1200, 0xb1, 4096, 8192, kWriterTid));
  feed(anon_bio(1300, 0xb2, 8192, 4096, 200));  // another thread
  io(0x71, 4096, 8192, 1250, 1800);
  io(0x72, 8192, 4096, 1350, 1850);
  flush(0xf1, 2500, 2600);
  SyscallEvent call = write_call(1000, 3000, 65536, 8192, 0);
  call.file_flags |= file_flag::kDirect;
  feed(call);

  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(w[0].direct);
  EXPECT_EQ(w[0].call.pages_dirtied, 0u);
  EXPECT_EQ(w[0].pages, 2u);
  EXPECT_EQ(w[0].pages_pending, 0u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].written_ns, Nanos{1800});
  EXPECT_EQ(w[0].durable_ns, Nanos{2600});
  ASSERT_EQ(w[0].requests.size(), 1u);
  EXPECT_EQ(w[0].requests[0].sector, 4096u);
}

TEST_F(StitcherTest, DirectWriteCompletingAfterItsRecord) {
  // aio-style: the record arrives before the I/O ends.
  feed(anon_bio(1200, 0xb1, 4096, 4096, kWriterTid));
  feed(issue(1250, 0x71, 4096, 4096));
  SyscallEvent call = write_call(1000, 1300, 0, 4096, 0);
  call.file_flags |= file_flag::kDirect;
  feed(call);
  EXPECT_TRUE(out_.empty());
  feed(complete(1800, 0x71, 4096, 4096));
  flush(0xf1, 1900, 2000);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].pages, 1u);
  EXPECT_EQ(w[0].written_ns, Nanos{1800});
  EXPECT_EQ(w[0].durable_ns, Nanos{2000});
}

TEST_F(StitcherTest, DirectWriteWithoutBiosStaysDirtyUntilFinish) {
  SyscallEvent call = write_call(1000, 1300, 0, 4096, 0);
  call.file_flags |= file_flag::kDirect;
  feed(call);
  EXPECT_TRUE(out_.empty());
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Dirty);
  EXPECT_EQ(w[0].pages, 0u);
  EXPECT_FALSE(w[0].incomplete);
}

TEST_F(StitcherTest, DirectWriteFallenBackToBufferedTracksPages) {
  SyscallEvent call = write_call(1000, 1300, 0, 4096, 1);
  call.file_flags |= file_flag::kDirect;
  feed(call);
  feed(page_bio(5000, 0xb1, 2048, 0, 1));
  io(0x71, 2048, 4096, 5100, 5500);
  flush(0xf1, 5600, 5700);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(w[0].direct);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].pages, 1u);
  EXPECT_EQ(w[0].durable_ns, Nanos{5700});
}

TEST_F(StitcherTest, FailedWriteIsEmittedAtOnce) {
  feed(write_call(1000, 1010, 0, -22, 0));
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Failed);
  EXPECT_EQ(w[0].pages, 0u);
  EXPECT_EQ(w[0].call.ret, -22);
  EXPECT_EQ(stitcher_.stats().writes, 1u);
  finish();
  EXPECT_EQ(writes().size(), 1u);
}

// ---- syncs ----

TEST_F(StitcherTest, FsyncPhasesPartitionItsLatency) {
  constexpr std::uint32_t kSyncTid = 300;
  // A commit that ended before the fsync: not its.
  feed(journal(8000, 4, JournalPhase::Start));
  feed(journal(9000, 4, JournalPhase::End));
  flush(0xf1, 9000, 9500);  // before the call: not its

  // The fsync's own data writeback.
  feed(page_bio(10100, 0xb1, 2048, 0, 1, kSyncTid));
  io(0x71, 2048, 4096, 10300, 11000);
  // The journal commit, with a cache flush and a PREFLUSH|FUA commit block.
  feed(journal(11200, 5, JournalPhase::Start));
  feed(journal(11250, 5, JournalPhase::Locking));
  feed(journal(11300, 5, JournalPhase::Flushing));
  feed(journal(11400, 5, JournalPhase::Logging));
  feed(flush_issue(14000, 0xf1));
  feed(flush_complete(14500, 0xf1));
  BioEvent commit_block = anon_bio(14550, 0xb2, 9000, 4096, kJournalTid);
  commit_block.bio_flags = bio_flag::kNoFile;
  commit_block.flags = req_flag::kPreflush | req_flag::kFua | req_flag::kSync;
  feed(commit_block);
  io(0x72, 9000, 4096, 14600, 14800);
  feed(complete(14950, 0x72, 9000, 0));
  feed(journal(15000, 5, JournalPhase::End));
  feed(sync_call(Syscall::Fsync, 10000, 20000, kSyncTid));

  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  const SyncPhases& p = s[0].phases;
  // [10000,10100] writeback, [10300,11000] data, [11200,15000] journal minus the flushes
  // [14000,14500] and [14800,14950], the rest other.
  EXPECT_EQ(p.writeback_ns, 100u);
  EXPECT_EQ(p.data_io_ns, 700u);
  EXPECT_EQ(p.journal_ns, 3150u);
  EXPECT_EQ(p.flush_ns, 650u);
  EXPECT_EQ(p.other_ns, 5400u);
  EXPECT_EQ(phase_sum(p), 10000u);

  ASSERT_EQ(s[0].requests.size(), 1u);
  EXPECT_EQ(s[0].requests[0].sector, 2048u);
  ASSERT_EQ(s[0].flushes.size(), 2u);
  EXPECT_EQ(s[0].flushes[0].op, ReqOp::Flush);
  EXPECT_EQ(s[0].flushes[0].complete_ns, Nanos{14500});
  EXPECT_EQ(s[0].flushes[1].op, ReqOp::Write);  // the commit block's post-flush
  EXPECT_EQ(s[0].flushes[1].complete_ns, Nanos{14800});
  EXPECT_EQ(s[0].flushes[1].durable_ns, Nanos{14950});
  ASSERT_EQ(s[0].commits.size(), 1u);
  EXPECT_EQ(s[0].commits[0].transaction, 5u);
  EXPECT_EQ(s[0].commits[0].start_ns, Nanos{11200});
  EXPECT_EQ(s[0].commits[0].logging_ns, Nanos{11400});
  EXPECT_EQ(s[0].commits[0].end_ns, Nanos{15000});
  EXPECT_FALSE(s[0].incomplete);
  EXPECT_EQ(stitcher_.stats().syncs, 1u);

  // The segments place those totals: they tile the call in time order, one phase each.
  const std::vector<PhaseSegment> expected = {
      {SyncPhase::Writeback, 10000, 10100}, {SyncPhase::Other, 10100, 10300},
      {SyncPhase::DataIo, 10300, 11000},    {SyncPhase::Other, 11000, 11200},
      {SyncPhase::Journal, 11200, 14000},   {SyncPhase::Flush, 14000, 14500},
      {SyncPhase::Journal, 14500, 14800},   {SyncPhase::Flush, 14800, 14950},
      {SyncPhase::Journal, 14950, 15000},   {SyncPhase::Other, 15000, 20000}};
  ASSERT_EQ(s[0].segments.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(s[0].segments[i].phase, expected[i].phase) << i;
    EXPECT_EQ(s[0].segments[i].start_ns, expected[i].start_ns) << i;
    EXPECT_EQ(s[0].segments[i].end_ns, expected[i].end_ns) << i;
  }
}

TEST_F(StitcherTest, SyncWithNothingToDoIsOneOtherSegment) {
  feed(sync_call(Syscall::Fdatasync, 1000, 1500, 300));
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].segments.size(), 1u);
  EXPECT_EQ(s[0].segments[0].phase, SyncPhase::Other);
  EXPECT_EQ(s[0].segments[0].start_ns, Nanos{1000});
  EXPECT_EQ(s[0].segments[0].end_ns, Nanos{1500});
  EXPECT_EQ(s[0].phases.other_ns, 500u);
}

TEST_F(StitcherTest, FsyncCollectsOnlyItsOwnThreadsBios) {
  feed(page_bio(1100, 0xb1, 2048, 0, 1, 300));
  feed(page_bio(1150, 0xb2, 4096, 9, 1, 301));  // another thread, same window
  io(0x71, 2048, 4096, 1200, 1300);
  io(0x72, 4096, 4096, 1250, 1350);
  feed(sync_call(Syscall::Fdatasync, 1000, 2000, 300));
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].requests.size(), 1u);
  EXPECT_EQ(s[0].requests[0].sector, 2048u);
  EXPECT_EQ(s[0].phases.writeback_ns, 100u);
  EXPECT_EQ(s[0].phases.data_io_ns, 100u);
  EXPECT_EQ(s[0].phases.other_ns, 800u);
  EXPECT_EQ(phase_sum(s[0].phases), 1000u);
}

TEST_F(StitcherTest, FsyncFlushBioLinksToTheFlushRequest) {
  feed(flush_bio(1100, 0xb1, 300));  // blkdev_issue_flush
  flush(0xf1, 1200, 1400);
  feed(sync_call(Syscall::Fsync, 1000, 1500, 300));
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(s[0].requests.empty());  // no data
  ASSERT_EQ(s[0].flushes.size(), 1u);
  EXPECT_EQ(s[0].flushes[0].bios, 1u);
  EXPECT_EQ(s[0].flushes[0].queue_ns, Nanos{1100});
  EXPECT_EQ(rwbs(s[0].flushes[0].op, s[0].flushes[0].flags, 0), "FFS");
  EXPECT_EQ(s[0].phases.flush_ns, 200u);
  EXPECT_EQ(s[0].phases.writeback_ns, 0u);
  EXPECT_EQ(s[0].phases.other_ns, 300u);
}

TEST_F(StitcherTest, SyncWithoutDeviceSeesFlushesOfEveryDisk) {
  constexpr DevT kOther = make_dev(8, 0);
  RequestEvent other_issue = flush_issue(1100, 0xf2);
  other_issue.disk = kOther;
  RequestEvent other_complete = flush_complete(1200, 0xf2);
  other_complete.disk = kOther;
  feed(other_issue);
  feed(other_complete);
  flush(0xf1, 1300, 1400);
  SyscallEvent call = sync_call(Syscall::Sync, 1000, 1500, 300);
  call.dev = 0;
  feed(call);
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].flushes.size(), 2u);
  EXPECT_EQ(s[0].phases.flush_ns, 200u);
  EXPECT_EQ(phase_sum(s[0].phases), 500u);
}

TEST_F(StitcherTest, OpenJournalCommitLastsUntilSyncEnd) {
  feed(journal(900, 7, JournalPhase::Start));
  feed(sync_call(Syscall::Fsync, 1000, 1500, 300));
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].commits.size(), 1u);
  EXPECT_FALSE(s[0].commits[0].end_ns.has_value());
  EXPECT_EQ(s[0].phases.journal_ns, 500u);
  EXPECT_EQ(s[0].phases.other_ns, 0u);
}

TEST_F(StitcherTest, PhasesAlwaysAddUpExactly) {
  // Many overlapping intervals of every kind from a fixed pseudo-random sequence.
  std::uint64_t seed = 12345;
  auto next = [&seed](std::uint64_t mod) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % mod;
  };
  constexpr std::uint32_t kSyncTid = 300;
  const Nanos start = 100'000;
  const Nanos end = 200'000;
  std::uint64_t sector = 0;
  for (std::uint32_t i = 0; i < 40; ++i) {
    const Nanos t = 90'000 + next(120'000);
    const std::uint64_t ptr = 0x1000 + i;
    switch (next(3)) {
      case 0:
        feed(page_bio(t, ptr, sector, 1000 + i, 1, kSyncTid));
        io(ptr, sector, 4096, t + next(500), t + 500 + next(3000));
        sector += 8;
        break;
      case 1: flush(ptr, t, t + next(2000)); break;
      default:
        feed(journal(t, i, JournalPhase::Start));
        feed(journal(t + next(5000), i, JournalPhase::End));
        break;
    }
  }
  feed(sync_call(Syscall::Fsync, start, end, kSyncTid));
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(phase_sum(s[0].phases), end - start);
  EXPECT_GT(s[0].phases.flush_ns, 0u);
  EXPECT_GT(s[0].phases.journal_ns, 0u);
}

// ---- lost records, unknown pointers, NVMe, bounds ----

TEST_F(StitcherTest, LostEventMarksPendingWritesIncomplete) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  feed(LostEvent{2500, 3});
  feed(sync_call(Syscall::Fsync, 2400, 2600, 300));  // its window holds the loss
  feed(sync_call(Syscall::Fsync, 2700, 2800, 300));  // after it: complete
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(w[0].incomplete);
  auto s = syncs();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_TRUE(s[0].incomplete);
  EXPECT_FALSE(s[1].incomplete);
  EXPECT_EQ(stitcher_.stats().incomplete, 2u);
}

TEST_F(StitcherTest, CompleteForUnknownRequestPointerLinksNothing) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  feed(page_bio(5000, 0xb1, 2048, 0, 1));
  feed(complete(5500, 0x99, 2048, 4096));  // its issue record was never seen
  flush(0xf1, 5600, 5700);
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Dirty);
  EXPECT_TRUE(w[0].requests.empty());
  EXPECT_EQ(stitcher_.stats().unmatched_completes, 1u);
}

TEST_F(StitcherTest, CompleteAfterLostRecordsIsNotLinkedToTheOldLifetime) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  feed(page_bio(5000, 0xb1, 2048, 0, 1));
  feed(issue(5100, 0x71, 2048, 4096));
  feed(LostEvent{5200, 10});  // its completion, and a reuse of the pointer, may be lost
  feed(complete(5500, 0x71, 2048, 4096));
  flush(0xf1, 5600, 5700);
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Dirty);
  EXPECT_TRUE(w[0].incomplete);
  EXPECT_EQ(stitcher_.stats().unmatched_completes, 1u);
}

TEST_F(StitcherTest, NvmeCommandAttachesToItsRequest) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  feed(page_bio(5000, 0xb1, 2048, 0, 1));
  feed(issue(5100, 0x71, 2048, 4096));
  NvmeEvent setup;
  setup.ts = 5110;
  setup.rq = 0x71;
  setup.disk = kDisk;
  setup.qid = 3;
  setup.cid = 17;
  setup.kind = NvmeEventKind::Setup;
  setup.opcode = 0x01;
  setup.nsid = 1;
  setup.control = 1u << 14;
  feed(setup);
  NvmeEvent done = setup;
  done.ts = 5490;
  done.kind = NvmeEventKind::Complete;
  done.status = 0;
  feed(done);
  feed(complete(5500, 0x71, 2048, 4096));
  flush(0xf1, 5600, 5700);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  ASSERT_TRUE(w[0].requests[0].nvme.has_value());
  const NvmeCommand& cmd = *w[0].requests[0].nvme;
  EXPECT_EQ(cmd.qid, 3u);
  EXPECT_EQ(cmd.cid, 17u);
  EXPECT_EQ(cmd.opcode, 0x01u);
  EXPECT_TRUE(cmd.fua);
  EXPECT_EQ(cmd.submit_ns, Nanos{5110});
  EXPECT_EQ(cmd.complete_ns, Nanos{5490});
  EXPECT_EQ(cmd.status, std::uint16_t{0});
}

// nvme_queue_rq() sets the command up before blk_mq_start_request() fires block_rq_issue,
// and the request pointer last served another, finished request: the setup belongs to the
// lifetime its issue opens, not to the finished one.
TEST_F(StitcherTest, NvmeSetupBeforeIssueGoesToTheNextLifetimeOfThePointer) {
  feed(write_call(1000, 2000, 0, 8192, 2));
  feed(page_bio(5000, 0xb1, 2048, 0, 1));
  feed(page_bio(5001, 0xb2, 4096, 1, 1));
  NvmeEvent setup;
  setup.rq = 0x71;
  setup.disk = kDisk;
  setup.qid = 1;
  setup.kind = NvmeEventKind::Setup;
  setup.opcode = 0x01;
  NvmeEvent done = setup;
  done.kind = NvmeEventKind::Complete;

  setup.ts = 5090;
  setup.cid = 10;
  feed(setup);
  feed(issue(5100, 0x71, 2048, 4096));
  done.ts = 5190;
  done.cid = 10;
  feed(done);
  feed(complete(5200, 0x71, 2048, 4096));

  setup.ts = 5290;  // same pointer, next request: set up before its issue
  setup.cid = 11;
  feed(setup);
  feed(issue(5300, 0x71, 4096, 4096));
  done.ts = 5390;
  done.cid = 11;
  feed(done);
  feed(complete(5400, 0x71, 4096, 4096));
  flush(0xf1, 5500, 5600);

  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  ASSERT_EQ(w[0].requests.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const RequestTimeline& r = w[0].requests[i];
    ASSERT_TRUE(r.nvme.has_value());
    EXPECT_EQ(r.nvme->cid, 10u + i);
    EXPECT_EQ(r.nvme->submit_ns, Nanos{5090 + 200 * i});
    EXPECT_EQ(r.nvme->complete_ns, Nanos{5190 + 200 * i});
    EXPECT_LT(*r.nvme->submit_ns, *r.issue_ns);
    EXPECT_LT(*r.nvme->complete_ns, *r.complete_ns);
  }
}

// ---- slow-call causes ----

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

// ---- batches: writes of one thread to one file share their pending state ----

TEST_F(StitcherTest, AppendsOfOneThreadShareABatchAndBecomeDurableTogether) {
  // Four appends, 100 bytes each at first, then a page each: pages 0, 0, 1, 2.
  feed(write_call(100, 110, 0, 100, 1));
  feed(write_call(200, 210, 100, 100, 0));
  feed(write_call(300, 310, 4096, 4096, 1));
  feed(write_call(400, 410, 8192, 4096, 1));
  feed(page_bio(1000, 0xb1, 2048, 0, 2));
  io(0x71, 2048, 8192, 1100, 1500);
  EXPECT_TRUE(out_.empty());  // written, not durable
  feed(page_bio(1600, 0xb2, 2064, 2, 1));
  io(0x72, 2064, 4096, 1700, 1800);
  flush(0xf1, 1900, 2000);
  auto w = writes();
  ASSERT_EQ(w.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(w[i].state, WriteState::Durable) << i;
    EXPECT_EQ(w[i].durable_ns, Nanos{2000}) << i;
    ASSERT_EQ(w[i].requests.size(), 1u) << i;  // only the request carrying its own page
  }
  EXPECT_EQ(w[0].written_ns, Nanos{1500});
  EXPECT_EQ(w[2].written_ns, Nanos{1500});
  EXPECT_EQ(w[3].written_ns, Nanos{1800});
  EXPECT_EQ(w[3].requests[0].sector, 2064u);
  EXPECT_EQ(w[1].call.pos, 100u);
  EXPECT_EQ(w[1].call.comm, "writer");
  EXPECT_EQ(w[1].call.dev, kPart);
}

TEST_F(StitcherTest, WriteAfterWritebackStartedIsNotCoveredByThatBio) {
  // The bio closes the first write's batch: the second write's page 0 waits for a new bio.
  feed(write_call(100, 110, 0, 4096, 1));
  feed(page_bio(1000, 0xb1, 2048, 0, 1));
  feed(write_call(1100, 1110, 0, 4096, 1));  // redirties page 0 after the bio was queued
  io(0x71, 2048, 4096, 1200, 1500);
  flush(0xf1, 1600, 1700);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].call.start_ns, Nanos{100});
  EXPECT_EQ(w[0].state, WriteState::Durable);
  finish();
  w = writes();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[1].call.start_ns, Nanos{1100});
  EXPECT_EQ(w[1].state, WriteState::Dirty);
  EXPECT_EQ(w[1].pages_pending, 1u);
}

TEST_F(StitcherTest, BackwardWriteStartsANewBatchAndBothAreTracked) {
  feed(write_call(100, 110, 8192, 4096, 1));  // page 2
  feed(write_call(200, 210, 0, 4096, 1));     // page 0: before the last write's first page
  feed(page_bio(1000, 0xb1, 2048, 0, 1));
  io(0x71, 2048, 4096, 1100, 1200);
  feed(page_bio(1300, 0xb2, 2064, 2, 1));
  io(0x72, 2064, 4096, 1400, 1500);
  flush(0xf1, 1600, 1700);
  auto w = writes();
  ASSERT_EQ(w.size(), 2u);
  for (const auto& write : w) EXPECT_EQ(write.state, WriteState::Durable);
}

TEST_F(StitcherTest, WritesOfTwoThreadsToOneFileAreTrackedApart) {
  feed(write_call(100, 110, 0, 4096, 1));
  SyscallEvent other = write_call(150, 160, 4096, 4096, 1);
  other.tid = 101;
  other.comm = "other";
  feed(other);
  feed(page_bio(1000, 0xb1, 2048, 0, 2));
  io(0x71, 2048, 8192, 1100, 1200);
  flush(0xf1, 1300, 1400);
  auto w = writes();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].call.tid, kWriterTid);
  EXPECT_EQ(w[1].call.tid, 101u);
  EXPECT_EQ(w[1].call.comm, "other");
  for (const auto& write : w) EXPECT_EQ(write.state, WriteState::Durable);
}

TEST_F(StitcherTest, LostRecordsMarkOnlyWritesPendingAtTheLoss) {
  feed(write_call(100, 110, 0, 4096, 1));
  feed(page_bio(200, 0xb1, 2048, 0, 1));
  io(0x71, 2048, 4096, 300, 400);
  flush(0xf1, 500, 600);  // the first write is durable and emitted before the loss
  feed(write_call(700, 710, 4096, 4096, 1));
  feed(LostEvent{800, 3});
  feed(write_call(900, 910, 8192, 4096, 1));
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 3u);
  EXPECT_FALSE(w[0].incomplete);
  EXPECT_TRUE(w[1].incomplete);
  EXPECT_FALSE(w[2].incomplete);
}

class SmallLimitsTest : public StitcherTest {
 protected:
  static StitchLimits limits() {
    StitchLimits l;
    l.max_pending_age_ns = 1000;
    l.max_pending_writes = 2;
    l.history_ns = 500;
    l.max_history_per_key = 16;
    return l;
  }
  SmallLimitsTest() : StitcherTest(limits()) {}
};

TEST_F(SmallLimitsTest, OldPendingWriteAgesOut) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  feed(page_bio(2500, 0xb1, 2048, 0, 1));
  io(0x71, 2048, 4096, 2600, 2700);  // written, never flushed
  EXPECT_TRUE(out_.empty());
  feed(page_bio(3000, 0xb2, 9999, 7, 1));  // 3000 is not past 2000 + 1000 yet
  EXPECT_TRUE(out_.empty());
  feed(page_bio(3001, 0xb3, 9999, 7, 1));
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Written);
  EXPECT_EQ(w[0].written_ns, Nanos{2700});
  EXPECT_EQ(w[0].pages_pending, 0u);
  EXPECT_TRUE(w[0].incomplete);
  EXPECT_EQ(stitcher_.stats().aged_out, 1u);
  EXPECT_EQ(stitcher_.stats().incomplete, 1u);
}

TEST_F(SmallLimitsTest, TooManyPendingWritesEvictsTheOldest) {
  feed(write_call(1000, 1100, 0, 4096, 1));
  feed(write_call(1000, 1200, 4096, 4096, 1));
  EXPECT_TRUE(out_.empty());
  feed(write_call(1000, 1300, 8192, 4096, 1));
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].call.pos, 0u);
  EXPECT_EQ(w[0].state, WriteState::Dirty);
  EXPECT_TRUE(w[0].incomplete);
  EXPECT_EQ(stitcher_.stats().evicted, 1u);
  EXPECT_EQ(stitcher_.stats().aged_out, 0u);
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
}  // namespace wp
