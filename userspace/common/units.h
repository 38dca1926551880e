// SPDX-License-Identifier: Apache-2.0
// Human-readable renderings shared by the sinks and the load generator: durations, signed
// offsets, byte counts, counted nouns, errno names. Pure functions of their arguments.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/nanos.h"

namespace wp {

// "812ns", "14.2us", "3.10ms", "1.25s". Rounds half up; a value that rounds to 1000 of a unit
// moves to the next one ("1.00ms", never "1000.0us").
std::string human_duration(Nanos ns);

// A signed offset from a reference time: "+0", "+3.10ms", "-1.20ms".
std::string human_offset(std::int64_t delta_ns);

// `t` relative to `origin`, signed (t may precede origin, e.g. a journal commit that was already
// running when an fsync started).
std::int64_t relative_ns(Nanos t, Nanos origin);

// Binary units. Exact multiples print as integers ("4 KiB", "1 MiB"); anything else with one
// decimal ("1.5 KiB", "1.0 MiB" for 1048575). Under 1 KiB: "512 B".
std::string human_bytes(std::uint64_t bytes);

// Bytes over a time as a rate: "368.5 MiB/s" (0 B/s for no time).
std::string human_rate(std::uint64_t bytes, Nanos ns);

// "1 page", "3 pages": a count and its noun, singular for one.
std::string plural(std::uint64_t n, std::string_view one, std::string_view many);

// "EINVAL" for 22 or -22; "errno 4000" when the C library has no name for it.
std::string errno_name(int err);

// log2 of the running kernel's page size (getpagesize): 12 for 4 KiB pages, 14 or 16 on arm64
// kernels built for 16 or 64 KiB pages. The BPF programs count page indexes in these pages.
unsigned running_page_shift();

}  // namespace wp
