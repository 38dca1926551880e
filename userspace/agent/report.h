// SPDX-License-Identifier: Apache-2.0
// `writepath report FILE`: a recorded trace, stitched and printed as `trace` would have.
#pragma once

#include <string>

#include "sinks/sink.h"

namespace wp {

struct ReportOptions {
  std::string path;
  OutputFormat format = OutputFormat::Text;
  std::string output;  // "" = stdout
  Nanos min_latency_ns = 0;
  bool timestamps = false;  // text: the -T wall-clock column (needs the recording's offsets)
};

int run_report(const ReportOptions& options);

}  // namespace wp
