// SPDX-License-Identifier: Apache-2.0
#include "stitch/lost_writes.h"

namespace wp::stitch {

void LostWrites::add(InodeKey file, std::uint64_t id, Nanos ts) {
  auto& losses = by_file_[file];
  losses.push_back(Loss{id, ts});
  if (losses.size() > kMaxPerFile) losses.pop_front();
  if (by_file_.size() > kMaxFiles) by_file_.erase(by_file_.begin());
}

std::vector<std::uint64_t> LostWrites::take(InodeKey file, Nanos until) {
  std::vector<std::uint64_t> ids;
  auto it = by_file_.find(file);
  if (it == by_file_.end()) return ids;
  auto& losses = it->second;
  while (!losses.empty() && losses.front().ts <= until) {
    ids.push_back(losses.front().id);
    losses.pop_front();
  }
  if (losses.empty()) by_file_.erase(it);
  return ids;
}

}  // namespace wp::stitch
