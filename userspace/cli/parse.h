// Parsing of the command line's values (durations, sizes, scenario options), shared by the
// subcommands.
#pragma once

#include <optional>
#include <string>

#include "decode/events.h"
#include "loadgen/scenario.h"

namespace wp {

// "500us", "10ms", "1s", "2m", "1.5s", "250ns"; a bare number is seconds (like perf -d).
// nullopt for anything else, negative values included.
std::optional<Nanos> parse_duration(const std::string& text);

// "4096", "4k", "4K", "4KiB", "1M", "256MiB", "2G": binary units. nullopt for anything else.
std::optional<std::uint64_t> parse_size(const std::string& text);

// A scenario option's value as typed: a count, size or duration within [min, max], or one of
// a Choice's names (its index). nullopt for anything else.
std::optional<std::uint64_t> parse_param(const loadgen::Param& param, const std::string& text);
// What parse_param takes for `param`, for the error line: "a size from 4096 to 268435456",
// "one of pwrite, io_uring".
std::string param_expectation(const loadgen::Param& param);

}  // namespace wp
