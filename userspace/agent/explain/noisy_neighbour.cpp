// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <map>

#include "agent/explain/explain.h"
#include "common/units.h"
#include "loadgen/measure.h"

namespace wp::explain {

namespace {

// The traced syncs' latencies of the process `pid` names in the figures (0: none).
std::vector<Nanos> traced_syncs_of(const std::map<std::uint32_t, std::vector<Nanos>>& by_pid,
                                   const nlohmann::ordered_json& writer) {
  const auto it = by_pid.find(writer.value("pid", std::uint32_t{0}));
  return it == by_pid.end() ? std::vector<Nanos>{} : it->second;
}

}  // namespace

std::vector<std::string> explain_noisy_neighbour(const loadgen::ScenarioResult& result,
                                                 const std::vector<Timeline>& timelines) {
  // Each phase's writers are processes of their own: the figures name their pids.
  std::map<std::uint32_t, std::vector<Nanos>> syncs_by_pid;
  for (const auto& item : timelines)
    if (const auto* sync = std::get_if<SyncTimeline>(&item))
      syncs_by_pid[sync->call.pid].push_back(latency_ns(sync->call));
  const auto& figures = result.figures;
  const std::uint64_t count = figures.value("count", std::uint64_t{0});
  const auto alone = loadgen::summarize(traced_syncs_of(syncs_by_pid, figures["wal_alone"]));
  const auto beside = loadgen::summarize(traced_syncs_of(syncs_by_pid, figures["together"]["wal"]));
  const auto bulk = loadgen::summarize(traced_syncs_of(syncs_by_pid, figures["together"]["bulk"]));
  std::vector<std::string> out;
  out.push_back(fmt::format("wal-writer alone: {} fdatasyncs traced (it made {}), p50 {}",
                            alone.count, count, human_duration(alone.p50)));
  out.push_back(fmt::format("wal-writer beside the bulk: {} fdatasyncs traced (it made {}), p50 {}",
                            beside.count, count, human_duration(beside.p50)));
  if (bulk.count)
    out.push_back(fmt::format("bulk-writer's sync traced: {}", human_duration(bulk.max)));
  else
    out.push_back("the tracer saw no sync of the bulk-writer");
  return out;
}

}  // namespace wp::explain
