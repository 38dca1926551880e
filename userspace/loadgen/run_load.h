// SPDX-License-Identifier: Apache-2.0
// `writepath load SCENARIO`: set up the workspace, run, report, clean up.
#pragma once

#include <optional>
#include <string>

#include "loadgen/context.h"
#include "loadgen/scenario.h"

namespace wp::loadgen {

struct LoadOptions {
  WorkspaceOptions workspace;
  bool json = false;
  std::optional<std::string> result_file;  // also write the JSON result here (writepath demo)
};

// Runs the scenario; returns the exit code. Throws Failure for bad usage and set-up failures.
int run_load(Scenario& scenario, const LoadOptions& options);

// The JSON document of a result, as `--json` prints it.
nlohmann::ordered_json result_json(const Scenario& scenario, const std::string& workspace,
                                   const ScenarioResult& result);

}  // namespace wp::loadgen
