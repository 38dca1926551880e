// SPDX-License-Identifier: Apache-2.0
#include "decode/decoder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "builders.h"
#include "writepath.h"

namespace wp {
namespace {

using builders::bytes_of;

wp_bio_record sample_bio() {
  wp_bio_record r{};
  r.h = {WP_REC_BIO, sizeof(r), WP_RECORD_VERSION, 1, 5000};
  r.bio = 0xffff888012345678ull;
  r.tid = 42;
  r.disk = (7u << 20) | 0;
  r.bdev = r.disk;
  r.sector = 2048;
  r.bytes = 8192;
  r.op = WP_OP_WRITE;
  r.flags = WP_REQ_SYNC | WP_REQ_FUA;
  r.kind = WP_BIO_QUEUE;
  r.nr_extents = 2;
  r.extents[0] = {10, 1, 0};
  r.extents[1] = {20, 1, 0};
  std::memcpy(r.comm, "kworker/u4:1", 13);
  return r;
}

TEST(Decoder, BioRecordBecomesBioEvent) {
  Decoder decoder;
  auto event = decoder.decode(bytes_of(sample_bio()));
  ASSERT_TRUE(event);
  const auto* bio = std::get_if<BioEvent>(&*event);
  ASSERT_NE(bio, nullptr);
  EXPECT_EQ(bio->ts, 5000u);
  EXPECT_EQ(bio->sector, 2048u);
  EXPECT_EQ(bio->bytes, 8192u);
  EXPECT_EQ(bio->op, ReqOp::Write);
  EXPECT_EQ(bio->flags, req_flag::kSync | req_flag::kFua);
  EXPECT_EQ(bio->nr_extents, 2);
  EXPECT_EQ(bio->extents[1].index, 20u);
  EXPECT_EQ(bio->comm, "kworker/u4:1");
  EXPECT_EQ(decoder.stats().malformed, 0u);
}

TEST(Decoder, SyscallRecordCarriesStartAndExitTimes) {
  wp_syscall_record r{};
  r.h = {WP_REC_SYSCALL, sizeof(r), WP_RECORD_VERSION, 0, 9000};
  r.start_ns = 1000;
  r.syscall = WP_SYS_PWRITE64;
  r.ret = 4096;
  r.file_flags = WP_FILE_DIRECT | WP_FILE_REGULAR;
  Decoder decoder;
  auto event = decoder.decode(bytes_of(r));
  ASSERT_TRUE(event);
  const auto& call = std::get<SyscallEvent>(*event);
  EXPECT_EQ(call.start_ns, 1000u);
  EXPECT_EQ(call.end_ns, 9000u);
  EXPECT_EQ(call.syscall, Syscall::Pwrite64);
  EXPECT_TRUE(call.file_flags & file_flag::kDirect);
}

TEST(Decoder, RejectsShortWrongVersionAndUnknownRecords) {
  Decoder decoder;
  auto good = bytes_of(sample_bio());
  EXPECT_FALSE(decoder.decode(std::span(good).first(10)));  // shorter than a header
  EXPECT_FALSE(decoder.decode(std::span(good).first(sizeof(wp_bio_record) - 1)));

  auto wrong_version = sample_bio();
  wrong_version.h.version = WP_RECORD_VERSION + 1;
  EXPECT_FALSE(decoder.decode(bytes_of(wrong_version)));

  auto unknown = sample_bio();
  unknown.h.type = 99;
  EXPECT_FALSE(decoder.decode(bytes_of(unknown)));

  auto too_many_extents = sample_bio();
  too_many_extents.nr_extents = WP_BIO_MAX_EXTENTS + 1;
  EXPECT_FALSE(decoder.decode(bytes_of(too_many_extents)));

  auto size_mismatch = sample_bio();
  size_mismatch.h.type = WP_REC_REQUEST;  // a bio's size is not a request's
  EXPECT_FALSE(decoder.decode(bytes_of(size_mismatch)));

  EXPECT_EQ(decoder.stats().records, 6u);
  EXPECT_EQ(decoder.stats().malformed, 6u);
}

TEST(Decoder, RequestCompleteKeepsCompletedBytes) {
  wp_request_record r{};
  r.h = {WP_REC_REQUEST, sizeof(r), WP_RECORD_VERSION, 0, 77};
  r.rq = 0xabc;
  r.kind = WP_RQ_COMPLETE;
  r.op = WP_OP_FLUSH;
  r.flags = WP_REQ_PREFLUSH;
  r.bytes = 0;
  Decoder decoder;
  auto event = decoder.decode(bytes_of(r));
  ASSERT_TRUE(event);
  const auto& rq = std::get<RequestEvent>(*event);
  EXPECT_EQ(rq.kind, RequestEventKind::Complete);
  EXPECT_EQ(rq.op, ReqOp::Flush);
  EXPECT_EQ(rq.bytes, 0u);
}

wp_file_path_record path_record(std::initializer_list<const char*> leaf_first,
                                std::uint16_t flags) {
  wp_file_path_record r{};
  r.h = {WP_REC_FILE_PATH, sizeof(r), WP_RECORD_VERSION, 0, 321};
  r.dev = (7u << 20) | 3;
  r.ino = 99;
  r.flags = flags;
  for (const char* name : leaf_first) {
    std::memcpy(r.names + r.len, name, std::strlen(name) + 1);
    r.len = static_cast<std::uint16_t>(r.len + std::strlen(name) + 1);
    ++r.components;
  }
  return r;
}

// The FilePathEvent a path record decodes to (a default one, and a test failure, if none).
FilePathEvent decoded_path(const wp_file_path_record& r) {
  Decoder decoder;
  auto event = decoder.decode(bytes_of(r));
  EXPECT_TRUE(event && std::holds_alternative<FilePathEvent>(*event));
  return event ? std::get<FilePathEvent>(*event) : FilePathEvent{};
}

TEST(Decoder, FilePathRecordJoinsItsComponentsRootFirst) {
  const FilePathEvent p = decoded_path(path_record({"app.log", "logs", "mnt"}, 0));
  EXPECT_EQ(p.ts, Nanos{321});
  EXPECT_EQ(p.dev, make_dev(7, 3));
  EXPECT_EQ(p.ino, 99u);
  EXPECT_EQ(p.path, "/mnt/logs/app.log");
  EXPECT_EQ(p.ns_path, "") << "no root noted (an older trace): its one path is the path";
  EXPECT_FALSE(p.deleted);
  EXPECT_FALSE(p.truncated);
  EXPECT_STREQ(hook_counter_name(WP_HOOK_FILE_PATH), "file-path");
}

// A path record whose walk passed the writer's root after `below_root` of its names.
wp_file_path_record rooted_record(std::initializer_list<const char*> leaf_first,
                                  std::uint8_t below_root, std::uint16_t flags = 0) {
  auto r = path_record(leaf_first, WP_PATH_PASSED_ROOT | flags);
  r.root_components = below_root;
  return r;
}

// The path record of a file a writer chroot'ed into /srv/box wrote as /data/x: the walk passed
// its root after two names and went on to its namespace's root.
wp_file_path_record chrooted_record(std::uint16_t flags = 0) {
  auto r = rooted_record({"x", "data", "box", "srv"}, 2, flags);
  r.mnt_ns = 4026531841;
  return r;
}

TEST(Decoder, FilePathOfAChrootedWriterIsItsOwnWithItsNamespacesBeside) {
  const FilePathEvent p = decoded_path(chrooted_record());
  EXPECT_EQ(p.path, "/data/x");
  EXPECT_EQ(p.ns_path, "/srv/box/data/x");
  EXPECT_EQ(p.mnt_ns, 4026531841u);
  EXPECT_FALSE(p.truncated);
  // Its root directory itself (an fsync of it, a relative name's directory).
  const FilePathEvent r = decoded_path(rooted_record({"box", "srv"}, 0));
  EXPECT_EQ(r.path, "/");
  EXPECT_EQ(r.ns_path, "/srv/box");
}

TEST(Decoder, FilePathOfAWriterAtItsNamespacesRootHasNoOtherPath) {
  // The walk met the writer's root where it ended: no chroot, or pivot_root'ed there.
  const FilePathEvent p = decoded_path(rooted_record({"x", "data"}, 2));
  EXPECT_EQ(p.path, "/data/x");
  EXPECT_EQ(p.ns_path, "");
}

TEST(Decoder, FilePathOfAChrootedWriterCutAboveItsRootIsWholeToTheWriter) {
  // Cut short after the walk passed the root: the writer's path is whole, the namespace's not.
  const FilePathEvent cut = decoded_path(chrooted_record(WP_PATH_TRUNCATED));
  EXPECT_EQ(cut.path, "/data/x");
  EXPECT_FALSE(cut.truncated);
  EXPECT_EQ(cut.ns_path, ".../srv/box/data/x");
  // Cut before it: neither is known whole, and the leaf end is all there is.
  const FilePathEvent below = decoded_path(path_record({"x", "data"}, WP_PATH_TRUNCATED));
  EXPECT_EQ(below.path, ".../data/x");
  EXPECT_TRUE(below.truncated);
  EXPECT_EQ(below.ns_path, "");
}

TEST(Decoder, DeletedFileOfAChrootedWriterSaysSoInBothPaths) {
  const FilePathEvent p = decoded_path(chrooted_record(WP_PATH_DELETED));
  EXPECT_EQ(p.path, "/data/x (deleted)");
  EXPECT_EQ(p.ns_path, "/srv/box/data/x (deleted)");
}

TEST(Decoder, FileViewRecordSaysWhatTheOverlayShowsOfItsBackingFile) {
  wp_file_view_record r{};
  r.h = {WP_REC_FILE_VIEW, sizeof(r), WP_RECORD_VERSION, 0, 400};
  r.dev = make_dev(7, 1);
  r.ino = 17;
  r.view_dev = make_dev(0, 39);
  r.view_ino = 16;
  Decoder decoder;
  auto event = decoder.decode(bytes_of(r));
  ASSERT_TRUE(event && std::holds_alternative<FileViewEvent>(*event));
  const auto& v = std::get<FileViewEvent>(*event);
  EXPECT_EQ(v.ts, Nanos{400});
  EXPECT_EQ(v.dev, make_dev(7, 1));
  EXPECT_EQ(v.ino, 17u);
  EXPECT_EQ(v.view_dev, make_dev(0, 39));
  EXPECT_EQ(v.view_ino, 16u);
  // No backing inode or no overlay device: not a view of anything.
  r.view_dev = 0;
  EXPECT_FALSE(decoder.decode(bytes_of(r)).has_value());
  EXPECT_EQ(decoder.stats().malformed, 1u);
}

TEST(Decoder, FuseRecordNamesTheDaemonThatAnsweredACall) {
  wp_fuse_record r{};
  r.h = {WP_REC_FUSE, sizeof(r), WP_RECORD_VERSION, 0, 500};
  r.start_ns = 100;
  r.unique = 42;
  r.tid = 77;
  r.opcode = 16;
  r.error = -5;
  r.daemon_pid = 812;
  r.daemon_tid = 813;
  std::strcpy(r.daemon_comm, "bindfs");
  Decoder decoder;
  auto event = decoder.decode(bytes_of(r));
  ASSERT_TRUE(event && std::holds_alternative<FuseReplyEvent>(*event));
  const auto& f = std::get<FuseReplyEvent>(*event);
  EXPECT_EQ(f.ts, Nanos{500});
  EXPECT_EQ(f.tid, 77u);
  EXPECT_EQ(f.start_ns, Nanos{100});
  EXPECT_EQ(f.unique, 42u);
  EXPECT_EQ(f.opcode, 16u);
  EXPECT_EQ(f.error, -5);
  EXPECT_EQ(f.daemon_pid, 812u);
  EXPECT_EQ(f.daemon_tid, 813u);
  EXPECT_EQ(f.daemon_comm, "bindfs");
}

TEST(Decoder, DeletedFilePathSaysSoAsProcDoes) {
  const FilePathEvent p = decoded_path(path_record({"gone", "tmp"}, WP_PATH_DELETED));
  EXPECT_TRUE(p.deleted);
  EXPECT_EQ(p.path, "/tmp/gone (deleted)");
}

TEST(Decoder, TruncatedFilePathKeepsTheEndNearestTheFile) {
  const FilePathEvent p = decoded_path(path_record({"f", "deep"}, WP_PATH_TRUNCATED));
  EXPECT_TRUE(p.truncated);
  EXPECT_EQ(p.path, ".../deep/f");
  // The root itself: no components.
  EXPECT_EQ(decoded_path(path_record({}, 0)).path, "/");
}

TEST(Decoder, MalformedFilePathRecordIsRefused) {
  Decoder decoder;
  auto r = path_record({"a", "b"}, 0);
  r.components = 3;  // says more names than it holds
  EXPECT_FALSE(decoder.decode(bytes_of(r)));
  r = path_record({"a"}, 0);
  r.len = WP_PATH_BYTES + 1;
  EXPECT_FALSE(decoder.decode(bytes_of(r)));
  r = path_record({"abc"}, 0);
  r.len = 2;  // cuts the name before its NUL
  EXPECT_FALSE(decoder.decode(bytes_of(r)));
  r = rooted_record({"a", "b"}, 3);  // the root beyond the names the walk read
  EXPECT_FALSE(decoder.decode(bytes_of(r)));
  EXPECT_EQ(decoder.stats().malformed, 4u);
}

TEST(Decoder, CgroupRecordBecomesCgroupEvent) {
  wp_cgroup_record r{};
  r.h = {WP_REC_CGROUP, sizeof(r), WP_RECORD_VERSION, 0, 777};
  r.cgroup_id = 0x1234;
  r.pid = 40;
  r.tid = 41;
  Decoder decoder;
  auto event = decoder.decode(bytes_of(r));
  ASSERT_TRUE(event);
  const auto& c = std::get<CgroupEvent>(*event);
  EXPECT_EQ(c.ts, Nanos{777});
  EXPECT_EQ(c.pid, 40u);
  EXPECT_EQ(c.tid, 41u);
  EXPECT_EQ(c.cgroup_id, 0x1234u);
  r.cgroup_id = 0;  // no cgroup has id 0
  EXPECT_FALSE(decoder.decode(bytes_of(r)));
  EXPECT_STREQ(hook_counter_name(WP_HOOK_CGROUP), "cgroup");
}

TEST(Decoder, MmapDirtyRecordBecomesMmapDirtyEvent) {
  wp_mmap_dirty_record r{};
  r.h = {WP_REC_MMAP_DIRTY, sizeof(r), WP_RECORD_VERSION, 1, 555};
  r.dev = (7u << 20) | 1;
  r.ino = 12;
  r.index = 9;
  r.pages = 1;
  r.pid = 40;
  r.tid = 41;
  std::memcpy(r.comm, "storer", 7);
  Decoder decoder;
  auto event = decoder.decode(bytes_of(r));
  ASSERT_TRUE(event);
  const auto& d = std::get<MmapDirtyEvent>(*event);
  EXPECT_EQ(d.ts, Nanos{555});
  EXPECT_EQ(d.dev, make_dev(7, 1));
  EXPECT_EQ(d.index, 9u);
  EXPECT_EQ(d.pid, 40u);
  EXPECT_EQ(d.tid, 41u);
  EXPECT_EQ(d.comm, "storer");
  r.pages = 0;
  EXPECT_FALSE(decoder.decode(bytes_of(r)));
  EXPECT_STREQ(hook_counter_name(WP_HOOK_MMAP_DIRTY), "mmap");
}

TEST(Decoder, SyscallRecordCarriesTheCallsFlags) {
  wp_syscall_record r{};
  r.h = {WP_REC_SYSCALL, sizeof(r), WP_RECORD_VERSION, 0, 2000};
  r.start_ns = 1000;
  r.syscall = WP_SYS_PWRITEV2;
  r.call_flags = WP_CALL_RWF_DSYNC | WP_CALL_RWF_NOWAIT;
  r.ret = 4096;
  Decoder decoder;
  auto event = decoder.decode(bytes_of(r));
  ASSERT_TRUE(event);
  const auto& call = std::get<SyscallEvent>(*event);
  EXPECT_EQ(call.call_flags, call_flag::kRwfDsync | call_flag::kRwfNowait);
  const std::vector<const char*> names = call_flag_names(call.call_flags);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.end()),
            (std::vector<std::string>{"RWF_DSYNC", "RWF_NOWAIT"}));
  EXPECT_STREQ(call_name(call), "pwritev2");
}

// sync_file_range's SYNC_FILE_RANGE_* ride in the record's MS_* bits; the decoder names them
// as that call's, never as msync's. PostgreSQL's writeback hint is _WRITE alone, which promises
// nothing; the oracle holds a sync_file_range to its contract only with all three.
TEST(Decoder, SyncFileRangeFlagsAreNamedAsThatCallsNotMsyncs) {
  wp_syscall_record r{};
  r.h = {WP_REC_SYSCALL, sizeof(r), WP_RECORD_VERSION, 0, 2000};
  r.start_ns = 1000;
  r.syscall = WP_SYS_SYNC_FILE_RANGE;
  r.call_flags = (2 | 4) << WP_CALL_SFR_SHIFT;  // SYNC_FILE_RANGE_WRITE | _WAIT_AFTER
  Decoder decoder;
  auto event = decoder.decode(bytes_of(r));
  ASSERT_TRUE(event);
  const auto& call = std::get<SyscallEvent>(*event);
  EXPECT_EQ(call.call_flags, call_flag::kSfrWrite | call_flag::kSfrWaitAfter);
  const std::vector<const char*> names = call_flag_names(call.call_flags);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.end()),
            (std::vector<std::string>{"SYNC_FILE_RANGE_WRITE", "SYNC_FILE_RANGE_WAIT_AFTER"}));
  r.syscall = WP_SYS_MSYNC;  // the same bits on msync's record are its MS_*
  event = decoder.decode(bytes_of(r));
  ASSERT_TRUE(event);
  EXPECT_EQ(std::get<SyscallEvent>(*event).call_flags,
            call_flag::kMsInvalidate | call_flag::kMsSync);
}

// The kernel side emits an open's record only for the copy-up it made: the decoder marks it so,
// whatever bits the record carries.
TEST(Decoder, OpenRecordIsACopyUp) {
  wp_syscall_record r{};
  r.h = {WP_REC_SYSCALL, sizeof(r), WP_RECORD_VERSION, 0, 2000};
  r.start_ns = 1000;
  r.syscall = WP_SYS_OPENAT2;
  r.ret = 65536;
  Decoder decoder;
  auto event = decoder.decode(bytes_of(r));
  ASSERT_TRUE(event);
  const auto& call = std::get<SyscallEvent>(*event);
  EXPECT_EQ(call.syscall, Syscall::Openat2);
  EXPECT_TRUE(is_write_syscall(call.syscall));
  EXPECT_EQ(call.call_flags, call_flag::kCopyUp);
  const std::vector<const char*> names = call_flag_names(call.call_flags);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.end()),
            std::vector<std::string>{"COPY_UP"});
  r.syscall = WP_SYS_PWRITE64;
  event = decoder.decode(bytes_of(r));
  ASSERT_TRUE(event);
  EXPECT_EQ(std::get<SyscallEvent>(*event).call_flags, 0u);
}

TEST(Decoder, DiscardRecordBecomesDiscardEventAndEmptyOneIsMalformed) {
  wp_discard_record r{};
  r.h = {WP_REC_DISCARD, sizeof(r), WP_RECORD_VERSION, 2, 1234};
  r.dev = (7u << 20) | 1;
  r.ino = 12;
  r.index = 300;
  r.pages = 4;
  Decoder decoder;
  auto event = decoder.decode(bytes_of(r));
  ASSERT_TRUE(event);
  const auto& d = std::get<DiscardEvent>(*event);
  EXPECT_EQ(d.ts, Nanos{1234});
  EXPECT_EQ(d.dev, make_dev(7, 1));
  EXPECT_EQ(d.ino, 12u);
  EXPECT_EQ(d.index, 300u);
  EXPECT_EQ(d.pages, 4u);
  r.pages = 0;  // a folio has at least one page
  EXPECT_FALSE(decoder.decode(bytes_of(r)));
  EXPECT_EQ(decoder.stats().malformed, 1u);
  EXPECT_STREQ(hook_counter_name(WP_HOOK_DISCARD), "discard");
}

wp_offcpu_record sample_offcpu() {
  wp_offcpu_record r{};
  r.h = {WP_REC_OFFCPU, sizeof(r), WP_RECORD_VERSION, 1, 9000};
  r.start_ns = 4000;
  r.tid = 77;
  r.nslots = 3;
  r.unslotted_ns = 5;
  r.inode_lock_ns = 300;
  r.inode_lock_waits = 2;
  r.holder_pid = 50;
  r.holder_tid = 51;
  std::memcpy(r.holder_comm, "wp_workload", 12);
  r.direct_reclaim_ns = 10;
  r.memcg_reclaim_ns = 20;
  r.compaction_ns = 30;
  r.blk_throttled = 4;
  // Slot 0: a short sleep; slot 1: the longest, woken by a kernel thread; slot 2: unused.
  wp_offcpu_slot& s0 = r.slots[0];
  s0.ns = 100;
  s0.longest_ns = 60;
  s0.sleeps = 2;
  s0.cause = 2;
  s0.nframes = 3;
  s0.frames[0] = 0xffffffff81000010ull;
  s0.frames[1] = 0;  // a zero frame is dropped
  s0.frames[2] = 0xffffffff81000030ull;
  wp_offcpu_slot& s1 = r.slots[1];
  s1.ns = 900;
  s1.longest_ns = 900;
  s1.sleeps = 1;
  s1.nframes = 2;
  s1.waker_nframes = 1;
  s1.flags = WP_WAKER_KNOWN | WP_WAKER_KTHREAD;
  s1.waker_pid = 123;
  s1.waker_tid = 124;
  std::memcpy(r.slots[1].waker_comm, "jbd2/loop0-8", 13);
  r.slots[1].frames[0] = 0xffffffff82000000ull;
  r.slots[1].frames[1] = 0xffffffff82000100ull;
  r.slots[1].waker_frames[0] = 0xffffffff83000000ull;
  return r;
}

TEST(Decoder, OffCpuRecordBecomesOffCpuEventLongestSleepFirst) {
  const wp_offcpu_record r = sample_offcpu();
  Decoder decoder;
  auto event = decoder.decode(bytes_of(r));
  ASSERT_TRUE(event);
  const auto& e = std::get<OffCpuEvent>(*event);
  EXPECT_EQ(e.ts, Nanos{9000});
  EXPECT_EQ(e.start_ns, Nanos{4000});
  EXPECT_EQ(e.tid, 77u);
  EXPECT_EQ(e.unslotted_ns, Nanos{5});
  EXPECT_EQ(e.inode_lock_ns, Nanos{300});
  EXPECT_EQ(e.inode_lock_waits, 2u);
  ASSERT_TRUE(e.inode_lock_holder);
  EXPECT_EQ(e.inode_lock_holder->pid, 50u);
  EXPECT_EQ(e.inode_lock_holder->tid, 51u);
  EXPECT_EQ(e.inode_lock_holder->comm, "wp_workload");
  EXPECT_EQ(e.direct_reclaim_ns, Nanos{10});
  EXPECT_EQ(e.memcg_reclaim_ns, Nanos{20});
  EXPECT_EQ(e.compaction_ns, Nanos{30});
  EXPECT_EQ(e.blk_throttled, 4u);
  ASSERT_EQ(e.sleeps.size(), 2u);  // the slot without sleeps is none
  const OffCpuSleep& first = e.sleeps[0];
  EXPECT_EQ(first.ns, Nanos{900});
  EXPECT_EQ(first.sleeps, 1u);
  EXPECT_EQ(first.flag, SleepFlag::None);
  EXPECT_EQ(first.stack.addrs,
            (std::vector<std::uint64_t>{0xffffffff82000000ull, 0xffffffff82000100ull}));
  EXPECT_EQ(first.stack.frames, (std::vector<std::string>{"", ""}));  // named later
  ASSERT_TRUE(first.waker);
  EXPECT_EQ(first.waker->pid, 123u);
  EXPECT_EQ(first.waker->tid, 124u);
  EXPECT_EQ(first.waker->comm, "jbd2/loop0-8");
  EXPECT_TRUE(first.waker->kernel_thread);
  EXPECT_EQ(first.waker->stack.addrs, (std::vector<std::uint64_t>{0xffffffff83000000ull}));
  const OffCpuSleep& second = e.sleeps[1];
  EXPECT_EQ(second.ns, Nanos{100});
  EXPECT_EQ(second.longest_ns, Nanos{60});
  EXPECT_EQ(second.flag, SleepFlag::WritebackWait);
  EXPECT_EQ(second.stack.addrs,
            (std::vector<std::uint64_t>{0xffffffff81000010ull, 0xffffffff81000030ull}));
  EXPECT_FALSE(second.waker);
  EXPECT_STREQ(hook_counter_name(WP_HOOK_OFFCPU), "offcpu");
}

TEST(Decoder, OffCpuRecordWithoutHolderOrWakerHasNone) {
  wp_offcpu_record r = sample_offcpu();
  r.holder_pid = 0;
  r.slots[1].flags = WP_WAKER_KTHREAD;  // no WP_WAKER_KNOWN: the waker fields mean nothing
  Decoder decoder;
  auto event = decoder.decode(bytes_of(r));
  ASSERT_TRUE(event);
  const auto& e = std::get<OffCpuEvent>(*event);
  EXPECT_FALSE(e.inode_lock_holder);
  EXPECT_FALSE(e.sleeps[0].waker);
}

TEST(Decoder, MalformedOffCpuRecordIsRefused) {
  Decoder decoder;
  wp_offcpu_record r = sample_offcpu();
  r.h.size = sizeof(r) - 8;  // the wrong size
  EXPECT_FALSE(decoder.decode(bytes_of(r)));
  r = sample_offcpu();
  r.nslots = WP_OFFCPU_SLOTS + 1;
  EXPECT_FALSE(decoder.decode(bytes_of(r)));
  r = sample_offcpu();
  r.slots[0].nframes = WP_STACK_DEPTH + 1;
  EXPECT_FALSE(decoder.decode(bytes_of(r)));
  r = sample_offcpu();
  r.slots[1].waker_nframes = WP_STACK_DEPTH + 1;
  EXPECT_FALSE(decoder.decode(bytes_of(r)));
  r = sample_offcpu();
  r.slots[0].longest_ns = r.slots[0].ns + 1;  // a sleep longer than all of them
  EXPECT_FALSE(decoder.decode(bytes_of(r)));
  EXPECT_EQ(decoder.stats().malformed, 5u);
  EXPECT_EQ(decoder.stats().records, 5u);
}

}  // namespace
}  // namespace wp
