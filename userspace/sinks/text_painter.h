// SPDX-License-Identifier: Apache-2.0
// The text outputs' colours: ANSI SGR wrapping, a no-op when color is off.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace wp {

class Painter {
 public:
  explicit Painter(bool enabled) : enabled_(enabled) {}
  std::string bold(std::string_view text) const { return paint("1", text); }
  std::string green(std::string_view text) const { return paint("32", text); }
  std::string yellow(std::string_view text) const { return paint("33", text); }
  std::string red(std::string_view text) const { return paint("31", text); }
  std::string magenta(std::string_view text) const { return paint("35", text); }
  std::string dim(std::string_view text) const { return paint("2", text); }

 private:
  std::string paint(std::string_view code, std::string_view text) const {
    if (!enabled_) return std::string(text);
    return fmt::format("\x1b[{}m{}\x1b[0m", code, text);
  }
  bool enabled_;
};

}  // namespace wp
