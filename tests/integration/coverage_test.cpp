// SPDX-License-Identifier: Apache-2.0
// What the tracer does not stitch, said rather than hidden: the untraced calls a traced
// program makes are counted in the summary, and doctor prints the coverage of this kernel.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "harness.h"

namespace {

using namespace wp::testing;
using nlohmann::json;

constexpr int kFallocates = 3;
constexpr int kCopies = 2;
constexpr int kMsyncs = 5;

// `writepath trace [--format json] -- wp_workload untraced-mix PATH 3 2 5`
std::vector<std::string> trace_untraced_mix(const std::string& writepath,
                                            const std::string& workload, const std::string& path,
                                            bool json) {
  std::vector<std::string> argv = {writepath, "trace"};
  if (json) argv.insert(argv.end(), {"--format", "json"});
  argv.insert(argv.end(), {"--", workload, "untraced-mix", path, std::to_string(kFallocates),
                           std::to_string(kCopies), std::to_string(kMsyncs)});
  return argv;
}

// The counts equal what the program did; its splice into a pipe writes no file and is not
// counted; it made no io_uring, AIO or sendfile call.
TEST_F(ScratchExt4, UntracedCallsOfTheTracedProgramAreCountedInTheSummary) {
  auto r = run(trace_untraced_mix(tool("writepath"), tool("wp_workload"), file("untraced"), true));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto summary = of_type(json_lines(r.out), "summary");
  ASSERT_EQ(summary.size(), 1u);
  const json expected = {{"io_uring_ops", 0},
                         {"copy_file_range", kCopies},
                         {"sendfile", 0},
                         {"splice", 0},
                         {"fallocate", kFallocates}};
  EXPECT_EQ(summary[0]["untraced_calls"], expected) << summary[0].dump();
  // msync is traced: each is a sync item, not a count.
  int msyncs = 0;
  for (const auto& s : of_type(json_lines(r.out), "fsync")) msyncs += s["syscall"] == "msync";
  EXPECT_EQ(msyncs, kMsyncs);
}

TEST_F(ScratchExt4, TextSummarySaysWhatWasNotStitched) {
  auto r =
      run(trace_untraced_mix(tool("writepath"), tool("wp_workload"), file("untraced-text"), false));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("not stitched: copy_file_range 2, fallocate 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("writepath doctor"), std::string::npos) << r.out;
}

// A program that writes only through write(2) has nothing unstitched to report.
TEST_F(ScratchExt4, PlainWritesReportNoUntracedCalls) {
  auto r = trace_workload("buffered-fsync", file("plain"), 4);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto summary = of_type(json_lines(r.out), "summary");
  ASSERT_EQ(summary.size(), 1u);
  for (const auto& [call, count] : summary[0]["untraced_calls"].items())
    EXPECT_EQ(count.get<std::uint64_t>(), 0u) << call;
  EXPECT_EQ(summary[0]["untraced_calls"].size(), 5u) << summary[0].dump();
}

TEST(Doctor, PrintsTheCoverageOfThisKernel) {
  WP_REQUIRE_ROOT();
  auto r = run({(build_dir() / "writepath").string(), "doctor"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto at = r.out.find("coverage (");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string coverage = r.out.substr(at);
  // The syscalls come from the plan: per-syscall tracepoints here unless fentry attaches.
  EXPECT_NE(coverage.find("stitched   pwrite64"), std::string::npos) << coverage;
  EXPECT_NE(coverage.find("stitched   sync_file_range"), std::string::npos) << coverage;
  if (r.out.find("ok   fentry") == std::string::npos) {
    EXPECT_NE(coverage.find("tracepoints syscalls:sys_enter/sys_exit_pwrite64"), std::string::npos)
        << coverage;
  }
  EXPECT_NE(coverage.find("not traced other io_uring ops"), std::string::npos) << coverage;
  EXPECT_NE(coverage.find("stitched   io_uring_write"), std::string::npos) << coverage;
  EXPECT_NE(coverage.find("trace counts its calls (io_uring_ops)"), std::string::npos) << coverage;
  EXPECT_NE(coverage.find("not traced fallocate"), std::string::npos) << coverage;
  EXPECT_NE(coverage.find("[file systems]"), std::string::npos) << coverage;
  // xfs's log is stitched where its tracepoints are (built in, or the module loaded).
  const bool xfs_log = fs::exists("/sys/kernel/tracing/events/xfs/xfs_log_force") ||
                       fs::exists("/sys/kernel/debug/tracing/events/xfs/xfs_log_force");
  EXPECT_NE(coverage.find(xfs_log ? "stitched   xfs" : "partial    xfs"), std::string::npos)
      << coverage;
  EXPECT_NE(coverage.find("stitched   btrfs"), std::string::npos) << coverage;
  EXPECT_NE(coverage.find("stitched   ext4 (jbd2)"), std::string::npos) << coverage;
}

}  // namespace
