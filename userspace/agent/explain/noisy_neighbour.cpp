// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <map>

#include "agent/explain/explain.h"
#include "common/units.h"
#include "loadgen/measure.h"
#include "sinks/text_sink.h"  // owner_text

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
  // Who the WAL's syncs beside the bulk waited behind, from the trace alone: its slowest sync's
  // first neighbour, and how many of its syncs named the bulk writer the figures say it was.
  const std::uint32_t wal_pid = figures["together"]["wal"].value("pid", std::uint32_t{0});
  const std::uint32_t bulk_pid = figures["together"]["bulk"].value("pid", std::uint32_t{0});
  const SyncTimeline* slowest = nullptr;
  std::uint64_t naming_bulk = 0;
  for (const auto& item : timelines) {
    const auto* sync = std::get_if<SyncTimeline>(&item);
    if (!sync || sync->call.pid != wal_pid) continue;
    if (!slowest || latency_ns(sync->call) > latency_ns(slowest->call)) slowest = sync;
    for (const Neighbour& n : sync->neighbours)
      if (n.owner.pid == bulk_pid) {
        ++naming_bulk;
        break;
      }
  }
  if (slowest && !slowest->neighbours.empty()) {
    const Neighbour& n = slowest->neighbours.front();
    out.push_back(fmt::format(
        "its slowest fdatasync beside the bulk, {}, waited behind {}: {} on {}, {:.0f} % of the "
        "bytes the disk wrote then{}",
        human_duration(latency_ns(slowest->call)), owner_text(n.owner), human_bytes(n.bytes),
        dev_string(n.disk), n.share * 100,
        n.owner.pid == bulk_pid ? " (the bulk writer)" : " (not the bulk writer)"));
  } else if (slowest) {
    out.push_back(fmt::format("its slowest fdatasync beside the bulk, {}, named no neighbour",
                              human_duration(latency_ns(slowest->call))));
  }
  out.push_back(fmt::format("{} of its fdatasyncs beside the bulk named the bulk writer (pid {})",
                            naming_bulk, bulk_pid));
  return out;
}

}  // namespace wp::explain
