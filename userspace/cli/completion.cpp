// SPDX-License-Identifier: Apache-2.0
#include "cli/completion.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <set>
#include <utility>
#include <vector>

namespace wp {
namespace {

// One `case` arm per command path (or "path|option"): what the script's lookups answer.
using Arms = std::vector<std::pair<std::string, std::string>>;

struct Tables {
  Arms subcommands;  // path → the names of its subcommands
  Arms options;      // path → every option name it takes
  Arms values;       // "path|option" → what completes its value (flags are not listed)
  Arms positionals;  // path → what completes a word that is neither option nor subcommand
};

bool visible(const CLI::App* app) {
  return !app->get_group().empty();
}
bool visible(const CLI::Option* opt) {
  return !opt->get_group().empty();
}

std::string joined(const std::vector<std::string>& words) {
  return fmt::format("{}", fmt::join(words, " "));
}

// Single-quoted for bash.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// What completes this option's value or positional word: "words:a b" for a CLI::IsMember set
// (CLI11 shows it in the type name as "TEXT:{a,b}"), files, dirs, pids, or "any" (nothing).
std::string value_kind(const CLI::Option& opt) {
  const std::string type = opt.get_type_name();
  const auto open = type.find('{');
  const auto close = type.find('}', open);
  if (open != std::string::npos && close != std::string::npos) {
    std::string words = type.substr(open + 1, close - open - 1);
    for (char& c : words)
      if (c == ',') c = ' ';
    return "words:" + words;
  }
  std::vector<std::string> names = opt.get_lnames();
  if (opt.get_positional()) names.push_back(opt.get_name());
  for (const std::string& name : names) {
    if (name == "output" || name == "save" || name == "file") return "files";
    if (name == "dir") return "dirs";
    if (name == "pid") return "pids";
  }
  return "any";
}

// The commands whose options this one accepts: itself and, while CLI11 lets unknown options
// fall through, its parents below the top level (`demo SCENARIO -o FILE`).
std::vector<const CLI::App*> option_owners(const CLI::App& app) {
  std::vector<const CLI::App*> owners{&app};
  for (const CLI::App* a = &app; a->get_fallthrough() && a->get_parent() != nullptr &&
                                 a->get_parent()->get_parent() != nullptr;
       a = a->get_parent())
    owners.push_back(a->get_parent());
  return owners;
}

void collect(const CLI::App& app, const std::string& path, Tables& tables) {
  const auto subcommands = app.get_subcommands([](const CLI::App* sub) { return visible(sub); });
  std::vector<std::string> sub_names;
  for (const CLI::App* sub : subcommands) sub_names.push_back(sub->get_name());
  if (!sub_names.empty()) tables.subcommands.emplace_back(path, joined(sub_names));

  std::vector<std::string> option_names;
  std::set<std::string> seen;
  bool has_positional = false;
  for (const CLI::App* owner : option_owners(app)) {
    for (const CLI::Option* opt : owner->get_options()) {
      if (!visible(opt)) continue;
      if (opt->get_positional() && !opt->nonpositional()) {
        if (owner == &app && !has_positional) {
          tables.positionals.emplace_back(path, value_kind(*opt));
          has_positional = true;
        }
        continue;
      }
      std::vector<std::string> names;
      for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
      for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
      for (const std::string& name : names) {
        if (!seen.insert(name).second) continue;
        option_names.push_back(name);
        if (opt->get_expected_min() > 0)  // CLI11: flags expect no value
          tables.values.emplace_back(path + "|" + name, value_kind(*opt));
      }
    }
  }
  if (!option_names.empty()) tables.options.emplace_back(path, joined(option_names));

  for (const CLI::App* sub : subcommands)
    collect(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), tables);
}

std::string lookup_function(const std::string& name, const Arms& arms,
                            const std::string& fallback) {
  std::string out = fmt::format("{}() {{\n  case $1 in\n", name);
  for (const auto& [key, value] : arms)
    out += fmt::format("    {}) REPLY={} ;;\n", quoted(key), quoted(value));
  return out + fmt::format("    *) REPLY={} ;;\n  esac\n}}\n", fallback);
}

// The walk over the words typed so far; the lookups above say what each word is.
// clang-format off
constexpr const char* kCompleter = R"bash(
# Completes a value of the given kind (what _writepath_value and _writepath_positional say).
_writepath_complete() {
  case $1 in
    files) compopt -o filenames 2>/dev/null || true; mapfile -t COMPREPLY < <(compgen -f -- "$2") ;;
    dirs) compopt -o filenames 2>/dev/null || true; mapfile -t COMPREPLY < <(compgen -d -- "$2") ;;
    pids) mapfile -t COMPREPLY < <(compgen -W "$(cd /proc && echo [0-9]*)" -- "$2") ;;
    words:*) mapfile -t COMPREPLY < <(compgen -W "${1#words:}" -- "$2") ;;
  esac
}

_writepath() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} path='' option word i REPLY
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    if [[ $word == -- ]]; then
      # `-- CMD ARGS...`: a command's name, then whatever that command takes.
      if ((i + 1 == COMP_CWORD)); then
        mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
      else
        _writepath_complete files "$cur"
      fi
      return 0
    fi
    if [[ $word == -* ]]; then
      _writepath_value "$path|$word"
      # An option's value is the next word, or the one after the '=' bash splits off.
      if [[ $REPLY != flag ]]; then
        if [[ ${COMP_WORDS[i+1]-} == = ]]; then ((i += 2)); else ((i += 1)); fi
      fi
      continue
    fi
    _writepath_subcommands "$path"
    [[ " $REPLY " == *" $word "* ]] && path=${path:+$path }$word
  done

  option=$prev
  if [[ $cur == = ]]; then
    cur=''
  elif [[ $prev == = ]]; then
    option=${COMP_WORDS[COMP_CWORD-2]}
  fi
  if [[ $option == -* ]]; then
    _writepath_value "$path|$option"
    if [[ $REPLY != flag ]]; then
      _writepath_complete "$REPLY" "$cur"
      return 0
    fi
  fi
  if [[ $cur == -* ]]; then
    _writepath_options "$path"
    mapfile -t COMPREPLY < <(compgen -W "$REPLY" -- "$cur")
    return 0
  fi
  _writepath_subcommands "$path"
  if [[ -n $REPLY ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$REPLY" -- "$cur")
    return 0
  fi
  _writepath_positional "$path"
  _writepath_complete "$REPLY" "$cur"
}
complete -F _writepath writepath
)bash";
// clang-format on

}  // namespace

std::string bash_completion(const CLI::App& app) {
  Tables tables;
  collect(app, "", tables);
  std::string out =
      "# bash completion for writepath(1), generated by `writepath completion bash` from the\n"
      "# command line's definition: change the CLI, not this file.\n";
  out += lookup_function("_writepath_subcommands", tables.subcommands, "''");
  out += lookup_function("_writepath_options", tables.options, "''");
  out += lookup_function("_writepath_value", tables.values, "flag");
  out += lookup_function("_writepath_positional", tables.positionals, "any");
  return out + kCompleter;
}

}  // namespace wp
