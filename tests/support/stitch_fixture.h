// SPDX-License-Identifier: Apache-2.0
// Builders of synthetic kernel events (on top of builders.h) and a fixture that feeds them to the
// stitcher: the trackers' rule tests drive the whole stitcher with them (each tracker's rules are
// what it contributes to the timelines), next to direct tests of each tracker's own interface.
// The events made from one record table are built by their fields' names, which the compiler
// holds to the table.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "builders.h"
#include "stitch/stitcher.h"

namespace wp::stitch_test {

constexpr DevT kDisk = make_dev(253, 0);
constexpr DevT kPart = make_dev(253, 1);  // the filesystem's device, a partition of kDisk
constexpr std::uint64_t kIno = 42;
constexpr std::uint32_t kWriterTid = 100;
constexpr std::uint32_t kFlusherTid = 7;  // a writeback kworker
constexpr std::uint32_t kJournalTid = 8;  // jbd2

inline SyscallEvent write_call(Nanos start, Nanos end, std::uint64_t pos, std::int64_t ret,
                               std::uint32_t pages_dirtied) {
  return builders::syscall_event({.start_ns = start,
                                  .end_ns = end,
                                  .pid = kWriterTid,
                                  .tid = kWriterTid,
                                  .comm = "writer",
                                  .dev = kPart,
                                  .ino = kIno,
                                  .pos = pos,
                                  .ret = ret,
                                  .pages_dirtied = pages_dirtied});
}

inline SyscallEvent sync_call(Syscall which, Nanos start, Nanos end, std::uint32_t tid) {
  return builders::syscall_event({.syscall = which,
                                  .start_ns = start,
                                  .end_ns = end,
                                  .pid = tid,
                                  .tid = tid,
                                  .comm = "syncer",
                                  .dev = kPart,
                                  .ino = kIno});
}

// A bio of thread `tid` on the fixture's partition of kDisk; the builders below fill in the rest.
inline BioEvent bio_of(Nanos ts, std::uint64_t ptr, std::uint32_t tid) {
  return {.ts = ts, .bio = ptr, .pid = tid, .tid = tid, .bdev = kPart, .disk = kDisk};
}

// A writeback bio of file pages [index, index + pages) at `sector`.
inline BioEvent page_bio(Nanos ts, std::uint64_t ptr, std::uint64_t sector, std::uint64_t index,
                         std::uint32_t pages, std::uint32_t tid = kFlusherTid) {
  BioEvent b = bio_of(ts, ptr, tid);
  b.sector = sector;
  b.bytes = pages * 4096;
  b.file_dev = kPart;
  b.ino = kIno;
  b.nr_extents = 1;
  b.extents = {Extent{index, pages}};
  return b;
}

// A dirty folio of the file, pages [index, index + pages), dropped from the page cache.
inline DiscardEvent discard(Nanos ts, std::uint64_t index, std::uint32_t pages,
                            std::uint64_t ino = kIno) {
  return {.ts = ts, .ino = ino, .index = index, .dev = kPart, .pages = pages};
}

// A bio with user pages (O_DIRECT) or metadata: no file extents.
inline BioEvent anon_bio(Nanos ts, std::uint64_t ptr, std::uint64_t sector, std::uint32_t bytes,
                         std::uint32_t tid) {
  BioEvent b = bio_of(ts, ptr, tid);
  b.sector = sector;
  b.bytes = bytes;
  b.bio_flags = bio_flag::kAnon;
  return b;
}

// An empty PREFLUSH write: what blkdev_issue_flush() submits.
inline BioEvent flush_bio(Nanos ts, std::uint64_t ptr, std::uint32_t tid) {
  BioEvent b = bio_of(ts, ptr, tid);
  b.flags = req_flag::kPreflush | req_flag::kSync;
  b.bio_flags = bio_flag::kNoFile;
  return b;
}

inline RequestEvent rq(RequestEventKind kind, Nanos ts, std::uint64_t ptr, std::uint64_t sector,
                       std::uint32_t bytes, ReqOp op = ReqOp::Write, std::uint32_t flags = 0) {
  return {.ts = ts,
          .rq = ptr,
          .disk = kDisk,
          .op = op,
          .flags = flags,
          .bytes = bytes,
          .sector = sector,
          .kind = kind};
}

inline RequestEvent issue(Nanos ts, std::uint64_t ptr, std::uint64_t sector, std::uint32_t bytes,
                          std::uint32_t flags = 0) {
  return rq(RequestEventKind::Issue, ts, ptr, sector, bytes, ReqOp::Write, flags);
}

inline RequestEvent complete(Nanos ts, std::uint64_t ptr, std::uint64_t sector,
                             std::uint32_t bytes) {
  return rq(RequestEventKind::Complete, ts, ptr, sector, bytes);
}

inline RequestEvent flush_issue(Nanos ts, std::uint64_t ptr) {
  return rq(RequestEventKind::Issue, ts, ptr, 0, 0, ReqOp::Flush, req_flag::kPreflush);
}

inline RequestEvent flush_complete(Nanos ts, std::uint64_t ptr) {
  return rq(RequestEventKind::Complete, ts, ptr, 0, 0, ReqOp::Flush, req_flag::kPreflush);
}

// The NVMe driver's view of request `ptr`: its command set up, or completed.
inline NvmeEvent nvme(NvmeEventKind kind, Nanos ts, std::uint64_t ptr, std::uint16_t qid,
                      std::uint16_t cid, std::uint8_t opcode = 0x01) {
  return {
      .ts = ts, .rq = ptr, .disk = kDisk, .qid = qid, .cid = cid, .kind = kind, .opcode = opcode};
}

inline JournalEvent journal(Nanos ts, std::uint32_t transaction, JournalPhase phase) {
  return {.ts = ts, .dev = kPart, .transaction = transaction, .phase = phase, .tid = kJournalTid};
}

// An xfs log event on kPart: a force by `tid`, or a log write issued or completed.
inline FsLogEvent fs_log(Nanos ts, FsLogKind kind, std::uint32_t tid) {
  return {.ts = ts, .dev = kPart, .tid = tid, .kind = kind};
}

// Where call `start` of thread `tid` slept (arrives before its causes).
inline OffCpuEvent offcpu_event(Nanos start, std::uint32_t tid, std::vector<OffCpuSleep> sleeps) {
  OffCpuEvent ev;
  ev.ts = start;
  ev.start_ns = start;
  ev.tid = tid;
  ev.sleeps = std::move(sleeps);
  return ev;
}

// The off-CPU causes of call `start` of thread `tid`: `blocked` ns blocked.
inline CausesEvent causes_event(Nanos start, std::uint32_t tid, Nanos blocked) {
  return {.ts = start, .start_ns = start, .tid = tid, .blocked_ns = blocked};
}

class StitcherTest : public ::testing::Test {
 protected:
  explicit StitcherTest(StitchLimits limits = {}) : stitcher_(limits) {
    stitcher_.add_device(DeviceInfo{kDisk, kDisk, "vda", true, false});
    stitcher_.add_device(DeviceInfo{kPart, kDisk, "vda1", true, false});
  }

  void feed(const Event& ev) { stitcher_.feed(ev, out_); }
  void finish() { stitcher_.finish(out_); }
  // The trace's end found `disks` with no write request in flight at `at`.
  void write_idle_at_end(const std::vector<DevT>& disks, Nanos at) {
    stitcher_.disks_write_idle(
        disks, at, Stitcher::Emit([this](Timeline&& t) { out_.push_back(std::move(t)); }));
  }

  // Issue + complete of one data request.
  void io(std::uint64_t ptr, std::uint64_t sector, std::uint32_t bytes, Nanos issued,
          Nanos completed) {
    feed(issue(issued, ptr, sector, bytes));
    feed(complete(completed, ptr, sector, bytes));
  }
  // Issue + complete of one FLUSH request on `disk`.
  void flush(std::uint64_t ptr, Nanos issued, Nanos completed, DevT disk = kDisk) {
    RequestEvent issued_ev = flush_issue(issued, ptr);
    RequestEvent completed_ev = flush_complete(completed, ptr);
    issued_ev.disk = completed_ev.disk = disk;
    feed(issued_ev);
    feed(completed_ev);
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

inline Nanos phase_sum(const SyncPhases& p) {
  return p.writeback_ns + p.data_io_ns + p.journal_ns + p.flush_ns + p.other_ns;
}

class NoWriteCacheTest : public StitcherTest {
 protected:
  NoWriteCacheTest() {
    stitcher_.add_device(DeviceInfo{kDisk, kDisk, "vda", false, false});
    stitcher_.add_device(DeviceInfo{kPart, kDisk, "vda1", false, false});
  }
};

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

}  // namespace wp::stitch_test
