// SPDX-License-Identifier: Apache-2.0
// Item ids: one sequence for all the items of a trace (writes, syncs, name-change calls), in the
// order their records arrived. The stitcher owns it and hands ids out: it numbers the syncs and
// name-change calls it assembles, and lends the sequence to the write tracker, which numbers a
// write when its record arrives.
#pragma once

#include <cstdint>

namespace wp::stitch {

class ItemIds {
 public:
  std::uint64_t take() { return next_++; }

 private:
  std::uint64_t next_ = 1;
};

}  // namespace wp::stitch
