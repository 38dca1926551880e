// SPDX-License-Identifier: Apache-2.0
// `writepath demo SCENARIO`: the scenario run as a traced command, then its figures next to
// what the tracer saw.
#pragma once

#include <string>
#include <vector>

#include "agent/trace_session.h"
#include "loadgen/scenario.h"

namespace wp {

// `load_args` are the arguments for `writepath load SCENARIO …` (scenario and workspace
// options); `trace` says where the full trace goes (-o, --format; none by default).
int run_demo(loadgen::Scenario& scenario, const std::vector<std::string>& load_args,
             TraceOptions trace);

}  // namespace wp
