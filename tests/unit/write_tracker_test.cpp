// SPDX-License-Identifier: Apache-2.0
// Write tracker rules: buffered, O_DIRECT and failed writes, batches, loss, bounds.
#include "stitch/write_tracker.h"
#include "stitch/io_state.h"
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

// ---- stores into a shared mapping, io_submit ----

MmapDirtyEvent mmap_dirty(Nanos ts, std::uint64_t index, std::uint32_t pages = 1) {
  MmapDirtyEvent ev;
  ev.ts = ts;
  ev.pid = kWriterTid;
  ev.tid = kWriterTid;
  ev.comm = "writer";
  ev.dev = kPart;
  ev.ino = kIno;
  ev.index = index;
  ev.pages = pages;
  return ev;
}

TEST_F(StitcherTest, StoresIntoAMappingAreOneItemWrittenByTheBiosQueuedAfter) {
  feed(page_bio(500, 0xb0, 1000, 3, 1));  // before any store: older contents
  io(0x70, 1000, 4096, 550, 600);
  feed(mmap_dirty(1000, 3));
  feed(mmap_dirty(1100, 7));
  feed(mmap_dirty(1200, 5));
  feed(mmap_dirty(1300, 3));  // the same page again: still one page
  EXPECT_TRUE(writes().empty());
  // msync's writeback: two bios, pages 3 and 5..7.
  feed(page_bio(2000, 0xb1, 3000, 3, 1, kWriterTid));
  feed(page_bio(2010, 0xb2, 5000, 5, 3, kWriterTid));
  io(0x71, 3000, 4096, 2050, 2100);
  io(0x72, 5000, 3 * 4096, 2060, 2200);
  flush(0xf1, 2300, 2400);
  feed(sync_call(Syscall::Msync, 1900, 2500, kWriterTid));

  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_STREQ(call_name(w[0].call), "mmap");
  EXPECT_EQ(w[0].call.pid, kWriterTid);
  EXPECT_EQ(w[0].call.start_ns, Nanos{1000});
  EXPECT_EQ(w[0].call.end_ns, Nanos{1300});
  EXPECT_EQ(w[0].call.pos, 3u * 4096);
  EXPECT_EQ(w[0].pages, 3u);  // 3, 5 and 7: the hole at 4 and 6 is not counted
  EXPECT_EQ(w[0].pages_pending, 0u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].written_ns, Nanos{2200});
  EXPECT_EQ(w[0].durable_ns, Nanos{2400});
  ASSERT_EQ(w[0].requests.size(), 2u);
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].requests.size(), 2u);
}

// Each record is one write fault: a fault on a page mapped read-only makes that page
// writable, one on a page not mapped yet its folio (16 pages here, whole): the item counts
// both, and the second as a whole folio, inside which the stores are not seen.
TEST_F(StitcherTest, AnMmapItemCountsItsFaultsAndTheWholeFoliosAmongThem) {
  feed(mmap_dirty(1000, 32, 16));  // an unmapped page of a 64 KiB folio: the folio
  feed(mmap_dirty(1100, 48));      // a page mapped read-only
  feed(mmap_dirty(1200, 49));
  feed(mmap_dirty(1300, 48));  // the same page again (a refault): one page, two faults
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].call.pos, 32u * 4096);
  EXPECT_EQ(w[0].call.count, 18u * 4096);
  EXPECT_EQ(w[0].pages, 18u);
  ASSERT_TRUE(w[0].store_faults);
  EXPECT_EQ(w[0].store_faults->faults, 4u);
  EXPECT_EQ(w[0].store_faults->whole_folio, 1u);
}

// Only mmap items count faults: a write(2) has none to say.
TEST_F(StitcherTest, AWriteCallHasNoStoreFaults) {
  feed(write_call(1000, 1100, 0, 4096, 1));
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_FALSE(w[0].store_faults);
}

TEST_F(StitcherTest, StoresAfterABioOfTheFileOpenANewMmapItem) {
  feed(mmap_dirty(1000, 0));
  feed(page_bio(2000, 0xb1, 3000, 0, 1, kWriterTid));
  feed(mmap_dirty(2100, 1));  // after writeback of the file started
  io(0x71, 3000, 4096, 2050, 2200);
  flush(0xf1, 2300, 2400);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].call.pos, 0u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  finish();
  w = writes();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[1].call.pos, 4096u);
  EXPECT_EQ(w[1].state, WriteState::Dirty);
  EXPECT_EQ(w[1].pages_pending, 1u);
}

TEST_F(StitcherTest, StoresOfTwoProcessesIntoOneFileAreTwoItems) {
  feed(mmap_dirty(1000, 0));
  MmapDirtyEvent other = mmap_dirty(1100, 1);
  other.pid = other.tid = 300;
  feed(other);
  feed(page_bio(2000, 0xb1, 3000, 0, 2));
  io(0x71, 3000, 2 * 4096, 2050, 2200);
  flush(0xf1, 2300, 2400);
  auto w = writes();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w[0].call.pid, w[1].call.pid);
  EXPECT_EQ(w[0].pages, 1u);
  EXPECT_EQ(w[1].pages, 1u);
}

// ---- data kept inside the file system's metadata (inline) ----

InlineDataEvent inline_copy(Nanos ts, InlineFs fs, std::uint64_t transaction,
                            std::uint32_t len = 1000) {
  InlineDataEvent ev;
  ev.ts = ts;
  ev.dev = kPart;
  ev.fs_dev = kPart;
  ev.ino = kIno;
  ev.start = 0;
  ev.len = len;
  ev.transaction = transaction;
  ev.fs = fs;
  return ev;
}

FsCommitEvent btrfs_commit(Nanos ts, std::uint64_t transaction, std::uint32_t tid) {
  FsCommitEvent ev;
  ev.ts = ts;
  ev.fs_dev = kPart;
  ev.transaction = transaction;
  ev.tid = tid;
  return ev;
}

// A superblock (or jbd2 commit block) write of thread `tid`: FUA metadata, its data done at
// `done` and its flush sequence at `done` + 50.
std::vector<Event> fua_metadata_write(Nanos queued, std::uint64_t ptr, std::uint32_t tid,
                                      Nanos done) {
  BioEvent bio = anon_bio(queued, 0xb0 + ptr, 128, 4096, tid);
  bio.flags = req_flag::kFua | req_flag::kMeta | req_flag::kSync;
  return {bio, issue(queued + 10, ptr, 128, 4096, req_flag::kSync | req_flag::kMeta),
          complete(done, ptr, 128, 4096), complete(done + 50, ptr, 128, 0)};
}

// btrfs copies a small file's page into its tree (an inline extent): no data request will
// carry it. The write waits for the transaction holding the copy; the commit's superblock
// write (FUA, by the committing thread, after the copy) makes it written and durable.
TEST_F(StitcherTest, InlineDataIsDurableByTheSuperblockWriteOfTheCommitHoldingIt) {
  feed(write_call(1000, 1100, 0, 1000, 1));
  feed(inline_copy(2000, InlineFs::Btrfs, 12));
  EXPECT_TRUE(writes().empty());
  for (const Event& e : fua_metadata_write(2500, 0x71, kFlusherTid, 2800)) feed(e);
  feed(btrfs_commit(3000, 11, kFlusherTid));  // an older transaction's commit: not this one
  EXPECT_TRUE(writes().empty());
  for (const Event& e : fua_metadata_write(3500, 0x72, kFlusherTid, 3800)) feed(e);
  feed(btrfs_commit(4000, 12, kFlusherTid));
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  ASSERT_EQ(w[0].requests.size(), 1u);  // the later superblock only
  EXPECT_EQ(w[0].requests[0].issue_ns, Nanos{3510});
  EXPECT_EQ(w[0].written_ns, Nanos{3800});
  EXPECT_EQ(w[0].durable_ns, Nanos{3850});
  EXPECT_EQ(w[0].durable_via, DurableVia::Fua);
  ASSERT_TRUE(w[0].inline_data);
  EXPECT_EQ(w[0].inline_data->fs, InlineFs::Btrfs);
  EXPECT_EQ(w[0].inline_data->ns, Nanos{2000});
  EXPECT_EQ(w[0].inline_data->transaction, 12u);
  EXPECT_EQ(w[0].inline_data->committed_ns, Nanos{4000});
}

// Still uncommitted at the end: dirty, with nothing pending in the page cache.
TEST_F(StitcherTest, InlineDataNotYetCommittedStaysDirty) {
  feed(write_call(1000, 1100, 0, 1000, 1));
  feed(inline_copy(2000, InlineFs::Btrfs, 12));
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Dirty);
  EXPECT_EQ(w[0].pages_pending, 0u);
  ASSERT_TRUE(w[0].inline_data);
  EXPECT_FALSE(w[0].inline_data->committed_ns);
}

// A copy made before the write started held older contents, as a bio queued then did.
TEST_F(StitcherTest, InlineCopyBeforeTheWriteStartedDoesNotCount) {
  feed(inline_copy(500, InlineFs::Btrfs, 12));
  feed(write_call(1000, 1100, 0, 1000, 1));
  feed(btrfs_commit(4000, 12, kFlusherTid));
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Dirty);
  EXPECT_EQ(w[0].pages_pending, 1u);
  EXPECT_FALSE(w[0].inline_data);
}

// A commit whose FUA writes were not seen (another thread's, a trace filtered to another disk)
// still commits the data: written and durable at the commit's end, via the commit.
TEST_F(StitcherTest, InlineDataCommittedWithoutItsWritesSeenIsDurableViaTheCommit) {
  feed(write_call(1000, 1100, 0, 1000, 1));
  feed(inline_copy(2000, InlineFs::Btrfs, 12));
  feed(btrfs_commit(4000, 13, kFlusherTid));
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_TRUE(w[0].requests.empty());
  EXPECT_EQ(w[0].written_ns, Nanos{4000});
  EXPECT_EQ(w[0].durable_ns, Nanos{4000});
  EXPECT_EQ(w[0].durable_via, DurableVia::Commit);
}

// btrfs's fsync logs the file, inline extents with it, and syncs the log tree: the superblock
// it writes last, after the copy, commits the data; another file's fsync does not.
TEST_F(StitcherTest, AnFsyncOfTheFileCommitsItsInlineDataWithItsSuperblockWrite) {
  feed(write_call(1000, 1100, 0, 1000, 1));
  feed(inline_copy(2000, InlineFs::Btrfs, 12));
  for (const Event& e : fua_metadata_write(2500, 0x71, 300, 2800)) feed(e);
  SyscallEvent other = sync_call(Syscall::Fsync, 1900, 3000, 300);
  other.ino = kIno + 1;
  feed(other);
  EXPECT_TRUE(writes().empty());
  for (const Event& e : fua_metadata_write(3500, 0x72, kWriterTid, 3800)) feed(e);
  feed(sync_call(Syscall::Fsync, 1900, 4000, kWriterTid));
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  ASSERT_EQ(w[0].requests.size(), 1u);
  EXPECT_EQ(w[0].durable_ns, Nanos{3850});
  EXPECT_EQ(w[0].inline_data->committed_ns, Nanos{4000});
}

// ext4's inline_data: the write copied its bytes into the inode; the jbd2 commit of the
// inode's transaction (its tid, which wraps at 32 bits) writes them with its commit block.
TEST_F(StitcherTest, Ext4InlineDataIsDurableByItsJbd2CommitBlock) {
  constexpr std::uint32_t kTid = 0xffffffffu;  // the commit after it is 0: still later
  feed(write_call(1000, 1100, 0, 60, 0));
  feed(inline_copy(1100, InlineFs::Ext4, kTid, 60));
  feed(journal(1500, kTid - 1, JournalPhase::End));  // the one before: not this one
  EXPECT_TRUE(writes().empty());
  feed(journal(2000, 0, JournalPhase::Start));
  for (const Event& e : fua_metadata_write(2500, 0x71, kJournalTid, 2800)) feed(e);
  feed(journal(3000, 0, JournalPhase::End));
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  ASSERT_EQ(w[0].requests.size(), 1u);
  EXPECT_EQ(w[0].durable_ns, Nanos{2850});
  EXPECT_EQ(w[0].inline_data->fs, InlineFs::Ext4);
  EXPECT_EQ(w[0].inline_data->committed_ns, Nanos{3000});
}

TEST_F(StitcherTest, IoSubmitDirectItemsShareTheCallsBiosInIocbOrder) {
  feed(anon_bio(1100, 0xb1, 4096, 8192, kWriterTid));
  feed(anon_bio(1200, 0xb2, 65536, 4096, kWriterTid));
  io(0x71, 4096, 8192, 1150, 1800);
  io(0x72, 65536, 4096, 1250, 1900);
  flush(0xf1, 2000, 2100);
  for (auto [pos, bytes] : {std::pair<std::uint64_t, std::int64_t>{0, 8192}, {65536, 4096}}) {
    SyscallEvent call = write_call(1000, 1300, pos, bytes, 0);
    call.syscall = Syscall::IoSubmit;
    call.file_flags |= file_flag::kDirect;
    feed(call);
  }
  auto w = writes();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].pages, 2u);
  ASSERT_EQ(w[0].requests.size(), 1u);
  EXPECT_EQ(w[0].requests[0].sector, 4096u);
  EXPECT_EQ(w[1].pages, 1u);
  ASSERT_EQ(w[1].requests.size(), 1u);
  EXPECT_EQ(w[1].requests[0].sector, 65536u);
  EXPECT_EQ(w[1].state, WriteState::Durable);
}

TEST_F(StitcherTest, IoSubmitOfOneIocbCompletingAfterItsRecord) {
  feed(anon_bio(1200, 0xb1, 4096, 4096, kWriterTid));
  feed(issue(1250, 0x71, 4096, 4096));
  SyscallEvent call = write_call(1000, 1300, 0, 4096, 0);
  call.syscall = Syscall::IoSubmit;
  call.file_flags |= file_flag::kDirect;
  feed(call);
  EXPECT_TRUE(writes().empty());
  feed(complete(1800, 0x71, 4096, 4096));
  flush(0xf1, 1900, 2000);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].written_ns, Nanos{1800});
  EXPECT_EQ(w[0].durable_ns, Nanos{2000});
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

namespace wp::stitch_test {
namespace {

constexpr std::uint32_t kIoWqWorkerTid = 300;  // an iou-wrk thread of the writer's process

// An io_uring write is a write like its syscall twin: submission to CQE is its call, it keeps
// how it was issued, and its pages become written and durable by the same rules.
TEST_F(StitcherTest, IoUringWriteIsTrackedLikeItsSyscallTwin) {
  SyscallEvent call = write_call(1000, 2000, 0, 8192, 2);
  call.syscall = Syscall::IoUringWrite;
  call.via = WP_VIA_IO_URING | WP_VIA_IO_WQ;
  call.tid = kIoWqWorkerTid;
  feed(call);
  feed(page_bio(5000, 0xb1, 2048, 0, 2));
  io(0x71, 2048, 8192, 5100, 5500);
  flush(0xf1, 6000, 6300);

  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].call.syscall, Syscall::IoUringWrite);
  EXPECT_EQ(w[0].call.via, WP_VIA_IO_URING | WP_VIA_IO_WQ);
  EXPECT_EQ(w[0].call.tid, kIoWqWorkerTid);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].pages, 2u);
  EXPECT_EQ(w[0].durable_ns, Nanos{6300});
}

// A direct io_uring write punted to io-wq carries the worker's tid, so it owns the bios that
// worker queued between submission and CQE, not those of the submitting thread.
TEST_F(StitcherTest, IoUringDirectWriteOwnsTheBiosOfTheThreadThatIssuedIt) {
  feed(anon_bio(1200, 0xb1, 4096, 8192, kIoWqWorkerTid));
  feed(anon_bio(1300, 0xb2, 8192, 4096, kWriterTid));  // the submitter's own direct pwrite
  io(0x71, 4096, 8192, 1250, 1800);
  io(0x72, 8192, 4096, 1350, 1850);
  flush(0xf1, 2500, 2600);
  SyscallEvent call = write_call(1000, 3000, 0, 8192, 0);
  call.syscall = Syscall::IoUringWrite;
  call.via = WP_VIA_IO_URING | WP_VIA_IO_WQ;
  call.tid = kIoWqWorkerTid;
  call.file_flags |= file_flag::kDirect;
  feed(call);

  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(w[0].direct);
  ASSERT_EQ(w[0].requests.size(), 1u);
  EXPECT_EQ(w[0].requests[0].sector, 4096u);
  EXPECT_EQ(w[0].written_ns, Nanos{1800});
}

// fio --ioengine=io_uring --direct=1 --iodepth=4: one thread keeps several writes in flight,
// their submission-to-CQE windows overlap, and each bio carries the tag of the op it was
// issued for: a write takes only its own, however its window lies.
TEST_F(StitcherTest, IoUringDirectWritesInFlightTogetherTakeOnlyTheirOwnBios) {
  auto tagged = [](Nanos ts, std::uint64_t ptr, std::uint64_t sector, Nanos op_start) {
    BioEvent b = anon_bio(ts, ptr, sector, 16384, kWriterTid);
    b.uring_tag = wp::stitch::uring_tag_of(op_start);
    return b;
  };
  feed(tagged(1010, 0xb1, 0, 1000));   // op A, submitted at 1000
  feed(tagged(1110, 0xb2, 32, 1100));  // op B, submitted at 1100
  feed(tagged(1210, 0xb3, 64, 1200));  // op C, submitted at 1200
  io(0x71, 0, 16384, 1300, 1400);
  io(0x72, 32, 16384, 1300, 1500);
  io(0x73, 64, 16384, 1300, 1600);
  flush(0xf1, 1700, 1800);
  for (auto [start, end, pos] :
       {std::tuple{1000, 1450, 0}, std::tuple{1100, 1550, 16384}, std::tuple{1200, 1650, 32768}}) {
    SyscallEvent call = write_call(start, end, pos, 16384, 0);
    call.syscall = Syscall::IoUringWrite;
    call.via = WP_VIA_IO_URING;
    call.file_flags |= file_flag::kDirect;
    feed(call);
  }
  auto w = writes();
  ASSERT_EQ(w.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(w[i].requests.size(), 1u) << i;
    EXPECT_EQ(w[i].requests[0].sector, 32u * i) << i;
    EXPECT_EQ(w[i].pages, 4u) << i;
    EXPECT_LE(*w[i].written_ns, call_end(w[i].call)) << i;
  }
}

}  // namespace
}  // namespace wp::stitch_test

// ---- early snapshots (Stitcher::set_progress) ----

namespace wp::stitch_test {
namespace {

struct Seen {
  ItemProgress progress;
  WriteTimeline write;
};

class ProgressTest : public StitcherTest {
 protected:
  ProgressTest() {
    stitcher_.set_progress([this](ItemProgress p, const Timeline& item) {
      seen_.push_back(Seen{p, std::get<WriteTimeline>(item)});
    });
  }
  std::vector<Seen> seen_;
};

TEST_F(ProgressTest, PendingWriteIsAnnouncedWhenItsCallReturnsThenWrittenThenComplete) {
  SyscallEvent call = write_call(1000, 2000, 4096, 4096, 1);
  call.throttle_ns = 300;
  feed(call);
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_EQ(seen_[0].progress, ItemProgress::Returned);
  EXPECT_EQ(seen_[0].write.state, WriteState::Dirty);
  EXPECT_EQ(seen_[0].write.call.pages_dirtied, 1u);
  EXPECT_EQ(seen_[0].write.call.throttle_ns, 300u);
  EXPECT_TRUE(out_.empty());

  feed(page_bio(5000, 0xb1, 2056, 1, 1));
  io(0x71, 2056, 4096, 5100, 5500);
  ASSERT_EQ(seen_.size(), 2u);
  EXPECT_EQ(seen_[1].progress, ItemProgress::Written);
  EXPECT_EQ(seen_[1].write.written_ns, Nanos{5500});
  EXPECT_EQ(seen_[1].write.id, seen_[0].write.id);
  EXPECT_TRUE(out_.empty());

  flush(0xf1, 6000, 6100);
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[0].id, seen_[0].write.id);
  EXPECT_TRUE(w[0].announced);
  EXPECT_EQ(seen_.size(), 2u);  // the complete item is emitted, not snapshotted
}

TEST_F(ProgressTest, SnapshotsCarryTheirFilesPath) {
  FilePathEvent path;
  path.ts = 900;
  path.dev = kPart;
  path.ino = kIno;
  path.path = "/mnt/app/logs/server.log";
  feed(path);
  feed(write_call(1000, 2000, 4096, 4096, 1));
  feed(page_bio(5000, 0xb1, 2056, 1, 1));
  io(0x71, 2056, 4096, 5100, 5500);
  ASSERT_EQ(seen_.size(), 2u);
  EXPECT_EQ(seen_[0].write.call.path, "/mnt/app/logs/server.log");  // the line at its return
  EXPECT_EQ(seen_[1].write.call.path, "/mnt/app/logs/server.log");  // its written line
}

TEST_F(ProgressTest, ItemsCompleteAtReturnGetNoSnapshot) {
  feed(write_call(1000, 2000, 0, -5, 0));  // failed
  // Written and durable before its record arrives.
  feed(page_bio(3500, 0xb1, 2048, 0, 1));
  io(0x71, 2048, 4096, 3600, 3700);
  flush(0xf1, 3800, 3900);
  feed(write_call(3000, 4000, 0, 4096, 1));
  feed(sync_call(Syscall::Fsync, 4100, 4200, kWriterTid));
  EXPECT_TRUE(seen_.empty());
  ASSERT_EQ(out_.size(), 3u);
  for (const Timeline& item : out_) {
    if (const auto* w = std::get_if<WriteTimeline>(&item)) {
      EXPECT_FALSE(w->announced);
    }
  }
  // One id sequence over writes and syncs, in arrival order.
  EXPECT_LT(id_of(out_[0]), id_of(out_[1]));
  EXPECT_LT(id_of(out_[1]), id_of(out_[2]));
}

TEST_F(ProgressTest, WriteStillDirtyAtTheEndIsCompleteWithItsAnnouncedId) {
  feed(write_call(1000, 2000, 0, 4096, 1));
  feed(write_call(2100, 2200, 4096, 4096, 1));  // joins the first one's batch
  ASSERT_EQ(seen_.size(), 2u);
  EXPECT_NE(seen_[0].write.id, seen_[1].write.id);
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].id, seen_[0].write.id);
  EXPECT_EQ(w[1].id, seen_[1].write.id);
  EXPECT_TRUE(w[0].announced && w[1].announced);
  EXPECT_EQ(w[0].state, WriteState::Dirty);
}

}  // namespace
}  // namespace wp::stitch_test

// ---- the write tracker alone: a history of bios and completions handed to it by the test,
// no block tracker, no stitcher ----

namespace wp::stitch_test {
namespace alone {

using stitch::Bio;
using stitch::BioHistory;
using stitch::InodeBios;
using stitch::Request;

// The bios "queued so far", as the test says.
class FakeHistory final : public BioHistory {
 public:
  const std::deque<std::shared_ptr<Bio>>* bios_of_thread(std::uint32_t tid) const override {
    const auto it = by_thread_.find(tid);
    return it == by_thread_.end() ? nullptr : &it->second;
  }
  const InodeBios* bios_of_inode(DevT dev, std::uint64_t ino) const override {
    const auto it = by_file_.find({dev, ino});
    return it == by_file_.end() ? nullptr : &it->second;
  }
  void add(const std::shared_ptr<Bio>& bio) {
    by_thread_[bio->ev.tid].push_back(bio);
    if (bio->ev.ino == 0) return;
    InodeBios& file = by_file_[{bio->ev.file_dev, bio->ev.ino}];
    file.bios.push_back(bio);
    file.last_seq = ++seq_;
    file.last_queued_ns = bio->queued_ns;
  }

 private:
  std::map<std::uint32_t, std::deque<std::shared_ptr<Bio>>> by_thread_;
  std::map<std::pair<DevT, std::uint64_t>, InodeBios> by_file_;
  std::uint64_t seq_ = 0;
};

class WriteTrackerAlone : public ::testing::Test {
 protected:
  WriteTrackerAlone() {
    devices_.add(DeviceInfo{kDisk, kDisk, "vda", true, false});
    devices_.add(DeviceInfo{kPart, kDisk, "vda1", true, false});
  }

  std::shared_ptr<Bio> queue(BioEvent ev) {
    auto bio = std::make_shared<Bio>();
    bio->id = ++ids_;
    bio->ev = ev;
    bio->queued_ns = ev.ts;
    history_.add(bio);
    return bio;
  }
  // A request lifetime that carried `bio` and completed at `ts`.
  std::shared_ptr<Request> completed(const std::shared_ptr<Bio>& bio, Nanos ts, int error = 0) {
    auto r = std::make_shared<Request>();
    r->id = ++ids_;
    r->tl = builders::write_request(kDisk, bio->ev.sector, bio->ev.bytes, ts - 100, ts);
    r->tl.error = error;
    r->data_done = true;
    bio->request = r;
    return r;
  }
  void durable(Request& r, Nanos ts) {
    r.tl.durable_ns = ts;
    r.via = DurableVia::Flush;
    tracker_.request_durable(r);
  }
  const WriteTimeline& only_write() const {
    EXPECT_EQ(out_.size(), 1u);
    return std::get<WriteTimeline>(out_.at(0));
  }

  StitchLimits limits_;
  StitchStats stats_;
  stitch::DeviceTable devices_;
  FakeHistory history_;
  stitch::LossLog loss_;
  std::vector<Timeline> out_;
  stitch::WriteTracker tracker_{limits_,  stats_,
                                devices_, history_,
                                loss_,    [this](Timeline&& t) { out_.push_back(std::move(t)); }};
  std::uint64_t ids_ = 0;
};

TEST_F(WriteTrackerAlone, BufferedWriteIsWrittenByItsPagesBioAndDurableWithItsRequest) {
  tracker_.on_write(write_call(1000, 2000, 0, 8192, 2), {});
  const auto bio = queue(page_bio(3000, 0xb1, 2048, 0, 2));
  const auto r = completed(bio, 4000);
  tracker_.bio_written(*bio, r);
  EXPECT_TRUE(out_.empty()) << "written, not yet durable";
  EXPECT_EQ(tracker_.waiting_on(), 1u);  // its request
  durable(*r, 5000);
  const WriteTimeline& w = only_write();
  EXPECT_EQ(w.state, WriteState::Durable);
  EXPECT_EQ(w.written_ns, 4000u);
  EXPECT_EQ(w.durable_ns, 5000u);
  EXPECT_EQ(tracker_.waiting_on(), 0u);
  EXPECT_EQ(tracker_.pending(), 0u);
}

TEST_F(WriteTrackerAlone, BioQueuedBeforeTheWriteStartedCarriesOlderData) {
  const auto bio = queue(page_bio(500, 0xb1, 2048, 0, 1));
  tracker_.on_write(write_call(1000, 2000, 0, 4096, 1), {});
  tracker_.bio_written(*bio, completed(bio, 4000));
  EXPECT_TRUE(out_.empty());
  ASSERT_TRUE(tracker_.finish(16));
  EXPECT_EQ(only_write().state, WriteState::Dirty);
}

TEST_F(WriteTrackerAlone, DirectWriteWaitsForItsOwnBio) {
  SyscallEvent call = write_call(1000, 2000, 0, 4096, 0);
  call.file_flags |= file_flag::kDirect;
  const auto bio = queue(anon_bio(1200, 0xb1, 4096, 4096, kWriterTid));
  tracker_.on_write(call, {});
  EXPECT_EQ(tracker_.waiting_on(), 1u);  // its bio
  const auto r = completed(bio, 1800);
  tracker_.bio_written(*bio, r);
  durable(*r, 2500);
  EXPECT_EQ(only_write().state, WriteState::Durable);
  EXPECT_EQ(only_write().requests.size(), 1u);
  EXPECT_EQ(tracker_.waiting_on(), 0u);
}

TEST_F(WriteTrackerAlone, FailedBioLosesTheWriteAndTheNextSyncTakesIt) {
  tracker_.on_write(write_call(1000, 2000, 0, 4096, 1), {});
  const auto bio = queue(page_bio(3000, 0xb1, 2048, 0, 1));
  tracker_.bio_failed(*bio, completed(bio, 4000, -5), 4000);
  const WriteTimeline& w = only_write();
  EXPECT_EQ(w.state, WriteState::Lost);
  EXPECT_EQ(w.lost_error, -5);
  EXPECT_EQ(tracker_.take_lost(kPart, kIno, 5000), std::vector<std::uint64_t>{w.id});
  EXPECT_TRUE(tracker_.take_lost(kPart, kIno, 6000).empty()) << "one sync reports it";
}

TEST_F(WriteTrackerAlone, DiscardedPagesDiscardTheWrite) {
  tracker_.on_write(write_call(1000, 2000, 0, 4096, 1), {});
  tracker_.pages_discarded(discard(3000, 0, 1));
  EXPECT_EQ(only_write().state, WriteState::Discarded);
  EXPECT_EQ(only_write().discarded_ns, 3000u);
}

TEST_F(WriteTrackerAlone, AWriteSpanningALossIsIncomplete) {
  loss_.add(1500);
  tracker_.on_write(write_call(1000, 2000, 0, 4096, 1), {});
  ASSERT_TRUE(tracker_.finish(16));
  EXPECT_TRUE(only_write().incomplete);
}

// Requests that never become durable (abandoned after a loss) leave no waiter behind once the
// writes waiting on them are gone: the tracker's memory follows its pending writes.
TEST_F(WriteTrackerAlone, WaitersOfRequestsThatNeverFinishAreDropped) {
  limits_.max_pending_writes = 8;
  const std::size_t writes = 3 * 4096;
  for (std::size_t i = 0; i < writes; ++i) {
    const Nanos t = 10'000 * (i + 1);
    const std::uint64_t page = i * 2;  // apart: each write its own batch
    tracker_.on_write(write_call(t, t + 100, page * 4096, 4096, 1), {});
    const auto bio = queue(page_bio(t + 200, 0xb000 + i, 2048 + 16 * i, page, 1));
    tracker_.bio_written(*bio, completed(bio, t + 300));  // written; never durable
    tracker_.age_out(t + 400);
  }
  EXPECT_LE(tracker_.pending(), 8u);
  EXPECT_LE(tracker_.waiting_on(), 2 * tracker_.pending() + 4096);
  EXPECT_EQ(out_.size() + tracker_.pending(), writes);
}

TEST(LossLog, WithinFindsALossInsideTheCallWhateverTheOrderAdded) {
  stitch::LossLog loss;
  for (Nanos t : {100, 300, 200, 900, 500}) loss.add(t);
  EXPECT_TRUE(loss.within(150, 250));
  EXPECT_TRUE(loss.within(200, 200));
  EXPECT_TRUE(loss.within(850, 1000));
  EXPECT_FALSE(loss.within(310, 490));
  EXPECT_FALSE(loss.within(901, 2000));
  EXPECT_FALSE(loss.within(0, 99));
  EXPECT_EQ(loss.last(), 900u);
  loss.sweep(250);
  EXPECT_FALSE(loss.within(0, 250)) << "swept";
  EXPECT_TRUE(loss.within(250, 300));
  EXPECT_EQ(loss.size(), 3u);
}

}  // namespace alone
}  // namespace wp::stitch_test
