// SPDX-License-Identifier: Apache-2.0
// Block devices as sysfs describes them: partition → disk, volatile write cache, FUA; and the
// mounted file systems whose superblock device is none of them (btrfs) or is stacked on them
// (device-mapper, md), with their disks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "decode/events.h"

namespace wp {

// "7:3" → the device number; nullopt for anything else.
std::optional<DevT> parse_dev(const std::string& text);

// One line of /proc/PID/mountinfo, its paths unescaped.
struct MountEntry {
  DevT dev = 0;
  std::string root;  // the mounted directory within its file system ("/" for the whole)
  std::string mount_point;
  std::string type;
  std::string source;
  std::string options;  // the super options, as the file system shows them (escaped)
};
// Every well-formed line of a mountinfo file's text, in order.
std::vector<MountEntry> parse_mountinfo(const std::string& text);
// The mounts of a mountinfo file (empty when it cannot be read).
std::vector<MountEntry> read_mountinfo(const std::string& path = "/proc/self/mountinfo");

std::vector<DeviceInfo> list_block_devices(const std::string& sysfs = "/sys");

// The write requests in flight on `disk` and its partitions (the devices of `devices` on that
// disk): the second field of each one's /sys/class/block/NAME/inflight, summed. nullopt when
// one cannot be read, or when the disk keeps no I/O statistics (queue/iostats 0: it counts
// nothing in flight then, busy or not).
std::optional<std::uint64_t> writes_in_flight(DevT disk, const std::vector<DeviceInfo>& devices,
                                              const std::string& sysfs = "/sys");

// "vda", "/dev/vda", "7:0" → the device; nullopt when no such block device exists.
std::optional<DeviceInfo> find_block_device(const std::string& spec,
                                            const std::string& sysfs = "/sys");

// Mounted file systems (from `mountinfo`) whose superblock device is not the disk (or a
// partition of the disk) their I/O reaches, with the disks they are on: a file system on a
// stacked block device (device-mapper, md), on the leaves under the stack (leaf_devices());
// and one whose superblock device is an anonymous one. btrfs: its devices are listed under
// /sys/fs/btrfs/<fsid>/devices, and stat() reports each subvolume's own anonymous device
// (the mount points' are the aliases; a subvolume reached without a mount of its own is only
// known by the superblock device the syscall records also carry). An overlay mount is listed
// with the disks of the file system its upper directory is on.
std::vector<FileSystemInfo> list_file_systems(const std::string& mountinfo = "/proc/self/mountinfo",
                                              const std::string& sysfs = "/sys");

// The sysfs names of the devices at the bottom of a stacked block device ("dm-0" → {"nvme0n1p2"}),
// from /sys/class/block/<name>/slaves recursively; {name} for a device built on nothing.
std::vector<std::string> leaf_devices(const std::string& name, const std::string& sysfs = "/sys");

// An overlay mount's upper directory (its "upperdir=" option); nullopt for an overlay of lower
// layers only, and for any other file system.
std::optional<std::string> overlay_upper_dir(const MountEntry& mount);

// The upper file under `path` when `path` is a file of an overlay mount in `mounts` that has
// been copied up (its pages, requests and journal are that file's); nullopt otherwise.
std::optional<std::string> overlay_upper_file(const std::string& path,
                                              const std::vector<MountEntry>& mounts);

// The file system `dev` (its superblock device or an alias) names, if list_file_systems()
// has it.
std::optional<FileSystemInfo> find_file_system(DevT dev, const std::vector<FileSystemInfo>& all);

}  // namespace wp
