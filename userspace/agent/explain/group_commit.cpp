// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "agent/explain/explain.h"
#include "common/units.h"
#include "loadgen/measure.h"

namespace wp::explain {

std::vector<std::string> explain_group_commit(const loadgen::ScenarioResult& result,
                                              const std::vector<Timeline>& timelines) {
  std::vector<Nanos> latency;
  for (const auto& item : timelines) {
    const auto* sync = std::get_if<SyncTimeline>(&item);
    if (sync && sync->call.syscall == Syscall::Fsync) latency.push_back(latency_ns(sync->call));
  }
  auto mode = [&](const char* key, const char* field) {
    return result.figures.contains(key) ? result.figures[key].value(field, std::uint64_t{0})
                                        : std::uint64_t{0};
  };
  const std::uint64_t per_record_fsyncs = mode("per_record", "fsyncs");
  const std::uint64_t group_fsyncs = mode("group", "fsyncs");
  std::vector<std::string> out;
  out.push_back(
      fmt::format("{} fsyncs traced, p50 {} (the load counted {}: {} per-record, {} group)",
                  latency.size(), human_duration(loadgen::summarize(latency).p50),
                  per_record_fsyncs + group_fsyncs, per_record_fsyncs, group_fsyncs));
  if (per_record_fsyncs && group_fsyncs)
    out.push_back(fmt::format(
        "records per fsync: {:.2f} per-record, {:.2f} group — the same fsync, carrying more",
        static_cast<double>(mode("per_record", "records")) / static_cast<double>(per_record_fsyncs),
        static_cast<double>(mode("group", "records")) / static_cast<double>(group_fsyncs)));
  return out;
}

}  // namespace wp::explain
