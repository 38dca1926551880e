// SPDX-License-Identifier: Apache-2.0
#include "cli/parse.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "common/errors.h"

namespace wp {
namespace {

// The number at the start of `text` and what follows it; nullopt unless it is a finite,
// non-negative number.
std::optional<std::pair<double, std::string>> split_number(const std::string& text) {
  if (text.empty() || text[0] == '-' || text[0] == '+') return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(value) || value < 0) return std::nullopt;
  return std::pair{value, std::string(end)};
}

// A bare number (digits and at most one '.'), the case that gets a "give a unit" hint.
bool bare_number(const std::string& text) {
  const auto parsed = split_number(text);
  return parsed && parsed->second.empty() &&
         text.find_first_not_of("0123456789.") == std::string::npos;
}

struct Unit {
  const char* name;
  double scale;
};

// Largest first: duration_text and size_text pick the first that divides exactly.
constexpr std::array<Unit, 6> kDurationUnits = {
    {{"h", 3600e9}, {"m", 60e9}, {"s", 1e9}, {"ms", 1e6}, {"us", 1e3}, {"ns", 1}}};
constexpr std::array<Unit, 5> kSizeUnits = {{{"T", 1024.0 * 1024 * 1024 * 1024},
                                             {"G", 1024.0 * 1024 * 1024},
                                             {"M", 1024.0 * 1024},
                                             {"K", 1024.0},
                                             {"B", 1}}};

}  // namespace

std::optional<Nanos> parse_duration(const std::string& text) {
  const auto parsed = split_number(text);
  if (!parsed) return std::nullopt;
  const auto& [value, unit] = *parsed;
  if (unit.empty()) {
    if (value != 0 || !bare_number(text)) return std::nullopt;
    return Nanos{0};
  }
  for (const Unit& u : kDurationUnits) {
    if (unit != u.name) continue;
    const double ns = value * u.scale;
    if (ns > 1.8e19) return std::nullopt;
    return static_cast<Nanos>(std::llround(ns));
  }
  return std::nullopt;
}

std::optional<std::uint64_t> parse_size(const std::string& text) {
  const auto parsed = split_number(text);
  if (!parsed) return std::nullopt;
  const double value = parsed->first;
  std::string unit = parsed->second;
  if (unit.empty()) {
    if (value != 0 || !bare_number(text)) return std::nullopt;
    return std::uint64_t{0};
  }
  if (unit.size() == 3 && (unit[1] == 'i' || unit[1] == 'I') && (unit[2] == 'B' || unit[2] == 'b'))
    unit = unit.substr(0, 1);
  if (unit.size() != 1) return std::nullopt;
  const char upper =
      static_cast<char>(unit[0] >= 'a' && unit[0] <= 'z' ? unit[0] - 'a' + 'A' : unit[0]);
  for (const Unit& u : kSizeUnits) {
    if (upper != u.name[0]) continue;
    const double bytes = value * u.scale;
    if (bytes > 1.8e19 || bytes != std::floor(bytes)) return std::nullopt;
    return static_cast<std::uint64_t>(bytes);
  }
  return std::nullopt;
}

std::string duration_error(std::string_view flag, const std::string& text, std::string_view unit) {
  if (bare_number(text))
    return fmt::format("{} {}: give a unit, e.g. {}{} (units: ns, us, ms, s, m, h)", flag, text,
                       text, unit);
  return fmt::format("{} {}: not a duration (e.g. 500us, 10ms, 1s)", flag, text);
}

std::string size_error(std::string_view flag, const std::string& text, std::string_view unit) {
  if (bare_number(text))
    return fmt::format("{} {}: give a unit, e.g. {}{} or {}B for bytes (units: B, K, M, G, T)",
                       flag, text, text, unit, text);
  return fmt::format("{} {}: not a size (e.g. 4096B, 4K, 32M, 1G)", flag, text);
}

namespace {

template <std::size_t N>
std::string exact_text(std::uint64_t value, const std::array<Unit, N>& units) {
  if (value == 0) return "0";
  for (const Unit& u : units) {
    const auto scale = static_cast<std::uint64_t>(u.scale);
    if (value % scale == 0) return fmt::format("{}{}", value / scale, u.name);
    // One decimal when exact: 1.5s reads better than 1500ms.
    if (value >= scale && value < (~std::uint64_t{0} / 10) && (value * 10) % scale == 0)
      return fmt::format("{}.{}{}", value / scale, (value * 10 / scale) % 10, u.name);
  }
  return fmt::format("{}{}", value, units.back().name);
}

}  // namespace

std::string duration_text(Nanos ns) {
  return exact_text(ns, kDurationUnits);
}

std::string size_text(std::uint64_t bytes) {
  return exact_text(bytes, kSizeUnits);
}

std::optional<std::uint64_t> parse_param(const loadgen::Param& param, const std::string& text) {
  std::optional<std::uint64_t> value;
  switch (param.kind) {
    case loadgen::ParamKind::Size: value = parse_size(text); break;
    case loadgen::ParamKind::Duration: value = parse_duration(text); break;
    case loadgen::ParamKind::Count:
      if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos &&
          text.size() < 19)
        value = std::stoull(text);
      break;
    case loadgen::ParamKind::Choice: {
      const auto it = std::find(param.choices.begin(), param.choices.end(), text);
      if (it != param.choices.end()) value = static_cast<std::uint64_t>(it - param.choices.begin());
      break;
    }
  }
  if (!value || *value < param.min || *value > param.max) return std::nullopt;
  return value;
}

std::string param_expectation(const loadgen::Param& param) {
  switch (param.kind) {
    case loadgen::ParamKind::Choice:
      return fmt::format("one of {}", fmt::join(param.choices, ", "));
    case loadgen::ParamKind::Size:
      return fmt::format("a size from {} to {}", size_text(param.min), size_text(param.max));
    case loadgen::ParamKind::Duration:
      return fmt::format("a duration from {} to {}", duration_text(param.min),
                         duration_text(param.max));
    case loadgen::ParamKind::Count: break;
  }
  return fmt::format("a count from {} to {}", param.min, param.max);
}

std::string param_error(std::string_view scenario, const loadgen::Param& param,
                        const std::string& text) {
  const std::string flag = fmt::format("{} --{}", scenario, param.flag);
  if (bare_number(text) && text != "0") {
    if (param.kind == loadgen::ParamKind::Size) return size_error(flag, text);
    if (param.kind == loadgen::ParamKind::Duration) return duration_error(flag, text);
  }
  return fmt::format("{} {}: expected {}", flag, text, param_expectation(param));
}

std::string param_default(const loadgen::Param& param) {
  const std::uint64_t value = *param.value;
  switch (param.kind) {
    case loadgen::ParamKind::Size: return size_text(value);
    case loadgen::ParamKind::Duration: return duration_text(value);
    case loadgen::ParamKind::Choice:
      return value < param.choices.size() ? param.choices[value] : std::string("?");
    case loadgen::ParamKind::Count: break;
  }
  return std::to_string(value);
}

std::string param_help(const loadgen::Param& param) {
  std::string form;
  switch (param.kind) {
    case loadgen::ParamKind::Size:
    case loadgen::ParamKind::Duration:
    case loadgen::ParamKind::Count:
      form = param_expectation(param).substr(2);  // "size from 4K to 64G"
      break;
    case loadgen::ParamKind::Choice: form = param_expectation(param); break;
  }
  // A default the scenario works out at run time (value 0, its help says how) is not a value.
  const bool states_default = param.help.find("default: ") != std::string::npos;
  if (states_default && param.help.back() == ')')
    return fmt::format("{}; {})", param.help.substr(0, param.help.size() - 1), form);
  if (states_default) return fmt::format("{} ({})", param.help, form);
  // "bytes per block (a multiple of 4k)": the form and default join its parenthesis.
  if (!param.help.empty() && param.help.back() == ')')
    return fmt::format("{}; {}; default: {})", param.help.substr(0, param.help.size() - 1), form,
                       param_default(param));
  return fmt::format("{} ({}; default: {})", param.help, form, param_default(param));
}

std::string param_type_name(const loadgen::Param& param) {
  switch (param.kind) {
    case loadgen::ParamKind::Size: return "SIZE";
    case loadgen::ParamKind::Duration: return "DURATION";
    case loadgen::ParamKind::Choice: return "NAME";
    case loadgen::ParamKind::Count: break;
  }
  return "COUNT";
}

std::optional<Nanos> duration_option(std::string_view flag, const std::string& text,
                                     std::string_view unit) {
  if (text.empty()) return std::nullopt;
  if (auto ns = parse_duration(text)) return ns;
  throw Failure(kExitUsage, duration_error(flag, text, unit));
}

std::optional<std::uint64_t> size_option(std::string_view flag, const std::string& text,
                                         std::string_view unit) {
  if (text.empty()) return std::nullopt;
  if (auto bytes = parse_size(text)) return bytes;
  throw Failure(kExitUsage, size_error(flag, text, unit));
}

}  // namespace wp
