// SPDX-License-Identifier: Apache-2.0
#include "stitch/page_set.h"

#include <gtest/gtest.h>

namespace wp {
namespace {

TEST(PageSet, AddMergesOverlappingAndAdjacentRanges) {
  PageSet set;
  set.add(0, 3);
  set.add(10, 12);
  EXPECT_EQ(set.size(), 7u);
  EXPECT_EQ(set.range_count(), 2u);
  set.add(4, 9);  // adjacent to both
  EXPECT_EQ(set.size(), 13u);
  EXPECT_EQ(set.range_count(), 1u);
  set.add(2, 5);  // already present
  EXPECT_EQ(set.size(), 13u);
}

TEST(PageSet, RemoveSplitsRangesAndCountsRemovedPages) {
  PageSet set;
  set.add(0, 9);
  EXPECT_EQ(set.remove(3, 4), 2u);
  EXPECT_EQ(set.size(), 8u);
  EXPECT_EQ(set.range_count(), 2u);
  EXPECT_FALSE(set.contains(3));
  EXPECT_TRUE(set.contains(5));
  EXPECT_EQ(set.remove(3, 4), 0u);  // already gone
  EXPECT_EQ(set.remove(100, 200), 0u);
  EXPECT_EQ(set.remove(0, 100), 8u);
  EXPECT_TRUE(set.empty());
  EXPECT_EQ(set.size(), 0u);
}

TEST(PageSet, RemoveAcrossSeveralRanges) {
  PageSet set;
  set.add(0, 1);
  set.add(5, 6);
  set.add(10, 20);
  EXPECT_EQ(set.remove(1, 12), 6u);  // 1, 5, 6, 10, 11, 12
  EXPECT_EQ(set.size(), 9u);         // 0 and 13..20
  EXPECT_TRUE(set.contains(0));
  EXPECT_TRUE(set.contains(13));
  EXPECT_FALSE(set.contains(12));
}

}  // namespace
}  // namespace wp
