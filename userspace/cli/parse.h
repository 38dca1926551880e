// SPDX-License-Identifier: Apache-2.0
// Parsing of the command line's values (durations, sizes, scenario options), shared by the
// subcommands.
//
// Durations and sizes need a unit: bcc's tools take milliseconds (`-m 10`), perf takes seconds,
// so a bare `10` would mean whatever the reader last used. Only 0, the same in every unit, may
// go without one (`--min-latency 0`, as perf and bcc users type it).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "decode/events.h"
#include "loadgen/scenario.h"

namespace wp {

// "500us", "10ms", "1s", "2m", "1h", "1.5s", "250ns", "0". nullopt for anything else: a bare
// number other than 0, a negative value, an unknown unit.
std::optional<Nanos> parse_duration(const std::string& text);

// "4096B", "4k", "4K", "4KiB", "1M", "256MiB", "2G", "0": binary units. nullopt for anything
// else, a bare number other than 0 included.
std::optional<std::uint64_t> parse_size(const std::string& text);

// The error line for `--flag text` when parse_duration/parse_size refused it: a bare number
// gets a hint ("--min-latency 10: give a unit, e.g. 10ms"), anything else the forms taken.
// `unit` is the one the hint suggests: "ms" for a latency, "s" for how long to run.
std::string duration_error(std::string_view flag, const std::string& text,
                           std::string_view unit = "ms");
std::string size_error(std::string_view flag, const std::string& text, std::string_view unit = "K");

// Values written back the way parse_duration/parse_size take them, exactly: "100us", "1.5s"
// (no: "1500ms"), "32M", "1500B". For help texts' defaults and messages.
std::string duration_text(Nanos ns);
std::string size_text(std::uint64_t bytes);

// A scenario option's value as typed: a count, size or duration within [min, max], or one of
// a Choice's names (its index). nullopt for anything else.
std::optional<std::uint64_t> parse_param(const loadgen::Param& param, const std::string& text);
// What parse_param takes for `param`, for the error line: "a size from 4K to 256M",
// "one of pwrite, io_uring".
std::string param_expectation(const loadgen::Param& param);
// The error line for `SCENARIO --flag text` that parse_param refused.
std::string param_error(std::string_view scenario, const loadgen::Param& param,
                        const std::string& text);
// The help line of a scenario option: its text, the form it takes and its default
// ("bytes per write(2) (e.g. 64K; default: 1M)").
std::string param_help(const loadgen::Param& param);
// A scenario option's CLI11 type name: COUNT, SIZE, DURATION or NAME.
std::string param_type_name(const loadgen::Param& param);

}  // namespace wp

namespace wp {

// `--flag TEXT` after parsing: nullopt when the option was not given (TEXT empty), the value
// otherwise; a Failure (bad usage) with duration_error's / size_error's line when TEXT is not
// one.
std::optional<Nanos> duration_option(std::string_view flag, const std::string& text,
                                     std::string_view unit = "ms");
std::optional<std::uint64_t> size_option(std::string_view flag, const std::string& text,
                                         std::string_view unit = "K");

}  // namespace wp
