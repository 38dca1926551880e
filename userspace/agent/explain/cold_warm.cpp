// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "agent/explain/explain.h"
#include "agent/explain/lines.h"
#include "common/units.h"

namespace wp::explain {

std::vector<std::string> explain_cold_warm(const loadgen::ScenarioResult&,
                                           const std::vector<Timeline>& timelines) {
  std::vector<std::string> out;
  std::size_t writes = 0, durable = 0;
  for (const auto& item : timelines) {
    if (const auto* w = std::get_if<WriteTimeline>(&item)) {
      ++writes;
      durable += w->state == WriteState::Durable;
    } else if (const auto* sync = std::get_if<SyncTimeline>(&item)) {
      // The fsync wrote the file out; the fdatasync before the page drop found it clean.
      out.push_back(fsync_phases_line(*sync));
    }
  }
  out.push_back(fmt::format("{} of {} writes durable after it", durable, writes));
  out.push_back(
      "the reads are not in the trace: the tracer follows writes and syncs; the figures above "
      "show what the page cache did for them");
  return out;
}

}  // namespace wp::explain
