// SPDX-License-Identifier: Apache-2.0
#include "common/wall_clock.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <utility>

namespace wp {
namespace {

constexpr std::int64_t kNsPerSec = 1'000'000'000;

std::int64_t read_ns(clockid_t id) {
  timespec ts{};
  ::clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

std::int64_t measure(clockid_t other) {
  // A preemption between the reads widens a bracket; of a few, one is nearly always tight.
  constexpr std::size_t kTries = 5;
  ClockBracket brackets[kTries];
  for (auto& b : brackets) {
    b.monotonic_before = static_cast<Nanos>(read_ns(CLOCK_MONOTONIC));
    b.other = read_ns(other);
    b.monotonic_after = static_cast<Nanos>(read_ns(CLOCK_MONOTONIC));
  }
  return offset_of(*tightest(brackets, kTries));
}

// Splits ns since the epoch into whole seconds and microseconds, flooring (before 1970 too).
std::pair<std::time_t, std::int64_t> split_us(std::int64_t ns) {
  std::int64_t sec = ns / kNsPerSec;
  std::int64_t rem = ns % kNsPerSec;
  if (rem < 0) {
    rem += kNsPerSec;
    --sec;
  }
  return {static_cast<std::time_t>(sec), rem / 1000};
}

// Writes `value` as `width` decimal digits, zero-padded, at `at` (value < 10^width).
void put_digits(char* at, int width, std::int64_t value) {
  for (int i = width - 1; i >= 0; --i, value /= 10) at[i] = static_cast<char>('0' + value % 10);
}

}  // namespace

Nanos monotonic_now() {
  return static_cast<Nanos>(read_ns(CLOCK_MONOTONIC));
}

std::int64_t offset_of(const ClockBracket& b) {
  const Nanos mid = b.monotonic_before + (b.monotonic_after - b.monotonic_before) / 2;
  return b.other - static_cast<std::int64_t>(mid);
}

std::optional<ClockBracket> tightest(const ClockBracket* brackets, std::size_t count) {
  std::optional<ClockBracket> best;
  for (std::size_t i = 0; i < count; ++i) {
    const ClockBracket& b = brackets[i];
    if (b.monotonic_after < b.monotonic_before) continue;
    if (!best ||
        b.monotonic_after - b.monotonic_before < best->monotonic_after - best->monotonic_before)
      best = b;
  }
  return best;
}

ClockOffsets measure_clock_offsets() {
  // BOOTTIME is MONOTONIC plus the time suspended, never behind it; without a suspend the
  // midpoint estimate can land a few ns below zero, which would put BOOTTIME before MONOTONIC.
  return ClockOffsets{.realtime_ns = measure(CLOCK_REALTIME),
                      .boottime_ns = std::max<std::int64_t>(0, measure(CLOCK_BOOTTIME))};
}

std::int64_t realtime_of(Nanos monotonic_ns, const ClockOffsets& offsets) {
  const std::int64_t t = static_cast<std::int64_t>(monotonic_ns) + offsets.realtime_ns;
  return t > 0 ? t : 0;
}

std::string rfc3339_utc(std::int64_t realtime_ns) {
  const auto [sec, us] = split_us(realtime_ns);
  std::tm tm{};
  ::gmtime_r(&sec, &tm);
  const int year = tm.tm_year + 1900;
  if (year < 0 || year > 9999)  // not a time a trace holds; still printed as it is
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", year, tm.tm_mon + 1,
                       tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, us);
  // Once per item of a JSON report: by hand, at a tenth of fmt's cost for the same text.
  char text[] = "YYYY-MM-DDTHH:MM:SS.uuuuuuZ";
  put_digits(text, 4, year);
  put_digits(text + 5, 2, tm.tm_mon + 1);
  put_digits(text + 8, 2, tm.tm_mday);
  put_digits(text + 11, 2, tm.tm_hour);
  put_digits(text + 14, 2, tm.tm_min);
  put_digits(text + 17, 2, tm.tm_sec);
  put_digits(text + 20, 6, us);
  return std::string(text, sizeof(text) - 1);
}

std::string clock_column(std::int64_t realtime_ns) {
  const auto [sec, us] = split_us(realtime_ns);
  std::tm tm{};
  ::localtime_r(&sec, &tm);
  return fmt::format("{:02}:{:02}:{:02}.{:06}", tm.tm_hour, tm.tm_min, tm.tm_sec, us);
}

}  // namespace wp
