// SPDX-License-Identifier: Apache-2.0
// The loss log: where records were lost, searched by call window.
#include <gtest/gtest.h>

#include "stitch/loss_log.h"

namespace wp::stitch_test {
namespace {

TEST(LossLog, WithinFindsALossInsideTheCallWhateverTheOrderAdded) {
  stitch::LossLog loss;
  for (Nanos t : {100, 300, 200, 900, 500}) loss.add(t);
  EXPECT_TRUE(loss.within(150, 250));
  EXPECT_TRUE(loss.within(200, 200));
  EXPECT_TRUE(loss.within(850, 1000));
  EXPECT_FALSE(loss.within(310, 490));
  EXPECT_FALSE(loss.within(901, 2000));
  EXPECT_FALSE(loss.within(0, 99));
  EXPECT_EQ(loss.last(), 900u);
  loss.sweep(250);
  EXPECT_FALSE(loss.within(0, 250)) << "swept";
  EXPECT_TRUE(loss.within(250, 300));
  EXPECT_EQ(loss.size(), 3u);
}

}  // namespace
}  // namespace wp::stitch_test
