// SPDX-License-Identifier: Apache-2.0
// Write tracker rules: the pages a process stores into a shared mapping, one item per
// process, file and writeback cycle.
#include "stitch_fixture.h"

namespace wp::stitch_test {
namespace {

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

}  // namespace
}  // namespace wp::stitch_test
