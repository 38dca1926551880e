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

namespace wp {
namespace {

// kv-tier's options as the CLI binds them.
loadgen::Param kv_tier_param(const std::string& flag) {
  for (auto& scenario : loadgen::make_scenarios()) {
    if (scenario->name() != "kv-tier") continue;
    for (const auto& param : scenario->params())
      if (param.flag == flag) return param;
  }
  ADD_FAILURE() << "kv-tier has no --" << flag;
  return {};
}

TEST(ParseParam, ChoiceIsTheIndexOfItsName) {
  const loadgen::Param engine = kv_tier_param("engine");
  EXPECT_EQ(parse_param(engine, "pwrite"), 0u);
  EXPECT_EQ(parse_param(engine, "io_uring"), 1u);
  EXPECT_EQ(param_expectation(engine), "one of pwrite, io_uring");
}

TEST(ParseParam, ChoiceRejectsOtherNames) {
  const loadgen::Param engine = kv_tier_param("engine");
  for (const char* text : {"", "aio", "IO_URING", "io_uring ", "1", "0"})
    EXPECT_FALSE(parse_param(engine, text)) << text;
}

TEST(ParseParam, CountIsRangeChecked) {
  const loadgen::Param iodepth = kv_tier_param("iodepth");
  EXPECT_EQ(parse_param(iodepth, "16"), 16u);
  EXPECT_EQ(parse_param(iodepth, "1"), 1u);
  EXPECT_EQ(parse_param(iodepth, "4096"), 4096u);
  for (const char* text : {"0", "4097", "-1", "16k", "", "99999999999999999999"})
    EXPECT_FALSE(parse_param(iodepth, text)) << text;
  EXPECT_EQ(param_expectation(iodepth), "a count from 1 to 4096");
}

TEST(ParseParam, SizeTakesUnits) {
  const loadgen::Param block = kv_tier_param("block-size");
  EXPECT_EQ(parse_param(block, "256k"), 256u << 10);
  EXPECT_FALSE(parse_param(block, "1k"));  // below the 4k minimum
  EXPECT_EQ(param_expectation(block), "a size from 4096 to 268435456");
}

}  // namespace
}  // namespace wp
