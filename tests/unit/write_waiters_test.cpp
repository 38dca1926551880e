// SPDX-License-Identifier: Apache-2.0
// What pending writes wait on: bios for O_DIRECT writes, requests for written writes.
#include <gtest/gtest.h>

#include "stitch/write_waiters.h"

namespace wp::stitch_test {
namespace {

using stitch::BatchId;
using stitch::PendingWriteRef;
using stitch::WriteWaiters;

TEST(WriteWaiters, AWaitIsTakenOnce) {
  WriteWaiters waiters;
  waiters.wait_for_bio(11, 1);
  waiters.wait_for_bio(11, 2);
  waiters.wait_for_durable(21, PendingWriteRef{3, 4});
  EXPECT_EQ(waiters.size(), 2u);
  EXPECT_EQ(waiters.take_bio(11), (std::vector<BatchId>{1, 2}));
  EXPECT_TRUE(waiters.take_bio(11).empty());
  const std::vector<PendingWriteRef> durable = waiters.take_durable(21);
  ASSERT_EQ(durable.size(), 1u);
  EXPECT_EQ(durable[0].batch, 3u);
  EXPECT_EQ(durable[0].index, 4u);
  EXPECT_EQ(waiters.size(), 0u);
}

// Bios and requests that never finish leave entries behind: once crowded, those no pending
// write waits on are dropped, and the rest kept.
TEST(WriteWaiters, PruneDropsOnlyTheWaitsNoWriteStillHas) {
  WriteWaiters waiters;
  const std::size_t entries = 2 * 10 + WriteWaiters::kSlack + 1;
  for (std::uint64_t id = 1; id <= entries; ++id) waiters.wait_for_bio(id, id);
  waiters.wait_for_durable(1, PendingWriteRef{1, 0});
  EXPECT_TRUE(waiters.crowded(10));
  EXPECT_FALSE(waiters.crowded(entries));
  // Batch 5 still waits for its bio and write {1, 0} to become durable; no other write waits.
  waiters.prune([](PendingWriteRef write, WriteState state) {
    return (state == WriteState::Dirty && write.batch == 5) ||
           (state == WriteState::Written && write.batch == 1);
  });
  EXPECT_EQ(waiters.size(), 2u);
  EXPECT_EQ(waiters.take_bio(5), std::vector<BatchId>{5});
  EXPECT_EQ(waiters.take_durable(1).size(), 1u);
}

}  // namespace
}  // namespace wp::stitch_test
