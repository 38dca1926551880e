// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "agent/explain/explain.h"
#include "agent/explain/lines.h"
#include "common/units.h"

namespace wp::explain {

std::vector<std::string> explain_mmap_load(const loadgen::ScenarioResult& result,
                                           const std::vector<Timeline>& timelines) {
  std::vector<std::string> out;
  std::uint64_t writes = 0, bytes = 0, pages_dirtied = 0, durable = 0;
  for (const auto& item : timelines) {
    const auto* w = std::get_if<WriteTimeline>(&item);
    if (!w || !(w->call.file_flags & file_flag::kRegular)) continue;
    ++writes;
    bytes += bytes_written(w->call);
    pages_dirtied += w->call.pages_dirtied;
    durable += w->state == WriteState::Durable;
  }
  out.push_back(fmt::format(
      "generating the file: {} writes, {}, {} pages dirtied; {} of them durable by the end", writes,
      human_bytes(bytes), pages_dirtied, durable));
  for (const auto& item : timelines)
    if (const auto* sync = std::get_if<SyncTimeline>(&item);
        sync && sync->call.syscall == Syscall::Fsync) {
      out.push_back(fsync_phases_line(*sync));
      out.push_back(fmt::format("its {} data requests, {} cache flushes, {} journal commits",
                                sync->requests.size(), sync->flushes.size(), sync->commits.size()));
    }
  // The loads themselves are reads: the tracer follows the write path, so the figures are
  // the process's own counters.
  const auto& f = result.figures;
  if (f.contains("lazy") && f.contains("eager")) {
    out.push_back(
        fmt::format("the loads are reads, which the tracer does not follow: lazy read {}, eager {} "
                    "(process counters)",
                    human_bytes(f["lazy"].value("read_bytes", std::uint64_t{0})),
                    human_bytes(f["eager"].value("read_bytes", std::uint64_t{0}))));
  }
  return out;
}

}  // namespace wp::explain
