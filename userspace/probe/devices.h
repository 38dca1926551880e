// Block devices as sysfs describes them: partition → disk, volatile write cache, FUA; and the
// mounted file systems whose superblock device is none of them (btrfs), with their disks.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "decode/events.h"

namespace wp {

// "7:3" → the device number; nullopt for anything else.
std::optional<DevT> parse_dev(const std::string& text);

std::vector<DeviceInfo> list_block_devices(const std::string& sysfs = "/sys");

// "vda", "/dev/vda", "7:0" → the device; nullopt when no such block device exists.
std::optional<DeviceInfo> find_block_device(const std::string& spec,
                                            const std::string& sysfs = "/sys");

// Mounted file systems (from `mountinfo`) whose superblock device is not a block device but
// an anonymous one, with the disks they are on. btrfs: its devices are listed under
// /sys/fs/btrfs/<fsid>/devices, and stat() reports each subvolume's own anonymous device
// (the mount points' are the aliases; a subvolume reached without a mount of its own is only
// known by the superblock device the syscall records also carry).
std::vector<FileSystemInfo> list_file_systems(const std::string& mountinfo = "/proc/self/mountinfo",
                                              const std::string& sysfs = "/sys");

// The file system `dev` (its superblock device or an alias) names, if list_file_systems()
// has it.
std::optional<FileSystemInfo> find_file_system(DevT dev, const std::vector<FileSystemInfo>& all);

}  // namespace wp
