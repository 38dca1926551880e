// SPDX-License-Identifier: Apache-2.0
// Write tracker rules: buffered and failed writes, batches, discards, loss, bounds.
#include "stitch_fixture.h"

namespace wp::stitch_test {
namespace {

// A kernel with 64 KiB pages (arm64 can be built so) counts dirtied pages and bio extents in
// 64 KiB pages: byte positions are turned into page indexes with the same size.
class PageSizeTest : public StitcherTest {
 protected:
  explicit PageSizeTest(unsigned page_shift) : StitcherTest(limits(page_shift)) {}
  static StitchLimits limits(unsigned page_shift) {
    StitchLimits l;
    l.page_shift = page_shift;
    return l;
  }
  // 8 KiB written at 72 KiB (page 1 of 64 KiB pages; pages 18 and 19 of 4 KiB ones), then
  // the writeback of 64 KiB page 1, its request and a FLUSH.
  void write_then_writeback_of_big_page_1(std::uint32_t pages_dirtied) {
    feed(write_call(1000, 2000, 72 * 1024, 8192, pages_dirtied));
    BioEvent bio = page_bio(3000, 0xb1, 2048, 1, 1);
    bio.bytes = 64 * 1024;
    feed(bio);
    io(0x71, 2048, 64 * 1024, 3100, 3500);
    flush(0xf1, 3600, 3700);
  }
};
class BigPagesTest : public PageSizeTest {
 protected:
  BigPagesTest() : PageSizeTest(16) {}
};
class SmallPagesTest : public PageSizeTest {
 protected:
  SmallPagesTest() : PageSizeTest(12) {}
};

TEST_F(BigPagesTest, WritesArePagedInTheKernelsPageSize) {
  write_then_writeback_of_big_page_1(1);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].pages, 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].written_ns, Nanos{3500});
}

// The near miss: the same records read with 4 KiB pages put the write on pages 18 and 19,
// which the bio of page 1 does not carry.
TEST_F(SmallPagesTest, WritesOfAnotherPageSizeAreNotTakenForThisOnes) {
  write_then_writeback_of_big_page_1(2);
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].pages, 2u);
  EXPECT_EQ(w[0].state, WriteState::Dirty);
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

// An open that copied an overlay file up: the copy's pages dirtied, written and flushed inside
// the call (ovl_copy_up_file, then vfs_fsync of the copy). Its record, syscall openat with
// COPY_UP, is a write of the copy from offset 0: durable by the open's return, with the
// requests the copy's sync issued.
TEST_F(StitcherTest, CopyUpOfAnOverlayFileIsAWriteOfTheCopyDurableInsideTheOpen) {
  BioEvent bio = page_bio(1500, 0xb1, 2048, 0, 3, kWriterTid);
  bio.why = SubmitWhy::SyncSyscall;
  feed(bio);
  io(0x71, 2048, 3 * 4096, 1600, 1800);
  flush(0xf1, 1900, 2000);
  SyscallEvent open = write_call(1000, 3000, 0, 9000, 3);  // 9000 bytes copied: 3 pages
  open.syscall = Syscall::Openat;
  open.call_flags = call_flag::kCopyUp;
  feed(open);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].call.syscall, Syscall::Openat);
  EXPECT_EQ(w[0].pages, 3u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].durable_ns, Nanos{2000});
  ASSERT_EQ(w[0].requests.size(), 1u);
  EXPECT_EQ(w[0].requests[0].submit_why, SubmitWhy::SyncSyscall);
  EXPECT_EQ(stitcher_.stats().writes, 1u);
  EXPECT_EQ(stitcher_.stats().syncs, 0u);
}

TEST_F(StitcherTest, WriteWhosePendingPagesAreAllDiscardedEndsDiscarded) {
  feed(write_call(1000, 2000, 0, 3 * 4096, 3));  // pages 0-2
  feed(discard(5000, 0, 1));
  feed(discard(5100, 1, 2));  // a large folio: pages 1-2
  auto w = writes();          // emitted then, not at finish
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Discarded);
  EXPECT_EQ(w[0].discarded_ns, Nanos{5100});
  EXPECT_EQ(w[0].pages, 3u);
  EXPECT_EQ(w[0].pages_pending, 0u);
  EXPECT_FALSE(w[0].written_ns.has_value());
  EXPECT_FALSE(w[0].durable_ns.has_value());
  EXPECT_FALSE(w[0].incomplete);
  EXPECT_EQ(stitcher_.stats().discarded, 1u);
  // Nothing of the file is pending any more: later writeback of those pages links nothing.
  feed(page_bio(6000, 0xb1, 2048, 0, 3));
  io(0x71, 2048, 3 * 4096, 6100, 6200);
  finish();
  EXPECT_EQ(writes().size(), 1u);
}

TEST_F(StitcherTest, PartiallyDiscardedWriteKeepsWaitingForItsOtherPages) {
  feed(write_call(1000, 2000, 0, 4 * 4096, 4));  // pages 0-3
  feed(discard(3000, 2, 2));                     // truncated to two pages
  EXPECT_TRUE(out_.empty());
  feed(page_bio(5000, 0xb1, 2048, 0, 2));
  io(0x71, 2048, 2 * 4096, 5100, 5500);
  flush(0xf1, 6000, 6100);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].durable_ns, Nanos{6100});
  EXPECT_FALSE(w[0].discarded_ns.has_value());
  EXPECT_EQ(stitcher_.stats().discarded, 0u);
}

TEST_F(StitcherTest, WrittenPagesThenDiscardOfTheRestEndsDiscarded) {
  feed(write_call(1000, 2000, 0, 2 * 4096, 2));  // pages 0-1
  feed(page_bio(3000, 0xb1, 2048, 0, 1));
  io(0x71, 2048, 4096, 3100, 3200);
  feed(discard(4000, 1, 1));
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Discarded);
  EXPECT_EQ(w[0].discarded_ns, Nanos{4000});
  EXPECT_EQ(w[0].requests.size(), 1u);  // the page that did reach the disk keeps its request
}

TEST_F(StitcherTest, DiscardBeforeWriteStartDoesNotCount) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  feed(discard(900, 0, 1));             // an older dirtying of the page was dropped
  feed(discard(3000, 0, 1, kIno + 1));  // another file's page 0
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Dirty);
  EXPECT_EQ(w[0].pages_pending, 1u);
}

TEST_F(StitcherTest, DiscardEndsEveryMemberOfABatchItCovers) {
  feed(write_call(1000, 1100, 0, 4096, 1));     // page 0
  feed(write_call(1200, 1300, 4096, 4096, 1));  // page 1, same batch
  feed(write_call(1400, 1500, 8192, 4096, 1));  // page 2
  feed(discard(2000, 0, 2));
  auto w = writes();
  ASSERT_EQ(w.size(), 2u);
  for (const auto& write : w) EXPECT_EQ(write.state, WriteState::Discarded);
  EXPECT_EQ(w[0].call.pos, 0u);
  EXPECT_EQ(w[1].call.pos, 4096u);
  finish();
  w = writes();
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[2].state, WriteState::Dirty);
  EXPECT_EQ(stitcher_.stats().discarded, 2u);
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

// A write to a FUSE file system went to its daemon: handed at its return, naming the daemon
// thread that answered its FUSE_WRITE when the kernel said (a reply to the thread's earlier
// call does not count), and handed all the same on a FUSE mount without that word. Its
// fsync names the daemon that answered the FUSE_FSYNC.
TEST_F(StitcherTest, WriteToAFuseFileSystemIsHandedToTheDaemonThatAnswered) {
  constexpr DevT kFuse = make_dev(0, 41);
  stitcher_.add_file_system(FileSystemInfo{kFuse, {}, {}, "fuse"});
  auto on_fuse = [](SyscallEvent ev) {
    ev.dev = kFuse;
    ev.fs_dev = 0;
    ev.ino = 5;
    return ev;
  };
  const FuseReplyEvent reply{.ts = 990,
                             .start_ns = 1000,
                             .unique = 7,
                             .tid = kWriterTid,
                             .opcode = 16,
                             .error = 0,
                             .daemon_pid = 812,
                             .daemon_tid = 813,
                             .daemon_comm = "bindfs"};
  feed(reply);
  feed(on_fuse(write_call(1000, 1010, 0, 4096, 1)));
  FuseReplyEvent stale = reply;
  stale.start_ns = 1;  // an earlier call of the thread
  feed(stale);
  feed(on_fuse(write_call(1100, 1110, 4096, 4096, 1)));
  FuseReplyEvent sync_reply = reply;
  sync_reply.start_ns = 1200;
  sync_reply.opcode = 20;
  feed(sync_reply);
  feed(on_fuse(sync_call(Syscall::Fsync, 1200, 1300, kWriterTid)));
  auto w = writes();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].state, WriteState::Handed);
  ASSERT_TRUE(w[0].fuse);
  EXPECT_EQ(*w[0].fuse, (FuseDaemon{812, 813, "bindfs", 0}));
  EXPECT_EQ(w[0].pages, 1u);
  EXPECT_TRUE(w[0].requests.empty());
  EXPECT_EQ(w[1].state, WriteState::Handed);
  EXPECT_FALSE(w[1].fuse);
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  ASSERT_TRUE(s[0].fuse);
  EXPECT_EQ(s[0].fuse->pid, 812u);
}

// tmpfs, ramfs, hugetlbfs: no bio will ever carry the pages, so the write is complete at its
// return, memory only, never dirty; a write to a disk-backed file beside it is unchanged.
TEST_F(StitcherTest, WriteToAMemoryFileSystemIsMemoryOnlyAtItsReturn) {
  constexpr DevT kTmpfs = make_dev(0, 27);
  stitcher_.add_file_system(FileSystemInfo{kTmpfs, {}, {}, "tmpfs"});
  SyscallEvent shm = write_call(1000, 1010, 4096, 8192, 2);
  shm.dev = kTmpfs;
  shm.fs_dev = 0;
  shm.ino = 77;
  feed(shm);
  feed(write_call(1100, 1200, 0, 4096, 1));
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Memory);
  EXPECT_EQ(w[0].pages, 2u);
  EXPECT_EQ(w[0].pages_pending, 0u);
  EXPECT_FALSE(w[0].written_ns);
  EXPECT_FALSE(w[0].durable_ns);
  EXPECT_EQ(stitcher_.stats().memory_only, 1u);
  finish();
  w = writes();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[1].state, WriteState::Dirty);
}

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

TEST_F(StitcherTest, FinishHandsPendingWritesOverInChunksInArrivalOrder) {
  // Two threads interleaved: two batches, arrival order across them.
  for (int i = 0; i < 10; ++i) {
    SyscallEvent w = write_call(100 + 10 * i, 105 + 10 * i, 4096u * i, 4096, 1);
    if (i % 2) w.tid = 101;
    feed(w);
  }
  EXPECT_FALSE(stitcher_.finish(out_, 4));
  EXPECT_EQ(writes().size(), 4u);
  EXPECT_FALSE(stitcher_.finish(out_, 4));
  EXPECT_TRUE(stitcher_.finish(out_, 4));
  auto w = writes();
  ASSERT_EQ(w.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(w[i].call.start_ns, Nanos(100 + 10 * i)) << i;
  EXPECT_TRUE(stitcher_.finish(out_, 4));  // nothing left
  EXPECT_EQ(writes().size(), 10u);
}

TEST_F(StitcherTest, RwfDsyncWriteIsSyncForThatCall) {
  SyscallEvent call = write_call(1000, 3000, 0, 4096, 1);
  call.syscall = Syscall::Pwritev2;
  call.call_flags = call_flag::kRwfDsync;
  call.file_flags |= file_flag::kDsync;  // as the kernel side sets it for the call
  feed(page_bio(1500, 0xb1, 3000, 0, 1, kWriterTid));
  io(0x71, 3000, 4096, 1600, 1700);
  flush(0xf1, 1800, 1900);
  feed(call);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(w[0].sync);
  EXPECT_EQ(w[0].call.call_flags, call_flag::kRwfDsync);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].durable_ns, Nanos{1900});
}

}  // namespace
}  // namespace wp::stitch_test
