// SPDX-License-Identifier: Apache-2.0
// The scenario factories, one file each.
#pragma once

#include <memory>
#include <string>

#include "loadgen/scenario.h"

namespace wp::loadgen {

std::unique_ptr<Scenario> make_write_fsync();
std::unique_ptr<Scenario> make_wal();
std::unique_ptr<Scenario> make_group_commit();
std::unique_ptr<Scenario> make_cold_warm();
std::unique_ptr<Scenario> make_mmap_load();
std::unique_ptr<Scenario> make_odirect();
std::unique_ptr<Scenario> make_dirty_throttle();
std::unique_ptr<Scenario> make_noisy_neighbour();
std::unique_ptr<Scenario> make_atomic_save();
std::unique_ptr<Scenario> make_kv_tier();

}  // namespace wp::loadgen
