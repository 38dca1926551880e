// SPDX-License-Identifier: Apache-2.0
// Writes lost to a failed writeback, per file, until a sync of the file takes them: errseq
// makes one sync report a writeback error, so the first sync after the loss names them.
// Bounded: past the caps, the oldest losses go first. Owned by the write tracker, which loses
// writes; tests: tests/unit/lost_writes_test.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "stitch/io_state.h"

namespace wp::stitch {

class LostWrites {
 public:
  // Write `id` of `file` was lost at `ts` (losses of a file come in time order).
  void add(InodeKey file, std::uint64_t id, Nanos ts);
  // The writes of `file` lost by `until` that no sync took yet, by id, oldest first.
  std::vector<std::uint64_t> take(InodeKey file, Nanos until);

  static constexpr std::size_t kMaxPerFile = 4096;
  static constexpr std::size_t kMaxFiles = 1024;

 private:
  struct Loss {
    std::uint64_t id = 0;
    Nanos ts = 0;
  };
  std::unordered_map<InodeKey, std::deque<Loss>, InodeKeyHash> by_file_;
};

}  // namespace wp::stitch
