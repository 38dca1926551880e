// SPDX-License-Identifier: Apache-2.0
// Least privilege: tracing as an unprivileged user holding only CAP_BPF and CAP_PERFMON (no
// tracefs access: it is root's 0700), the one-line refusal without them, and `doctor`
// leaving the mounts alone, with tracefs and without (in a private mount namespace).
#include <sys/stat.h>

#include <set>
#include <sstream>
#include <string>

#include "harness.h"

namespace wp::testing {
namespace {

class Privilege : public ScratchExt4 {
 protected:
  static void SetUpTestSuite() {
    ScratchExt4::SetUpTestSuite();
    if (root_.empty()) return;
    // The unprivileged user needs the binaries on a path it can traverse, and a directory it
    // can write the workload's file in.
    bin_ = root_ / "bin";
    fs::create_directories(bin_);
    for (const char* name : {"writepath", "wp_workload"})
      fs::copy_file(build_dir() / name, bin_ / name, fs::copy_options::overwrite_existing);
    ::chmod(root_.c_str(), 0755);
    ::chmod(bin_.c_str(), 0755);
    ::chmod((root_ / "mnt").c_str(), 0755);
    scratch_ = root_ / "mnt" / "nobody";
    fs::create_directories(scratch_);
    ::chmod(scratch_.c_str(), 0777);
  }

  static std::vector<std::string> as_nobody(const std::vector<std::string>& caps) {
    std::vector<std::string> argv = {"setpriv", "--reuid=nobody", "--regid=nogroup",
                                     "--clear-groups"};
    if (!caps.empty()) {
      std::string list;
      for (const auto& cap : caps) list += (list.empty() ? "+" : ",+") + cap;
      argv.push_back("--inh-caps=" + list);
      argv.push_back("--ambient-caps=" + list);
    }
    return argv;
  }

  static std::vector<std::string> traced_workload(std::vector<std::string> argv,
                                                  const std::string& file, int count) {
    for (const std::string& a :
         {(bin_ / "writepath").string(), std::string("trace"), std::string("--format"),
          std::string("json"), std::string("--"), (bin_ / "wp_workload").string(),
          std::string("buffered-fsync"), file, std::to_string(count)})
      argv.push_back(a);
    return argv;
  }

  static inline fs::path bin_;
  static inline fs::path scratch_;
};

TEST_F(Privilege, UserWithOnlyCapBpfAndCapPerfmonTracesItsWrites) {
  const std::string file = (scratch_ / "capped").string();
  RunResult r = run(traced_workload(as_nobody({"bpf", "perfmon"}), file, 9));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The workload ran as that user (it created the file), and its calls are all there.
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_size, 9 * 4096);
  const auto items = json_lines(r.out);
  const auto writes = of_type(items, "write");
  ASSERT_EQ(writes.size(), 9u) << r.out;
  std::uint64_t bytes = 0;
  for (const auto& w : writes) bytes += u64(w["bytes"]);
  EXPECT_EQ(bytes, static_cast<std::uint64_t>(st.st_size));
  const auto syncs = of_type(items, "fsync");
  ASSERT_EQ(syncs.size(), 1u);
  // jbd2's commits come from tp_btf: no tracefs needed for the journal phase.
  EXPECT_FALSE(syncs[0]["journal_commits"].empty()) << syncs[0].dump();
  // tracefs is root's: the plan went without it and said what that costs, on one line (the
  // tracefs it tried is /sys/kernel/tracing, or debugfs's tracing where that is mounted first).
  const auto said = r.err.find("writepath: no tracefs (/sys/kernel/");
  ASSERT_NE(said, std::string::npos) << r.err;
  const std::string line = r.err.substr(said, r.err.find('\n', said) - said);
  EXPECT_NE(line.find("tracing/events: Permission denied): write/sync syscalls, other write/sync "
                      "calls: via raw sys_enter/sys_exit"),
            std::string::npos)
      << r.err;
}

TEST_F(Privilege, WithoutTheCapabilitiesTraceFailsWithOneLineNamingThem) {
  RunResult r = run(traced_workload(as_nobody({}), (scratch_ / "refused").string(), 1));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("writepath: tracing needs CAP_BPF and CAP_PERFMON (missing CAP_BPF, "
                        "CAP_PERFMON): ",
                        0),
            0u)
      << r.err;
  EXPECT_NE(r.err.find("setcap cap_bpf,cap_perfmon+ep"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(scratch_ / "refused"));  // the command never ran

  // One of the two is not enough, and the message names the one missing.
  std::vector<std::string> argv = as_nobody({"bpf"});
  argv.insert(argv.end(), {(bin_ / "writepath").string(), "doctor"});
  RunResult doctor = run(argv);
  EXPECT_EQ(doctor.exit_code, 1);
  EXPECT_NE(doctor.out.find("FAIL capabilities: missing CAP_PERFMON, present CAP_BPF"),
            std::string::npos)
      << doctor.out;
}

// The lines of a /proc/mounts text.
std::set<std::string> mount_lines(const std::string& table) {
  std::set<std::string> lines;
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) lines.insert(line);
  return lines;
}

// In a mount namespace of its own, a copy of the host's that other tests' mounts do not reach
// (they run beside this one): doctor adds no mount to the table it found and takes none away.
// Other tests can take some away: removing the directory a mount sits on detaches it in every
// mount namespace (since 3.18), so a mount gone whose mount point is gone too is theirs.
TEST_F(Privilege, DoctorLeavesTheMountsAsTheyWere) {
  const fs::path dir = root_ / "mounts";
  fs::create_directories(dir);
  const std::string script = "set -e; cat /proc/mounts > " + (dir / "before").string() + "; " +
                             writepath() + " doctor > " + (dir / "doctor").string() +
                             " 2>&1; cat /proc/mounts > " + (dir / "after").string();
  { std::ofstream(dir / "run.sh") << script << "\n"; }
  ASSERT_TRUE(sh("unshare --mount --propagation private sh " + (dir / "run.sh").string()))
      << slurp(dir / "doctor");
  const std::set<std::string> before = mount_lines(slurp(dir / "before"));
  const std::set<std::string> after = mount_lines(slurp(dir / "after"));
  ASSERT_FALSE(before.empty());
  for (const std::string& line : after) EXPECT_TRUE(before.contains(line)) << "added: " << line;
  for (const std::string& line : before) {
    if (after.contains(line)) continue;
    std::istringstream fields(line);
    std::string source, mount_point;
    fields >> source >> mount_point;
    EXPECT_FALSE(fs::exists(mount_point)) << "taken away, its mount point still there: " << line;
  }
}

// In a private mount namespace without tracefs (the host's is untouched): doctor mounts
// nothing and says what the missing tracefs costs; trace goes on with the raw syscall pair.
TEST_F(Privilege, WithoutTracefsDoctorMountsNothingAndTraceFallsBack) {
  const fs::path dir = root_ / "notracefs";
  fs::create_directories(dir);
  const std::string file = (scratch_ / "notracefs").string();
  const std::string script =
      "set -e; umount /sys/kernel/tracing 2>/dev/null || true; "
      "umount /sys/kernel/debug 2>/dev/null || true; "
      "! grep -qE \" (tracefs|debugfs) \" /proc/mounts; "
      "cat /proc/mounts > " +
      (dir / "before").string() + "; " + writepath() + " doctor > " + (dir / "doctor").string() +
      " 2>&1 || echo $? > " + (dir / "doctor_rc").string() + "; " + "cat /proc/mounts > " +
      (dir / "after").string() + "; " + writepath() + " trace --format json -- " +
      tool("wp_workload") + " buffered-fsync " + file + " 5 > " + (dir / "trace").string() +
      " 2> " + (dir / "trace_err").string();
  { std::ofstream(dir / "run.sh") << script << "\n"; }
  ASSERT_TRUE(sh("unshare --mount --propagation private sh " + (dir / "run.sh").string()))
      << slurp(dir / "doctor") << slurp(dir / "trace_err");
  EXPECT_FALSE(fs::exists(dir / "doctor_rc")) << slurp(dir / "doctor");
  EXPECT_EQ(slurp(dir / "after"), slurp(dir / "before"));
  const std::string doctor = slurp(dir / "doctor");
  EXPECT_NE(doctor.find("no   tracefs (not mounted)"), std::string::npos) << doctor;
  // doctor plans as `trace --reads` would: the read syscalls fall back too.
  EXPECT_NE(doctor.find("no tracefs (not mounted): what it costs\n  write/sync syscalls, other "
                        "write/sync calls, read syscalls: via raw sys_enter/sys_exit (every "
                        "syscall of every thread pays a filter)\n"),
            std::string::npos)
      << doctor;
  EXPECT_NE(doctor.find("tracing can run here"), std::string::npos) << doctor;

  const auto items = json_lines(slurp(dir / "trace"));
  EXPECT_EQ(of_type(items, "write").size(), 5u);
  EXPECT_EQ(of_type(items, "fsync").size(), 1u);
  EXPECT_NE(slurp(dir / "trace_err").find("writepath: no tracefs (not mounted): "),
            std::string::npos);
  // The host still has its tracefs.
  EXPECT_NE(slurp("/proc/mounts").find(" tracefs "), std::string::npos);
}

}  // namespace
}  // namespace wp::testing
