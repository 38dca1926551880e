// SPDX-License-Identifier: Apache-2.0
// Usage errors a person can act on: an unknown command or option gets the nearest real name
// ("did you mean") and the help of the subcommand that was being parsed.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wp {

// Levenshtein distance: insertions, deletions and substitutions, one each.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word` when it is near enough to be a typo (at most a third of the
// word's letters wrong, at least one; words of fewer than 3 letters get none); nullopt
// otherwise. Ties go to the first candidate.
std::optional<std::string> did_you_mean(std::string_view word,
                                        const std::vector<std::string>& candidates);

// A CLI11 check that the value is one of `names`; otherwise "jsn is not one of text, json, html,
// perfetto; did you mean 'json'?" (CLI11 puts the option's name in front).
CLI::Validator one_of(std::vector<std::string> names);

// "writepath trace": how a person names `app` on the command line.
std::string command_path(const CLI::App& app);

// The one line (without the "writepath: " prefix) for a ParseError thrown by `root.parse()`:
// what was wrong, the nearest real name when a name was unknown, and whose --help to read.
std::string usage_error(const CLI::App& root, const CLI::ParseError& error);

}  // namespace wp
