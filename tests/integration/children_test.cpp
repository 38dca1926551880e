// SPDX-License-Identifier: Apache-2.0
// --children: the real tracer following process trees. A parent (wp_workload fork-tree) holds
// EARLY children forked before the trace, and forks N more once the tracer is attached; each
// child writes K 4 KiB blocks to its own file on the scratch ext4 and fsyncs it. What the
// tracer reports is compared with what the workload did.
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using namespace wp::testing;

using ProcessTree = ScratchExt4;

constexpr int kForked = 3;  // children forked after the tracer attached
constexpr int kEarly = 2;   // children alive before the trace started
constexpr int kWrites = 4;  // writes per child, then one fsync

struct TreeRun {
  std::uint32_t parent = 0;
  int workload_exit = -1;
  int tracer_exit = -1;
  std::vector<json> items;  // every line the tracer printed
  std::string out;          // the tracer's stdout
};

std::string device_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";
  return std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
}

// The fork-tree workload in `dir` (children exec `child_exe` if given), traced by
// `writepath trace --format FORMAT tracer_args…` started after the early children exist and before
// the rest are forked.
TreeRun run_tree(const std::string& dir, const std::vector<std::string>& tracer_args,
                 const std::string& child_exe = "", const std::string& format = "json") {
  TreeRun run;
  fs::create_directories(dir);
  std::vector<std::string> argv = {(build_dir() / "wp_workload").string(),
                                   "fork-tree",
                                   dir,
                                   std::to_string(kForked),
                                   std::to_string(kWrites),
                                   std::to_string(kEarly)};
  if (!child_exe.empty()) argv.push_back(child_exe);
  Background workload(argv);
  if (!wait_until([&] { return workload.out().find('\n') != std::string::npos; })) {
    ADD_FAILURE() << "workload never said ready: " << workload.err();
    return run;
  }
  run.parent = static_cast<std::uint32_t>(std::stoul(workload.out().substr(6)));
  std::vector<std::string> trace = {writepath(), "trace", "--format", format};
  for (auto arg : tracer_args) {
    if (arg == "PARENT") arg = std::to_string(run.parent);
    trace.push_back(arg);
  }
  Background tracer(trace);
  if (!tracer.wait_attached()) {
    ADD_FAILURE() << "tracer did not attach: " << tracer.err();
    return run;
  }
  ::kill(static_cast<pid_t>(run.parent), SIGUSR1);
  run.workload_exit = workload.wait();
  run.tracer_exit = tracer.stop(SIGINT);
  run.out = tracer.out();
  if (format == "json") run.items = json_lines(run.out);
  return run;
}

// The writes and fsyncs on the scratch file system (the tracer's own output is elsewhere).
struct OnScratch {
  int writes = 0;
  int fsyncs = 0;
  std::set<std::uint32_t> pids;
  std::set<std::string> comms;
};

OnScratch on_scratch(const TreeRun& run, const std::string& dev) {
  OnScratch seen;
  for (const auto& item : run.items) {
    if (item["type"] == "summary" || item["dev"] != dev) continue;
    if (item["type"] == "write") ++seen.writes;
    if (item["type"] == "fsync") ++seen.fsyncs;
    seen.pids.insert(item["pid"].get<std::uint32_t>());
    seen.comms.insert(item["comm"].get<std::string>());
  }
  return seen;
}

const json* summary_of(const TreeRun& run) {
  for (const auto& item : run.items)
    if (item["type"] == "summary") return &item;
  return nullptr;
}

TEST_F(ProcessTree, ChildrenFollowsExistingAndNewDescendantsOfAPid) {
  const std::string dir = file("pid-children");
  TreeRun run = run_tree(dir, {"-p", "PARENT", "--children"});
  ASSERT_EQ(run.workload_exit, 0);
  ASSERT_EQ(run.tracer_exit, 0);
  const OnScratch seen = on_scratch(run, device_of(dir));
  EXPECT_EQ(seen.writes, (kForked + kEarly) * kWrites);
  EXPECT_EQ(seen.fsyncs, kForked + kEarly);
  // One process per child, none of them the parent.
  EXPECT_EQ(seen.pids.size(), static_cast<std::size_t>(kForked + kEarly));
  EXPECT_EQ(seen.pids.count(run.parent), 0u);
  const json* summary = summary_of(run);
  ASSERT_NE(summary, nullptr);
  EXPECT_TRUE((*summary)["hint"].is_null()) << summary->dump();
}

TEST_F(ProcessTree, PidAloneTracesNoChildAndTheSummarySuggestsChildren) {
  const std::string dir = file("pid-alone");
  TreeRun run = run_tree(dir, {"-p", "PARENT"});
  ASSERT_EQ(run.workload_exit, 0);
  ASSERT_EQ(run.tracer_exit, 0);
  const OnScratch seen = on_scratch(run, device_of(dir));
  EXPECT_EQ(seen.writes, 0);
  EXPECT_EQ(seen.fsyncs, 0);
  const json* summary = summary_of(run);
  ASSERT_NE(summary, nullptr);
  ASSERT_TRUE((*summary)["hint"].is_string()) << summary->dump();
  const std::string hint = (*summary)["hint"];
  EXPECT_NE(hint.find(std::to_string(run.parent)), std::string::npos) << hint;
  EXPECT_NE(hint.find("--children"), std::string::npos) << hint;
}

TEST_F(ProcessTree, PidAloneHintIsALineOfTheTextSummary) {
  TreeRun run = run_tree(file("pid-alone-text"), {"-p", "PARENT"}, "", "text");
  ASSERT_EQ(run.workload_exit, 0);
  ASSERT_EQ(run.tracer_exit, 0);
  const auto at = run.out.find("hint: nothing traced from pid " + std::to_string(run.parent));
  ASSERT_NE(at, std::string::npos) << run.out;
  EXPECT_NE(run.out.find("--children", at), std::string::npos) << run.out;
}

// Children that exec a program of another name are followed from a --comm root: their comm is
// no longer the root's, and --comm alone does not see them.
TEST_F(ProcessTree, CommChildrenFollowsForksThatExecAnotherName) {
  const fs::path renamed = root_ / "wp_renamed";
  fs::remove(renamed);
  fs::create_symlink(build_dir() / "wp_workload", renamed);

  const std::string followed_dir = file("comm-children");
  TreeRun followed =
      run_tree(followed_dir, {"--comm", "wp_workload", "--children"}, renamed.string());
  ASSERT_EQ(followed.workload_exit, 0);
  ASSERT_EQ(followed.tracer_exit, 0);
  const OnScratch seen = on_scratch(followed, device_of(followed_dir));
  EXPECT_EQ(seen.writes, (kForked + kEarly) * kWrites);
  EXPECT_EQ(seen.fsyncs, kForked + kEarly);
  EXPECT_EQ(seen.comms, std::set<std::string>{"wp_renamed"});

  const std::string alone_dir = file("comm-alone");
  TreeRun alone = run_tree(alone_dir, {"--comm", "wp_workload"}, renamed.string());
  ASSERT_EQ(alone.workload_exit, 0);
  ASSERT_EQ(alone.tracer_exit, 0);
  const OnScratch unseen = on_scratch(alone, device_of(alone_dir));
  EXPECT_EQ(unseen.writes, 0);
  EXPECT_EQ(unseen.fsyncs, 0);
  fs::remove(renamed);
}

TEST(ChildrenUsage, ChildrenWithoutPidOrCommIsAUsageError) {
  for (const auto& sub : {"trace", "record"}) {
    std::vector<std::string> argv = {writepath(), sub, "--children"};
    if (std::string(sub) == "record") argv.insert(argv.end(), {"-o", "/nonexistent/x.wpt"});
    RunResult r = run(argv);
    EXPECT_EQ(r.exit_code, 2) << sub << ": " << r.err;
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("--children"), std::string::npos) << r.err;
  }
}

}  // namespace
