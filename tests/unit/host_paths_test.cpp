// SPDX-License-Identifier: Apache-2.0
// translate_path: a file a process names in its mount namespace, as the host names it, from
// real-shaped mountinfo of both (docker's overlay root, a bind-mounted volume, a Kubernetes
// emptyDir, an overlay the namespace mounted itself).
#include "probe/host_paths.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace wp {
namespace {

constexpr DevT kDisk = (254u << 20) | 0;    // /dev/vda
constexpr DevT kOverlay = (0u << 20) | 53;  // an overlay's anonymous device
constexpr DevT kTmpfs = (0u << 20) | 61;

const std::string kMerged = "/var/lib/docker/overlay2/4f1e/merged";
const std::string kOverlayOptions =
    "rw,lowerdir=/var/lib/docker/overlay2/l/ABC:/var/lib/docker/overlay2/l/DEF,upperdir=/var/"
    "lib/docker/overlay2/4f1e/diff,workdir=/var/lib/docker/overlay2/4f1e/work";

// The host: its root on the disk, the container's overlay mounted where docker mounts it, a
// tmpfs.
std::vector<MountEntry> host_mounts() {
  return {
      {kDisk, "/", "/", "ext4", "/dev/vda", "rw"},
      {kOverlay, "/", kMerged, "overlay", "overlay", kOverlayOptions},
      {kTmpfs, "/", "/run", "tmpfs", "tmpfs", "rw"},
  };
}

// The container: the overlay is its root, a host directory is bound at /var/lib/mysql, and a
// file of the tmpfs at /etc/hostname.
std::vector<MountEntry> container_mounts() {
  return {
      {kOverlay, "/", "/", "overlay", "overlay", kOverlayOptions},
      {kDisk, "/srv/mysql-data", "/var/lib/mysql", "ext4", "/dev/vda", "rw"},
      {kTmpfs, "/containers/4f1e/hostname", "/etc/hostname", "tmpfs", "tmpfs", "rw"},
  };
}

TEST(HostPaths, AContainersRootFileIsUnderItsMergedDirectoryOnTheHost) {
  EXPECT_EQ(translate_path("/data/x", kOverlay, kDisk, container_mounts(), host_mounts()),
            kMerged + "/data/x");
  EXPECT_EQ(translate_path("/", kOverlay, 0, container_mounts(), host_mounts()), kMerged);
}

TEST(HostPaths, ABindMountedVolumeIsWhereTheHostHasItsDirectory) {
  EXPECT_EQ(translate_path("/var/lib/mysql/ibdata1", kDisk, 0, container_mounts(), host_mounts()),
            "/srv/mysql-data/ibdata1");
  // A bound file, not a directory.
  EXPECT_EQ(translate_path("/etc/hostname", kTmpfs, 0, container_mounts(), host_mounts()),
            "/run/containers/4f1e/hostname");
}

TEST(HostPaths, AnOverlayOnlyTheNamespaceMountedIsFoundThroughItsUpperDirectory) {
  // The container mounted its own overlay at /srv; the host has no mount of it, but its upper
  // directory is on the host's disk (named in the container as on the host: the root is
  // the disk there too).
  const std::string options = "rw,lowerdir=/l,upperdir=/var/tmp/ct/upper,workdir=/var/tmp/ct/w";
  const std::vector<MountEntry> theirs = {
      {kDisk, "/", "/", "ext4", "/dev/vda", "rw"},
      {kOverlay, "/", "/srv", "overlay", "overlay", options},
  };
  const std::vector<MountEntry> ours = {{kDisk, "/", "/", "ext4", "/dev/vda", "rw"}};
  EXPECT_EQ(translate_path("/srv/o.dat", kOverlay, kDisk, theirs, ours), "/var/tmp/ct/upper/o.dat");
  // Without the upper file's device there is nothing to go by.
  EXPECT_EQ(translate_path("/srv/o.dat", kOverlay, 0, theirs, ours), std::nullopt);
}

TEST(HostPaths, APlaceTheHostDoesNotShowHasNoHostPath) {
  // A tmpfs only the container mounted.
  const std::vector<MountEntry> theirs = {{kTmpfs, "/", "/scratch", "tmpfs", "tmpfs", "rw"}};
  EXPECT_EQ(translate_path("/scratch/a", kTmpfs, 0, theirs, {{kDisk, "/", "/", "ext4", "", ""}}),
            std::nullopt);
  // A path under no mount of the file's device, and a prefix that is not a whole component.
  EXPECT_EQ(translate_path("/var/lib/mysqlx/f", kDisk, 0, container_mounts(), host_mounts()),
            std::nullopt);
}

TEST(HostPaths, TheDeepestAndLatestMountWins) {
  // Two binds of the disk in the container: /data, and /data/logs over it from elsewhere.
  const std::vector<MountEntry> theirs = {
      {kDisk, "/srv/data", "/data", "ext4", "", ""},
      {kDisk, "/srv/old-logs", "/data/logs", "ext4", "", ""},
      {kDisk, "/srv/logs", "/data/logs", "ext4", "", ""},  // mounted later: hides the one above
  };
  const std::vector<MountEntry> ours = {
      {kDisk, "/", "/", "ext4", "", ""},
      {kDisk, "/srv", "/mnt/srv", "ext4", "", ""},  // a deeper view of the same place
  };
  EXPECT_EQ(translate_path("/data/logs/a.log", kDisk, 0, theirs, ours), "/mnt/srv/logs/a.log");
  EXPECT_EQ(translate_path("/data/db", kDisk, 0, theirs, ours), "/mnt/srv/data/db");
}

// A /proc and a cgroup2 hierarchy made of plain files: a namespace is a file's inode, as the
// kernel's ns links are.
class HostPathsOnAFakeHost : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("wp_host_paths_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    write("proc/self/ns/mnt", "");
    write("proc/self/mountinfo", "36 35 254:0 / / rw,relatime - ext4 /dev/vda rw\n");
    // pid 200: a container's init, its namespace its own, /srv/vol bound at /mnt.
    write("proc/200/ns/mnt", "");
    write(
        "proc/200/mountinfo",
        "49 48 254:0 / / rw - ext4 /dev/vda rw\n50 49 254:0 /srv/vol /mnt rw - ext4 /dev/vda rw\n");
    // pid 300: a process in the agent's own namespace.
    std::filesystem::create_directories(root_ / "proc/300/ns");
    std::filesystem::create_hard_link(root_ / "proc/self/ns/mnt", root_ / "proc/300/ns/mnt");
    // The container's cgroup holds a helper in the agent's namespace (300) and, below, its init.
    write("cgroup/system.slice/docker-" + std::string(64, 'a') + ".scope/cgroup.procs", "300\n");
    write("cgroup/system.slice/docker-" + std::string(64, 'a') + ".scope/container/cgroup.procs",
          "200\n");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void write(const std::string& relative, const std::string& text) {
    std::filesystem::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  HostPaths host() {
    // A namespace's whole table is what the fake /proc has at PID/whole_mountinfo.
    return HostPaths((root_ / "proc").string(), (root_ / "cgroup").string(),
                     [this](const std::string& proc, std::uint32_t pid) {
                       ++whole_reads_;
                       const auto file =
                           std::filesystem::path(proc) / std::to_string(pid) / "whole_mountinfo";
                       if (!std::filesystem::exists(file)) return std::optional<std::string>();
                       std::ifstream in(file);
                       return std::optional(std::string(std::istreambuf_iterator<char>(in), {}));
                     });
  }
  // pid chroot'ed at `root` (what /proc/PID/root says), its namespace its own.
  void chrooted(const std::string& pid, const std::string& root, const std::string& own_table,
                const std::string& whole_table) {
    write("proc/" + pid + "/ns/mnt", "");
    write("proc/" + pid + "/mountinfo", own_table);
    if (!whole_table.empty()) write("proc/" + pid + "/whole_mountinfo", whole_table);
    std::filesystem::create_symlink(root, root_ / "proc" / pid / "root");
  }

  // The fake namespace `relative` (a file's inode) as the kernel numbers one, in 32 bits;
  // nullopt when the inode has more.
  std::optional<std::uint32_t> namespace_number(const std::string& relative) const {
    struct stat st {};
    if (::stat((root_ / relative).c_str(), &st) != 0 || st.st_ino > UINT32_MAX) return std::nullopt;
    return static_cast<std::uint32_t>(st.st_ino);
  }
  // A build sandbox's namespace: its root, and /var/lib/sandboxes bound at /sandbox.
  static constexpr const char* kSandboxTable =
      "60 59 254:0 / / rw - ext4 /dev/vda rw\n"
      "61 60 254:0 /var/lib/sandboxes /sandbox rw - ext4 /dev/vda rw\n";

  std::filesystem::path root_;
  int whole_reads_ = 0;
  const std::string container_cgroup_ = "/system.slice/docker-" + std::string(64, 'a') + ".scope";
};

TEST_F(HostPathsOnAFakeHost, ANotedProcessInAnotherNamespaceGetsTheHostsPath) {
  HostPaths paths = host();
  paths.note_process(200, 0);
  EXPECT_EQ(paths.host_path(200, "", kDisk, 0, "/mnt/data.log"), "/srv/vol/data.log");
  EXPECT_EQ(paths.host_path(200, "", kDisk, 0, "/etc/passwd"), std::nullopt)
      << "the same place by the same name: nothing to add";
}

TEST_F(HostPathsOnAFakeHost, AProcessGoneBeforeItWasNotedIsReadThroughItsContainersCgroup) {
  HostPaths paths = host();
  paths.note_process(100, 0);  // no /proc/100: exited before its record was decoded
  EXPECT_EQ(paths.host_path(100, "", kDisk, 0, "/mnt/data.log"), std::nullopt)
      << "not in a container: nothing stands for it";
  // Its container's init (in the cgroup's child, as podman's split cgroup has it) does.
  EXPECT_EQ(paths.host_path(100, container_cgroup_, kDisk, 0, "/mnt/data.log"),
            "/srv/vol/data.log");
}

TEST_F(HostPathsOnAFakeHost, AProcessInTheAgentsNamespaceHasNoOtherPath) {
  HostPaths paths = host();
  paths.note_process(300, 0);
  EXPECT_EQ(paths.host_path(300, "", kDisk, 0, "/mnt/data.log"), std::nullopt);
  EXPECT_EQ(paths.host_path(12345, "", kDisk, 0, "/mnt/data.log"), std::nullopt) << "never noted";
}

// A pid that names a process in another namespace later (the pid reused, or the process
// unshared its mounts) is read afresh, once the recheck interval has passed since it was read;
// a process gone keeps what was read (its items may still be pending).
TEST_F(HostPathsOnAFakeHost, APidReusedInAnotherNamespaceIsReadAfreshAfterTheRecheck) {
  HostPaths paths = host();
  paths.note_process(200, 0);
  EXPECT_EQ(paths.host_path(200, "", kDisk, 0, "/mnt/data.log"), "/srv/vol/data.log");
  // pid 200 now a process in the agent's namespace.
  std::filesystem::remove(root_ / "proc/200/ns/mnt");
  std::filesystem::create_hard_link(root_ / "proc/self/ns/mnt", root_ / "proc/200/ns/mnt");
  paths.note_process(200, HostPaths::kRecheckNs / 2);
  EXPECT_EQ(paths.host_path(200, "", kDisk, 0, "/mnt/data.log"), "/srv/vol/data.log")
      << "not rechecked yet";
  paths.note_process(200, HostPaths::kRecheckNs + 1);
  EXPECT_EQ(paths.host_path(200, "", kDisk, 0, "/mnt/data.log"), std::nullopt);
}

// A writer chroot'ed in the agent's own namespace: the path from the namespace's root is the
// host's; without one (not chroot'ed) the writer's path is.
TEST_F(HostPathsOnAFakeHost, AChrootedWriterInTheAgentsNamespaceHasItsNamespacePath) {
  HostPaths paths = host();
  paths.note_process(300, 0);
  EXPECT_EQ(paths.host_path(300, "", kDisk, 0, "/data/x", "/srv/box/data/x"), "/srv/box/data/x");
  EXPECT_EQ(paths.host_path(300, "", kDisk, 0, "/srv/box/data/x"), std::nullopt);
  EXPECT_EQ(whole_reads_, 0) << "the agent's own table is the namespace's";
}

// A chroot'ed writer gone before it was noted (a short build step): the kernel said whose
// namespace the path is in, and when it is the agent's that is all it takes.
TEST_F(HostPathsOnAFakeHost, AWriterGoneBeforeItWasNotedIsInTheAgentsNamespaceAsTheKernelSaid) {
  HostPaths paths = host();
  const auto own = namespace_number("proc/self/ns/mnt");
  if (!own) GTEST_SKIP() << "the fake namespace's number has over 32 bits";
  const std::uint32_t own_ns = *own;
  EXPECT_EQ(paths.host_path(12345, "", kDisk, 0, "/data/x", "/srv/box/data/x", own_ns),
            "/srv/box/data/x");
  EXPECT_EQ(paths.host_path(12345, "", kDisk, 0, "/data/x", "/srv/box/data/x", own_ns + 1),
            std::nullopt)
      << "another namespace, and no process to read it through";
  EXPECT_EQ(paths.host_path(12345, "", kDisk, 0, "/srv/box/data/x", "", own_ns), std::nullopt);
}

// A writer chroot'ed into a plain directory of its own namespace (a sandbox under a bind
// mount the host has elsewhere): its own table lists no mount above its root, so its path is
// found from its namespace path through the namespace's whole table.
TEST_F(HostPathsOnAFakeHost, AChrootedWriterInAnotherNamespaceIsFoundThroughTheWholeTable) {
  chrooted("400", "/sandbox/box", "", kSandboxTable);
  HostPaths paths = host();
  paths.note_process(400, 0);
  EXPECT_EQ(whole_reads_, 1) << "read while the process runs";
  EXPECT_EQ(paths.host_path(400, "", kDisk, 0, "/data/x", "/sandbox/box/data/x"),
            "/var/lib/sandboxes/box/data/x");
  // A file outside its root (opened before the chroot) is named from its namespace's root.
  EXPECT_EQ(paths.host_path(400, "", kDisk, 0, "/sandbox/old.log"), "/var/lib/sandboxes/old.log");
  // Its own table alone has nothing to go by.
  std::filesystem::remove(root_ / "proc/400/whole_mountinfo");
  HostPaths alone = host();
  alone.note_process(400, 0);
  EXPECT_EQ(alone.host_path(400, "", kDisk, 0, "/data/x", "/sandbox/box/data/x"), std::nullopt);
}

// A compiler run in a build sandbox (a namespace of its own, chroot'ed) is gone before its
// record is decoded: the namespace its path record named is found through the sandbox's
// shell, read while it ran and still in it; no longer once the shell has gone too.
TEST_F(HostPathsOnAFakeHost, AWriterGoneBeforeItWasNotedIsFoundThroughAProcessOfItsNamespace) {
  chrooted("400", "/sandbox/box", "", kSandboxTable);
  const auto sandbox = namespace_number("proc/400/ns/mnt");
  if (!sandbox) GTEST_SKIP() << "the fake namespace's number has over 32 bits";
  const std::uint32_t ns = *sandbox;
  HostPaths paths = host();
  paths.note_process(400, 0);
  paths.note_process(401, 0);  // no /proc/401: exited before its record was decoded
  EXPECT_EQ(paths.host_path(401, "", kDisk, 0, "/out/y.o", "/sandbox/box/out/y.o", ns),
            "/var/lib/sandboxes/box/out/y.o");
  // Never noted at all (a writer known only by its stores into a mapping): the same.
  EXPECT_EQ(paths.host_path(402, "", kDisk, 0, "/out/y.o", "/sandbox/box/out/y.o", ns),
            "/var/lib/sandboxes/box/out/y.o");
  EXPECT_EQ(paths.host_path(401, "", kDisk, 0, "/out/y.o", "/sandbox/box/out/y.o", ns + 1),
            std::nullopt)
      << "a namespace no process was read in";
  std::filesystem::remove_all(root_ / "proc/400");  // the shell exited: the number may be reused
  EXPECT_EQ(paths.host_path(401, "", kDisk, 0, "/out/y.o", "/sandbox/box/out/y.o", ns),
            std::nullopt);
}

// The shell's short steps (a readlink, a dd) are read too, each the last one read in their
// turn: one gone does not take the table with it while the shell is still in the namespace.
TEST_F(HostPathsOnAFakeHost, ATableStandsWhileAnyProcessItWasReadThroughIsInItsNamespace) {
  chrooted("400", "/sandbox/box", "", kSandboxTable);
  chrooted("403", "/sandbox/box", "", kSandboxTable);
  std::filesystem::remove(root_ / "proc/403/ns/mnt");
  std::filesystem::create_hard_link(root_ / "proc/400/ns/mnt", root_ / "proc/403/ns/mnt");
  const auto sandbox = namespace_number("proc/400/ns/mnt");
  if (!sandbox) GTEST_SKIP() << "the fake namespace's number has over 32 bits";
  const std::uint32_t ns = *sandbox;
  HostPaths paths = host();
  paths.note_process(400, 0);
  paths.note_process(403, 0);                       // the readlink, read last
  std::filesystem::remove_all(root_ / "proc/403");  // and gone
  EXPECT_EQ(paths.host_path(401, "", kDisk, 0, "/data/x", "/sandbox/box/data/x", ns),
            "/var/lib/sandboxes/box/data/x");
  std::filesystem::remove_all(root_ / "proc/400");
  EXPECT_EQ(paths.host_path(402, "", kDisk, 0, "/data/y", "/sandbox/box/data/y", ns), std::nullopt)
      << "no process left in the namespace";
}

// runc's no_pivot_root: chroot'ed at the root of a mount (here a bind of /srv/vol), which its
// own table shows as "/": the writer's path goes through it when the whole table is not read.
TEST_F(HostPathsOnAFakeHost, AWriterChrootedAtAMountsRootIsFoundThroughItsOwnTable) {
  chrooted("500", "/run/ct/rootfs", "70 69 254:0 /srv/vol / rw - ext4 /dev/vda rw\n", "");
  HostPaths paths = host();
  paths.note_process(500, 0);
  EXPECT_EQ(whole_reads_, 1);
  EXPECT_EQ(paths.host_path(500, "", kDisk, 0, "/data/x", "/run/ct/rootfs/data/x"),
            "/srv/vol/data/x");
}

// A process in another namespace at its root (pid 200, no root link: "/") is translated as
// before, and the whole table is not read for it; one that chroots later is, at the recheck.
TEST_F(HostPathsOnAFakeHost, TheWholeTableIsReadOnlyForAChrootedProcess) {
  HostPaths paths = host();
  paths.note_process(200, 0);
  EXPECT_EQ(whole_reads_, 0);
  EXPECT_EQ(paths.host_path(200, "", kDisk, 0, "/mnt/data.log"), "/srv/vol/data.log");
  std::filesystem::create_symlink("/mnt", root_ / "proc/200/root");
  write("proc/200/mountinfo", "50 49 254:0 /srv/vol / rw - ext4 /dev/vda rw\n");
  write("proc/200/whole_mountinfo",
        "49 48 254:0 / / rw - ext4 /dev/vda rw\n50 49 254:0 /srv/vol /mnt rw - ext4 /dev/vda rw\n");
  paths.note_process(200, HostPaths::kRecheckNs / 2);
  EXPECT_EQ(whole_reads_, 0) << "not rechecked yet";
  paths.note_process(200, HostPaths::kRecheckNs + 1);
  EXPECT_EQ(whole_reads_, 1);
  EXPECT_EQ(paths.host_path(200, "", kDisk, 0, "/data.log", "/mnt/data.log"), "/srv/vol/data.log");
}

TEST_F(HostPathsOnAFakeHost, AProcessGoneSinceItWasReadKeepsItsView) {
  HostPaths paths = host();
  paths.note_process(200, 0);
  std::filesystem::remove_all(root_ / "proc/200");  // exited; its items are still pending
  paths.note_process(200, 3 * HostPaths::kRecheckNs);
  EXPECT_EQ(paths.host_path(200, "", kDisk, 0, "/mnt/data.log"), "/srv/vol/data.log");
}

}  // namespace
}  // namespace wp
