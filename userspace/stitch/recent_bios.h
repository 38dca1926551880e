// SPDX-License-Identifier: Apache-2.0
// The bios queued so far, per thread and per file, as the block tracker keeps them for the
// trackers above it (BioHistory): a bounded history (StitchLimits::max_history_per_key bios
// per thread and per file), swept by age. Tests: tests/unit/block_tracker_test.cpp.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>

#include "stitch/io_state.h"
#include "stitch/stitcher.h"

namespace wp::stitch {

class RecentBios final : public BioHistory {
 public:
  explicit RecentBios(const StitchLimits& limits) : limits_(limits) {}

  void remember(const std::shared_ptr<Bio>& bio);
  // Forgets bios queued before `horizon`, and files with none since.
  void sweep(Nanos horizon);

  const std::deque<std::shared_ptr<Bio>>* bios_of_thread(std::uint32_t tid) const override;
  const InodeBios* bios_of_inode(DevT dev, std::uint64_t ino) const override;

 private:
  const StitchLimits& limits_;
  std::unordered_map<std::uint32_t, std::deque<std::shared_ptr<Bio>>> by_thread_;
  std::unordered_map<InodeKey, InodeBios, InodeKeyHash> by_inode_;
  std::uint64_t file_bios_ = 0;  // file bios seen (InodeBios::last_seq)
};

}  // namespace wp::stitch
