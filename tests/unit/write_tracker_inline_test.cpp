// SPDX-License-Identifier: Apache-2.0
// Write tracker rules: data a file system kept in its metadata (btrfs inline extents, ext4's
// inline_data), written and durable by the commit holding it.
#include "stitch_fixture.h"

namespace wp::stitch_test {
namespace {

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

}  // namespace
}  // namespace wp::stitch_test
