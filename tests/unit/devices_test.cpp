// SPDX-License-Identifier: Apache-2.0
// Devices: file systems without a block device of their own (btrfs) or on a stacked one
// (device-mapper, md) found from a mountinfo and a sysfs tree laid out in a temporary directory.
#include "probe/devices.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace wp {
namespace {

namespace fs = std::filesystem;

class FileSystemsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("wp_devices_" + std::to_string(::getpid()));
    fs::create_directories(root_ / "sys/class/block");
    fs::create_directories(root_ / "mnt");
  }
  void TearDown() override { fs::remove_all(root_); }

  // A whole disk in sysfs: /sys/block/NAME with its dev, linked from /sys/class/block.
  void disk(const std::string& name, const std::string& majmin) {
    const fs::path dir = root_ / "sys/block" / name;
    fs::create_directories(dir / "queue");
    write(dir / "dev", majmin);
    fs::create_directory_symlink(dir, root_ / "sys/class/block" / name);
  }
  // A partition of a disk made by disk(): its directory sits inside the disk's.
  void partition(const std::string& disk_name, const std::string& name, const std::string& majmin) {
    const fs::path dir = root_ / "sys/block" / disk_name / name;
    fs::create_directories(dir);
    write(dir / "dev", majmin);
    write(dir / "partition", "1");
    fs::create_directory_symlink(dir, root_ / "sys/class/block" / name);
  }
  // A device stacked on others (dm-N, mdN): its slaves directory names them.
  void stacked(const std::string& name, const std::string& majmin,
               const std::vector<std::string>& slaves) {
    disk(name, majmin);
    for (const auto& slave : slaves)
      fs::create_directories(root_ / "sys/block" / name / "slaves" / slave);
  }
  void btrfs_devices(const std::string& fsid, const std::vector<std::string>& names) {
    for (const auto& name : names)
      fs::create_directories(root_ / "sys/fs/btrfs" / fsid / "devices" / name);
  }
  void mountinfo(const std::string& text) { write(root_ / "mountinfo", text); }
  std::vector<FileSystemInfo> found() const {
    return list_file_systems((root_ / "mountinfo").string(), (root_ / "sys").string());
  }
  std::string mount_point() const { return (root_ / "mnt").string(); }

  static void write(const fs::path& path, const std::string& text) {
    std::ofstream out(path);
    out << text << "\n";
  }

  fs::path root_;
};

// A two-device btrfs mounted from one of them: both disks are its, whichever was named.
TEST_F(FileSystemsTest, BtrfsMountIsMappedToEveryDiskOfItsFileSystem) {
  disk("loop3", "7:3");
  disk("loop4", "7:4");
  disk("sda", "8:0");
  btrfs_devices("0f5e", {"loop3", "loop4"});
  btrfs_devices("77aa", {"sda"});
  mountinfo(
      "29 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "48 27 0:40 / " +
      mount_point() + " rw,relatime shared:1 - btrfs /dev/loop4 rw\n");
  const auto all = found();
  ASSERT_EQ(all.size(), 1u);  // ext4's superblock is a block device: not listed
  EXPECT_EQ(all[0].dev, make_dev(0, 40));
  EXPECT_EQ(all[0].type, "btrfs");
  EXPECT_EQ(all[0].disks, (std::vector<DevT>{make_dev(7, 3), make_dev(7, 4)}));
  // The mount point is a plain directory here: its stat() device is an alias.
  ASSERT_EQ(all[0].aliases.size(), 1u);
  EXPECT_TRUE(find_file_system(all[0].aliases[0], all).has_value());
  EXPECT_TRUE(find_file_system(make_dev(0, 40), all).has_value());
  EXPECT_FALSE(find_file_system(make_dev(0, 4095), all).has_value());
}

// proc and sysfs are listed (with no disks) so that their reads are known to find no page
// cache; so is tmpfs (memory only); a file system of a plain partition is not.
TEST_F(FileSystemsTest, FileSystemsWithoutAPageCacheAreListed) {
  disk("sda", "8:0");
  mountinfo(
      "29 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "22 29 0:22 / /proc rw - proc proc rw\n"
      "23 29 0:21 / /sys rw - sysfs sysfs rw\n"
      "24 29 0:25 / /dev/shm rw - tmpfs tmpfs rw\n");
  const auto all = found();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_TRUE(all[0].no_page_cache());
  EXPECT_EQ(all[0].dev, make_dev(0, 22));
  EXPECT_TRUE(all[1].no_page_cache());
  EXPECT_FALSE(all[2].no_page_cache());
  EXPECT_TRUE(all[2].memory_only());
}

// mountinfo escapes spaces in mount points as \040.
TEST_F(FileSystemsTest, EscapedMountPointIsStatted) {
  disk("loop3", "7:3");
  btrfs_devices("0f5e", {"loop3"});
  fs::create_directories(root_ / "with space");
  mountinfo("48 27 0:40 / " + (root_ / "with\\040space").string() + " rw - btrfs /dev/loop3 rw\n");
  const auto all = found();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].aliases.size(), 1u);
}

// ext4 on dm-linear over a partition: its disk is the partition's disk; a plain disk's file
// system is not listed.
TEST_F(FileSystemsTest, FileSystemOnDeviceMapperIsMappedToTheDiskUnderIt) {
  disk("nvme0n1", "259:0");
  partition("nvme0n1", "nvme0n1p2", "259:2");
  stacked("dm-0", "253:0", {"nvme0n1p2"});
  disk("sda", "8:0");
  mountinfo(
      "29 1 8:0 / / rw - ext4 /dev/sda rw\n"
      "48 27 253:0 / " +
      mount_point() + " rw - ext4 /dev/mapper/lin rw\n");
  const auto all = found();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].dev, make_dev(253, 0));
  EXPECT_EQ(all[0].type, "ext4");
  EXPECT_EQ(all[0].disks, (std::vector<DevT>{make_dev(259, 0)}));
  EXPECT_TRUE(all[0].aliases.empty());  // stat() reports the dm device itself
  EXPECT_TRUE(find_file_system(make_dev(253, 0), all).has_value());
  EXPECT_FALSE(find_file_system(make_dev(8, 0), all).has_value());
}

// dm over md raid1 over partitions of two disks: the walk goes down to the leaves, and each
// disk is listed once.
TEST_F(FileSystemsTest, NestedStackIsWalkedToItsLeafDisks) {
  disk("sda", "8:0");
  disk("sdb", "8:16");
  partition("sda", "sda1", "8:1");
  partition("sda", "sda2", "8:2");
  partition("sdb", "sdb1", "8:17");
  stacked("md0", "9:0", {"sda1", "sdb1"});
  stacked("dm-1", "253:1", {"md0", "sda2"});
  EXPECT_EQ(leaf_devices("dm-1", (root_ / "sys").string()),
            (std::vector<std::string>{"sda1", "sdb1", "sda2"}));
  EXPECT_EQ(leaf_devices("sda", (root_ / "sys").string()), (std::vector<std::string>{"sda"}));
  mountinfo("48 27 253:1 / " + mount_point() +
            " rw - xfs /dev/dm-1 rw\n"
            "49 27 9:0 / " +
            mount_point() + " rw - ext4 /dev/md0 rw\n");
  const auto all = found();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].disks, (std::vector<DevT>{make_dev(8, 0), make_dev(8, 16)}));
  EXPECT_EQ(all[1].dev, make_dev(9, 0));
  EXPECT_EQ(all[1].disks, (std::vector<DevT>{make_dev(8, 0), make_dev(8, 16)}));
}

// An overlay's upper directory is its upperdir= option (a comma in it escaped); none for an
// overlay of lower layers only or another file system.
TEST(OverlayUpperDir, IsTheUpperdirOptionUnescaped) {
  MountEntry m;
  m.type = "overlay";
  m.options = "rw,lowerdir=/l1:/l2,upperdir=/var/a\\054b/upper,workdir=/var/work,uuid=on";
  EXPECT_EQ(overlay_upper_dir(m), "/var/a,b/upper");
  m.options = "ro,lowerdir=/l1:/l2";
  EXPECT_FALSE(overlay_upper_dir(m).has_value());
  m.type = "ext4";
  m.options = "rw,upperdir=/x";
  EXPECT_FALSE(overlay_upper_dir(m).has_value());
  // parse_mountinfo keeps the super options.
  const auto mounts = parse_mountinfo(
      "90 29 0:39 / /merged rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w\n");
  ASSERT_EQ(mounts.size(), 1u);
  EXPECT_EQ(mounts[0].options, "rw,lowerdir=/l,upperdir=/u,workdir=/w");
  EXPECT_EQ(overlay_upper_dir(mounts[0]), "/u");
}

// A file under an overlay mount point maps to the same relative path in its upper directory
// once it exists there (copied up); a file outside the mount, or not in the upper layer, to
// nothing.
TEST_F(FileSystemsTest, OverlayFileMapsToItsUpperFileOnceCopiedUp) {
  fs::create_directories(root_ / "merged/dir");
  fs::create_directories(root_ / "upper/dir");
  write(root_ / "merged/dir/copied", "x");
  write(root_ / "upper/dir/copied", "x");
  write(root_ / "merged/dir/lower-only", "x");
  struct stat st {};
  ASSERT_EQ(::stat(root_.c_str(), &st), 0);
  MountEntry m;
  m.dev = make_dev(major(st.st_dev), minor(st.st_dev));  // the directory stands in for it
  m.root = "/";
  m.mount_point = (root_ / "merged").string();
  m.type = "overlay";
  m.options = "rw,lowerdir=/l,upperdir=" + (root_ / "upper").string() + ",workdir=/w";
  EXPECT_EQ(overlay_upper_file((root_ / "merged/dir/copied").string(), {m}),
            (root_ / "upper/dir/copied").string());
  EXPECT_EQ(overlay_upper_file((root_ / "merged/dir/../dir/copied").string(), {m}),
            (root_ / "upper/dir/copied").string());
  EXPECT_FALSE(overlay_upper_file((root_ / "merged/dir/lower-only").string(), {m}).has_value());
  EXPECT_FALSE(overlay_upper_file((root_ / "upper/dir/copied").string(), {m}).has_value());
  m.type = "ext4";
  EXPECT_FALSE(overlay_upper_file((root_ / "merged/dir/copied").string(), {m}).has_value());
}

// An overlay is listed with the disk of the file system its upper directory is on.
TEST_F(FileSystemsTest, OverlayIsMappedToTheDiskOfItsUpperLayer) {
  fs::create_directories(root_ / "upper");
  struct stat st {};
  ASSERT_EQ(::stat((root_ / "upper").c_str(), &st), 0);
  const std::string upper_dev =
      std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  disk("vdz", upper_dev);  // the temporary directory's device, as this sysfs has it
  mountinfo("90 29 0:39 / " + mount_point() + " rw - overlay overlay rw,lowerdir=/l,upperdir=" +
            (root_ / "upper").string() + ",workdir=/w\n");
  const auto all = found();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].dev, make_dev(0, 39));
  EXPECT_EQ(all[0].type, "overlay");
  EXPECT_EQ(all[0].disks, (std::vector<DevT>{make_dev(major(st.st_dev), minor(st.st_dev))}));
}

// A disk's writes in flight are its own and its partitions' (the kernel counts a request on the
// partition it was sent to); a disk keeping no statistics, or an unreadable count, says nothing.
TEST_F(FileSystemsTest, WritesInFlightAreTheDisksAndItsPartitions) {
  disk("vda", "254:0");
  partition("vda", "vda1", "254:1");
  disk("loop3", "7:3");
  write(root_ / "sys/block/vda/queue/iostats", "1");
  write(root_ / "sys/block/vda/inflight", "       5        0");
  write(root_ / "sys/block/vda/vda1/inflight", "       0        2");
  write(root_ / "sys/block/loop3/queue/iostats", "1");
  write(root_ / "sys/block/loop3/inflight", "       0        0");
  const std::string sys = (root_ / "sys").string();
  const std::vector<DeviceInfo> devices = list_block_devices(sys);
  EXPECT_EQ(writes_in_flight(make_dev(254, 0), devices, sys), 2u);
  EXPECT_EQ(writes_in_flight(make_dev(7, 3), devices, sys), 0u);
  EXPECT_EQ(writes_in_flight(make_dev(7, 4), devices, sys), std::nullopt) << "no such disk";
  write(root_ / "sys/block/loop3/queue/iostats", "0");
  EXPECT_EQ(writes_in_flight(make_dev(7, 3), devices, sys), std::nullopt) << "no statistics kept";
  fs::remove(root_ / "sys/block/vda/vda1/inflight");
  EXPECT_EQ(writes_in_flight(make_dev(254, 0), devices, sys), std::nullopt);
}

TEST(ParseDev, TakesMajorColonMinorOnly) {
  EXPECT_EQ(parse_dev("7:3"), make_dev(7, 3));
  EXPECT_EQ(parse_dev("0:41"), make_dev(0, 41));
  EXPECT_FALSE(parse_dev("loop3").has_value());
  EXPECT_FALSE(parse_dev("7-3").has_value());
}

}  // namespace
}  // namespace wp
