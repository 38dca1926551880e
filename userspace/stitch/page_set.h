// SPDX-License-Identifier: Apache-2.0
// A set of page indices stored as disjoint closed ranges: a write's pages still waiting to be
// written back. Large writes cover thousands of pages but are written back in few ranges, so
// ranges keep both memory and the per-bio work small.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>

namespace wp {

class PageSet {
 public:
  // Adds [first, last] (inclusive), merging with neighbouring ranges.
  void add(std::uint64_t first, std::uint64_t last);
  // Removes [first, last] (inclusive); returns how many pages were actually present.
  std::uint64_t remove(std::uint64_t first, std::uint64_t last) {
    return remove_each(first, last, [](std::uint64_t, std::uint64_t) {});
  }
  // The same, calling on_removed(lo, hi) for each stretch [lo, hi] that was present.
  template <typename OnRemoved>
  std::uint64_t remove_each(std::uint64_t first, std::uint64_t last, OnRemoved&& on_removed);
  bool contains(std::uint64_t page) const;
  bool empty() const { return ranges_.empty(); }
  std::uint64_t size() const { return size_; }
  std::size_t range_count() const { return ranges_.size(); }

 private:
  std::map<std::uint64_t, std::uint64_t> ranges_;  // first -> last, disjoint, non-adjacent
  std::uint64_t size_ = 0;
};

template <typename OnRemoved>
std::uint64_t PageSet::remove_each(std::uint64_t first, std::uint64_t last,
                                   OnRemoved&& on_removed) {
  if (first > last || ranges_.empty()) return 0;
  std::uint64_t removed = 0;
  auto it = ranges_.upper_bound(first);
  if (it != ranges_.begin() && std::prev(it)->second >= first) it = std::prev(it);
  while (it != ranges_.end() && it->first <= last) {
    const std::uint64_t lo = it->first;
    const std::uint64_t hi = it->second;
    it = ranges_.erase(it);
    const std::uint64_t cut_lo = std::max(lo, first);
    const std::uint64_t cut_hi = std::min(hi, last);
    removed += cut_hi - cut_lo + 1;
    on_removed(cut_lo, cut_hi);
    if (lo < cut_lo) ranges_.emplace(lo, cut_lo - 1);
    if (hi > cut_hi) it = ranges_.emplace(cut_hi + 1, hi).first, ++it;
  }
  size_ -= removed;
  return removed;
}

}  // namespace wp
