// SPDX-License-Identifier: Apache-2.0
// io_uring write and fsync ops become write and sync items: the counts are compared with fio's
// own JSON report and with what the workload's uring-mix did.
#include <map>

#include "harness.h"

namespace wp::testing {
namespace {

constexpr int kWrites = 64;  // 4 KiB each

struct Traced {
  std::vector<json> writes;  // io_uring_write items
  std::vector<json> syncs;   // io_uring_fsync items
  json summary;
};

// The items of processes named `comm` (io-wq and SQPOLL threads carry their owner's name).
Traced traced_items(const fs::path& out, const std::string& comm = "wp_workload") {
  Traced t;
  const auto items = json_lines(slurp(out));
  for (const auto& w : of_type(items, "write", comm))
    if (w["syscall"] == "io_uring_write") t.writes.push_back(w);
  for (const auto& s : of_type(items, "fsync", comm))
    if (s["syscall"] == "io_uring_fsync") t.syncs.push_back(s);
  const auto summary = of_type(items, "summary");
  if (!summary.empty()) t.summary = summary[0];
  return t;
}

class UringExt4 : public ScratchExt4 {
 protected:
  // fio's write and sync counts against the trace's io_uring items; the items.
  Traced traced_fio(const std::string& name, bool direct) {
    const fs::path out = root_ / (name + ".jsonl");
    const json report = fio(name, direct, out);
    const auto& job = report["jobs"][0];
    Traced t = traced_items(out, "fio");
    EXPECT_EQ(t.writes.size(), u64(job["write"]["total_ios"])) << t.summary.dump();
    EXPECT_EQ(t.syncs.size(), u64(job["sync"]["total_ios"]));
    EXPECT_EQ(t.writes.size(), static_cast<std::size_t>(kWrites));
    EXPECT_EQ(u64(t.summary["lost"]), 0u);
    // Every op fio put on the ring was a write or an fsync: nothing left unstitched.
    EXPECT_EQ(u64(t.summary["untraced_calls"]["io_uring_ops"]), 0u) << t.summary.dump();
    return t;
  }

  json fio(const std::string& name, bool direct, const fs::path& out) {
    const fs::path report = root_ / (name + ".fio.json");
    auto r = run({tool("writepath"), "trace", "--format", "json", "-o", out.string(), "--", "fio",
                  "--name=" + name, "--filename=" + file(name), "--ioengine=io_uring", "--rw=write",
                  "--bs=4k", "--size=" + std::to_string(kWrites * 4) + "k", "--fsync=1",
                  direct ? "--direct=1" : "--direct=0", "--output-format=json",
                  "--output=" + report.string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(slurp(report));
  }

  static std::uint32_t workload_pid(const std::string& err) {
    const std::string prefix = "wp_workload: pid ";
    const auto at = err.find(prefix);
    return at == std::string::npos ? 0 : std::stoul(err.substr(at + prefix.size()));
  }
};

// fio --fsync=1 syncs after every write but the last: each synced write ends durable, the
// last one stays dirty at the end of the trace.
TEST_F(UringExt4, FioBufferedWritesAndFsyncsMatchFioAndEndDurable) {
  const Traced t = traced_fio("fio-buffered", false);
  std::map<std::string, std::size_t> states;
  for (const auto& w : t.writes) {
    ++states[w["state"]];
    EXPECT_EQ(u64(w["pages_dirtied"]), 1u) << w.dump();
    EXPECT_EQ(u64(w["bytes"]), 4096u) << w.dump();
  }
  EXPECT_EQ(states["durable"], t.syncs.size());
  EXPECT_EQ(states["dirty"], t.writes.size() - t.syncs.size());
}

TEST_F(UringExt4, FioDirectWritesMatchFioAndOwnTheirRequests) {
  const Traced t = traced_fio("fio-direct", true);
  for (const auto& w : t.writes) {
    EXPECT_EQ(u64(w["pages_dirtied"]), 0u) << w.dump();
    EXPECT_FALSE(w["requests"].empty()) << w.dump();
    EXPECT_NE(w["state"], "dirty") << w.dump();
  }
}

void expect_uring_mix(const Traced& t, std::uint32_t pid, const std::string& issue) {
  ASSERT_EQ(t.writes.size(), static_cast<std::size_t>(kWrites));
  ASSERT_EQ(t.syncs.size(), 1u);
  std::uint64_t pages = 0;
  for (const auto& w : t.writes) {
    EXPECT_EQ(u64(w["pid"]), pid) << w.dump();
    // A buffered write the SQPOLL thread cannot issue without blocking goes to io-wq.
    EXPECT_EQ(std::string(w["io_uring"]).rfind(issue, 0), 0u) << w.dump();
    EXPECT_EQ(w["state"], "durable") << w.dump();
    pages += u64(w["pages_dirtied"]);
  }
  EXPECT_EQ(pages, static_cast<std::uint64_t>(kWrites));
  EXPECT_EQ(u64(t.syncs[0]["pid"]), pid);
  // Its one IORING_OP_FALLOCATE is no item, but counted as an op the trace did not follow.
  EXPECT_EQ(u64(t.summary["untraced_calls"]["io_uring_ops"]), 1u) << t.summary.dump();
}

TEST_F(UringExt4, SqpollOpsAreAttributedToTheRingOwner) {
  const fs::path out = root_ / "sqpoll.jsonl";
  auto r =
      run({tool("writepath"), "trace", "--format", "json", "-o", out.string(), "--",
           tool("wp_workload"), "uring-mix", file("sqpoll"), std::to_string(kWrites), "sqpoll"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_uring_mix(traced_items(out), workload_pid(r.err), "sqpoll");
}

TEST_F(UringExt4, OpsPuntedToIoWqCountTheirWorkersPages) {
  const fs::path out = root_ / "async.jsonl";
  auto r = run({tool("writepath"), "trace", "--format", "json", "-o", out.string(), "--",
                tool("wp_workload"), "uring-mix", file("async"), std::to_string(kWrites), "async"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_uring_mix(traced_items(out), workload_pid(r.err), "io-wq");
}

}  // namespace
}  // namespace wp::testing
