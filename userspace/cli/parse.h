// Parsing of the command line's values (durations), shared by the subcommands.
#pragma once

#include <optional>
#include <string>

#include "decode/events.h"

namespace wp {

// "500us", "10ms", "1s", "2m", "1.5s", "250ns"; a bare number is seconds (like perf -d).
// nullopt for anything else, negative values included.
std::optional<Nanos> parse_duration(const std::string& text);

// "4096", "4k", "4K", "4KiB", "1M", "256MiB", "2G": binary units. nullopt for anything else.
std::optional<std::uint64_t> parse_size(const std::string& text);

}  // namespace wp
