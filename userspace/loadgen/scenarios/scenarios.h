// The scenario factories (one file each) and what their explanations share.
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
std::unique_ptr<Scenario> make_atomic_save();
std::unique_ptr<Scenario> make_kv_tier();

// "fsync 5.20ms: writeback 0.40ms, data-io 1.10ms, journal 2.00ms, flush 1.50ms, other 0.20ms"
std::string fsync_phases_line(const SyncTimeline& sync);

// "16 of 16 writes durable by the end"
std::string durable_writes_line(const std::vector<Timeline>& timelines);

}  // namespace wp::loadgen
