// SPDX-License-Identifier: Apache-2.0
#include "probe/devices.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/mount_path.h"

namespace wp {
namespace fs = std::filesystem;

std::optional<DevT> parse_dev(const std::string& text) {
  unsigned major = 0, minor = 0;
  char colon = 0;
  if (std::sscanf(text.c_str(), "%u%c%u", &major, &colon, &minor) != 3 || colon != ':')
    return std::nullopt;
  return make_dev(major, minor);
}

namespace {

std::string read_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

std::vector<MountEntry> parse_mountinfo(const std::string& text) {
  std::vector<MountEntry> mounts;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    // id parent major:minor root mount-point options [optional…] - type source super-options
    std::istringstream fields(line);
    std::string id, parent, majmin, root, mount_point, word;
    if (!(fields >> id >> parent >> majmin >> root >> mount_point)) continue;
    while (fields >> word && word != "-") {
    }
    MountEntry m;
    if (!(fields >> m.type >> m.source)) continue;
    fields >> m.options;
    auto dev = parse_dev(majmin);
    if (!dev) continue;
    m.dev = *dev;
    m.root = unescape_mount_path(root);
    m.mount_point = unescape_mount_path(mount_point);
    mounts.push_back(std::move(m));
  }
  return mounts;
}

std::vector<MountEntry> read_mountinfo(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return parse_mountinfo(text.str());
}

namespace {

// The block device names (sysfs names: "loop1", "dm-0") of the btrfs file system one of whose
// devices is `source`.
std::vector<std::string> btrfs_device_names(const std::string& source, const std::string& sysfs) {
  std::error_code ec;
  // /dev/mapper/x → /dev/dm-0: sysfs names the device, not the link.
  fs::path resolved = fs::canonical(source, ec);
  if (ec) resolved = source;
  const std::string name = resolved.filename().string();
  for (const auto& fsid : fs::directory_iterator(fs::path(sysfs) / "fs/btrfs", ec)) {
    std::vector<std::string> names;
    bool holds_source = false;
    for (const auto& d : fs::directory_iterator(fsid.path() / "devices", ec)) {
      names.push_back(d.path().filename().string());
      if (names.back() == name) holds_source = true;
    }
    if (holds_source) return names;
  }
  return {};
}

// The leaves under a stacked block device (device-mapper, md): its sysfs "slaves" directory
// names the devices it is built on, recursively down to those built on nothing. A device with
// no slaves is its own leaf. `depth` bounds the walk (sysfs has no cycles; a fake tree may).
void collect_leaf_devices(const std::string& name, const std::string& sysfs, int depth,
                          std::vector<std::string>& leaves) {
  std::error_code ec;
  std::vector<std::string> below;
  for (const auto& s :
       fs::directory_iterator(fs::path(sysfs) / "class/block" / name / "slaves", ec))
    below.push_back(s.path().filename().string());
  std::sort(below.begin(), below.end());  // directory order is none
  if (below.empty() || depth == 0) {
    if (std::find(leaves.begin(), leaves.end(), name) == leaves.end()) leaves.push_back(name);
    return;
  }
  for (const auto& b : below) collect_leaf_devices(b, sysfs, depth - 1, leaves);
}

constexpr int kMaxStackDepth = 8;

}  // namespace

std::vector<std::string> leaf_devices(const std::string& name, const std::string& sysfs) {
  std::vector<std::string> leaves;
  collect_leaf_devices(name, sysfs, kMaxStackDepth, leaves);
  return leaves;
}

std::vector<FileSystemInfo> list_file_systems(const std::string& mountinfo,
                                              const std::string& sysfs) {
  std::vector<FileSystemInfo> out;
  const std::vector<DeviceInfo> block = list_block_devices(sysfs);
  auto disk_named = [&block](const std::string& name) -> std::optional<DevT> {
    for (const auto& b : block)
      if (b.name == name) return b.disk;
    return std::nullopt;
  };
  auto add_disks = [&disk_named](FileSystemInfo& fs_info, const std::vector<std::string>& names) {
    for (const auto& name : names)
      if (auto disk = disk_named(name);
          disk &&
          std::find(fs_info.disks.begin(), fs_info.disks.end(), *disk) == fs_info.disks.end())
        fs_info.disks.push_back(*disk);
    std::sort(fs_info.disks.begin(), fs_info.disks.end());  // directory order is none
  };
  const std::vector<MountEntry> mounts = read_mountinfo(mountinfo);
  for (const MountEntry& m : mounts) {
    if (dev_major(m.dev) != 0) {
      // A file system on a stacked block device (dm-0, md0): its requests and flushes reach
      // the disks under the stack, so those are its disks. A plain disk or partition is not
      // listed (its superblock device already names its disk).
      auto device = std::find_if(block.begin(), block.end(),
                                 [&m](const DeviceInfo& b) { return b.dev == m.dev; });
      if (device == block.end() ||
          std::any_of(out.begin(), out.end(),
                      [&m](const FileSystemInfo& f) { return f.dev == m.dev; }))
        continue;
      const std::vector<std::string> leaves = leaf_devices(device->name, sysfs);
      if (leaves.size() == 1 && leaves.front() == device->name) continue;
      FileSystemInfo fs_info;
      fs_info.dev = m.dev;
      fs_info.type = m.type;
      add_disks(fs_info, leaves);
      out.push_back(std::move(fs_info));
      continue;
    }
    if (FileSystemInfo memory{.dev = m.dev, .aliases = {}, .disks = {}, .type = m.type};
        memory.memory_only() || memory.fuse() || memory.no_page_cache()) {
      // tmpfs, ramfs, hugetlbfs: listed with no disks, so that their writes are known to
      // stay in memory; FUSE, so that they are known to go to its daemon; proc, sysfs and
      // their kind, so that their reads are not taken for page-cache hits.
      if (std::none_of(out.begin(), out.end(),
                       [&m](const FileSystemInfo& f) { return f.dev == m.dev; }))
        out.push_back(std::move(memory));
      continue;
    }
    if (m.type != "btrfs") continue;
    auto known = std::find_if(out.begin(), out.end(),
                              [&m](const FileSystemInfo& f) { return f.dev == m.dev; });
    if (known == out.end()) {
      FileSystemInfo fs_info;
      fs_info.dev = m.dev;
      fs_info.type = m.type;
      add_disks(fs_info, btrfs_device_names(m.source, sysfs));
      out.push_back(std::move(fs_info));
      known = std::prev(out.end());
    }
    struct stat st {};
    if (::stat(m.mount_point.c_str(), &st) != 0) continue;
    const DevT alias = make_dev(major(st.st_dev), minor(st.st_dev));
    if (alias != known->dev &&
        std::find(known->aliases.begin(), known->aliases.end(), alias) == known->aliases.end())
      known->aliases.push_back(alias);
  }
  // An overlay's writes land in its upper layer's files: its disks are that file system's (the
  // disk under a plain disk or partition, else the disks listed above for it).
  for (const MountEntry& m : mounts) {
    const auto upper = overlay_upper_dir(m);
    struct stat st {};
    if (!upper || ::stat(upper->c_str(), &st) != 0 ||
        std::any_of(out.begin(), out.end(),
                    [&m](const FileSystemInfo& f) { return f.dev == m.dev; }))
      continue;
    const DevT upper_dev = make_dev(major(st.st_dev), minor(st.st_dev));
    FileSystemInfo overlay;
    overlay.dev = m.dev;
    overlay.type = m.type;
    if (const auto below = find_file_system(upper_dev, out)) {
      overlay.disks = below->disks;
    } else {
      for (const auto& b : block)
        if (b.dev == upper_dev) overlay.disks.push_back(b.disk);
    }
    out.push_back(std::move(overlay));
  }
  return out;
}

std::optional<std::string> overlay_upper_dir(const MountEntry& mount) {
  if (mount.type != "overlay") return std::nullopt;
  // Options are comma-separated; a comma inside a path is shown escaped (\054).
  std::istringstream options(mount.options);
  for (std::string option; std::getline(options, option, ',');)
    if (option.rfind("upperdir=", 0) == 0) return unescape_mount_path(option.substr(9));
  return std::nullopt;
}

std::optional<std::string> overlay_upper_file(const std::string& path,
                                              const std::vector<MountEntry>& mounts) {
  struct stat st {};
  std::error_code ec;
  const fs::path file = fs::canonical(path, ec);
  if (ec || ::stat(file.c_str(), &st) != 0) return std::nullopt;
  const DevT dev = make_dev(major(st.st_dev), minor(st.st_dev));
  // The overlay mount the file is under: the deepest mount point above it with its device.
  const MountEntry* best = nullptr;
  for (const MountEntry& m : mounts) {
    if (m.type != "overlay" || m.dev != dev) continue;
    const fs::path rel = file.lexically_relative(m.mount_point);
    if (rel.empty() || *rel.begin() == "..") continue;
    if (!best || m.mount_point.size() > best->mount_point.size()) best = &m;
  }
  if (!best) return std::nullopt;
  const auto upper = overlay_upper_dir(*best);
  if (!upper) return std::nullopt;
  const fs::path candidate = (fs::path(*upper) / fs::path(best->root).relative_path() /
                              file.lexically_relative(best->mount_point))
                                 .lexically_normal();
  if (!fs::exists(candidate, ec)) return std::nullopt;
  return candidate.string();
}

std::optional<FileSystemInfo> find_file_system(DevT dev, const std::vector<FileSystemInfo>& all) {
  for (const auto& f : all)
    if (f.dev == dev || std::find(f.aliases.begin(), f.aliases.end(), dev) != f.aliases.end())
      return f;
  return std::nullopt;
}

std::vector<DeviceInfo> list_block_devices(const std::string& sysfs) {
  std::vector<DeviceInfo> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(sysfs) / "class/block", ec)) {
    DeviceInfo info;
    info.name = entry.path().filename().string();
    auto dev = parse_dev(read_line(entry.path() / "dev"));
    if (!dev) continue;
    info.dev = *dev;
    info.disk = *dev;
    fs::path disk_dir = fs::canonical(entry.path(), ec);
    if (fs::exists(entry.path() / "partition", ec)) {
      // A partition's sysfs directory sits inside its disk's.
      if (auto disk = parse_dev(read_line(disk_dir.parent_path() / "dev"))) info.disk = *disk;
      disk_dir = disk_dir.parent_path();
    }
    std::string cache = read_line(disk_dir / "queue/write_cache");
    info.volatile_write_cache = cache.empty() || cache == "write back";
    info.fua = read_line(disk_dir / "queue/fua") == "1";
    out.push_back(std::move(info));
  }
  return out;
}

std::optional<std::uint64_t> writes_in_flight(DevT disk, const std::vector<DeviceInfo>& devices,
                                              const std::string& sysfs) {
  const fs::path block = fs::path(sysfs) / "class/block";
  std::uint64_t writes = 0;
  bool found_disk = false;
  for (const DeviceInfo& d : devices) {
    if (d.disk != disk) continue;
    if (d.dev == disk) {
      if (read_line(block / d.name / "queue/iostats") != "1") return std::nullopt;
      found_disk = true;
    }
    unsigned long long reads = 0, in_flight = 0;
    if (std::sscanf(read_line(block / d.name / "inflight").c_str(), "%llu %llu", &reads,
                    &in_flight) != 2)
      return std::nullopt;
    writes += in_flight;
  }
  if (!found_disk) return std::nullopt;
  return writes;
}

std::optional<DeviceInfo> find_block_device(const std::string& spec, const std::string& sysfs) {
  std::optional<DevT> wanted = parse_dev(spec);
  std::string name = spec;
  if (!wanted && spec.rfind("/dev/", 0) == 0) {
    struct stat st {};
    if (::stat(spec.c_str(), &st) == 0 && S_ISBLK(st.st_mode))
      wanted = make_dev(major(st.st_rdev), minor(st.st_rdev));
    name = spec.substr(5);
  }
  for (auto& info : list_block_devices(sysfs)) {
    if ((wanted && info.dev == *wanted) || (!wanted && info.name == name)) return info;
  }
  return std::nullopt;
}

}  // namespace wp
