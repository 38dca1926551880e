// SPDX-License-Identifier: Apache-2.0
// The sequence rules of the HazardAuditor on synthetic item streams, each beside its near
// misses: the safe atomic save (write, fsync, rename, fsync the directory) and the same save
// one step away, which reports exactly the rule that step breaks.
#include <gtest/gtest.h>

#include <cerrno>

#include <map>
#include <string>
#include <vector>

#include "analyze/hazards.h"

namespace wp {
namespace {

constexpr DevT kDev = 0x700001;
constexpr std::uint64_t kTemp = 12, kTarget = 11, kDir = 2;
const std::string kDirPath = "/data";
const std::string kTempPath = "/data/f.tmp";
const std::string kTargetPath = "/data/f";

// Builds a stream of items one after another, 1 µs apart, each with the next id.
class Stream {
 public:
  std::uint64_t write(std::uint64_t ino, const std::string& path,
                      std::optional<Nanos> durable = std::nullopt) {
    WriteTimeline w;
    w.call = call(Syscall::Pwrite64, ino, path);
    w.call.ret = 4096;
    w.call.count = 4096;
    w.durable_ns = durable;
    w.state = durable ? WriteState::Durable : WriteState::Dirty;
    return add(std::move(w));
  }
  std::uint64_t sync(Syscall syscall, std::uint64_t ino, const std::string& path,
                     std::uint32_t call_flags = 0) {
    SyncTimeline s;
    s.call = call(syscall, ino, path);
    s.call.call_flags = call_flags;
    return add(std::move(s));
  }
  std::uint64_t rename(const std::string& from, const std::string& to, std::int64_t ret = 0,
                       std::uint32_t flags = 0) {
    NameChangeTimeline n;
    n.call = call(Syscall::Renameat2, 0, "");
    n.call.ret = ret;
    n.op = NameChangeOp::Rename;
    n.flags = flags;
    n.names = {name_of(from), name_of(to)};
    n.paths = {from, to};
    n.dirs = {{{kDev, kDir}, {kDev, kDir}}};
    return add(std::move(n));
  }
  std::uint64_t link(const std::string& from, const std::string& to) {
    const auto id = rename(from, to);
    auto& n = std::get<NameChangeTimeline>(items_.back());
    n.op = NameChangeOp::Link;
    n.call.syscall = Syscall::Linkat;
    return id;
  }
  std::uint64_t unlink(const std::string& path, std::int64_t ret = 0) {
    NameChangeTimeline n;
    n.call = call(Syscall::Unlinkat, 0, "");
    n.call.ret = ret;
    n.op = NameChangeOp::Unlink;
    n.names = {name_of(path), ""};
    n.paths = {path, ""};
    n.dirs[0] = {kDev, kDir};
    return add(std::move(n));
  }
  std::uint64_t open(NameChangeOp op, std::uint32_t flags, std::uint64_t ino,
                     const std::string& path) {
    NameChangeTimeline n;
    n.call = call(Syscall::OpenatCreate, ino, ino ? path : "");
    n.op = op;
    n.flags = flags;
    n.names = {name_of(path), ""};
    n.paths = {path, ""};
    n.dirs[0] = {kDev, kDir};
    return add(std::move(n));
  }
  std::uint64_t send(int fd, std::uint32_t pid = 42) {
    NameChangeTimeline n;
    n.call = call(Syscall::Sendto, 0, "");
    n.call.pid = n.call.tid = pid;
    n.call.fd = fd;
    n.op = NameChangeOp::Send;
    return add(std::move(n));
  }
  Nanos now() const { return t_; }

  // Every item through the auditor; their hazards by item id.
  std::map<std::uint64_t, std::vector<Hazard>> audit() {
    HazardAuditor auditor;
    std::map<std::uint64_t, std::vector<Hazard>> out;
    const HazardAuditor::Out keep = [&](Timeline&& item) {
      EXPECT_FALSE(out.contains(id_of(item))) << "item handed out twice";
      out[id_of(item)] = std::visit([](const auto& t) { return t.hazards; }, item);
    };
    for (Timeline item : items_) auditor.take(std::move(item), keep);
    auditor.finish(keep);
    EXPECT_EQ(out.size(), items_.size()) << "every item comes out";
    return out;
  }

 private:
  static std::string name_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }
  SyscallEvent call(Syscall syscall, std::uint64_t ino, const std::string& path) {
    SyscallEvent c;
    c.start_ns = t_;
    c.end_ns = t_ + 500;
    t_ += 1'000;
    c.pid = c.tid = 42;
    c.comm = "save";
    c.syscall = syscall;
    c.dev = ino ? kDev : 0;
    c.ino = ino;
    c.path = path;
    return c;
  }
  template <typename T>
  std::uint64_t add(T item) {
    item.id = ++id_;
    items_.emplace_back(std::move(item));
    return id_;
  }
  Nanos t_ = 1'000'000;
  std::uint64_t id_ = 0;
  std::vector<Timeline> items_;
};

// The rules each item of a run reported, item by item, only the items with any.
std::map<std::uint64_t, std::vector<std::string>> rules(
    const std::map<std::uint64_t, std::vector<Hazard>>& found) {
  std::map<std::uint64_t, std::vector<std::string>> out;
  for (const auto& [id, hazards] : found)
    for (const Hazard& h : hazards) out[id].push_back(h.rule);
  return out;
}

using Rules = std::map<std::uint64_t, std::vector<std::string>>;

TEST(HazardAuditor, TheSafeAtomicSaveHasNoHazard) {
  Stream s;
  s.open(NameChangeOp::Open, WP_NS_CREATE | WP_NS_TRUNC, kTemp, kTempPath);
  const Nanos written = s.now();
  s.write(kTemp, kTempPath, written + 1'200);  // durable inside the fsync below
  s.sync(Syscall::Fsync, kTemp, kTempPath);
  s.rename(kTempPath, kTargetPath);
  s.sync(Syscall::Fsync, kDir, kDirPath);
  EXPECT_EQ(rules(s.audit()), Rules{});
}

TEST(HazardAuditor, RenameOfDataNeverSynced) {
  Stream s;
  const auto w1 = s.write(kTemp, kTempPath);
  const auto w2 = s.write(kTemp, kTempPath);
  const auto r = s.rename(kTempPath, kTargetPath);
  s.sync(Syscall::Fsync, kDir, kDirPath);
  const auto found = s.audit();
  EXPECT_EQ(rules(found), (Rules{{r, {"rename-of-unsynced-data"}}}));
  EXPECT_EQ(found.at(r).at(0).related, (std::vector<std::uint64_t>{w1, w2}));
}

TEST(HazardAuditor, RenameNearMisses) {
  {  // the data became durable before the rename by other means (O_SYNC, writeback + flush)
    Stream s;
    s.write(kTemp, kTempPath, 1'000'600);
    s.rename(kTempPath, kTargetPath);
    s.sync(Syscall::Fsync, kDir, kDirPath);
    EXPECT_EQ(rules(s.audit()), Rules{});
  }
  {  // another file's writes are not durable: not this rename's concern
    Stream s;
    s.write(kTarget + 100, "/data/other");
    s.write(kTemp, kTempPath, 1'001'600);
    s.rename(kTempPath, kTargetPath);
    s.sync(Syscall::Fsync, kDir, kDirPath);
    EXPECT_EQ(rules(s.audit()), Rules{});
  }
  {  // the rename failed (EXDEV): nothing was published
    Stream s;
    s.write(kTemp, kTempPath);
    s.rename(kTempPath, kTargetPath, -18);
    EXPECT_EQ(rules(s.audit()), Rules{});
  }
  {  // a write made after the rename is the renamed file's, not the rename's
    Stream s;
    s.rename(kTempPath, kTargetPath);  // no writes known under the old name yet
    s.write(kTemp, kTargetPath);
    s.sync(Syscall::Fsync, kDir, kDirPath);
    EXPECT_EQ(rules(s.audit()), Rules{});
  }
}

// "Over another": a rename to a name the trace saw free replaces no older version, and data
// the application never synced is data it asked nothing of (PostgreSQL's cache files: unlinked
// at startup, rewritten unsynced, renamed into place). Over a name it saw taken, or cannot
// tell about, the rename is judged as before.
TEST(HazardAuditor, ARenameToANameSeenFreeOfDataNeverSynced) {
  for (const std::int64_t unlinked : {0, -ENOENT}) {  // removed, or found not there
    Stream s;
    s.unlink(kTargetPath, unlinked);
    s.write(kTemp, kTempPath);
    s.rename(kTempPath, kTargetPath);
    EXPECT_EQ(rules(s.audit()), Rules{}) << "unlink returned " << unlinked;
  }
  {  // renameat2(RENAME_NOREPLACE) returned 0: the name was free
    Stream s;
    s.write(kTemp, kTempPath);
    s.rename(kTempPath, kTargetPath, 0, WP_NS_NOREPLACE);
    EXPECT_EQ(rules(s.audit()), Rules{});
  }
}

TEST(HazardAuditor, ARenameOverANameSeenTaken) {
  {  // the old file was written under the name
    Stream s;
    s.write(kTarget, kTargetPath, 1'000'600);
    s.write(kTemp, kTempPath);
    const auto r = s.rename(kTempPath, kTargetPath);
    EXPECT_EQ(rules(s.audit()), (Rules{{r, {"rename-of-unsynced-data", "name-not-durable"}}}));
  }
  {  // mv: renameat2(RENAME_NOREPLACE) fails with EEXIST, then the plain rename
    Stream s;
    s.unlink(kTargetPath);
    s.write(kTemp, kTempPath);
    // (something the trace did not see took the name since the unlink)
    s.rename(kTempPath, kTargetPath, -EEXIST, WP_NS_NOREPLACE);
    const auto r = s.rename(kTempPath, kTargetPath);
    const auto found = rules(s.audit());
    EXPECT_EQ(found.at(r),
              (std::vector<std::string>{"rename-of-unsynced-data", "name-not-durable"}));
  }
  {  // freed, then taken again by a create before the rename
    Stream s;
    s.unlink(kTargetPath);
    s.open(NameChangeOp::Open, WP_NS_CREATE, kTarget, kTargetPath);
    s.write(kTemp, kTempPath);
    const auto r = s.rename(kTempPath, kTargetPath);
    EXPECT_EQ(rules(s.audit()), (Rules{{r, {"rename-of-unsynced-data", "name-not-durable"}}}));
  }
}

TEST(HazardAuditor, ARenameToANameSeenFreeOfSyncedData) {
  // Synced, so meant to last: its name must be made durable too.
  Stream s;
  s.unlink(kTargetPath, -ENOENT);
  s.write(kTemp, kTempPath, 1'001'200);
  s.sync(Syscall::Fsync, kTemp, kTempPath);
  const auto r = s.rename(kTempPath, kTargetPath);
  EXPECT_EQ(rules(s.audit()), (Rules{{r, {"name-not-durable"}}}));
}

// The reply: a socket send after the rename and before the directory's fsync told a client
// of a name a crash could still take back.
TEST(HazardAuditor, AReplyBeforeTheNameWasDurable) {
  Stream s;
  s.write(kTemp, kTempPath, 1'001'200);
  s.sync(Syscall::Fsync, kTemp, kTempPath);
  const auto r = s.rename(kTempPath, kTargetPath);
  const auto reply = s.send(7);
  s.sync(Syscall::Fsync, kDir, kDirPath);
  const auto found = s.audit();
  EXPECT_EQ(rules(found), (Rules{{r, {"name-not-durable"}}}));
  EXPECT_EQ(found.at(r).at(0).related, (std::vector<std::uint64_t>{reply}));
}

TEST(HazardAuditor, ReplyNearMisses) {
  {  // the directory synced before the reply: the safe save, then the answer
    Stream s;
    s.write(kTemp, kTempPath, 1'001'200);
    s.sync(Syscall::Fsync, kTemp, kTempPath);
    s.rename(kTempPath, kTargetPath);
    s.sync(Syscall::Fsync, kDir, kDirPath);
    s.send(7);
    EXPECT_EQ(rules(s.audit()), Rules{});
  }
  {  // another process's send is not this one's reply
    Stream s;
    s.write(kTemp, kTempPath, 1'001'200);
    s.sync(Syscall::Fsync, kTemp, kTempPath);
    s.rename(kTempPath, kTargetPath);
    s.send(7, /*pid=*/43);
    s.sync(Syscall::Fsync, kDir, kDirPath);
    EXPECT_EQ(rules(s.audit()), Rules{});
  }
  {  // a send before the rename answers something else
    Stream s;
    s.write(kTemp, kTempPath, 1'001'200);
    s.sync(Syscall::Fsync, kTemp, kTempPath);
    s.send(7);
    s.rename(kTempPath, kTargetPath);
    s.sync(Syscall::Fsync, kDir, kDirPath);
    EXPECT_EQ(rules(s.audit()), Rules{});
  }
}

TEST(HazardAuditor, AWriteAfterTheFsyncAndBeforeTheRename) {
  Stream s;
  s.write(kTemp, kTempPath, 1'001'200);
  const auto sync = s.sync(Syscall::Fsync, kTemp, kTempPath);
  const auto late = s.write(kTemp, kTempPath);
  const auto r = s.rename(kTempPath, kTargetPath);
  s.sync(Syscall::Fsync, kDir, kDirPath);
  const auto found = s.audit();
  // Only this rule: the file was synced, so "never synced" would be wrong.
  EXPECT_EQ(rules(found), (Rules{{r, {"write-after-fsync-before-rename"}}}));
  EXPECT_EQ(found.at(r).at(0).related, (std::vector<std::uint64_t>{late, sync}));
}

TEST(HazardAuditor, AnFsyncThatReturnedCoversTheWritesBeforeIt) {
  Stream s;  // the trace never saw the write durable (a flush it missed): the fsync's 0 counts
  s.write(kTemp, kTempPath);
  s.sync(Syscall::Fsync, kTemp, kTempPath);
  s.rename(kTempPath, kTargetPath);
  s.sync(Syscall::Fsync, kDir, kDirPath);
  EXPECT_EQ(rules(s.audit()), Rules{});
}

TEST(HazardAuditor, WriteAfterFsyncNearMiss) {
  Stream s;  // the late write was synced again before the rename
  s.write(kTemp, kTempPath, 1'000'900);
  s.sync(Syscall::Fsync, kTemp, kTempPath);
  s.write(kTemp, kTempPath, 1'003'400);
  s.sync(Syscall::Fdatasync, kTemp, kTempPath);
  s.rename(kTempPath, kTargetPath);
  s.sync(Syscall::Fsync, kDir, kDirPath);
  EXPECT_EQ(rules(s.audit()), Rules{});
}

TEST(HazardAuditor, ANameNeverMadeDurable) {
  Stream s;
  s.write(kTemp, kTempPath, 1'001'200);
  s.sync(Syscall::Fsync, kTemp, kTempPath);
  const auto r = s.rename(kTempPath, kTargetPath);
  const auto found = s.audit();
  EXPECT_EQ(rules(found), (Rules{{r, {"name-not-durable"}}}));
  EXPECT_NE(found.at(r).at(0).detail.find("/data"), std::string::npos);
}

TEST(HazardAuditor, NameNearMisses) {
  {  // the directory synced before the rename does not count
    Stream s;
    s.write(kTemp, kTempPath, 1'001'200);
    s.sync(Syscall::Fsync, kTemp, kTempPath);
    s.sync(Syscall::Fsync, kDir, kDirPath);
    const auto r = s.rename(kTempPath, kTargetPath);
    EXPECT_EQ(rules(s.audit()), (Rules{{r, {"name-not-durable"}}}));
  }
  {  // syncfs after the rename covers it
    Stream s;
    s.write(kTemp, kTempPath, 1'001'200);
    s.sync(Syscall::Fsync, kTemp, kTempPath);
    s.rename(kTempPath, kTargetPath);
    s.sync(Syscall::Syncfs, kTemp, kTargetPath);
    EXPECT_EQ(rules(s.audit()), Rules{});
  }
  {  // the directory known by path only (its inode unknown to the rename)
    Stream s;
    s.write(kTemp, kTempPath, 1'001'200);
    s.sync(Syscall::Fsync, kTemp, kTempPath);
    s.rename(kTempPath, kTargetPath);
    s.sync(Syscall::Fsync, kDir + 50, kDirPath);
    EXPECT_EQ(rules(s.audit()), Rules{});
  }
  {  // the name was removed again before the end: nothing to lose
    Stream s;
    s.write(kTemp, kTempPath, 1'001'200);
    s.sync(Syscall::Fsync, kTemp, kTempPath);
    s.rename(kTempPath, kTargetPath);
    s.rename(kTargetPath, "/data/f.old");
    s.sync(Syscall::Fsync, kDir, kDirPath);
    EXPECT_EQ(rules(s.audit()), Rules{});
  }
}

TEST(HazardAuditor, ALinkToSyncedDataNeedsItsDirectorySynced) {
  Stream s;  // git's loose objects: written and fsynced as tmp_obj, linked, the temp unlinked
  s.open(NameChangeOp::Open, WP_NS_CREATE | WP_NS_EXCL, kTemp, kTempPath);
  s.write(kTemp, kTempPath, 1'002'200);
  s.sync(Syscall::Fsync, kTemp, kTempPath);
  const auto linked = s.link(kTempPath, kTargetPath);
  s.unlink(kTempPath);
  EXPECT_EQ(rules(s.audit()), (Rules{{linked, {"name-not-durable"}}}));
}

TEST(HazardAuditor, LinkAndCreateNearMisses) {
  {  // data never synced: the application did not ask for it to be kept
    Stream s;
    s.write(kTemp, kTempPath);
    s.link(kTempPath, kTargetPath);
    EXPECT_EQ(rules(s.audit()), Rules{});
  }
  {  // the directory synced after the link
    Stream s;
    s.write(kTemp, kTempPath, 1'001'200);
    s.sync(Syscall::Fsync, kTemp, kTempPath);
    s.link(kTempPath, kTargetPath);
    s.sync(Syscall::Fsync, kDir, kDirPath);
    EXPECT_EQ(rules(s.audit()), Rules{});
  }
  {  // an exclusive create whose data is then fsynced: that fsync carries the name too
    Stream s;
    s.open(NameChangeOp::Open, WP_NS_CREATE | WP_NS_EXCL, kTemp, kTempPath);
    s.write(kTemp, kTempPath, 1'002'200);
    s.sync(Syscall::Fsync, kTemp, kTempPath);
    EXPECT_EQ(rules(s.audit()), Rules{});
  }
  {  // a rename followed by an fsync of the renamed file: its commit carries the rename
    Stream s;
    s.write(kTemp, kTempPath, 1'000'900);
    s.sync(Syscall::Fsync, kTemp, kTempPath);
    s.rename(kTempPath, kTargetPath);
    s.sync(Syscall::Fsync, kTemp, kTargetPath);
    EXPECT_EQ(rules(s.audit()), Rules{});
  }
}

TEST(HazardAuditor, AReusedInodeNumberIsAnotherFile) {
  {  // the old file's fsync does not count for the new file under the same inode number
    Stream s;
    s.write(kTemp, "/data/old", 1'000'900);
    s.sync(Syscall::Fsync, kTemp, "/data/old");
    s.unlink("/data/old");
    s.open(NameChangeOp::Open, WP_NS_CREATE | WP_NS_TRUNC, kTemp, kTempPath);
    const auto w = s.write(kTemp, kTempPath);
    const auto r = s.rename(kTempPath, kTargetPath);
    s.sync(Syscall::Fsync, kDir, kDirPath);
    const auto found = s.audit();
    EXPECT_EQ(rules(found), (Rules{{r, {"rename-of-unsynced-data"}}}));
    EXPECT_EQ(found.at(r).at(0).related, (std::vector<std::uint64_t>{w}));
  }
  {  // a sync_file_range of a scratch file deleted later: nothing left to make durable
    Stream s;
    s.write(kTemp, kTempPath);
    s.sync(Syscall::SyncFileRange, kTemp, kTempPath);
    s.unlink(kTempPath);
    EXPECT_EQ(rules(s.audit()), Rules{});
  }
  {  // but one renamed into place and later replaced was the saved file until then
    Stream s;
    s.write(kTemp, kTempPath);
    const auto first = s.sync(Syscall::SyncFileRange, kTemp, kTempPath);
    s.rename(kTempPath, kTargetPath);
    s.sync(Syscall::Fsync, kDir, kDirPath);
    s.write(kTemp + 1, kTempPath);
    const auto second = s.sync(Syscall::SyncFileRange, kTemp + 1, kTempPath);
    s.rename(kTempPath, kTargetPath);
    s.sync(Syscall::Fsync, kDir, kDirPath);
    EXPECT_EQ(rules(s.audit()),
              (Rules{{first, {"sync-of-the-wrong-thing"}}, {second, {"sync-of-the-wrong-thing"}}}));
  }
}

TEST(HazardAuditor, SyncFileRangeAsTheLastSync) {
  Stream s;
  s.write(kTemp, kTempPath);
  const auto sfr = s.sync(Syscall::SyncFileRange, kTemp, kTempPath);
  // The rename of data only sync_file_range wrote: the wrong sync is the cause, said once.
  s.rename(kTempPath, kTargetPath);
  s.sync(Syscall::Fsync, kDir, kDirPath);
  EXPECT_EQ(rules(s.audit()), (Rules{{sfr, {"sync-of-the-wrong-thing"}}}));
}

TEST(HazardAuditor, MsyncAsyncAsTheLastSync) {
  Stream s;
  s.write(kTemp, kTempPath);
  const auto ms = s.sync(Syscall::Msync, kTemp, kTempPath, call_flag::kMsAsync);
  EXPECT_EQ(rules(s.audit()), (Rules{{ms, {"sync-of-the-wrong-thing"}}}));
}

TEST(HazardAuditor, WrongSyncNearMisses) {
  {  // sync_file_range to start writeback early, fsync later: PostgreSQL's checkpointer
    Stream s;
    s.write(kTemp, kTempPath);
    s.sync(Syscall::SyncFileRange, kTemp, kTempPath);
    s.sync(Syscall::Fsync, kTemp, kTempPath);
    EXPECT_EQ(rules(s.audit()), Rules{});
  }
  {  // msync(MS_SYNC) is a full sync
    Stream s;
    s.write(kTemp, kTempPath);
    s.sync(Syscall::Msync, kTemp, kTempPath, call_flag::kMsSync);
    EXPECT_EQ(rules(s.audit()), Rules{});
  }
  {  // nothing written before it: nothing it failed to make durable
    Stream s;
    s.sync(Syscall::SyncFileRange, kTemp, kTempPath);
    s.write(kTemp, kTempPath, 1'001'900);
    EXPECT_EQ(rules(s.audit()), Rules{});
  }
}

TEST(HazardAuditor, HeldItemsComeOutInIdOrderAfterThePassingOnes) {
  HazardAuditor auditor;
  std::vector<std::uint64_t> out;
  const HazardAuditor::Out keep = [&](Timeline&& item) { out.push_back(id_of(item)); };
  NameChangeTimeline rename;
  rename.id = 1;
  rename.op = NameChangeOp::Rename;
  SyncTimeline sfr;
  sfr.id = 2;
  sfr.call.syscall = Syscall::SyncFileRange;
  SyncTimeline fsync;
  fsync.id = 3;
  fsync.call.syscall = Syscall::Fsync;
  auditor.take(rename, keep);
  auditor.take(sfr, keep);
  auditor.take(fsync, keep);
  EXPECT_EQ(out, (std::vector<std::uint64_t>{3}));  // the rename and sync_file_range wait
  auditor.finish(keep);
  EXPECT_EQ(out, (std::vector<std::uint64_t>{3, 1, 2}));
}

TEST(HazardAuditor, PastItsBoundTheOldestHeldItemLeavesUndecided) {
  HazardAuditor auditor(/*max_held=*/2);
  std::vector<std::uint64_t> out;
  const HazardAuditor::Out keep = [&](Timeline&& item) { out.push_back(id_of(item)); };
  for (std::uint64_t id = 1; id <= 3; ++id) {
    NameChangeTimeline n;
    n.id = id;
    n.op = NameChangeOp::Unlink;
    auditor.take(n, keep);
  }
  EXPECT_EQ(out, (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(auditor.undecided(), 1u);
  auditor.finish(keep);
  EXPECT_EQ(out, (std::vector<std::uint64_t>{1, 2, 3}));
}

}  // namespace
}  // namespace wp
