// SPDX-License-Identifier: Apache-2.0
#include "stitch/page_set.h"

#include <algorithm>
#include <iterator>

namespace wp {

void PageSet::add(std::uint64_t first, std::uint64_t last) {
  if (first > last) return;
  // Start from the range that could touch `first` (one ending at first - 1 or later).
  auto it = ranges_.upper_bound(first);
  if (it != ranges_.begin()) {
    auto prev = std::prev(it);
    if (prev->second + 1 >= first) {
      // The common case, a file written in order: the range grows in place, no node is made.
      if (it == ranges_.end() || (it->first > last && it->first - last > 1)) {
        if (last > prev->second) {
          size_ += last - prev->second;
          prev->second = last;
        }
        return;
      }
      it = prev;
    }
  }
  // Absorb every range that overlaps or is adjacent to [first, last] (no `last + 1`: overflow).
  while (it != ranges_.end() && (it->first <= last || it->first - last == 1)) {
    first = std::min(first, it->first);
    last = std::max(last, it->second);
    size_ -= it->second - it->first + 1;
    it = ranges_.erase(it);
  }
  ranges_.emplace(first, last);
  size_ += last - first + 1;
}

bool PageSet::contains(std::uint64_t page) const {
  auto it = ranges_.upper_bound(page);
  if (it == ranges_.begin()) return false;
  return std::prev(it)->second >= page;
}

}  // namespace wp
