// SPDX-License-Identifier: Apache-2.0
// The units every output shows: durations, offsets, sizes and errno names.
#include <gtest/gtest.h>

#include <cerrno>
#include <climits>

#include "common/units.h"
#include "sink_fixture.h"

namespace wp {
namespace {

using sink_test::kStart;

TEST(HumanDuration, NanosecondsBelowOneMicrosecond) {
  EXPECT_EQ(human_duration(0), "0ns");
  EXPECT_EQ(human_duration(812), "812ns");
  EXPECT_EQ(human_duration(999), "999ns");
}

TEST(HumanDuration, MicrosecondsWithOneDecimal) {
  EXPECT_EQ(human_duration(1'000), "1.0us");
  EXPECT_EQ(human_duration(1'049), "1.0us");
  EXPECT_EQ(human_duration(1'050), "1.1us");  // half rounds up
  EXPECT_EQ(human_duration(14'200), "14.2us");
  EXPECT_EQ(human_duration(999'949), "999.9us");
}

TEST(HumanDuration, RoundingUpToAThousandMovesToTheNextUnit) {
  EXPECT_EQ(human_duration(999'950), "1.00ms");
  EXPECT_EQ(human_duration(999'994'999), "999.99ms");
  EXPECT_EQ(human_duration(999'995'000), "1.00s");
}

TEST(HumanDuration, MillisecondsAndSecondsWithTwoDecimals) {
  EXPECT_EQ(human_duration(1'000'000), "1.00ms");
  EXPECT_EQ(human_duration(3'100'000), "3.10ms");
  EXPECT_EQ(human_duration(1'000'000'000), "1.00s");
  EXPECT_EQ(human_duration(1'250'000'000), "1.25s");
  EXPECT_EQ(human_duration(125'500'000'000), "125.50s");
}

TEST(HumanDuration, LargestValueDoesNotOverflow) {
  EXPECT_EQ(human_duration(UINT64_MAX), "18446744073.71s");
}

TEST(HumanOffset, SignedAndZero) {
  EXPECT_EQ(human_offset(0), "+0");
  EXPECT_EQ(human_offset(3'100'000), "+3.10ms");
  EXPECT_EQ(human_offset(-1'200'000), "-1.20ms");
  EXPECT_EQ(human_offset(INT64_MIN), "-9223372036.85s");
  EXPECT_EQ(relative_ns(kStart - 500, kStart), -500);
  EXPECT_EQ(relative_ns(kStart + 500, kStart), 500);
}

TEST(HumanBytes, BytesBelowOneKibibyte) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(1023), "1023 B");
}

TEST(HumanBytes, ExactMultiplesAreIntegers) {
  EXPECT_EQ(human_bytes(1024), "1 KiB");
  EXPECT_EQ(human_bytes(4096), "4 KiB");
  EXPECT_EQ(human_bytes(1u << 20), "1 MiB");
  EXPECT_EQ(human_bytes(std::uint64_t{3} << 30), "3 GiB");
}

TEST(HumanBytes, OthersHaveOneDecimalAndRoundUpIntoTheNextUnit) {
  EXPECT_EQ(human_bytes(1536), "1.5 KiB");
  EXPECT_EQ(human_bytes(1025), "1.0 KiB");
  EXPECT_EQ(human_bytes((1u << 20) + (1u << 19)), "1.5 MiB");
  EXPECT_EQ(human_bytes((1u << 20) - 1), "1.0 MiB");  // 1023.999 KiB
  EXPECT_EQ(human_bytes(UINT64_MAX), "16.0 EiB");
}

TEST(ErrnoName, NamesBothSignsAndFallsBack) {
  EXPECT_EQ(errno_name(EINVAL), "EINVAL");
  EXPECT_EQ(errno_name(-EIO), "EIO");
  EXPECT_EQ(errno_name(4000), "errno 4000");
  EXPECT_EQ(errno_name(INT_MIN), "errno 2147483648");
}

}  // namespace
}  // namespace wp
