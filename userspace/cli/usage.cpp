// SPDX-License-Identifier: Apache-2.0
#include "cli/usage.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace wp {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insertions, deletions, substitutions, and two neighbours
  // swapped ("dmeo" is one slip from "demo", as a person types). Two rows back are needed
  // for the swap.
  std::vector<std::size_t> before(b.size() + 1), last(b.size() + 1), row(b.size() + 1);
  std::iota(last.begin(), last.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      row[j] =
          std::min({last[j] + 1, row[j - 1] + 1, last[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        row[j] = std::min(row[j], before[j - 2] + 1);
    }
    before.swap(last);
    last.swap(row);
  }
  return last[b.size()];
}

std::optional<std::string> did_you_mean(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  // Dashes are not letters a person mistypes: "--formt" is one letter from "--format".
  const std::string_view bare = word.substr(std::min(word.find_first_not_of('-'), word.size()));
  if (bare.size() < 3) return std::nullopt;  // "-x" is as near to "-p" as to anything
  const std::size_t allowed = std::max<std::size_t>(1, bare.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = allowed + 1;
  for (const std::string& candidate : candidates) {
    const std::size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

CLI::Validator one_of(std::vector<std::string> names) {
  const std::string listed = fmt::format("{}", fmt::join(names, ","));
  return CLI::Validator(
      [names = std::move(names)](std::string& value) -> std::string {
        if (std::find(names.begin(), names.end(), value) != names.end()) return "";
        std::string line = fmt::format("{} is not one of {}", value, fmt::join(names, ", "));
        if (auto near = did_you_mean(value, names))
          line += fmt::format("; did you mean '{}'?", *near);
        return line;
      },
      "{" + listed + "}");
}

std::string command_path(const CLI::App& app) {
  std::vector<std::string> names;
  // The root is named after argv[0] once parsed ("./build/writepath"): the help is the same.
  for (const CLI::App* a = &app; a->get_parent() != nullptr; a = a->get_parent())
    names.push_back(a->get_name());
  names.push_back("writepath");
  std::reverse(names.begin(), names.end());
  return fmt::format("{}", fmt::join(names, " "));
}

namespace {

// The innermost subcommand the parser had entered.
const CLI::App& deepest_parsed(const CLI::App& root) {
  const CLI::App* app = &root;
  for (auto subs = app->get_subcommands(); !subs.empty(); subs = app->get_subcommands())
    app = subs.front();
  return *app;
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands(
           [](const CLI::App* s) { return !s->get_name().empty() && !s->get_group().empty(); }))
    names.push_back(sub->get_name());
  return names;
}

// The options `app` takes: its own and those its parents take from it (demo's --format after
// the scenario's name; --help, --version).
std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* a = &app; a != nullptr; a = a->get_parent()) {
    for (const CLI::Option* opt : a->get_options()) {
      for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
      for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
    }
  }
  return names;
}

std::string with_suggestion(std::string line, std::string_view word,
                            const std::vector<std::string>& candidates) {
  if (auto near = did_you_mean(word, candidates))
    line += fmt::format("; did you mean '{}'?", *near);
  return line;
}

// CLI11's "Could not convert: --pid = abc" as a person would say it.
std::string conversion_error(const std::string& what) {
  static constexpr std::string_view kPrefix = "Could not convert: ";
  const std::size_t equals = what.find(" = ");
  if (what.rfind(kPrefix, 0) != 0 || equals == std::string::npos) return what;
  const std::string option = what.substr(kPrefix.size(), equals - kPrefix.size());
  return fmt::format("{} {}: not a number", option, what.substr(equals + 3));
}

}  // namespace

std::string usage_error(const CLI::App& root, const CLI::ParseError& error) {
  const CLI::App& app = deepest_parsed(root);
  const std::string help = fmt::format(" (see {} --help)", command_path(app));
  std::vector<std::string> extras = root.remaining(true);
  // A parse that failed before the command's "--" leaves it, and the command, unparsed: the
  // error is the failure's, not the separator's.
  if (!extras.empty() && extras.front() == "--") extras.clear();
  if (!extras.empty()) {
    const std::string& word = extras.front();
    if (word.size() > 1 && word[0] == '-') {
      const std::string name = word.substr(0, word.find('='));
      return with_suggestion(fmt::format("unknown option '{}' for '{}'", name, command_path(app)),
                             name, option_names(app)) +
             help;
    }
    const std::vector<std::string> commands = subcommand_names(app);
    if (!commands.empty() && app.get_subcommands().empty()) {
      const std::string line = fmt::format("unknown command '{}'", word);
      if (did_you_mean(word, commands)) return with_suggestion(line, word, commands) + help;
      return fmt::format("{}; {} takes: {}", line, command_path(app), fmt::join(commands, ", ")) +
             help;
    }
    return fmt::format("unexpected argument '{}'", word) + help;
  }
  const std::vector<std::string> commands = subcommand_names(app);
  if (!commands.empty() && app.get_subcommands().empty() && app.get_require_subcommand_min() > 0)
    return fmt::format("'{}' needs a command: {}", command_path(app), fmt::join(commands, ", ")) +
           help;
  if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr)
    return conversion_error(error.what()) + help;
  return error.what() + help;
}

}  // namespace wp
