// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
// The stitcher as a whole: names of its states and phases, and the dispatcher's bounds.
#include "stitch_fixture.h"

#include <string>

#include "stitch/file_names.h"

namespace wp::stitch_test {
namespace {

TEST(Names, WriteStatesAndVias) {
  EXPECT_STREQ(write_state_name(WriteState::Failed), "failed");
  EXPECT_STREQ(write_state_name(WriteState::Dirty), "dirty");
  EXPECT_STREQ(write_state_name(WriteState::Written), "written");
  EXPECT_STREQ(write_state_name(WriteState::Durable), "durable");
  EXPECT_STREQ(write_state_name(WriteState::Discarded), "discarded");
  EXPECT_STREQ(durable_via_name(DurableVia::Flush), "flush");
  EXPECT_STREQ(durable_via_name(DurableVia::Fua), "fua");
  EXPECT_STREQ(durable_via_name(DurableVia::NoWriteCache), "no-write-cache");
  EXPECT_STREQ(durable_via_name(DurableVia::None), "");
}

TEST(Names, SyncPhases) {
  EXPECT_STREQ(sync_phase_name(SyncPhase::DataIo), "data_io");
  EXPECT_STREQ(sync_phase_label(SyncPhase::DataIo), "data I/O");
  EXPECT_STREQ(sync_phase_name(SyncPhase::Flush), "flush");
  EXPECT_STREQ(sync_phase_name(SyncPhase::Other), "other");
}

TEST_F(SmallLimitsTest, SweepKeepsNoHistoryPastTheWindow) {
  // A flush older than history_ns is gone: a later sync does not see it.
  flush(0xf1, 100, 200);
  feed(LostEvent{1000, 0});  // time moves on by more than history_ns (500)
  feed(sync_call(Syscall::Fsync, 150, 1100, 300));
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(s[0].flushes.empty());
}

// ---- file paths ----

FilePathEvent file_path(Nanos ts, std::string path, std::uint64_t ino = kIno,
                        bool deleted = false) {
  FilePathEvent ev;
  ev.ts = ts;
  ev.dev = kPart;
  ev.ino = ino;
  ev.deleted = deleted;
  ev.path = deleted ? path + " (deleted)" : std::move(path);
  return ev;
}

TEST_F(StitcherTest, ItemsCarryThePathOfTheirFile) {
  feed(file_path(90, "/mnt/data/logs/app.log"));
  feed(write_call(100, 200, 0, 4096, 1));
  feed(sync_call(Syscall::Fsync, 300, 400, kWriterTid));
  MmapDirtyEvent store;
  store.ts = 500;
  store.pid = store.tid = kWriterTid;
  store.comm = "writer";
  store.dev = kPart;
  store.ino = kIno;
  store.index = 9;
  store.pages = 1;
  feed(store);
  SyscallEvent other = write_call(600, 700, 0, 4096, 1);
  other.ino = kIno + 1;  // no path record came for this one
  feed(other);
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 3u);
  std::size_t named = 0;
  for (const auto& write : w) {
    if (write.call.ino == kIno) {
      EXPECT_EQ(write.call.path, "/mnt/data/logs/app.log") << call_name(write.call);
      ++named;
    } else {
      EXPECT_EQ(write.call.path, "");
    }
  }
  EXPECT_EQ(named, 2u);  // the write and the mmap item
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].call.path, "/mnt/data/logs/app.log");
}

// A write through an overlay is stitched by its upper file (the records' dev and ino) and
// carries the overlay's own dev and ino from the view record after the path; a later path
// record without a view (the upper file opened directly) names the file without it.
TEST_F(StitcherTest, OverlayItemsCarryTheViewThatFollowedTheirPath) {
  feed(file_path(90, "/merged/app.log"));
  feed(FileViewEvent{
      .ts = 91, .ino = kIno, .view_ino = 16, .dev = kPart, .view_dev = make_dev(0, 39)});
  feed(write_call(100, 200, 0, 4096, 1));
  feed(sync_call(Syscall::Fsync, 300, 400, kWriterTid));
  feed(file_path(450, "/upper/app.log"));
  feed(write_call(500, 600, 4096, 4096, 1));
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].call.path, "/merged/app.log");
  EXPECT_EQ(w[0].call.view_dev, make_dev(0, 39));
  EXPECT_EQ(w[0].call.view_ino, 16u);
  EXPECT_EQ(w[0].call.dev, kPart);
  EXPECT_EQ(w[0].call.ino, kIno);
  EXPECT_EQ(w[1].call.path, "/upper/app.log");
  EXPECT_EQ(w[1].call.view_dev, 0u);
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].call.view_dev, make_dev(0, 39));
  // A view of a file no path named is dropped.
  stitch::FileNames names;
  names.on_file_view(FileViewEvent{
      .ts = 1, .ino = kIno + 7, .view_ino = 3, .dev = kPart, .view_dev = make_dev(0, 39)});
  SyscallEvent unnamed;
  unnamed.dev = kPart;
  unnamed.ino = kIno + 7;
  names.name(unnamed);
  EXPECT_EQ(unnamed.view_dev, 0u);
}

TEST_F(StitcherTest, PathOfADeletedFileSaysDeleted) {
  feed(file_path(90, "/mnt/data/tmp.bin", kIno, true));
  feed(write_call(100, 200, 0, 4096, 1));
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].call.path, "/mnt/data/tmp.bin (deleted)");
}

TEST_F(StitcherTest, FileResolvedAfreshTakesItsNewPathForLaterItems) {
  // The kernel sends a file's path again only when it resolves the file afresh (an inode
  // number reused by a new file): the items handed out after that carry the new one.
  feed(file_path(90, "/mnt/a"));
  feed(sync_call(Syscall::Fsync, 100, 200, kWriterTid));
  feed(file_path(300, "/mnt/b"));
  feed(sync_call(Syscall::Fsync, 400, 500, kWriterTid));
  auto s = syncs();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].call.path, "/mnt/a");
  EXPECT_EQ(s[1].call.path, "/mnt/b");
}

// A write still pending when its file is renamed (xlogtemp.N written, fsynced later, renamed
// to a WAL segment) keeps the path its call had; the writes after the rename (the kernel sends
// the new path with the first of them) take the new one, in a batch of their own.
TEST_F(StitcherTest, PendingWriteKeepsThePathItsCallHadAcrossARename) {
  feed(file_path(90, "/db/pg_wal/xlogtemp.7"));
  feed(write_call(100, 110, 0, 4096, 1));
  feed(file_path(190, "/db/pg_wal/000000010000000000000003"));
  feed(write_call(200, 210, 4096, 4096, 1));
  feed(page_bio(300, 0xb1, 2048, 0, 2));
  io(0x71, 2048, 8192, 310, 320);
  flush(0xf1, 330, 340);
  auto w = writes();
  ASSERT_EQ(w.size(), 2u);
  std::sort(w.begin(), w.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  EXPECT_EQ(w[0].call.path, "/db/pg_wal/xlogtemp.7");
  EXPECT_EQ(w[1].call.path, "/db/pg_wal/000000010000000000000003");
  EXPECT_EQ(w[0].state, WriteState::Durable);
  EXPECT_EQ(w[1].state, WriteState::Durable);
}

// A writer chroot'ed into /srv/box names its file /data/x; the path from its namespace's root
// comes with it (the agent finds the host's path from that). The file met later from the
// namespace's root (the kernel resolves it again for another root) has that one path only:
// each item keeps what its call's record arrived under, batches split where it changes.
TEST_F(StitcherTest, ItemsOfAChrootedWriterCarryTheirNamespacesPathBesideTheirOwn) {
  FilePathEvent chrooted = file_path(90, "/data/x");
  chrooted.ns_path = "/srv/box/data/x";
  chrooted.mnt_ns = 4026531841;
  feed(chrooted);
  feed(write_call(100, 110, 0, 4096, 1));
  feed(sync_call(Syscall::Fsync, 120, 130, kWriterTid));
  feed(file_path(190, "/srv/box/data/x"));
  feed(write_call(200, 210, 4096, 4096, 1));
  finish();  // both still dirty: handed out as they stand
  auto w = writes();
  ASSERT_EQ(w.size(), 2u);
  std::sort(w.begin(), w.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  EXPECT_EQ(w[0].call.path, "/data/x");
  EXPECT_EQ(w[0].call.ns_path, "/srv/box/data/x");
  EXPECT_EQ(w[0].call.mnt_ns, 4026531841u);
  EXPECT_EQ(w[1].call.path, "/srv/box/data/x");
  EXPECT_EQ(w[1].call.ns_path, "");
  EXPECT_EQ(w[1].call.mnt_ns, 0u);
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].call.path, "/data/x");
  EXPECT_EQ(s[0].call.ns_path, "/srv/box/data/x");
  EXPECT_EQ(s[0].call.mnt_ns, 4026531841u);
}

TEST_F(StitcherTest, SyncWithoutAFileHasNoPath) {
  feed(file_path(90, "/mnt/a", 0));  // no file is inode 0: ignored
  SyscallEvent all = sync_call(Syscall::Sync, 100, 200, kWriterTid);
  all.dev = 0;
  all.ino = 0;
  feed(all);
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].call.path, "");
}

TEST(FileNames, KeepsAtMostItsBoundDroppingTheOldest) {
  stitch::FileNames names(4);
  for (std::uint64_t ino = 1; ino <= 5; ++ino) {
    FilePathEvent ev;
    ev.dev = kPart;
    ev.ino = ino;
    ev.path = "/f" + std::to_string(ino);
    names.on_file_path(ev);
  }
  EXPECT_LE(names.size(), 4u);
  SyscallEvent newest;
  newest.dev = kPart;
  newest.ino = 5;
  names.name(newest);
  EXPECT_EQ(newest.path, "/f5");
  SyscallEvent oldest;
  oldest.dev = kPart;
  oldest.ino = 1;
  names.name(oldest);
  EXPECT_EQ(oldest.path, "");
}

// ---- cgroups: the kernel names a thread's cgroup once, before its first item's record ----

TEST_F(StitcherTest, ItemsCarryTheCgroupTheirThreadWasLastNamedIn) {
  feed(CgroupEvent{.ts = 10, .cgroup_id = 0xc1, .pid = kWriterTid, .tid = kWriterTid});
  feed(sync_call(Syscall::Fsync, 20, 30, kWriterTid));
  // The thread moved to another cgroup: the kernel names it again before its next record.
  feed(CgroupEvent{.ts = 40, .cgroup_id = 0xc2, .pid = kWriterTid, .tid = kWriterTid});
  feed(sync_call(Syscall::Fsync, 50, 60, kWriterTid));
  feed(sync_call(Syscall::Fsync, 70, 80, 555));  // never named: no cgroup
  auto s = syncs();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].call.cgroup_id, 0xc1u);
  EXPECT_EQ(s[1].call.cgroup_id, 0xc2u);
  EXPECT_EQ(s[2].call.cgroup_id, 0u);
}

TEST_F(StitcherTest, AThreadNeverNamedTakesItsProcesssCgroup) {
  // An io-wq worker issuing its ring owner's ops: a thread of the owner's process.
  feed(CgroupEvent{.ts = 10, .cgroup_id = 0xc1, .pid = kWriterTid, .tid = kWriterTid});
  SyscallEvent worker_sync = sync_call(Syscall::Fsync, 20, 30, kWriterTid + 1);
  worker_sync.pid = kWriterTid;
  feed(worker_sync);
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].call.cgroup_id, 0xc1u);
}

TEST_F(StitcherTest, WritesOfOneThreadInTwoCgroupsAreNotOneBatch) {
  feed(CgroupEvent{.ts = 5, .cgroup_id = 0xc1, .pid = kWriterTid, .tid = kWriterTid});
  feed(write_call(10, 20, 0, 4096, 1));
  feed(CgroupEvent{.ts = 25, .cgroup_id = 0xc2, .pid = kWriterTid, .tid = kWriterTid});
  feed(write_call(30, 40, 4096, 4096, 1));
  finish();
  auto w = writes();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].call.cgroup_id, 0xc1u);
  EXPECT_EQ(w[1].call.cgroup_id, 0xc2u);
}

}  // namespace
}  // namespace wp::stitch_test
