#include "loadgen/scenarios/scenarios.h"

#include <fmt/format.h>

#include "sinks/units.h"

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
  all.push_back(make_atomic_save());
  all.push_back(make_kv_tier());
  return all;
}

std::string fsync_phases_line(const SyncTimeline& sync) {
  const SyncPhases& p = sync.phases;
  return fmt::format(
      "{} {}: writeback {}, data-io {}, journal {}, flush {}, other {}",
      syscall_name(sync.call.syscall), human_duration(sync.call.end_ns - sync.call.start_ns),
      human_duration(p.writeback_ns), human_duration(p.data_io_ns), human_duration(p.journal_ns),
      human_duration(p.flush_ns), human_duration(p.other_ns));
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

}  // namespace wp::loadgen
