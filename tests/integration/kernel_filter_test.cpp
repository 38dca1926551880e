// SPDX-License-Identifier: Apache-2.0
// With a process filter the kernel keeps other processes' records out: a trace of an idle
// process decodes almost nothing beside noisy bystanders, a traced writer's items stay whole
// among them, and the disk's totals still count every request the disk completed (diskstats).
#include "harness.h"
#include "oracle.h"

#include <set>

namespace wp::testing {
namespace {

// Bystanders on `dir`, until a file `stop` shows there: one rotating logs (writes 2 MiB dirty
// files, then unlinks or truncates them before writeback), one writing a file flat out and syncing
// it now and then, and one writing O_DIRECT.
std::vector<std::string> noisy_bystanders(const std::string& dir) {
  const std::string script =
      "cd '" + dir +
      "' || exit 1\n"
      "(i=0; while [ ! -e stop ]; do head -c 2M /dev/zero > log.$((i % 4));"
      " if [ $((i % 2)) = 0 ]; then rm -f log.$((i % 4)); else truncate -s 0 log.$((i % 4)); fi;"
      " i=$((i + 1)); done) &\n"
      "(while [ ! -e stop ]; do dd if=/dev/zero of=big bs=1M count=32 status=none;"
      " sync -f big; done) &\n"
      "(while [ ! -e stop ]; do dd if=/dev/zero of=direct bs=64k count=32 oflag=direct"
      " status=none; done) &\n"
      "wait\n";
  return {"bash", "-c", script};
}

class KernelFilter : public ::testing::Test {
 protected:
  void SetUp() override {
    WP_REQUIRE_ROOT();
    ASSERT_TRUE(fs_.ready());
    noise_ = std::make_unique<Background>(noisy_bystanders(fs_.mount_point()));
    // The bystanders are at work before any trace starts.
    const DiskCounters start = disk_counters(fs_.loop_name());
    ASSERT_TRUE(wait_until([&] {
      const DiskCounters now = disk_counters(fs_.loop_name());
      return now.writes >= start.writes + 50 && fs::exists(fs_.file("big"));
    })) << noise_->err();
  }
  void TearDown() override {
    if (noise_) {  // each loop ends its round, so the file system can be unmounted
      std::ofstream(fs_.file("stop")).put('\n');
      EXPECT_EQ(noise_->wait(), 0) << noise_->err();
    }
  }
  DiskCounters counters() const { return disk_counters(fs_.loop_name()); }

  ScratchFs fs_{"ext4", "mkfs.ext4 -q -F -O has_journal"};
  std::unique_ptr<Background> noise_;
};

DiskCounters delta(const DiskCounters& a, const DiskCounters& b) {
  return {b.writes - a.writes, b.write_sectors - a.write_sectors, b.flushes - a.flushes};
}

TEST_F(KernelFilter, ATraceOfAnIdleProcessDecodesAlmostNothingBesideNoisyBystanders) {
  const fs::path out = fs::temp_directory_path() / ("wp_it_filter_" + std::to_string(::getpid()));
  const DiskCounters outer_start = counters();
  Background trace(
      {writepath(), "trace", "--comm", "wp_no_such_comm", "--format", "json", "-o", out.string()});
  ASSERT_TRUE(trace.wait_attached()) << trace.err();
  const DiskCounters inner_start = counters();
  // Enough of the bystanders' I/O inside the trace that a leak would show: at least 200 write
  // requests (their writeback, syncs, O_DIRECT writes, discards' neighbours).
  ASSERT_TRUE(wait_until([&] { return counters().writes >= inner_start.writes + 200; }))
      << noise_->err();
  const DiskCounters inner_end = counters();
  ASSERT_EQ(trace.stop(SIGINT), 0) << trace.err();
  const DiskCounters outer_end = counters();

  const auto items = json_lines(slurp(out));
  fs::remove(out);
  const auto summary = of_type(items, "summary");
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(of_type(items, "write").size() + of_type(items, "fsync").size(), 0u);
  // Records decoded: the requests in flight as the hooks attached (a queue's depth) and the
  // journal's own commits are all that may pass.
  EXPECT_LT(u64(summary[0]["events"]), 100u) << summary[0].dump();
  EXPECT_EQ(u64(summary[0]["lost"]), 0u);
  // The disk's totals still count what the disk did for the requests kept out.
  const auto v = oracle::check_disk_totals(summary[0], fs_.disk(), delta(inner_start, inner_end),
                                           delta(outer_start, outer_end));
  EXPECT_TRUE(v.empty()) << ::testing::PrintToString(v) << summary[0].dump();
}

// Every write of a traced writer sharing the disk with the bystanders is durable by its fsync:
// none of its bios or requests was kept out with theirs, merged or not. An item is incomplete
// only for a completion the kernel did not deliver, never for a record the filter kept out.
TEST_F(KernelFilter, ATracedWriterAmongBystandersKeepsEveryRequestItWaitsOn) {
  constexpr int kWrites = 64;
  const fs::path out = fs::temp_directory_path() / ("wp_it_filter_" + std::to_string(::getpid()));
  auto r = run({writepath(), "trace", "--format", "json", "-o", out.string(), "--",
                (build_dir() / "wp_workload").string(), "fsync-each", fs_.file("traced"),
                std::to_string(kWrites)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto items = json_lines(slurp(out));
  fs::remove(out);
  int writes = 0;
  for (const auto& w : of_type(items, "write")) {
    if (w["syscall"] != "pwrite64") continue;
    ++writes;
    EXPECT_EQ(w["state"], "durable") << w.dump();
    EXPECT_FALSE(w["requests"].empty()) << w.dump();
  }
  EXPECT_EQ(writes, kWrites);
  EXPECT_EQ(of_type(items, "fsync").size(), static_cast<std::size_t>(kWrites));
  const auto summary = of_type(items, "summary");
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(u64(summary[0]["lost"]), 0u);
  // An item may still be incomplete when the kernel did not deliver a completion it rests on
  // (oracle::check_incomplete): that request or flush is marked inferred, and a write made
  // durable by it names its time. Any other incomplete item would be one whose records the
  // filter kept out.
  const auto v = oracle::check_incomplete(items, summary[0]);
  EXPECT_TRUE(v.empty()) << ::testing::PrintToString(v) << summary[0].dump();
  // The completion times of the requests and flushes marked inferred, item by item.
  auto inferred_completions = [](const json& item) {
    std::vector<std::uint64_t> at;
    for (const char* list : {"requests", "flushes", "journal_requests"})
      for (const auto& req : item.value(list, json::array()))
        if (req.value("complete_inferred", false)) at.push_back(u64(req["complete_ns"]));
    return at;
  };
  std::set<std::uint64_t> inferred_at;
  for (const auto& item : items)
    for (std::uint64_t at : inferred_completions(item)) inferred_at.insert(at);
  auto at_an_inferred_completion = [&](const json& item, const char* key) {
    return item.contains(key) && item[key].is_number() && inferred_at.count(u64(item[key])) > 0;
  };
  for (const auto& item : items) {
    if (item.value("type", "") == "summary" || !item.value("incomplete", false)) continue;
    const bool explained = !inferred_completions(item).empty() ||
                           at_an_inferred_completion(item, "durable_ns") ||
                           at_an_inferred_completion(item, "written_ns");
    EXPECT_TRUE(explained) << "incomplete, yet no completion it rests on was missed: "
                           << item.dump();
  }
}

}  // namespace
}  // namespace wp::testing
