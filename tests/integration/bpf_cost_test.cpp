// SPDX-License-Identifier: Apache-2.0
// The summary's bpf_cost is the kernel's own count of the programs' runs and time: with
// kernel.bpf_stats_enabled on, the write syscall's programs ran once per write the workload
// made, and without it the summary says nothing of cost.
#include <fstream>

#include "harness.h"

namespace wp::testing {
namespace {

// kernel.bpf_stats_enabled set for as long as it lives, then put back.
class BpfStats {
 public:
  explicit BpfStats(int enabled) : was_(slurp(kSysctl)) { write(std::to_string(enabled)); }
  ~BpfStats() { write(was_); }
  BpfStats(const BpfStats&) = delete;
  BpfStats& operator=(const BpfStats&) = delete;

 private:
  static constexpr const char* kSysctl = "/proc/sys/kernel/bpf_stats_enabled";
  static void write(const std::string& value) { std::ofstream(kSysctl) << value; }
  std::string was_;
};

constexpr int kWrites = 500;

TEST_F(ScratchExt4, BpfCostIsTheKernelsCountOfEveryProgramRun) {
  json summary;
  {
    BpfStats on(1);
    auto r = trace_workload("buffered", file("cost"), kWrites);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto s = of_type(json_lines(r.out), "summary");
    ASSERT_EQ(s.size(), 1u);
    summary = s[0];
  }
  const json& cost = summary["bpf_cost"];
  ASSERT_TRUE(cost.is_object()) << summary.dump();
  // The write syscall's exit program (per-syscall tracepoint or the raw pair) ran for each of
  // the workload's pwrites; the kernel counted time in it.
  std::uint64_t exit_runs = 0, total = 0;
  for (const auto& p : cost["programs"]) {
    const std::string name = p["name"];
    if (name == "wp_exit_cast_pwrite64" || name == "wp_exit_pwrite64" || name == "wp_sys_exit")
      exit_runs = u64(p["runs"]);
    EXPECT_GT(u64(p["runs"]), 0u) << p.dump();
    EXPECT_EQ(u64(p["ns_per_run"]), u64(p["ns"]) / u64(p["runs"])) << p.dump();
    total += u64(p["ns"]);
  }
  EXPECT_GE(exit_runs, static_cast<std::uint64_t>(kWrites)) << cost.dump();
  EXPECT_EQ(u64(cost["ns"]), total);
  EXPECT_GT(total, 0u);
  // The share of the machine is the programs' time over the time they were attached (from
  // their attach to the read of their counts, which holds the trace) on every CPU, written
  // with four decimals, the rest cut off (RapidJSON's SetMaxDecimalPlaces truncates): a short
  // trace of 500 writes may show 0. The programs run for every process from their attach on,
  // so over the trace alone a busy machine's share could pass 1.
  EXPECT_GE(u64(cost["window_ns"]), u64(summary["duration_ns"])) << summary.dump();
  const double machine = static_cast<double>(u64(cost["window_ns"])) * u64(cost["cpus"]);
  ASSERT_GT(machine, 0.0) << summary.dump();
  const double share = static_cast<double>(total) / machine;
  EXPECT_LE(cost["cpu_share"].get<double>(), share + 1e-12) << cost.dump();
  EXPECT_GT(cost["cpu_share"].get<double>(), share - 0.0001) << cost.dump();
  EXPECT_LT(cost["cpu_share"].get<double>(), 1.0);
  EXPECT_EQ(u64(cost["ns_per_item"]), total / (u64(summary["writes"]) + u64(summary["fsyncs"])));

  BpfStats off(0);
  auto r = trace_workload("buffered", file("no-cost"), 10);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = of_type(json_lines(r.out), "summary");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(s[0]["bpf_cost"].is_null()) << s[0].dump();
}

}  // namespace
}  // namespace wp::testing
