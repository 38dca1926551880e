// SPDX-License-Identifier: Apache-2.0
#include "stitch/io_state.h"

namespace wp::stitch {

void DeviceTable::add(const DeviceInfo& info) {
  devices_[info.dev] = info;
  const DevT disk = info.disk != 0 ? info.disk : info.dev;
  // The disk's own entry decides; a partition's entry only fills in for a missing disk.
  if (info.dev == disk || !disk_write_cache_.contains(disk)) {
    disk_write_cache_[disk] = info.volatile_write_cache;
  }
}

void DeviceTable::add_file_system(const FileSystemInfo& fs) {
  if (fs.memory_only()) memory_only_.insert(fs.dev);
  if (fs.fuse()) fuse_.insert(fs.dev);
  if (fs.no_page_cache()) no_page_cache_.insert(fs.dev);
  if (fs.disks.empty()) return;
  fs_disks_[fs.dev] = fs.disks;
  for (DevT alias : fs.aliases) fs_disks_[alias] = fs.disks;
}

DevT DeviceTable::disk_of(DevT dev) const {
  if (auto fs = fs_disks_.find(dev); fs != fs_disks_.end()) return fs->second.front();
  auto it = devices_.find(dev);
  return it != devices_.end() && it->second.disk != 0 ? it->second.disk : dev;
}

std::vector<DevT> DeviceTable::disks_of(DevT dev) const {
  if (auto fs = fs_disks_.find(dev); fs != fs_disks_.end()) return fs->second;
  return {disk_of(dev)};
}

bool DeviceTable::volatile_cache(DevT disk) const {
  auto it = disk_write_cache_.find(disk);
  return it == disk_write_cache_.end() || it->second;
}

std::uint64_t bio_pages(const BioEvent& b, PageGeometry page) {
  if (b.nr_extents > 0 && !(b.bio_flags & bio_flag::kTruncated)) {
    std::uint64_t pages = 0;
    for (std::size_t i = 0; i < b.nr_extents && i < kMaxBioExtents; ++i)
      pages += b.extents[i].pages;
    return pages;
  }
  return page.index(b.bytes + page.size() - 1);
}

}  // namespace wp::stitch
