// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "agent/explain/explain.h"
#include "agent/explain/lines.h"
#include "common/units.h"

namespace wp::explain {

std::vector<std::string> explain_write_fsync(const loadgen::ScenarioResult&,
                                             const std::vector<Timeline>& timelines) {
  std::vector<std::string> out;
  for (const auto& item : timelines) {
    const auto* sync = std::get_if<SyncTimeline>(&item);
    if (!sync || sync->call.syscall != Syscall::Fsync) continue;
    out.push_back(fsync_phases_line(*sync));
    out.push_back(fmt::format("its {} data requests, {} cache flushes, {} journal commits",
                              sync->requests.size(), sync->flushes.size(), sync->commits.size()));
  }
  out.push_back(durable_writes_line(timelines));
  return out;
}

}  // namespace wp::explain
