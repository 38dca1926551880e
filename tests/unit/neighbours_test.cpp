// SPDX-License-Identifier: Apache-2.0
// The neighbours of a sync: other owners' data its disk completed inside the call, charged to
// the dirtier of the pages a kernel thread wrote back or to the user thread that queued them;
// none for the caller's own, the journal's or another disk's; and every owner's total.
#include "stitch/neighbours.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace wp::stitch {
namespace {

constexpr DevT kDisk = make_dev(7, 0);
constexpr DevT kOtherDisk = make_dev(7, 1);
constexpr Nanos kMs = 1'000'000;

struct Fixture {
  std::uint64_t next_request = 1;
  NeighbourTracker tracker{[](std::uint32_t pid, std::uint32_t) -> std::uint64_t {
    return pid == 300 ? 77 : 0;  // the bulk writer's cgroup, as its cgroup record said
  }};

  // A bio of `bytes` queued by thread pid/pid (`kthread`: a kernel thread), of file `ino`.
  static std::shared_ptr<Bio> bio(std::uint32_t pid, const char* comm, std::uint32_t bytes,
                                  std::uint64_t ino, bool kthread) {
    auto b = std::make_shared<Bio>();
    b->ev.pid = pid;
    b->ev.tid = pid;
    b->ev.comm = comm;
    b->ev.bytes = bytes;
    b->ev.ino = ino;
    b->ev.file_dev = kDisk;
    b->ev.disk = kDisk;
    b->ev.op = ReqOp::Write;
    if (kthread) b->ev.bio_flags |= bio_flag::kKernelThread;
    return b;
  }
  // The bulk writer (pid 300, cgroup 77) turned file 12 dirty: a flusher's bios of it are its.
  void bulk_writer_dirtied_file_12() {
    DirtierEvent dirtier;
    dirtier.dev = kDisk;
    dirtier.ino = 12;
    dirtier.pid = 300;
    dirtier.tid = 300;
    dirtier.comm = "bulk-writer";
    dirtier.cgroup_id = 77;
    tracker.on_dirtier(dirtier);
  }
  void complete(DevT disk, Nanos at, std::vector<std::shared_ptr<Bio>> bios,
                ReqOp op = ReqOp::Write) {
    Request r;
    r.id = next_request++;
    r.tl.disk = disk;
    r.tl.op = op;
    tracker.data_completed(r, bios, at);
  }
  static SyscallEvent fdatasync(std::uint32_t pid, Nanos start, Nanos end) {
    SyscallEvent call;
    call.syscall = Syscall::Fdatasync;
    call.pid = pid;
    call.tid = pid;
    call.start_ns = start;
    call.end_ns = end;
    return call;
  }
};

TEST(Neighbours, AFlushersWritebackIsChargedToTheFilesDirtier) {
  Fixture f;
  f.bulk_writer_dirtied_file_12();
  // Inside the call [10 ms, 30 ms]: 3 MiB of the bulk file by the flusher, 4 KiB of the
  // caller's own, 16 KiB of the journal (a kernel thread's, no file). Outside it: 1 MiB.
  f.complete(kDisk, 5 * kMs, {Fixture::bio(90, "kworker/u4:1", 1u << 20, 12, true)});
  f.complete(kDisk, 12 * kMs,
             {Fixture::bio(90, "kworker/u4:1", 1u << 20, 12, true),
              Fixture::bio(90, "kworker/u4:1", 1u << 20, 12, true)});
  f.complete(kDisk, 20 * kMs, {Fixture::bio(200, "wal-writer", 4096, 13, false)});
  f.complete(kDisk, 25 * kMs, {Fixture::bio(91, "jbd2/loop0-8", 16384, 0, true)});
  f.complete(kDisk, 29 * kMs, {Fixture::bio(90, "kworker/u4:1", 1u << 20, 12, true)});
  f.complete(kDisk, 31 * kMs, {Fixture::bio(90, "kworker/u4:1", 1u << 20, 12, true)});

  const auto n = f.tracker.of(Fixture::fdatasync(200, 10 * kMs, 30 * kMs), {kDisk});
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].owner.pid, 300u);
  EXPECT_EQ(n[0].owner.comm, "bulk-writer");
  EXPECT_EQ(n[0].owner.cgroup_id, 77u);
  EXPECT_EQ(n[0].disk, kDisk);
  EXPECT_EQ(n[0].bytes, 3u << 20);
  EXPECT_EQ(n[0].requests, 2u);
  const double total = (3u << 20) + 4096 + 16384;
  EXPECT_DOUBLE_EQ(n[0].share, (3u << 20) / total);
  EXPECT_EQ(n[0].delay_ns, static_cast<Nanos>(20 * kMs * ((3u << 20) / total)));

  // The totals: every owner's bytes over the trace, the unowned journal's left out.
  const auto totals = f.tracker.totals();
  ASSERT_EQ(totals.size(), 2u);
  EXPECT_EQ(totals[0].owner.pid, 300u);
  EXPECT_EQ(totals[0].bytes, 5u << 20);
  EXPECT_EQ(totals[0].requests, 4u);
  EXPECT_EQ(totals[1].owner.pid, 200u);
  EXPECT_EQ(totals[1].bytes, 4096u);
}

// Data the kernel kept out (a bystander's) adds to its owner's bytes over the
// trace (a process's own, or a flusher's charged to its file's dirtier; none known: nobody's),
// and to no sync's neighbours.
TEST(Neighbours, DataKeptOutAddsToItsOwnersTotalsOnly) {
  Fixture f;
  f.bulk_writer_dirtied_file_12();
  f.complete(kDisk, 12 * kMs, {Fixture::bio(90, "kworker/u4:1", 1u << 20, 12, true)});
  f.tracker.add_filtered({.disk = kDisk,
                          .dev = kDisk,
                          .ino = 12,
                          .comm = {},
                          .bytes = 3u << 20,
                          .bios = 3});  // flusher's
  f.tracker.add_filtered({.disk = kDisk,
                          .tgid = 400,
                          .cgroup_id = 88,
                          .comm = "fio",
                          .bytes = 8192,
                          .bios = 2});  // its own O_DIRECT
  f.tracker.add_filtered(
      {.disk = kDisk, .dev = kDisk, .ino = 99, .comm = {}, .bytes = 1u << 20, .bios = 1});

  const auto n = f.tracker.of(Fixture::fdatasync(200, 10 * kMs, 30 * kMs), {kDisk});
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].bytes, 1u << 20);
  const auto totals = f.tracker.totals();
  ASSERT_EQ(totals.size(), 2u);
  EXPECT_EQ(totals[0].owner.pid, 300u);
  EXPECT_EQ(totals[0].bytes, 4u << 20);
  EXPECT_EQ(totals[0].requests, 1u);  // the one request seen
  EXPECT_EQ(totals[1].owner.pid, 400u);
  EXPECT_EQ(totals[1].owner.comm, "fio");
  EXPECT_EQ(totals[1].owner.cgroup_id, 88u);
  EXPECT_EQ(totals[1].bytes, 8192u);
  EXPECT_EQ(totals[1].requests, 0u);
}

// A bystander's request the kernel kept out, completing while a traced sync waited, is a
// neighbour of the syncs it completed inside (a process's own, or a flusher's charged to its
// file's dirtier), and adds nothing to the totals: the kernel counted it when it kept it out.
TEST(Neighbours, ABystandersKeptOutDataIsANeighbourNotATotal) {
  Fixture f;
  f.bulk_writer_dirtied_file_12();
  BystanderIoEvent flusher;
  flusher.ts = 15 * kMs;
  flusher.rq = 0xffff888100001000;
  flusher.disk = kDisk;
  flusher.file_dev = kDisk;
  flusher.ino = 12;
  flusher.bytes = 1u << 20;
  f.tracker.on_bystander_io(flusher);
  flusher.ts = 16 * kMs;  // the same request's second half
  f.tracker.on_bystander_io(flusher);
  BystanderIoEvent direct;
  direct.ts = 20 * kMs;
  direct.rq = 0xffff888100002000;
  direct.disk = kDisk;
  direct.tgid = 400;
  direct.cgroup_id = 88;
  direct.comm = "fio";
  direct.bytes = 8192;
  f.tracker.on_bystander_io(direct);
  direct.ts = 40 * kMs;  // after the call
  f.tracker.on_bystander_io(direct);

  const auto n = f.tracker.of(Fixture::fdatasync(200, 10 * kMs, 30 * kMs), {kDisk});
  ASSERT_EQ(n.size(), 2u);
  EXPECT_EQ(n[0].owner.pid, 300u);
  EXPECT_EQ(n[0].bytes, 2u << 20);
  EXPECT_EQ(n[0].requests, 1u);
  EXPECT_EQ(n[1].owner.pid, 400u);
  EXPECT_EQ(n[1].owner.comm, "fio");
  EXPECT_EQ(n[1].owner.cgroup_id, 88u);
  EXPECT_EQ(n[1].bytes, 8192u);
  EXPECT_TRUE(f.tracker.totals().empty());
}

TEST(Neighbours, AUserThreadsOwnBiosAreItsOwnWithItsCgroup) {
  Fixture f;
  // The bulk writer's own fsync queues its pages itself; no dirtier record is needed.
  f.complete(kDisk, 15 * kMs, {Fixture::bio(300, "bulk-writer", 512u << 10, 12, false)});
  const auto n = f.tracker.of(Fixture::fdatasync(200, 10 * kMs, 30 * kMs), {kDisk});
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].owner.pid, 300u);
  EXPECT_EQ(n[0].owner.cgroup_id, 77u);
  EXPECT_DOUBLE_EQ(n[0].share, 1.0);
}

TEST(Neighbours, NoneAloneOnAnotherDiskOrForUnknownDirtiers) {
  Fixture f;
  // Its own data, a flusher's pages of a file dirtied before the trace (no dirtier record),
  // another process's data on another disk, and a discard: no neighbour.
  f.complete(kDisk, 12 * kMs, {Fixture::bio(200, "wal-writer", 4096, 13, false)});
  f.complete(kDisk, 13 * kMs, {Fixture::bio(90, "kworker/u4:1", 1u << 20, 99, true)});
  f.complete(kOtherDisk, 14 * kMs, {Fixture::bio(300, "bulk-writer", 1u << 20, 12, false)});
  f.complete(kDisk, 15 * kMs, {Fixture::bio(300, "bulk-writer", 1u << 20, 12, false)},
             ReqOp::Discard);
  EXPECT_TRUE(f.tracker.of(Fixture::fdatasync(200, 10 * kMs, 30 * kMs), {kDisk}).empty());
  // The other disk's is its neighbour there.
  EXPECT_EQ(f.tracker.of(Fixture::fdatasync(200, 10 * kMs, 30 * kMs), {kOtherDisk}).size(), 1u);
}

TEST(Neighbours, AtMostTheFiveWithMostBytesAndNothingBeforeTheSweepHorizon) {
  Fixture f;
  for (std::uint32_t pid = 400; pid < 410; ++pid)
    f.complete(kDisk, 12 * kMs, {Fixture::bio(pid, "writer", (pid - 399) * 4096, pid, false)});
  auto n = f.tracker.of(Fixture::fdatasync(200, 10 * kMs, 30 * kMs), {kDisk});
  ASSERT_EQ(n.size(), kMaxNeighbours);
  EXPECT_EQ(n.front().owner.pid, 409u);
  EXPECT_EQ(n.back().owner.pid, 405u);
  f.tracker.sweep(20 * kMs);
  EXPECT_TRUE(f.tracker.of(Fixture::fdatasync(200, 10 * kMs, 30 * kMs), {kDisk}).empty());
}

}  // namespace
}  // namespace wp::stitch
