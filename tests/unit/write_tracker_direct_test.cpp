// SPDX-License-Identifier: Apache-2.0
// Write tracker rules: O_DIRECT writes, the iocbs of one io_submit call, io_uring writes.
#include "stitch/io_state.h"
#include "stitch_fixture.h"

namespace wp::stitch_test {
namespace {

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
