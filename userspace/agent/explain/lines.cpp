// SPDX-License-Identifier: Apache-2.0
#include "agent/explain/lines.h"

#include <fmt/format.h>

#include "common/units.h"

namespace wp::explain {

std::string fsync_phases_line(const SyncTimeline& sync) {
  std::string line =
      fmt::format("{} {}", call_name(sync.call), human_duration(latency_ns(sync.call)));
  const char* separator = ":";
  for (const SyncPhaseInfo& phase : kSyncPhases) {
    line += fmt::format("{} {} {}", separator, phase.text_name,
                        human_duration(sync.phases.*phase.total));
    separator = ",";
  }
  return line;
}

std::string durable_writes_line(const std::vector<Timeline>& timelines) {
  std::size_t durable = 0, writes = 0;
  for (const auto& item : timelines) {
    if (const auto* w = std::get_if<WriteTimeline>(&item)) {
      ++writes;
      durable += w->state == WriteState::Durable;
    }
  }
  return fmt::format("{} of {} writes durable by the end", durable, writes);
}

}  // namespace wp::explain
