// SPDX-License-Identifier: Apache-2.0
// Data that reaches the disk without write(2): Linux AIO (io_submit), per-call RWF_* flags of
// pwritev2, and stores into a shared mapping made durable by msync. Each test compares the
// trace with what the program did (fio's own JSON report, the workload's fixed counts).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "harness.h"
#include "writepath.h"

namespace {

using namespace wp::testing;
using nlohmann::json;

// fio with libaio, O_DIRECT, an fsync(2) after every write: every write is an io_submit item
// with its own requests and no page dirtied, as many as fio says it wrote, bytes equal.
TEST_F(ScratchExt4, FioLibaioDirectWritesAreIoSubmitItemsWithTheirOwnRequests) {
  const fs::path out = root_ / "aio.jsonl";
  auto r = run({tool("writepath"), "trace", "--format", "json", "-o", out.string(), "--", "fio",
                "--name=aio", "--filename=" + file("aio"), "--ioengine=libaio", "--direct=1",
                "--rw=write", "--bs=4k", "--size=256k", "--iodepth=1", "--fsync=1",
                "--output-format=json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json fio = json::parse(r.out.substr(r.out.find('{')));
  const json& job = fio["jobs"][0];
  const std::uint64_t fio_writes = u64(job["write"]["total_ios"]);
  const std::uint64_t fio_bytes = u64(job["write"]["io_bytes"]);
  ASSERT_EQ(fio_writes, 64u);

  const auto items = json_lines(slurp(out));
  std::uint64_t writes = 0, bytes = 0, fsyncs = 0, durable = 0;
  std::set<std::string> requests_seen;
  for (const auto& w : of_type(items, "write", "fio")) {
    if (w["syscall"] != "io_submit") continue;
    ++writes;
    bytes += u64(w["bytes"]);
    EXPECT_TRUE(w["direct"].get<bool>()) << w.dump();
    EXPECT_EQ(u64(w["pages_dirtied"]), 0u) << w.dump();
    EXPECT_EQ(u64(w["bytes"]), 4096u) << w.dump();
    // Each but the last is followed by an fsync that flushes it.
    durable += w["state"] == "durable";
    EXPECT_TRUE(w["state"] == "durable" || w["state"] == "written") << w.dump();
    ASSERT_FALSE(w["requests"].empty()) << w.dump();
    for (const auto& rq : w["requests"]) {
      EXPECT_EQ(rq["submitter"]["why"], "write") << w.dump();
      EXPECT_TRUE(requests_seen.insert(rq.dump()).second)
          << "a request in two writes: " << w.dump();
    }
  }
  for (const auto& s : of_type(items, "fsync", "fio")) {
    if (s["syscall"] != "fsync") continue;
    ++fsyncs;
  }
  EXPECT_EQ(writes, fio_writes);
  EXPECT_EQ(bytes, fio_bytes);
  EXPECT_EQ(fsyncs, u64(job["sync"]["total_ios"]));
  EXPECT_GE(durable, u64(job["sync"]["total_ios"]));
  EXPECT_EQ(u64(of_type(items, "summary")[0]["lost"]), 0u);
}

// One io_submit of 12 O_DIRECT page writes: the first 8 iocbs (the bound) are items, marked
// aio_past_bound, each with its own one request; then a buffered IOCB_CMD_PWRITEV of two
// pages, written by the fsync that follows.
TEST_F(ScratchExt4, IoSubmitOfManyIocbsGivesEachItsOwnRequest) {
  const fs::path out = root_ / "aio-batch.jsonl";
  auto r = run({tool("writepath"), "trace", "--format", "json", "-o", out.string(), "--",
                tool("wp_workload"), "aio-batch", file("aio-batch"), "12"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<json> direct, vectored;
  for (const auto& w : of_type(json_lines(slurp(out)), "write"))
    if (w["syscall"] == "io_submit") (w["direct"].get<bool>() ? direct : vectored).push_back(w);
  ASSERT_EQ(direct.size(), static_cast<std::size_t>(WP_AIO_MAX_IOCBS));
  std::set<std::uint64_t> offsets, sectors;
  for (const auto& w : direct) {
    EXPECT_EQ(w["call_flags"], json::array({"aio_past_bound"})) << w.dump();
    EXPECT_EQ(u64(w["bytes"]), 4096u) << w.dump();
    EXPECT_EQ(u64(w["pages_dirtied"]), 0u) << w.dump();
    EXPECT_EQ(w["state"], "durable") << w.dump();
    ASSERT_EQ(w["requests"].size(), 1u) << w.dump();
    EXPECT_EQ(u64(w["requests"][0]["bytes"]), 4096u) << w.dump();
    offsets.insert(u64(w["offset"]));
    sectors.insert(u64(w["requests"][0]["sector"]));
  }
  EXPECT_EQ(offsets.size(), direct.size());
  EXPECT_EQ(sectors.size(), direct.size());
  EXPECT_EQ(*offsets.rbegin(), (WP_AIO_MAX_IOCBS - 1) * 4096u);
  ASSERT_EQ(vectored.size(), 1u);
  EXPECT_EQ(vectored[0]["call_flags"], json::array({"aio_vectored"})) << vectored[0].dump();
  EXPECT_EQ(u64(vectored[0]["bytes"]), 8192u);
  EXPECT_EQ(u64(vectored[0]["offset"]), 12 * 4096u);
  EXPECT_EQ(u64(vectored[0]["pages"]), 2u);
  EXPECT_EQ(vectored[0]["state"], "durable") << vectored[0].dump();
}

// PAGES stores then msync(MS_SYNC), 16 times: 16 msync items each carrying the writeback, and
// 16 mmap items of PAGES pages each, written inside their msync; then an MS_ASYNC msync (no
// I/O) and an fsync that writes the last store.
TEST_F(ScratchExt4, StoresIntoASharedMappingAreWrittenByTheirMsync) {
  constexpr int kPages = 8;
  constexpr int kSyncs = 16;
  const fs::path out = root_ / "mmap.jsonl";
  auto r = run({tool("writepath"), "trace", "--format", "json", "-o", out.string(), "--",
                tool("wp_workload"), "mmap-msync", file("mmap"), std::to_string(kPages),
                std::to_string(kSyncs)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto items = json_lines(slurp(out));

  std::vector<json> msyncs, async_msyncs;
  for (const auto& s : of_type(items, "fsync")) {
    if (s["syscall"] != "msync") continue;
    const auto& flags = s["call_flags"];
    (std::find(flags.begin(), flags.end(), "MS_SYNC") != flags.end() ? msyncs : async_msyncs)
        .push_back(s);
  }
  ASSERT_EQ(msyncs.size(), static_cast<std::size_t>(kSyncs));
  ASSERT_EQ(async_msyncs.size(), 1u);
  EXPECT_TRUE(async_msyncs[0]["requests"].empty()) << async_msyncs[0].dump();
  for (const auto& s : msyncs) {
    EXPECT_FALSE(s["requests"].empty()) << s.dump();
    EXPECT_EQ(s["ret"], 0) << s.dump();
    EXPECT_TRUE(s["ino"].is_number() && u64(s["ino"]) != 0) << s.dump();
  }

  std::vector<json> stores;
  for (const auto& w : of_type(items, "write"))
    if (w["syscall"] == "mmap") stores.push_back(w);
  ASSERT_EQ(stores.size(), static_cast<std::size_t>(kSyncs + 1));
  for (int i = 0; i < kSyncs; ++i) {
    const json& w = stores[i];
    EXPECT_EQ(u64(w["pages"]), static_cast<std::uint64_t>(kPages)) << w.dump();
    EXPECT_EQ(u64(w["pages_pending"]), 0u) << w.dump();
    EXPECT_EQ(w["state"], "durable") << w.dump();
    EXPECT_EQ(u64(w["ino"]), u64(msyncs[i]["ino"])) << w.dump();
    // Written by the msync that followed its stores, inside that call.
    ASSERT_TRUE(w["written_ns"].is_number()) << w.dump();
    EXPECT_GE(u64(w["written_ns"]), u64(msyncs[i]["start_ns"])) << w.dump();
    EXPECT_LE(u64(w["written_ns"]), u64(msyncs[i]["end_ns"])) << w.dump();
    EXPECT_LE(u64(w["end_ns"]), u64(msyncs[i]["start_ns"])) << w.dump();
    for (const auto& rq : w["requests"]) EXPECT_EQ(rq["submitter"]["why"], "fsync") << w.dump();
  }
  // The last store: one page, left to MS_ASYNC (which writes nothing), written by the fsync.
  EXPECT_EQ(u64(stores[kSyncs]["pages"]), 1u);
  EXPECT_EQ(stores[kSyncs]["state"], "durable") << stores[kSyncs].dump();
  std::size_t fsyncs = 0;
  for (const auto& s : of_type(items, "fsync")) {
    if (s["syscall"] != "fsync") continue;
    ++fsyncs;
    EXPECT_FALSE(s["requests"].empty()) << s.dump();
  }
  EXPECT_EQ(fsyncs, 1u);
  const auto summary = of_type(items, "summary");
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(summary[0]["untraced_calls"].count("msync"), 0u);
  EXPECT_EQ(u64(summary[0]["lost"]), 0u);
}

// fio's mmap engine, sequential writes of BS bytes with an msync after each, two jobs with a
// file each: one mmap item per store, at the store's offset (fio writes the k-th block at k x
// BS), as many as fio counts. A store whose faults each made one page writable gives an item
// of exactly its bytes; one whose fault made a large folio writable whole (a page not mapped
// yet: 6.18 maps its folio in one shot) covers that folio, which holds the store: the item
// says so (whole_folio_faults), and is never smaller than the store.
class FioMmapStores : public ScratchExt4, public ::testing::WithParamInterface<std::uint64_t> {};

TEST_P(FioMmapStores, EachStoreIsAnItemAtItsOffset) {
  const std::uint64_t bs = GetParam();
  const std::uint64_t size = 8u << 20;
  const fs::path dir = root_ / "mnt" / ("fio-mmap-" + std::to_string(bs));
  fs::create_directories(dir);
  const fs::path out = root_ / ("fio-mmap-" + std::to_string(bs) + ".jsonl");
  auto r = run({tool("writepath"), "trace", "--format", "json", "-o", out.string(), "--", "fio",
                "--name=m", "--directory=" + dir.string(), "--ioengine=mmap", "--rw=write",
                "--bs=" + std::to_string(bs), "--size=" + std::to_string(size), "--iodepth=4",
                "--fsync=1", "--numjobs=2", "--output-format=json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json fio = json::parse(r.out.substr(r.out.find('{')));
  ASSERT_EQ(fio["jobs"].size(), 2u);
  for (const auto& job : fio["jobs"]) {
    ASSERT_EQ(u64(job["write"]["io_bytes"]), size) << job.dump();
    ASSERT_EQ(u64(job["write"]["total_ios"]), size / bs) << job.dump();
  }

  std::map<std::uint64_t, std::vector<json>> stores_by_pid;  // each job's, in store order
  for (const auto& w : of_type(json_lines(slurp(out)), "write", "fio"))
    if (w["syscall"] == "mmap") stores_by_pid[u64(w["pid"])].push_back(w);
  ASSERT_EQ(stores_by_pid.size(), 2u);
  std::uint64_t exact = 0;
  for (auto& [pid, stores] : stores_by_pid) {
    std::sort(stores.begin(), stores.end(),
              [](const json& a, const json& b) { return u64(a["start_ns"]) < u64(b["start_ns"]); });
    ASSERT_EQ(stores.size(), size / bs) << "pid " << pid;
    std::uint64_t exact_bytes = 0, exact_items = 0;
    for (std::size_t k = 0; k < stores.size(); ++k) {
      const json& w = stores[k];
      const std::uint64_t at = k * bs, offset = u64(w["offset"]), bytes = u64(w["bytes"]);
      ASSERT_TRUE(w["faults"].is_number() && u64(w["faults"]) >= 1) << w.dump();
      EXPECT_EQ(bytes, u64(w["pages"]) * 4096) << w.dump();
      if (u64(w["whole_folio_faults"]) == 0) {
        EXPECT_EQ(offset, at) << w.dump();
        EXPECT_EQ(bytes, bs) << w.dump();
        exact_bytes += bytes;
        ++exact_items;
      } else {
        EXPECT_LE(offset, at) << w.dump();
        EXPECT_GE(offset + bytes, at + bs) << w.dump();
      }
      // Each synced by the msync after it; the last one by none before the job ended.
      if (k + 1 < stores.size()) {
        EXPECT_EQ(w["state"], "durable") << w.dump();
      }
    }
    EXPECT_EQ(exact_bytes, exact_items * bs);
    exact += exact_items;
  }
  // Stores after the first into a folio fault page by page (writeback left it mapped
  // read-only): at 4 KiB most items are exact.
  if (bs == 4096) {
    EXPECT_GT(exact, size / bs);
  }
}

INSTANTIATE_TEST_SUITE_P(BlockSizes, FioMmapStores,
                         ::testing::Values(std::uint64_t{4096}, std::uint64_t{65536},
                                           std::uint64_t{1} << 20),
                         [](const auto& info) { return std::to_string(info.param / 1024) + "k"; });

// pwritev2(RWF_DSYNC) is an O_DSYNC write for that call: its data and a flush inside it.
TEST_F(ScratchExt4, RwfDsyncPwritev2IsWrittenAndFlushedInsideTheCall) {
  constexpr int kWrites = 8;
  const fs::path out = root_ / "rwf.jsonl";
  auto r = run({tool("writepath"), "trace", "--format", "json", "-o", out.string(), "--",
                tool("wp_workload"), "pwritev2-dsync", file("rwf"), std::to_string(kWrites)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int writes = 0;
  for (const auto& w : of_type(json_lines(slurp(out)), "write")) {
    if (w["syscall"] != "pwritev2") continue;
    ++writes;
    EXPECT_EQ(w["call_flags"], json::array({"RWF_DSYNC"})) << w.dump();
    EXPECT_TRUE(w["sync"].get<bool>()) << w.dump();
    EXPECT_EQ(u64(w["bytes"]), 4096u) << w.dump();
    EXPECT_EQ(w["state"], "durable") << w.dump();
    ASSERT_TRUE(w["durable_ns"].is_number()) << w.dump();
    EXPECT_LE(u64(w["durable_ns"]), u64(w["end_ns"])) << w.dump();
    EXPECT_EQ(w["durable_via"], "flush") << w.dump();
    ASSERT_FALSE(w["requests"].empty()) << w.dump();
    for (const auto& rq : w["requests"]) EXPECT_EQ(rq["submitter"]["why"], "write") << w.dump();
  }
  EXPECT_EQ(writes, kWrites);
}

}  // namespace
