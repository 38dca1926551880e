// SPDX-License-Identifier: Apache-2.0
// Early snapshots of pending writes (Stitcher::set_progress): when a write returns still
// pending, and when it becomes written.
#include "stitch_fixture.h"

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
