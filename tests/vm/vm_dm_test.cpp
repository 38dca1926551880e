// SPDX-License-Identifier: Apache-2.0
// VM tests, host side (vm_test.cpp): ext4 on device-mapper targets over the guest's NVMe
// namespace: dm-linear (requests remapped, flushes counted, --dev by either device) and a
// table switched to fail every write (lost writes).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "vm_console.h"

namespace {

using namespace wp::vm_test;

// ---- ext4 on dm-linear over the namespace's second half (guest-tests.sh) --------------------

// The dm device guest-tests.sh made ("254:0"), built on the NVMe namespace.
std::string dm_dev() {
  const std::string line = info("dm");
  return line.substr(0, line.find(' '));
}

// Where the dm-linear table maps the device: from this sector of nvme0n1 on.
constexpr std::uint64_t kDmLinearStart = 524288;

TEST_F(VmLog, DmLinearDeviceIsStackedOnTheNvmeNamespace) {
  // device-mapper's major is dynamic (253 or 254, as modules registered).
  EXPECT_FALSE(dm_dev().empty()) << info("dm");
  EXPECT_NE(dm_dev(), kNvmeDev);
  EXPECT_NE(info("dm").find("slaves nvme0n1"), std::string::npos) << info("dm");
  EXPECT_NE(info("dm-mount").find("/dev/dm-0 /mnt ext4"), std::string::npos) << info("dm-mount");
}

// Each pwrite's item is on the device stat() reports (the dm device); its data requests and
// its fsync's flushes are the ones that reached the NVMe disk through the remap, each once.
TEST_F(VmLog, FsyncOnDmLinearHasTheNvmeRequestsAndFlushes) {
  const GuestRun& r = run("dm-fsync");
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  auto items = json_lines(r);
  auto writes = of_type(items, "write");
  auto fsyncs = of_type(items, "fsync");
  ASSERT_EQ(writes.size(), 8u);
  ASSERT_EQ(fsyncs.size(), 8u);
  auto summary = of_type(items, "summary");
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(u64(summary[0]["lost"]), 0u);
  for (std::size_t i = 0; i < writes.size(); ++i) {
    const json& w = writes[i];
    SCOPED_TRACE(w.dump());
    EXPECT_EQ(w["dev"], dm_dev());
    EXPECT_EQ(w["state"], "durable");
    ASSERT_FALSE(w["durable_ns"].is_null());
    EXPECT_LE(u64(w["durable_ns"]), u64(fsyncs[i]["end_ns"]));
    ASSERT_FALSE(w["requests"].empty());
    for (const auto& rq : w["requests"]) {
      EXPECT_EQ(rq["dev"], kNvmeDev) << "a request not on the leaf disk";
      EXPECT_GE(u64(rq["sector"]), kDmLinearStart) << "not remapped into the dm table's range";
    }
  }
  for (const auto& fsync : fsyncs) {
    SCOPED_TRACE(fsync.dump());
    EXPECT_EQ(fsync["dev"], dm_dev());
    EXPECT_GT(expect_nvme_write_commands({fsync}), 0);
    bool nvme_flush = false;
    for (const auto& rq : fsync["flushes"]) {
      EXPECT_EQ(rq["dev"], kNvmeDev);
      nvme_flush = nvme_flush || (is_nvme_flush(rq) && rq["nvme"].is_object() &&
                                  rq["nvme"]["opcode"] == kNvmeFlush);
    }
    EXPECT_TRUE(nvme_flush) << "no NVMe flush command";
  }
}

// O_DIRECT on dm-linear: the bio queued on the dm device and its clone on the namespace are
// one write; the item has the namespace's request only, once.
TEST_F(VmLog, DirectWritesOnDmLinearHaveTheirNvmeRequestOnce) {
  const GuestRun& r = run("dm-direct");
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  auto writes = of_type(json_lines(r), "write");
  ASSERT_EQ(writes.size(), 8u);
  EXPECT_EQ(expect_nvme_write_commands(writes), 8);
  for (const auto& w : writes) {
    SCOPED_TRACE(w.dump());
    EXPECT_EQ(w["dev"], dm_dev());
    ASSERT_EQ(w["requests"].size(), 1u);
    EXPECT_EQ(w["requests"][0]["dev"], kNvmeDev);
    EXPECT_EQ(u64(w["requests"][0]["bytes"]), 4096u);
    EXPECT_GE(u64(w["requests"][0]["sector"]), kDmLinearStart);
  }
}

// The traced flush requests against the disk's own count of completed flushes over the run.
// Tolerance: the disk may also see a flush the run's items do not own (a periodic jbd2 commit
// landing in the window, 5 s apart), so at most one more; never fewer.
TEST_F(VmLog, DmFsyncFlushesMatchTheNvmeDiskstatsFlushCount) {
  const GuestRun& r = run("dm-fsync");
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  const std::string before = info("dm-flushes-before"), after = info("dm-flushes-after");
  ASSERT_FALSE(before.empty());
  ASSERT_FALSE(after.empty());
  const long delta = std::stol(after) - std::stol(before);
  std::set<std::pair<std::uint64_t, std::uint64_t>> flushes;  // (issue, complete): once each
  for (const auto& fsync : of_type(json_lines(r), "fsync"))
    for (const auto& rq : fsync["flushes"])
      if (is_nvme_flush(rq) && !rq["issue_ns"].is_null() && !rq["complete_ns"].is_null())
        flushes.emplace(u64(rq["issue_ns"]), u64(rq["complete_ns"]));
  const long traced = static_cast<long>(flushes.size());
  std::printf("dm-fsync: %ld flush requests traced, nvme0n1 diskstats flush delta %ld\n", traced,
              delta);
  EXPECT_GE(delta, traced);
  EXPECT_LE(delta, traced + 1);
}

// --dev takes the dm device (what stat() reports) or the disk under it: both select the
// writes, their requests and flushes.
class DmDevFilter : public VmLog, public ::testing::WithParamInterface<const char*> {};

TEST_P(DmDevFilter, SelectsTheWritesWithTheirRequests) {
  const GuestRun& r = run(GetParam());
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  auto items = json_lines(r);
  auto writes = of_type(items, "write");
  auto fsyncs = of_type(items, "fsync");
  ASSERT_EQ(writes.size(), 4u);
  ASSERT_EQ(fsyncs.size(), 4u);
  for (const auto& w : writes) {
    SCOPED_TRACE(w.dump());
    EXPECT_EQ(w["dev"], dm_dev());
    EXPECT_EQ(w["state"], "durable");
    EXPECT_FALSE(w["requests"].empty());
  }
  for (const auto& fsync : fsyncs) {
    SCOPED_TRACE(fsync.dump());
    EXPECT_FALSE(fsync["flushes"].empty());
    EXPECT_FALSE(fsync["journal_commits"].empty()) << "the dm-keyed jbd2 commit was filtered out";
  }
}

INSTANTIATE_TEST_SUITE_P(VmLog, DmDevFilter, ::testing::Values("dm-dev-dm", "dm-dev-nvme"),
                         [](const auto& info) {
                           return std::string(info.param) == "dm-dev-dm" ? "DmDevice" : "NvmeDisk";
                         });

// Lost writes (guest-tests.sh `lost_round`): ext4 on a dm device whose table was switched,
// after the file was made and committed, to one that fails every write with EIO (dm-flakey's
// error_writes; the error target). The workload's 16 buffered 64 KiB writes succeed and its
// fsync returns EIO: every write is lost with EIO and the request that failed, the fsync lists
// exactly those, the summary counts them, and the kernel log reports failed writeback of the
// very inode the workload wrote.
class LostWritesOnDm : public VmLog, public ::testing::WithParamInterface<const char*> {};

TEST_P(LostWritesOnDm, EveryWriteOfTheFailedWritebackIsLostAndListedByTheFsync) {
  const std::string round = GetParam();
  const GuestRun& traced = run("lost-" + round);
  ASSERT_EQ(traced.rc, 0) << joined(traced.err);
  const oracle::Truth truth = truth_of(run("lost-" + round + "-truth"));
  ASSERT_EQ(truth.writes.size(), 16u) << joined(run("lost-" + round + "-truth").out);
  for (const oracle::Call& w : truth.writes) ASSERT_EQ(w.ret, 65536);
  ASSERT_EQ(truth.syncs.size(), 1u);
  ASSERT_EQ(truth.syncs[0].ret, -5) << "the fsync did not fail with EIO";

  const std::vector<json> items = json_lines(traced);
  ASSERT_FALSE(items.empty());
  const json& summary = items.back();
  ASSERT_EQ(summary["type"], "summary");
  ASSERT_EQ(summary["lost"], 0) << summary.dump();
  const oracle::FileItems f = oracle::items_of(items, "/mnt/lost");
  const std::vector<std::string> calls = oracle::check_calls(truth, f);
  EXPECT_TRUE(calls.empty()) << joined(calls);
  std::set<std::uint64_t> lost;
  for (const json& w : f.writes) {
    SCOPED_TRACE(w.dump());
    EXPECT_EQ(w["state"], "lost");
    EXPECT_EQ(w["lost_error"], "EIO");
    EXPECT_FALSE(w["requests"].empty());
    lost.insert(u64(w["id"]));
  }
  ASSERT_EQ(f.syncs.size(), 1u);
  EXPECT_EQ(f.syncs[0]["error"], "EIO");
  std::set<std::uint64_t> listed;
  for (const json& id : f.syncs[0]["lost_writes"]) listed.insert(u64(id));
  EXPECT_EQ(listed, lost);
  EXPECT_EQ(u64(summary["lost_writes"]), 16u);
  EXPECT_EQ(u64(summary["lost_bytes"]), 16u * 65536);

  // The kernel's own word: ext4's end_io names the inode whose writeback failed.
  const std::string ino = info("lost-ino " + round);
  ASSERT_FALSE(ino.empty());
  const std::string log = joined(run("lost-" + round + "-kernel-log").out);
  EXPECT_NE(log.find("writing to inode " + ino + " "), std::string::npos) << log;
}

INSTANTIATE_TEST_SUITE_P(VmLog, LostWritesOnDm, ::testing::Values("flakey", "error"),
                         [](const auto& info) {
                           return std::string(info.param) == "flakey" ? "FlakeyErrorWrites"
                                                                      : "ErrorTarget";
                         });

}  // namespace
