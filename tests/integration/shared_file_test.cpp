// SPDX-License-Identifier: Apache-2.0
// Eight fio threads write one shared file at random 4 KiB offsets, each calling fsync after
// every fourth write. The block layer merges bios of different threads into one request, and
// each thread's fsync waits for its own pages only. The trace is checked against what fio
// reports it did and against what the kernel's fsync guarantees:
//  - a request whose submitter is thread T in fsync was queued inside one of T's fsyncs, is
//    listed in that fsync's requests and completed before it returned (ext4_sync_file waits
//    for the writeback of every page it started, file_write_and_wait_range);
//  - every other thread whose fsync bios the request carried lists it in an fsync of its own
//    that returned after the request completed;
//  - a write followed by a successful fsync of its thread is durable no later than that
//    fsync's end, and every request it lists completed by then; unless the tracer marks it
//    incomplete (a request completion the kernel did not deliver, which 6.18 sometimes skips:
//    its times are then bounds, later than the truth), which the summary's missed completions
//    must explain.
#include <map>
#include <set>
#include <tuple>

#include "harness.h"
#include "oracle.h"

namespace wp::testing {
namespace {

constexpr int kThreads = 8;
constexpr int kWritesPerThread = 512;  // 2 MiB of 4 KiB writes each, into one 8 MiB file
constexpr int kWritesPerFsync = 4;

// A request as the JSON names it in every item that lists it.
using RequestKey = std::tuple<std::string, std::uint64_t, std::uint64_t>;  // dev, sector, issue

RequestKey key_of(const json& r) {
  return {r["dev"].get<std::string>(), r["sector"].is_null() ? 0 : u64(r["sector"]),
          r["issue_ns"].is_null() ? 0 : u64(r["issue_ns"])};
}

struct Fsync {
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::int64_t ret = 0;
  std::set<RequestKey> requests;
};

bool lists(const Fsync& f, const RequestKey& k) {
  return f.requests.count(k) != 0;
}

class SharedFile : public ScratchExt4 {
 protected:
  // fio's JSON report: writes and syncs summed over its jobs.
  static std::pair<std::uint64_t, std::uint64_t> fio_counts(const fs::path& report) {
    json doc = json::parse(slurp(report), nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(doc.is_object() && doc.contains("jobs")) << slurp(report);
    std::uint64_t writes = 0, syncs = 0;
    if (!doc.is_object() || !doc.contains("jobs")) return {0, 0};
    for (const auto& job : doc["jobs"]) {
      writes += u64(job["write"]["total_ios"]);
      syncs += u64(job["sync"]["total_ios"]);
    }
    return {writes, syncs};
  }
};

TEST_F(SharedFile, FsyncRequestsOfThreadsSharingAFileBelongToTheirFsyncs) {
  const std::string data = file("shared.dat");
  // Laid out (and on disk) before the trace, so that every traced write is an overwrite.
  ASSERT_TRUE(sh("dd if=/dev/zero of=" + data + " bs=1M count=8 conv=fsync status=none"));
  struct stat st {};
  ASSERT_EQ(::stat(data.c_str(), &st), 0);
  const fs::path out = root_ / "shared.jsonl";
  const fs::path report = root_ / "shared-fio.json";
  auto r = run({tool("writepath"), "trace", "--format", "json", "-o", out.string(), "--", "fio",
                "--name=shared", "--filename=" + data, "--thread",
                "--numjobs=" + std::to_string(kThreads), "--rw=randwrite", "--bs=4k",
                "--fsync=" + std::to_string(kWritesPerFsync), "--size=8M",
                "--io_size=" + std::to_string(kWritesPerThread * 4) + "k", "--output-format=json",
                "--output=" + report.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto [fio_writes, fio_syncs] = fio_counts(report);
  ASSERT_EQ(fio_writes, std::uint64_t{kThreads} * kWritesPerThread);

  std::map<std::uint64_t, std::vector<Fsync>> fsyncs_of;  // tid -> fsyncs, in start order
  std::vector<json> writes;
  std::map<RequestKey, json> requests;
  const std::vector<json> items = json_lines(slurp(out));
  ASSERT_FALSE(items.empty());
  const auto unexplained = oracle::check_incomplete(items, items.back());
  EXPECT_TRUE(unexplained.empty()) << unexplained.front();
  for (const auto& item : items) {
    if (item["type"] == "summary" || item["type"] == "namespace" || item["comm"] != "fio") continue;
    if (item["ino"].is_null() || u64(item["ino"]) != st.st_ino) continue;
    for (const auto& req : item["requests"]) requests.emplace(key_of(req), req);
    if (item["type"] == "write") {
      writes.push_back(item);
      continue;
    }
    ASSERT_EQ(item["syscall"], "fsync") << item.dump();
    Fsync f{u64(item["start_ns"]), u64(item["end_ns"]), item["ret"].get<std::int64_t>(), {}};
    for (const auto& req : item["requests"]) f.requests.insert(key_of(req));
    fsyncs_of[u64(item["tid"])].push_back(std::move(f));
  }
  // The same calls fio counted.
  EXPECT_EQ(writes.size(), fio_writes);
  std::uint64_t traced_syncs = 0;
  for (auto& [tid, fsyncs] : fsyncs_of) {
    traced_syncs += fsyncs.size();
    std::sort(fsyncs.begin(), fsyncs.end(),
              [](const Fsync& a, const Fsync& b) { return a.start_ns < b.start_ns; });
  }
  EXPECT_EQ(traced_syncs, fio_syncs);
  EXPECT_EQ(fsyncs_of.size(), std::size_t{kThreads});

  int fsync_requests = 0, merged_across_threads = 0;
  for (const auto& [k, req] : requests) {
    if (req["complete_ns"].is_null()) continue;
    const std::uint64_t complete = u64(req["complete_ns"]);
    const json& submitter = req["submitter"];
    if (!req["other_submitters"].empty()) ++merged_across_threads;
    if (!submitter.is_null() && submitter["why"] == "fsync") {
      ++fsync_requests;
      const std::uint64_t queued = u64(req["queue_ns"]);
      const Fsync* owner = nullptr;
      for (const Fsync& f : fsyncs_of[u64(submitter["tid"])])
        if (f.start_ns <= queued && queued <= f.end_ns) owner = &f;
      ASSERT_NE(owner, nullptr) << "no fsync of its submitter was in flight at its queue time: "
                                << req.dump();
      EXPECT_TRUE(lists(*owner, k)) << "not in its submitter's fsync: " << req.dump();
      EXPECT_LE(complete, owner->end_ns) << "completed after its fsync returned: " << req.dump();
    }
    for (const auto& other : req["other_submitters"]) {
      if (other["why"] != "fsync") continue;
      bool owned = false;
      for (const Fsync& f : fsyncs_of[u64(other["tid"])])
        owned = owned || (lists(f, k) && complete <= f.end_ns);
      EXPECT_TRUE(owned) << "no fsync of thread " << other["tid"] << " owns " << req.dump();
    }
  }
  EXPECT_GT(fsync_requests, kThreads * kWritesPerThread / 2);

  // Every write that an fsync of its own thread followed is durable by that fsync's end.
  int covered = 0;
  for (const auto& w : writes) {
    const auto& fsyncs = fsyncs_of[u64(w["tid"])];
    auto next = std::find_if(fsyncs.begin(), fsyncs.end(),
                             [&](const Fsync& f) { return f.start_ns >= u64(w["end_ns"]); });
    if (next == fsyncs.end()) continue;  // its thread's last writes: no fsync of its own after
    ASSERT_EQ(next->ret, 0);
    ++covered;
    ASSERT_EQ(w["state"], "durable") << w.dump();
    if (w["incomplete"] == true) continue;  // its times are bounds (checked above)
    EXPECT_LE(u64(w["durable_ns"]), next->end_ns) << w.dump();
    for (const auto& req : w["requests"])
      EXPECT_LE(u64(req["complete_ns"]), next->end_ns) << w.dump();
  }
  EXPECT_GE(covered, kThreads * (kWritesPerThread - kWritesPerFsync));
  RecordProperty("merged_across_threads", merged_across_threads);
  std::cerr << "shared file: " << requests.size() << " requests, " << fsync_requests
            << " submitted by fsync, " << merged_across_threads << " merged across threads\n";
}

}  // namespace
}  // namespace wp::testing
