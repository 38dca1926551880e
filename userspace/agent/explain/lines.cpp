#include "agent/explain/lines.h"

#include <fmt/format.h>

#include "common/units.h"

namespace wp::explain {

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

}  // namespace wp::explain
