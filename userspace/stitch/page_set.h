// A set of page indices stored as disjoint closed ranges: a write's pages still waiting to be
// written back. Large writes cover thousands of pages but are written back in few ranges, so
// ranges keep both memory and the per-bio work small.
#pragma once

#include <cstdint>
#include <map>

namespace wp {

class PageSet {
 public:
  // Adds [first, last] (inclusive), merging with neighbouring ranges.
  void add(std::uint64_t first, std::uint64_t last);
  // Removes [first, last] (inclusive); returns how many pages were actually present.
  std::uint64_t remove(std::uint64_t first, std::uint64_t last);
  bool contains(std::uint64_t page) const;
  bool empty() const { return ranges_.empty(); }
  std::uint64_t size() const { return size_; }
  std::size_t range_count() const { return ranges_.size(); }

 private:
  std::map<std::uint64_t, std::uint64_t> ranges_;  // first -> last, disjoint, non-adjacent
  std::uint64_t size_ = 0;
};

}  // namespace wp
