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

TEST(ParseSize, BinaryUnits) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("4k"), 4096u);
  EXPECT_EQ(parse_size("4KiB"), 4096u);
  EXPECT_EQ(parse_size("1M"), 1048576u);
  EXPECT_EQ(parse_size("256MiB"), 256u << 20);
  EXPECT_EQ(parse_size("1.5M"), 1572864u);
  EXPECT_EQ(parse_size("2G"), 2ull << 30);
}

TEST(ParseSize, RejectsNonsense) {
  EXPECT_FALSE(parse_size(""));
  EXPECT_FALSE(parse_size("-4k"));
  EXPECT_FALSE(parse_size("4 k"));
  EXPECT_FALSE(parse_size("4kb2"));
  EXPECT_FALSE(parse_size("lots"));
  EXPECT_FALSE(parse_size("0.3"));  // not a whole number of bytes
}

}  // namespace
}  // namespace wp
