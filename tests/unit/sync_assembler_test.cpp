// SPDX-License-Identifier: Apache-2.0
// Sync assembler rules: a sync's requests, flushes, commits and phase partition.
#include "stitch/sync_assembler.h"
#include "stitch_fixture.h"

namespace wp::stitch_test {
namespace {

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
  flush(0xf2, 1100, 1200, kOther);
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

// xfs: the fsync forces the log; the log write (a PREFLUSH|FUA|META iclog bio of its own
// thread) is journal I/O, its flushes the fsync's flushes, and the journal phase runs from the
// force to the log write's completion.
TEST_F(StitcherTest, XfsFsyncLogForceIsItsJournalPhase) {
  constexpr std::uint32_t kSyncTid = 300;
  feed(page_bio(1100, 0xb1, 2048, 0, 1, kSyncTid));  // its data
  io(0x71, 2048, 4096, 1150, 1300);
  feed(fs_log(1400, FsLogKind::XfsForce, kSyncTid));
  feed(fs_log(1500, FsLogKind::XfsIclogSync, kSyncTid));
  BioEvent iclog = anon_bio(1510, 0xb2, 9000, 1536, kSyncTid);
  iclog.bio_flags = bio_flag::kNoFile;
  iclog.flags = req_flag::kPreflush | req_flag::kFua | req_flag::kSync | req_flag::kMeta;
  feed(iclog);
  flush(0xf1, 1520, 1600);  // the pre-flush
  io(0x72, 9000, 1536, 1610, 1700);
  feed(complete(1800, 0x72, 9000, 0));  // the emulated FUA's post-flush done
  feed(fs_log(1810, FsLogKind::XfsIclogDone, 5));
  feed(sync_call(Syscall::Fsync, 1000, 2000, kSyncTid));

  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].requests.size(), 1u);
  EXPECT_EQ(s[0].requests[0].sector, 2048u);
  ASSERT_EQ(s[0].journal_requests.size(), 1u);
  EXPECT_EQ(s[0].journal_requests[0].sector, 9000u);
  const SyncPhases& p = s[0].phases;
  // writeback [1000,1100] (the log write is no data writeback); data [1150,1300]; journal
  // [1400,1810] minus the flushes [1520,1600] and the log write's post-flush [1700,1800].
  EXPECT_EQ(p.writeback_ns, 100u);
  EXPECT_EQ(p.data_io_ns, 150u);
  EXPECT_EQ(p.flush_ns, 180u);
  EXPECT_EQ(p.journal_ns, 230u);
  EXPECT_EQ(phase_sum(p), 1000u);
}

// A sync's own metadata writes (REQ_META: btrfs's log tree and superblocks) are journal I/O,
// from the first queued to the last done, not data I/O.
TEST_F(StitcherTest, SyncsOwnMetadataWritesAreJournalIo) {
  constexpr std::uint32_t kSyncTid = 300;
  feed(page_bio(1100, 0xb1, 2048, 0, 1, kSyncTid));
  io(0x71, 2048, 4096, 1150, 1300);
  BioEvent log_tree = anon_bio(1400, 0xb2, 9000, 16384, kSyncTid);
  log_tree.flags = req_flag::kSync | req_flag::kMeta;
  feed(log_tree);
  io(0x72, 9000, 16384, 1410, 1500);
  BioEvent super = anon_bio(1600, 0xb3, 128, 4096, kSyncTid);
  super.flags = req_flag::kSync | req_flag::kMeta | req_flag::kFua;
  feed(super);
  io(0x73, 128, 4096, 1610, 1700);
  feed(sync_call(Syscall::Fsync, 1000, 2000, kSyncTid));

  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].requests.size(), 1u);
  ASSERT_EQ(s[0].journal_requests.size(), 2u);
  EXPECT_EQ(s[0].journal_requests[0].sector, 9000u);
  EXPECT_EQ(s[0].journal_requests[1].sector, 128u);
  EXPECT_EQ(s[0].phases.data_io_ns, 150u);
  EXPECT_EQ(s[0].phases.journal_ns, 300u);  // [1400,1700], the gap between them included
  EXPECT_EQ(phase_sum(s[0].phases), 1000u);
}

// btrfs: the file's device is its subvolume's anonymous one, the superblock's another; the
// flushes that count are those of the disks the agent found under the file system.
TEST_F(StitcherTest, SyncOnAnAnonymousDeviceOwnsTheFlushesOfItsFileSystemsDisks) {
  constexpr DevT kSuper = make_dev(0, 40);
  constexpr DevT kSubvolume = make_dev(0, 41);
  constexpr DevT kOtherDisk = make_dev(8, 0);
  stitcher_.add_file_system(FileSystemInfo{kSuper, {kSubvolume}, {kDisk}, "btrfs"});
  flush(0xf2, 1100, 1200, kOtherDisk);
  flush(0xf1, 1300, 1400);
  SyscallEvent call = sync_call(Syscall::Fsync, 1000, 1500, 300);
  call.dev = make_dev(0, 57);  // a subvolume without a mount of its own: unknown
  call.fs_dev = kSuper;        // but its superblock is known
  feed(call);
  SyscallEvent by_alias = sync_call(Syscall::Fsync, 1000, 1500, 301);
  by_alias.dev = kSubvolume;
  feed(by_alias);
  auto s = syncs();
  ASSERT_EQ(s.size(), 2u);
  for (const SyncTimeline& sync : s) {
    ASSERT_EQ(sync.flushes.size(), 1u);
    EXPECT_EQ(sync.flushes[0].disk, kDisk);
    EXPECT_EQ(sync.phases.flush_ns, 100u);
  }
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

}  // namespace
}  // namespace wp::stitch_test

// ---- the partition on its own ----

namespace wp::stitch_test {
namespace {

using stitch::partition_phases;
using stitch::PhaseIntervals;

TEST(PartitionPhases, HigherPhaseTakesOverlappingTime) {
  PhaseIntervals in;
  in[static_cast<int>(SyncPhase::DataIo)] = {{100, 400}};
  in[static_cast<int>(SyncPhase::Flush)] = {{300, 500}};
  SyncPhases phases;
  std::vector<PhaseSegment> segments;
  partition_phases(0, 600, in, phases, segments);
  EXPECT_EQ(phases.data_io_ns, 200u);
  EXPECT_EQ(phases.flush_ns, 200u);
  EXPECT_EQ(phases.other_ns, 200u);
  ASSERT_EQ(segments.size(), 4u);
  EXPECT_EQ(segments[1].phase, SyncPhase::DataIo);
  EXPECT_EQ(segments[1].end_ns, Nanos{300});
  EXPECT_EQ(segments[2].phase, SyncPhase::Flush);
  EXPECT_EQ(segments[2].start_ns, Nanos{300});
}

TEST(PartitionPhases, IntervalsAreClippedToTheCallAndSegmentsTileIt) {
  PhaseIntervals in;
  in[static_cast<int>(SyncPhase::Journal)] = {{0, 250}, {900, 2000}};
  in[static_cast<int>(SyncPhase::Writeback)] = {{100, 150}, {140, 200}};  // overlapping twins
  SyncPhases phases;
  std::vector<PhaseSegment> segments;
  partition_phases(100, 1000, in, phases, segments);
  EXPECT_EQ(phases.journal_ns, 250u);  // 100..250 and 900..1000
  EXPECT_EQ(phases.writeback_ns, 0u);  // entirely under the journal
  EXPECT_EQ(phases.other_ns, 650u);
  ASSERT_FALSE(segments.empty());
  EXPECT_EQ(segments.front().start_ns, Nanos{100});
  EXPECT_EQ(segments.back().end_ns, Nanos{1000});
  for (std::size_t i = 1; i < segments.size(); ++i) {
    EXPECT_EQ(segments[i].start_ns, segments[i - 1].end_ns);
    EXPECT_NE(segments[i].phase, segments[i - 1].phase);  // adjacent ones of a phase merge
  }
}

}  // namespace
}  // namespace wp::stitch_test

namespace wp::stitch_test {
namespace {

// IORING_OP_FSYNC always runs on an io-wq worker: the sync carries the worker's tid and owns
// the bios it submitted during the op, as fsync(2) owns its thread's.
TEST_F(StitcherTest, IoUringFsyncOwnsTheBiosOfItsWorker) {
  constexpr std::uint32_t kWorker = 300;
  feed(page_bio(1100, 0xb1, 2048, 0, 1, kWorker));
  feed(page_bio(1150, 0xb2, 4096, 9, 1, kWriterTid));  // the submitter, same window
  io(0x71, 2048, 4096, 1200, 1300);
  io(0x72, 4096, 4096, 1250, 1350);
  SyscallEvent call = sync_call(Syscall::IoUringFsync, 1000, 2000, kWorker);
  call.via = WP_VIA_IO_URING | WP_VIA_IO_WQ;
  feed(call);
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].call.syscall, Syscall::IoUringFsync);
  ASSERT_EQ(s[0].requests.size(), 1u);
  EXPECT_EQ(s[0].requests[0].sector, 2048u);
  EXPECT_EQ(phase_sum(s[0].phases), 1000u);
}

// btrfs writes dirty btree pages out from inside an fsync or msync without waiting for them:
// a request of the thread's bios still in flight when the call returned is not the sync's.
TEST_F(StitcherTest, SyncOwnsOnlyTheRequestsOfItsBiosThatCompletedBeforeItReturned) {
  feed(page_bio(1100, 0xb1, 2048, 0, 1, kWriterTid));
  BioEvent meta = page_bio(1150, 0xb2, 4096, 9, 1, kWriterTid);
  meta.flags |= req_flag::kMeta;
  feed(meta);
  io(0x71, 2048, 4096, 1200, 1300);
  feed(issue(1250, 0x72, 4096, 4096));  // completes after the call returned
  feed(sync_call(Syscall::Fsync, 1000, 2000, kWriterTid));
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].requests.size(), 1u);
  EXPECT_EQ(s[0].requests[0].sector, 2048u);
  EXPECT_TRUE(s[0].journal_requests.empty());
  EXPECT_EQ(phase_sum(s[0].phases), 1000u);
}

// The io-wq worker that runs an fsync also runs other ops of the ring (punted writes): a bio
// tagged for another op is not the fsync's, though its worker queued it inside the call.
TEST_F(StitcherTest, IoUringFsyncTakesNoBioTaggedForAnotherOp) {
  constexpr std::uint32_t kWorker = 300;
  BioEvent own = page_bio(1100, 0xb1, 2048, 0, 1, kWorker);
  own.uring_tag = wp::stitch::uring_tag_of(1000);
  BioEvent other = page_bio(1150, 0xb2, 4096, 9, 1, kWorker);
  other.uring_tag = wp::stitch::uring_tag_of(1120);  // a punted write the worker ran meanwhile
  feed(own);
  feed(other);
  io(0x71, 2048, 4096, 1200, 1300);
  feed(issue(1250, 0x72, 4096, 4096));  // completes after the fsync returned
  SyscallEvent call = sync_call(Syscall::IoUringFsync, 1000, 2000, kWorker);
  call.via = WP_VIA_IO_URING | WP_VIA_IO_WQ;
  feed(call);
  auto s = syncs();
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].requests.size(), 1u);
  EXPECT_EQ(s[0].requests[0].sector, 2048u);
}

}  // namespace
}  // namespace wp::stitch_test
