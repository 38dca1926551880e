// SPDX-License-Identifier: Apache-2.0
// cgroup v2 paths: the cgroup2 mounts of a mountinfo, the three forms --cgroup takes resolved
// against a cgroup2 hierarchy laid out in a temporary directory, and cgroup ids named by a
// walk of it.
#include "probe/cgroups.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/errors.h"

namespace wp {
namespace {

namespace fs = std::filesystem;

// A hybrid host's mounts: cgroup v1 controllers under a tmpfs, cgroup2 at .../unified; and a
// second cgroup2 mount of a subtree (a container's view), listed first.
constexpr const char* kHybridMountinfo =
    "25 18 0:22 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755\n"
    "26 25 0:23 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 "
    "cgroup2 rw,nsdelegate\n"
    "27 25 0:24 / /sys/fs/cgroup/memory rw,relatime shared:11 - cgroup cgroup rw,memory\n"
    "90 80 0:23 /kubepods/pod1 /var/lib/x/my\\040cgroup rw shared:10 - cgroup2 cgroup2 rw\n";

TEST(Cgroups, MountinfoGivesTheCgroup2MountsWholeHierarchyFirst) {
  const auto mounts = parse_mountinfo(kHybridMountinfo);
  ASSERT_EQ(mounts.size(), 4u);
  EXPECT_EQ(mounts[3].root, "/kubepods/pod1");
  EXPECT_EQ(mounts[3].mount_point, "/var/lib/x/my cgroup");  // \040 unescaped
  const auto cgroup2 = cgroup2_mounts(mounts);
  ASSERT_EQ(cgroup2.size(), 2u);
  EXPECT_EQ(cgroup2[0].mount_point, "/sys/fs/cgroup/unified");
  EXPECT_EQ(cgroup2[0].root, "/");
  EXPECT_EQ(cgroup2[1].mount_point, "/var/lib/x/my cgroup");
}

class CgroupTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("wp_cgroups_" + std::to_string(::getpid()));
    root_ = base_ / "unified";
    make_cgroup(root_);
    make_cgroup(root_ / "system.slice");
    make_cgroup(root_ / "system.slice/x.service");
    fs::create_directories(base_ / "plain");  // a directory that is no cgroup
    mounts_ = {MountEntry{.dev = 0,
                          .root = "/",
                          .mount_point = root_.string(),
                          .type = "cgroup2",
                          .source = "cgroup2",
                          .options = "rw"}};
  }
  void TearDown() override { fs::remove_all(base_); }

  static void make_cgroup(const fs::path& dir) {
    fs::create_directories(dir);
    std::ofstream(dir / "cgroup.procs") << "";
  }
  static std::uint64_t inode(const fs::path& dir) {
    struct stat st {};
    EXPECT_EQ(::stat(dir.c_str(), &st), 0) << dir;
    return st.st_ino;
  }
  // The one-line error resolve_cgroup() gives for `arg`, "" when it resolves.
  std::string error_of(const std::string& arg, const std::vector<MountEntry>& mounts) {
    try {
      resolve_cgroup(arg, mounts);
    } catch (const Failure& f) {
      EXPECT_EQ(f.exit_code(), kExitUsage);
      return f.what();
    }
    return "";
  }

  fs::path base_, root_;
  std::vector<MountEntry> mounts_;
};

TEST_F(CgroupTreeTest, ADirectoryOnTheCgroup2Mount) {
  const CgroupDir c = resolve_cgroup((root_ / "system.slice").string(), mounts_);
  EXPECT_EQ(c.path, "/system.slice");
  EXPECT_EQ(c.dir, (root_ / "system.slice").string());
  EXPECT_EQ(c.id, inode(root_ / "system.slice"));
  const CgroupDir whole = resolve_cgroup(root_.string() + "/", mounts_);
  EXPECT_EQ(whole.path, "/");
  EXPECT_EQ(whole.id, inode(root_));
}

TEST_F(CgroupTreeTest, APathRelativeToTheCgroup2Root) {
  const CgroupDir c = resolve_cgroup("system.slice/x.service", mounts_);
  EXPECT_EQ(c.path, "/system.slice/x.service");
  EXPECT_EQ(c.dir, (root_ / "system.slice/x.service").string());
  EXPECT_EQ(c.id, inode(root_ / "system.slice/x.service"));
}

TEST_F(CgroupTreeTest, TheFormProcPidCgroupPrintsIsRelativeToTheRoot) {
  // Absolute, but on no cgroup2 mount: the path under the root, as systemd prints it.
  const CgroupDir c = resolve_cgroup("/system.slice/x.service", mounts_);
  EXPECT_EQ(c.path, "/system.slice/x.service");
  EXPECT_EQ(c.id, inode(root_ / "system.slice/x.service"));
  EXPECT_EQ(resolve_cgroup("/", mounts_).id, inode(root_));
}

TEST_F(CgroupTreeTest, NoSuchCgroupSaysWhereItLooked) {
  const std::string missing = error_of("/system.slice/y.service", mounts_);
  EXPECT_NE(missing.find("no such cgroup"), std::string::npos) << missing;
  EXPECT_NE(missing.find((root_ / "system.slice/y.service").string()), std::string::npos)
      << missing;
  // On the mount, but not a cgroup there.
  const std::string on_mount = error_of((root_ / "nope").string(), mounts_);
  EXPECT_NE(on_mount.find("no such cgroup"), std::string::npos) << on_mount;
  EXPECT_NE(on_mount.find(root_.string()), std::string::npos) << on_mount;
  // A directory elsewhere that is no cgroup, and a path climbing out of the root.
  EXPECT_NE(error_of((base_ / "plain").string(), mounts_).find("no such cgroup"),
            std::string::npos);
  EXPECT_NE(error_of("../plain", mounts_).find("not under the cgroup2 root"), std::string::npos);
  EXPECT_EQ(error_of("system.slice", mounts_), "");
}

TEST_F(CgroupTreeTest, CgroupV1OnlyIsSaid) {
  const auto v1_only = parse_mountinfo(
      "27 25 0:24 / /sys/fs/cgroup/memory rw,relatime shared:11 - cgroup cgroup rw,memory\n");
  const std::string error = error_of("system.slice", v1_only);
  EXPECT_NE(error.find("no cgroup2 file system is mounted"), std::string::npos) << error;
  EXPECT_NE(error.find("cgroup v1 only"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

TEST_F(CgroupTreeTest, IdsAreNamedByAWalkAndANewCgroupByAnotherOne) {
  CgroupPaths paths(root_.string());
  EXPECT_EQ(paths.path_of(inode(root_ / "system.slice/x.service")), "/system.slice/x.service");
  EXPECT_EQ(paths.path_of(inode(root_)), "/");
  EXPECT_EQ(paths.walks(), 1u);  // one walk named them all
  const std::uint64_t unknown = inode(base_ / "plain");
  EXPECT_FALSE(paths.path_of(unknown).has_value());
  EXPECT_EQ(paths.walks(), 2u);
  EXPECT_FALSE(paths.path_of(unknown).has_value());
  EXPECT_EQ(paths.walks(), 2u);  // an id no walk found is not walked for again
  make_cgroup(root_ / "system.slice/new.scope");
  EXPECT_EQ(paths.path_of(inode(root_ / "system.slice/new.scope")), "/system.slice/new.scope");
  EXPECT_EQ(paths.walks(), 3u);
}

}  // namespace
}  // namespace wp
