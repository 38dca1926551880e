// SPDX-License-Identifier: Apache-2.0
#include "stitch/recent_bios.h"

#include <algorithm>

namespace wp::stitch {

void RecentBios::remember(const std::shared_ptr<Bio>& bio) {
  auto& of_thread = by_thread_[bio->ev.tid];
  of_thread.push_back(bio);
  trim_count(of_thread, limits_.max_history_per_key);
  if (has_file_pages(bio->ev)) {
    auto& inode = by_inode_[InodeKey{bio->ev.file_dev, bio->ev.ino}];
    inode.bios.push_back(bio);
    inode.last_seq = ++file_bios_;
    inode.last_queued_ns = std::max(inode.last_queued_ns, bio->queued_ns);
    trim_count(inode.bios, limits_.max_history_per_key);
  }
}

void RecentBios::sweep(Nanos horizon) {
  auto bio_time = [](const std::shared_ptr<Bio>& b) { return b->ev.ts; };
  for (auto it = by_thread_.begin(); it != by_thread_.end();) {
    prune_older(it->second, horizon, bio_time);
    it = it->second.empty() ? by_thread_.erase(it) : std::next(it);
  }
  for (auto it = by_inode_.begin(); it != by_inode_.end();) {
    prune_older(it->second.bios, horizon, bio_time);
    const bool quiet = it->second.bios.empty() && it->second.last_queued_ns < horizon;
    it = quiet ? by_inode_.erase(it) : std::next(it);
  }
}

const std::deque<std::shared_ptr<Bio>>* RecentBios::bios_of_thread(std::uint32_t tid) const {
  auto it = by_thread_.find(tid);
  return it == by_thread_.end() ? nullptr : &it->second;
}

const InodeBios* RecentBios::bios_of_inode(DevT dev, std::uint64_t ino) const {
  auto it = by_inode_.find(InodeKey{dev, ino});
  return it == by_inode_.end() ? nullptr : &it->second;
}

}  // namespace wp::stitch
