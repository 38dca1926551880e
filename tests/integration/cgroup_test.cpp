// SPDX-License-Identifier: Apache-2.0
// --cgroup on the real cgroup2 hierarchy: a parent cgroup with a child, and a sibling outside
// the parent, made under wherever cgroup2 is mounted (/proc/mounts). A writer moved into the
// child (before it writes) is traced with --cgroup of the parent in each form --cgroup takes,
// and its items carry the child's path; a writer in the sibling is not traced. The counts are
// what the writer did. The cgroups are removed whatever happens.
#include <sys/stat.h>

#include <set>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using namespace wp::testing;

using CgroupFilter = ScratchExt4;

constexpr int kWrites = 5;  // wp_workload fsync-each: a 4 KiB pwrite then an fsync, 5 times

// Runs wp_workload fsync-each on `file` inside the cgroup `dir`: the shell moves itself into
// it, then becomes the writer, so every write is made from there.
int write_in_cgroup(const std::string& dir, const std::string& file) {
  const std::string script = "echo $$ > " + dir + "/cgroup.procs && exec " +
                             (build_dir() / "wp_workload").string() + " fsync-each " + file + " " +
                             std::to_string(kWrites);
  return run({"sh", "-c", script}).exit_code;
}

std::uint64_t inode_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

TEST_F(CgroupFilter, TracesTheCgroupAndItsDescendantsInEveryFormAndNotItsSibling) {
  const std::string mount = cgroup2_mount();
  if (mount.empty()) GTEST_SKIP() << "no cgroup2 mounted";
  const std::string parent = "/wp_it_cg_" + std::to_string(::getpid());
  TestCgroups cgroups(mount);
  cgroups.make(parent);
  const std::string child_dir = cgroups.make(parent + "/child");
  const std::string sibling_dir = cgroups.make(parent + "_sibling");
  const std::string recording = file("cgroup.wpt");

  // The parent by its directory, relative to the cgroup2 root, and as /proc/PID/cgroup says.
  const std::vector<std::string> forms = {mount + parent, parent.substr(1), parent};
  for (const std::string& form : forms) {
    SCOPED_TRACE("--cgroup " + form);
    const std::string traced_file = file("in_child"), sibling_file = file("in_sibling");
    Background tracer(
        {writepath(), "trace", "--format", "json", "--cgroup", form, "--save", recording});
    ASSERT_TRUE(tracer.wait_attached()) << tracer.err();
    ASSERT_EQ(write_in_cgroup(child_dir, traced_file), 0);
    ASSERT_EQ(write_in_cgroup(sibling_dir, sibling_file), 0);
    ASSERT_EQ(tracer.stop(SIGINT), 0) << tracer.err();

    const auto items = json_lines(tracer.out());
    const auto writes = of_type(items, "write"), syncs = of_type(items, "fsync");
    EXPECT_EQ(writes.size(), static_cast<std::size_t>(kWrites)) << tracer.out();
    EXPECT_EQ(syncs.size(), static_cast<std::size_t>(kWrites)) << tracer.out();
    const std::uint64_t child_ino = inode_of(traced_file), sibling_ino = inode_of(sibling_file);
    for (const auto& item : items) {
      if (item["type"] == "summary") continue;
      EXPECT_EQ(item["cgroup"], parent + "/child") << item;
      if (item["type"] == "namespace") continue;  // the workload's open: no data
      EXPECT_NE(u64(item["ino"]), sibling_ino) << "the sibling's write was traced: " << item;
      if (item["comm"] != "wp_workload") continue;
      EXPECT_EQ(u64(item["ino"]), child_ino) << item;
      EXPECT_EQ(item["cgroup"], parent + "/child") << item;
    }

    // The recording keeps the cgroup's path: the report names it too.
    const RunResult report = run({writepath(), "report", recording, "--format", "json"});
    ASSERT_EQ(report.exit_code, 0) << report.err;
    const auto reported = of_type(json_lines(report.out), "write");
    ASSERT_EQ(reported.size(), static_cast<std::size_t>(kWrites)) << report.out;
    for (const auto& item : reported) EXPECT_EQ(item["cgroup"], parent + "/child") << item;
  }
  fs::remove(recording);
}

TEST_F(CgroupFilter, AMissingCgroupIsOneLineSayingWhereItLooked) {
  const std::string mount = cgroup2_mount();
  if (mount.empty()) GTEST_SKIP() << "no cgroup2 mounted";
  const RunResult r = run({writepath(), "trace", "--cgroup", "/no.slice/none.service"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("no such cgroup"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(mount + "/no.slice/none.service"), std::string::npos) << r.err;
}

}  // namespace
