// SPDX-License-Identifier: Apache-2.0
// What pending writes wait on, by the block tracker's ids (Bio::id, Request::id): the O_DIRECT
// writes waiting for a bio to complete, and the written writes waiting for a request to become
// durable. Kept apart from the bios and requests, which are the block tracker's: the waits are
// the write tracker's state, and it owns this. Tests: tests/unit/write_waiters_test.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "stitch/write_batch.h"

namespace wp::stitch {

class WriteWaiters {
 public:
  // The O_DIRECT write of batch `batch` (its only write) waits for bio `bio_id` to complete.
  void wait_for_bio(std::uint64_t bio_id, BatchId batch) { bios_[bio_id].push_back(batch); }
  // Written write `write` waits for request `request_id` to become durable.
  void wait_for_durable(std::uint64_t request_id, PendingWriteRef write) {
    requests_[request_id].push_back(write);
  }
  // The batches waiting for bio `bio_id`, which stop waiting (a bio completes once).
  std::vector<BatchId> take_bio(std::uint64_t bio_id) { return take(bios_, bio_id); }
  // The writes waiting for request `request_id`, which stop waiting (it became durable).
  std::vector<PendingWriteRef> take_durable(std::uint64_t request_id) {
    return take(requests_, request_id);
  }
  // The bios and requests waited on.
  std::size_t size() const { return bios_.size() + requests_.size(); }

  // Some entries are of bios or requests that never finished (abandoned after a loss, swept):
  // there are many more entries than `pending_writes` can need (two each, and some slack).
  bool crowded(std::size_t pending_writes) const { return size() > 2 * pending_writes + kSlack; }
  // Drops the entries no write still waits on. `waits(write, state)`: whether `write` is still
  // pending in `state` (Dirty for a bio, Written for a request).
  using StillWaiting = std::function<bool(PendingWriteRef, WriteState)>;
  void prune(const StillWaiting& waits);

  static constexpr std::size_t kSlack = 4096;  // entries allowed past 2 per pending write

 private:
  template <typename T>
  static std::vector<T> take(std::unordered_map<std::uint64_t, std::vector<T>>& map,
                             std::uint64_t id) {
    const auto found = map.find(id);
    if (found == map.end()) return {};
    std::vector<T> waiting = std::move(found->second);
    map.erase(found);
    return waiting;
  }

  std::unordered_map<std::uint64_t, std::vector<BatchId>> bios_;
  std::unordered_map<std::uint64_t, std::vector<PendingWriteRef>> requests_;
};

}  // namespace wp::stitch
