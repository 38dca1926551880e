// SPDX-License-Identifier: Apache-2.0
#include "stitch/write_waiters.h"

#include <algorithm>

namespace wp::stitch {

void WriteWaiters::prune(const StillWaiting& waits) {
  std::erase_if(bios_, [&](const auto& entry) {
    return std::none_of(entry.second.begin(), entry.second.end(), [&](BatchId batch) {
      return waits(PendingWriteRef{batch, 0}, WriteState::Dirty);
    });
  });
  std::erase_if(requests_, [&](const auto& entry) {
    return std::none_of(entry.second.begin(), entry.second.end(),
                        [&](PendingWriteRef write) { return waits(write, WriteState::Written); });
  });
}

}  // namespace wp::stitch
