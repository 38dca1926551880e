#include "cli/parse.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace wp {

std::optional<Nanos> parse_duration(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(value) || value < 0) return std::nullopt;
  const std::string unit(end);
  double scale;
  if (unit.empty() || unit == "s")
    scale = 1e9;
  else if (unit == "ms")
    scale = 1e6;
  else if (unit == "us")
    scale = 1e3;
  else if (unit == "ns")
    scale = 1;
  else if (unit == "m")
    scale = 60e9;
  else if (unit == "h")
    scale = 3600e9;
  else
    return std::nullopt;
  double ns = value * scale;
  if (ns > 1.8e19) return std::nullopt;
  return static_cast<Nanos>(std::llround(ns));
}

std::optional<std::uint64_t> parse_size(const std::string& text) {
  if (text.empty() || text[0] == '-') return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(value) || value < 0) return std::nullopt;
  std::string unit(end);
  if (unit.size() == 3 && (unit[1] == 'i' || unit[1] == 'I') && (unit[2] == 'B' || unit[2] == 'b'))
    unit = unit.substr(0, 1);
  double scale;
  if (unit.empty() || unit == "B" || unit == "b")
    scale = 1;
  else if (unit == "k" || unit == "K")
    scale = 1024.0;
  else if (unit == "m" || unit == "M")
    scale = 1024.0 * 1024;
  else if (unit == "g" || unit == "G")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "t" || unit == "T")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else
    return std::nullopt;
  double bytes = value * scale;
  if (bytes > 1.8e19 || bytes != std::floor(bytes)) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
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
    case loadgen::ParamKind::Size: return fmt::format("a size from {} to {}", param.min, param.max);
    case loadgen::ParamKind::Duration:
      return fmt::format("a duration from {} to {}", param.min, param.max);
    case loadgen::ParamKind::Count: break;
  }
  return fmt::format("a count from {} to {}", param.min, param.max);
}

}  // namespace wp
