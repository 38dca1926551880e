// SPDX-License-Identifier: Apache-2.0
// Failures that end a command, carrying the exit code the man page promises (EXIT STATUS):
// 1 runtime failure, 2 bad usage.
#pragma once

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace wp {

constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;
// writepath audit found crash-consistency hazards (0: none), for CI pipelines to test.
constexpr int kExitHazards = 3;
// The command of `-- CMD` cannot be run (not found, not executable): the shells' code.
constexpr int kExitCommandNotFound = 127;

// The text of the last call's errno, for "what: why" messages.
inline std::string errno_text() {
  return std::strerror(errno);
}

// The lines of an output that cannot be opened ("cannot write PATH: why") and of one a write to
// failed ("writing NAME: why"), the same for every file the agent writes.
inline std::string cannot_write(const std::string& path, const std::string& why) {
  return "cannot write " + path + ": " + why;
}
inline std::string write_failed(const std::string& name, const std::string& why) {
  return "writing " + name + ": " + why;
}

class Failure : public std::runtime_error {
 public:
  Failure(int exit_code, const std::string& message)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace wp
