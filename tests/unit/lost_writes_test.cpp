// SPDX-License-Identifier: Apache-2.0
// Lost writes held per file until a sync of the file takes them.
#include <gtest/gtest.h>

#include "stitch/lost_writes.h"

namespace wp::stitch_test {
namespace {

using stitch::InodeKey;
using stitch::LostWrites;

TEST(LostWrites, ASyncTakesItsFilesLossesUpToItsEndOnce) {
  LostWrites lost;
  const InodeKey file{1, 42};
  const InodeKey other{1, 43};
  lost.add(file, 7, 100);
  lost.add(other, 8, 150);
  lost.add(file, 9, 300);
  EXPECT_EQ(lost.take(file, 200), std::vector<std::uint64_t>{7});
  EXPECT_TRUE(lost.take(file, 200).empty()) << "one sync reports a loss";
  EXPECT_EQ(lost.take(file, 400), std::vector<std::uint64_t>{9});
  EXPECT_EQ(lost.take(other, 400), std::vector<std::uint64_t>{8});
}

TEST(LostWrites, AFileKeepsItsNewestLossesPastTheCap) {
  LostWrites lost;
  const InodeKey file{1, 42};
  const std::uint64_t added = LostWrites::kMaxPerFile + 2;
  for (std::uint64_t id = 1; id <= added; ++id) lost.add(file, id, id);
  const std::vector<std::uint64_t> taken = lost.take(file, added);
  ASSERT_EQ(taken.size(), LostWrites::kMaxPerFile);
  EXPECT_EQ(taken.front(), 3u);
  EXPECT_EQ(taken.back(), added);
}

}  // namespace
}  // namespace wp::stitch_test
