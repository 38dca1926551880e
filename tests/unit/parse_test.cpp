// SPDX-License-Identifier: Apache-2.0
#include "cli/parse.h"

#include <gtest/gtest.h>

#include "common/errors.h"

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

// bcc's -m 10 is 10 ms, perf's -D 10 is 10 ms, a sleep 10 is 10 s: a bare number is refused.
TEST(ParseDuration, BareNumberNeedsAUnit) {
  EXPECT_FALSE(parse_duration("3"));
  EXPECT_FALSE(parse_duration("10"));
  EXPECT_FALSE(parse_duration("1.5"));
}

TEST(ParseDuration, ZeroNeedsNoUnit) {
  EXPECT_EQ(parse_duration("0"), 0u);
  EXPECT_EQ(parse_duration("0.0"), 0u);
  EXPECT_EQ(parse_duration("0ms"), 0u);
  EXPECT_EQ(parse_duration("1h"), 3'600'000'000'000u);
}

TEST(ParseDuration, BareNumberErrorHintsAtAUnit) {
  EXPECT_EQ(duration_error("--min-latency", "10"),
            "--min-latency 10: give a unit, e.g. 10ms (units: ns, us, ms, s, m, h)");
  EXPECT_EQ(duration_error("--duration", "30", "s"),
            "--duration 30: give a unit, e.g. 30s (units: ns, us, ms, s, m, h)");
  EXPECT_EQ(duration_error("--min-latency", "fast"),
            "--min-latency fast: not a duration (e.g. 500us, 10ms, 1s)");
  EXPECT_EQ(duration_error("--min-latency", "10parsecs"),
            "--min-latency 10parsecs: not a duration (e.g. 500us, 10ms, 1s)");
}

TEST(ParseDuration, OptionThrowsTheErrorLineAsBadUsage) {
  EXPECT_EQ(duration_option("--min-latency", ""), std::nullopt);  // not given
  EXPECT_EQ(duration_option("--min-latency", "2ms"), 2'000'000u);
  try {
    duration_option("--min-latency", "10");
    ADD_FAILURE() << "a bare 10 was taken";
  } catch (const Failure& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_STREQ(e.what(), "--min-latency 10: give a unit, e.g. 10ms (units: ns, us, ms, s, m, h)");
  }
  EXPECT_THROW(size_option("--buffer-size", "32", "M"), Failure);
  EXPECT_EQ(size_option("--buffer-size", "32M", "M"), 32u << 20);
}

TEST(ParseDuration, TextIsExactAndReadsBack) {
  EXPECT_EQ(duration_text(0), "0");
  EXPECT_EQ(duration_text(10'000'000), "10ms");
  EXPECT_EQ(duration_text(100'000), "100us");
  EXPECT_EQ(duration_text(1'500'000'000), "1.5s");
  EXPECT_EQ(duration_text(3'600'000'000'000), "1h");
  EXPECT_EQ(duration_text(1'234), "1234ns");
  for (Nanos ns : {Nanos{1}, Nanos{999}, Nanos{1'500}, Nanos{90'000'000'000}, Nanos{123'456'789}})
    EXPECT_EQ(parse_duration(duration_text(ns)), ns) << duration_text(ns);
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
  EXPECT_EQ(parse_size("4096B"), 4096u);
  EXPECT_EQ(parse_size("4096b"), 4096u);
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
  EXPECT_FALSE(parse_size("0.3B"));  // not a whole number of bytes
  EXPECT_FALSE(parse_size("4KB2"));
}

TEST(ParseSize, BareNumberNeedsAUnitButZero) {
  EXPECT_FALSE(parse_size("4096"));
  EXPECT_FALSE(parse_size("32"));
  EXPECT_EQ(parse_size("0"), 0u);
  EXPECT_EQ(size_error("--buffer-size", "32", "M"),
            "--buffer-size 32: give a unit, e.g. 32M or 32B for bytes (units: B, K, M, G, T)");
  EXPECT_EQ(size_error("--fs-size", "lots"),
            "--fs-size lots: not a size (e.g. 4096B, 4K, 32M, 1G)");
}

TEST(ParseSize, TextIsExactAndReadsBack) {
  EXPECT_EQ(size_text(32u << 20), "32M");
  EXPECT_EQ(size_text(1500), "1500B");
  EXPECT_EQ(size_text(1536), "1.5K");
  EXPECT_EQ(size_text(64ull << 30), "64G");
  for (std::uint64_t bytes : {1ull, 512ull, 4097ull, 1536ull, 3ull << 40})
    EXPECT_EQ(parse_size(size_text(bytes)), bytes) << size_text(bytes);
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
  EXPECT_EQ(param_expectation(block), "a size from 4K to 256M");
}

TEST(ParseParam, BareSizeGetsTheUnitHint) {
  const loadgen::Param block = kv_tier_param("block-size");
  EXPECT_FALSE(parse_param(block, "4096"));
  EXPECT_EQ(param_error("kv-tier", block, "4096"),
            "kv-tier --block-size 4096: give a unit, e.g. 4096K or 4096B for bytes (units: B, K, "
            "M, G, T)");
  EXPECT_EQ(param_error("kv-tier", block, "1k"),
            "kv-tier --block-size 1k: expected a size from 4K to 256M");
  const loadgen::Param iodepth = kv_tier_param("iodepth");
  EXPECT_EQ(param_error("kv-tier", iodepth, "0"),
            "kv-tier --iodepth 0: expected a count from 1 "
            "to 4096");
}

TEST(ParseParam, HelpShowsTheFormAndTheDefault) {
  EXPECT_EQ(param_help(kv_tier_param("block-size")),
            "bytes per block (a multiple of 4k; size from 4K to 256M; default: 256K)");
  EXPECT_EQ(param_help(kv_tier_param("iodepth")),
            "io_uring engine: writes in flight at once (count from 1 to 4096; default: 16)");
  EXPECT_EQ(param_help(kv_tier_param("engine")),
            "how blocks are written: pwrite (one call a block) or io_uring (one of pwrite, "
            "io_uring; default: pwrite)");
  EXPECT_EQ(param_type_name(kv_tier_param("block-size")), "SIZE");
  EXPECT_EQ(param_type_name(kv_tier_param("engine")), "NAME");
}

// Every scenario's help states a default its own option takes back.
TEST(ParseParam, EveryScenarioDefaultParses) {
  for (auto& scenario : loadgen::make_scenarios())
    for (const auto& param : scenario->params()) {
      // Defaults worked out at run time ("default: 2 s of the write-back speed") say how.
      if (param.help.find("default: ") != std::string::npos) continue;
      const std::string help = param_help(param);
      const auto at = help.rfind("default: ");
      ASSERT_NE(at, std::string::npos) << help;
      const std::string text = help.substr(at + 9, help.size() - at - 10);
      EXPECT_EQ(parse_param(param, text), *param.value) << scenario->name() << " " << help;
    }
}

}  // namespace
}  // namespace wp
