// SPDX-License-Identifier: Apache-2.0
#include "loadgen/run_load.h"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <iostream>

#include "common/errors.h"

namespace wp::loadgen {

nlohmann::ordered_json result_json(const Scenario& scenario, const std::string& workspace,
                                   const ScenarioResult& result) {
  nlohmann::ordered_json doc;
  doc["scenario"] = scenario.name();
  doc["workspace"] = workspace;
  doc["figures"] = result.figures;
  return doc;
}

int run_load(Scenario& scenario, const LoadOptions& options) {
  if (scenario.needs_root() && ::geteuid() != 0)
    throw Failure(kExitRuntime, fmt::format("{} changes sysctls: it needs root", scenario.name()));
  if (std::string problem = scenario.validate(); !problem.empty())
    throw Failure(kExitUsage, fmt::format("{}: {}", scenario.name(), problem));

  // Taken first: mkfs and losetup must not inherit the tracer's socket.
  TracePhaseMarker marker;
  InterruptGuard interrupts;
  Workspace workspace(options.workspace, scenario.space_needed());
  LoadContext ctx(workspace, interrupts, marker, !options.json && ::isatty(STDOUT_FILENO));
  ScenarioResult result;
  try {
    result = scenario.run(ctx);
  } catch (const Interrupted&) {
    std::cerr << "writepath: interrupted; the scenario's files and settings are cleaned up\n";
    return 130;
  } catch (const LoadError& e) {
    throw Failure(kExitRuntime, fmt::format("{}: {}", scenario.name(), e.what()));
  }

  auto doc = result_json(scenario, workspace.describe(), result);
  if (options.result_file) {
    std::ofstream out(*options.result_file);
    out << doc.dump() << "\n";
  }
  if (options.json) {
    std::cout << doc.dump() << "\n";
  } else {
    std::cout << fmt::format("{}: {} (in {})\n", scenario.name(), scenario.summary(),
                             workspace.describe());
    for (const auto& line : result.lines) std::cout << "  " << line << "\n";
  }
  std::cout.flush();
  return 0;
}

}  // namespace wp::loadgen
