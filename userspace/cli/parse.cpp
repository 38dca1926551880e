#include "cli/parse.h"

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

}  // namespace wp
