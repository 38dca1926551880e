// SPDX-License-Identifier: Apache-2.0
// The load generator's scenarios: the chapter's experiments, each a class that declares its
// options as data (the CLI binds them), runs in a LoadContext and returns measured figures.
// Scenarios know nothing of the tracer: `writepath demo` explains a run in agent/explain/.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace wp::loadgen {

class LoadContext;

enum class ParamKind {
  Count,     // a plain number: 200
  Size,      // bytes: 4k, 1M, 256MiB
  Duration,  // nanoseconds: 10ms, 5s
  Choice,    // one of `choices` by name: io_uring; the value is its index
};

// One scenario option, e.g. --count. `value` points into the scenario and holds the default.
struct Param {
  std::string flag;  // without dashes: "count"
  std::string help;
  ParamKind kind;
  std::uint64_t* value;
  std::uint64_t min;
  std::uint64_t max;
  std::vector<std::string> choices = {};  // Choice only: the names, in index order
};

// What a scenario measured: figures (JSON, machine-readable) and the lines a person reads.
struct ScenarioResult {
  nlohmann::ordered_json figures = nlohmann::ordered_json::object();
  std::vector<std::string> lines;
};

class Scenario {
 public:
  virtual ~Scenario() = default;
  virtual std::string name() const = 0;     // "write-fsync"
  virtual std::string summary() const = 0;  // one line for --help
  virtual std::vector<Param> params() = 0;
  // Bytes the scenario will put on the filesystem at most (checked against free space).
  virtual std::uint64_t space_needed() const = 0;
  // Root is required beyond the tracer's own needs (sysctls).
  virtual bool needs_root() const { return false; }
  // Checks combinations of options (single values are range-checked from params()); returns
  // an error message or "".
  virtual std::string validate() const { return ""; }
  virtual ScenarioResult run(LoadContext& ctx) = 0;
};

// Fresh instances of every scenario, in the chapter's order.
std::vector<std::unique_ptr<Scenario>> make_scenarios();

}  // namespace wp::loadgen
