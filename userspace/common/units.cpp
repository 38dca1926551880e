// SPDX-License-Identifier: Apache-2.0
#include "common/units.h"

#include <fmt/format.h>

#include <unistd.h>

#include <bit>
#include <climits>
#include <cstring>

namespace wp {
namespace {

// n / d rounded half up, without the overflow of (n + d / 2) / d near UINT64_MAX.
constexpr std::uint64_t rounded_div(std::uint64_t n, std::uint64_t d) {
  return n / d + (n % d >= d - d / 2 ? 1 : 0);
}

}  // namespace

std::string human_duration(Nanos ns) {
  if (ns < 1'000) return fmt::format("{}ns", ns);
  const std::uint64_t tenths_us = rounded_div(ns, 100);
  if (tenths_us < 10'000) return fmt::format("{}.{}us", tenths_us / 10, tenths_us % 10);
  const std::uint64_t hundredths_ms = rounded_div(ns, 10'000);
  if (hundredths_ms < 100'000) {
    return fmt::format("{}.{:02}ms", hundredths_ms / 100, hundredths_ms % 100);
  }
  const std::uint64_t hundredths_s = rounded_div(ns, 10'000'000);
  return fmt::format("{}.{:02}s", hundredths_s / 100, hundredths_s % 100);
}

std::string human_offset(std::int64_t delta_ns) {
  if (delta_ns == 0) return "+0";
  // Negate in unsigned arithmetic: -INT64_MIN does not fit in an int64_t.
  const auto magnitude = delta_ns < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(delta_ns)
                                      : static_cast<std::uint64_t>(delta_ns);
  return (delta_ns < 0 ? "-" : "+") + human_duration(magnitude);
}

std::int64_t relative_ns(Nanos t, Nanos origin) {
  // Modular difference reinterpreted as signed: exact for any |t - origin| < 2^63.
  return static_cast<std::int64_t>(t - origin);
}

std::string human_rate(std::uint64_t bytes, Nanos ns) {
  if (ns == 0) return "0 B/s";
  const double rate = static_cast<double>(bytes) * 1e9 / static_cast<double>(ns);
  return human_bytes(static_cast<std::uint64_t>(rate)) + "/s";
}

std::string human_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  constexpr int kLastUnit = 6;
  if (bytes < 1024) return fmt::format("{} B", bytes);
  int unit = 1;
  while (unit < kLastUnit && bytes >> (10 * (unit + 1)) != 0) ++unit;
  for (;; ++unit) {
    const std::uint64_t base = std::uint64_t{1} << (10 * unit);
    const std::uint64_t whole = bytes / base;
    const std::uint64_t rest = bytes % base;
    if (rest == 0) return fmt::format("{} {}", whole, kUnits[unit]);
    // rest < 2^60 for EiB, so rest * 10 cannot overflow.
    const std::uint64_t tenths = whole * 10 + rounded_div(rest * 10, base);
    if (tenths < 10'240 || unit == kLastUnit) {
      return fmt::format("{}.{} {}", tenths / 10, tenths % 10, kUnits[unit]);
    }
    // Rounded up to 1024.0 of this unit: say "1.0" of the next one instead.
  }
}

std::string plural(std::uint64_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string errno_name(int err) {
  // Widened first: -INT_MIN does not fit in an int.
  const long long positive = err < 0 ? -static_cast<long long>(err) : err;
  if (positive <= INT_MAX) {
    if (const char* name = strerrorname_np(static_cast<int>(positive))) return name;
  }
  return fmt::format("errno {}", positive);
}

unsigned running_page_shift() {
  const long size = ::sysconf(_SC_PAGESIZE);
  // POSIX promises a power of two; 4 KiB if the C library cannot say.
  if (size <= 0 || !std::has_single_bit(static_cast<unsigned long>(size))) return 12;
  return static_cast<unsigned>(std::countr_zero(static_cast<unsigned long>(size)));
}

}  // namespace wp
