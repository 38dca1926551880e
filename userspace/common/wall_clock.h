// SPDX-License-Identifier: Apache-2.0
// Wall-clock time for items stamped with CLOCK_MONOTONIC (bpf_ktime_get_ns): the offsets that
// turn a monotonic time into CLOCK_REALTIME and CLOCK_BOOTTIME, measured by the agent and
// handed down; the formats a person or a log correlator reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "common/nanos.h"

namespace wp {

// other clock − CLOCK_MONOTONIC, in nanoseconds, at one moment. REALTIME's moves when the
// clock is set or slewed (NTP), BOOTTIME's grows across a suspend.
struct ClockOffsets {
  std::int64_t realtime_ns = 0;
  std::int64_t boottime_ns = 0;
  bool operator==(const ClockOffsets&) const = default;
};

// One bracketed reading: MONOTONIC, then the other clock, then MONOTONIC again.
struct ClockBracket {
  Nanos monotonic_before = 0;
  std::int64_t other = 0;
  Nanos monotonic_after = 0;
};
// other − MONOTONIC, the other clock taken as read at the bracket's midpoint.
std::int64_t offset_of(const ClockBracket& bracket);
// Of several brackets, the tightest (the other clock's reading is pinned best); nullopt if none.
std::optional<ClockBracket> tightest(const ClockBracket* brackets, std::size_t count);

// Reads the clocks (a few brackets each, the tightest kept). Only the agent calls it: sinks
// and the stitcher are handed offsets.
ClockOffsets measure_clock_offsets();

// CLOCK_MONOTONIC now: the clock of the records' timestamps.
Nanos monotonic_now();

// A monotonic time on the realtime clock (ns since the epoch); 0 or before the epoch clamps to 0.
std::int64_t realtime_of(Nanos monotonic_ns, const ClockOffsets& offsets);

// RFC 3339 in UTC with microseconds: "2026-12-01T15:17:14.123456Z".
std::string rfc3339_utc(std::int64_t realtime_ns);
// A wall-clock column as perf and bcc print it with -T, in local time: "15:17:14.123456".
std::string clock_column(std::int64_t realtime_ns);

}  // namespace wp
