// SPDX-License-Identifier: Apache-2.0
#include "agent/explain/explain.h"

#include <fmt/format.h>

#include <map>

#include "common/errors.h"

namespace wp::explain {

std::vector<std::string> explain_run(const std::string& scenario,
                                     const loadgen::ScenarioResult& result,
                                     const std::vector<Timeline>& timelines) {
  using Explainer =
      std::vector<std::string> (*)(const loadgen::ScenarioResult&, const std::vector<Timeline>&);
  static const std::map<std::string, Explainer> kExplainers = {
      {"write-fsync", explain_write_fsync},       {"wal", explain_wal},
      {"group-commit", explain_group_commit},     {"cold-warm", explain_cold_warm},
      {"mmap-load", explain_mmap_load},           {"odirect", explain_odirect},
      {"dirty-throttle", explain_dirty_throttle}, {"noisy-neighbour", explain_noisy_neighbour},
      {"atomic-save", explain_atomic_save},       {"kv-tier", explain_kv_tier}};
  auto it = kExplainers.find(scenario);
  if (it == kExplainers.end())
    throw Failure(kExitRuntime, fmt::format("no explanation for scenario {}", scenario));
  return it->second(result, timelines);
}

bool explains_reads(const std::string& scenario) {
  return scenario == "cold-warm" || scenario == "mmap-load";
}

}  // namespace wp::explain
