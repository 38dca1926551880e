// SPDX-License-Identifier: Apache-2.0
#include "loadgen/scenarios/scenarios.h"

namespace wp::loadgen {

std::vector<std::unique_ptr<Scenario>> make_scenarios() {
  std::vector<std::unique_ptr<Scenario>> all;
  all.push_back(make_write_fsync());
  all.push_back(make_wal());
  all.push_back(make_group_commit());
  all.push_back(make_cold_warm());
  all.push_back(make_mmap_load());
  all.push_back(make_odirect());
  all.push_back(make_dirty_throttle());
  all.push_back(make_noisy_neighbour());
  all.push_back(make_atomic_save());
  all.push_back(make_kv_tier());
  return all;
}

}  // namespace wp::loadgen
