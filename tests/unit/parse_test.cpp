#include "cli/parse.h"

#include <gtest/gtest.h>

namespace wp {
namespace {

TEST(ParseDuration, UnitsScaleToNanoseconds) {
  EXPECT_EQ(parse_duration("500us"), 500'000u);
  EXPECT_EQ(parse_duration("10ms"), 10'000'000u);
  EXPECT_EQ(parse_duration("1s"), 1'000'000'000u);
  EXPECT_EQ(parse_duration("1.5s"), 1'500'000'000u);
  EXPECT_EQ(parse_duration("250ns"), 250u);
  EXPECT_EQ(parse_duration("2m"), 120'000'000'000u);
}

TEST(ParseDuration, BareNumberIsSeconds) {
  EXPECT_EQ(parse_duration("3"), 3'000'000'000u);
}

TEST(ParseDuration, RejectsNonsense) {
  EXPECT_FALSE(parse_duration(""));
  EXPECT_FALSE(parse_duration("ms"));
  EXPECT_FALSE(parse_duration("-1s"));
  EXPECT_FALSE(parse_duration("10 ms"));
  EXPECT_FALSE(parse_duration("10parsecs"));
  EXPECT_FALSE(parse_duration("nan"));
  EXPECT_FALSE(parse_duration("1e30s"));
}

}  // namespace
}  // namespace wp
