// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "agent/explain/explain.h"
#include "agent/explain/lines.h"
#include "analyze/summaries.h"
#include "common/units.h"

namespace wp::explain {

namespace {

// "cold read: 32 reads, 32 MiB in 37.9ms; 8192 pages brought in from the device (7936 by
// readahead), 7936 found cached, hit 0.0 %; the load's own count: 32.0 MiB from storage". A
// page its readahead brought in before a read reached it counts as found cached by that read,
// and as a miss in the hit ratio (FileReads::hit_ratio).
std::string pass_line(const char* name, const ReadFileSummary& pass, double storage_bytes) {
  const std::vector<FileReads> files = pass.files();
  if (files.empty()) return fmt::format("{}: the trace has no read of the file", name);
  const FileReads& f = files.front();
  const std::optional<double> hit = f.hit_ratio();
  return fmt::format(
      "{}: {}, {} in {}; {} brought in from the device ({} by readahead), {} found cached, hit "
      "{}; the load's own count: {:.1f} MiB from storage",
      name, plural(f.reads, "read", "reads"), human_bytes(f.bytes), human_duration(f.latency_ns),
      plural(f.pages_from_device + f.readahead_pages, "page", "pages"), f.readahead_pages,
      f.pages_cached, hit ? fmt::format("{:.1f} %", 100.0 * *hit) : std::string("-"),
      storage_bytes / 1048576.0);
}

}  // namespace

// The load writes the file (its figure "file"), syncs it, drops its pages and reads it through
// twice: the second pass starts where a read of it goes back to offset 0. (Its other reads, of
// /proc/self/io for its storage counter, are not the scenario's.)
std::vector<std::string> explain_cold_warm(const loadgen::ScenarioResult& result,
                                           const std::vector<Timeline>& timelines) {
  std::vector<std::string> out;
  std::size_t writes = 0, durable = 0;
  const std::string file = result.figures.value("file", "");
  ReadFileSummary passes[2];
  std::size_t pass = 0;
  bool read_before = false;
  for (const auto& item : timelines) {
    if (const auto* w = std::get_if<WriteTimeline>(&item)) {
      ++writes;
      durable += w->state == WriteState::Durable;
    } else if (const auto* sync = std::get_if<SyncTimeline>(&item)) {
      // The fsync wrote the file out; the fdatasync before the page drop found it clean.
      out.push_back(fsync_phases_line(*sync));
    } else if (const auto* read = std::get_if<ReadTimeline>(&item);
               read && !file.empty() && read->call.path == file) {
      if (read_before && read->call.pos == 0 && pass == 0) pass = 1;
      read_before = true;
      passes[pass].add(*read);
    }
  }
  out.push_back(fmt::format("{} of {} writes durable after it", durable, writes));
  const auto figure = [&result](const char* key) {
    return result.figures.contains(key) ? result.figures[key].get<double>() : 0.0;
  };
  out.push_back(pass_line("cold read", passes[0], figure("cold_storage_read_bytes")));
  out.push_back(pass_line("warm read", passes[1], figure("warm_storage_read_bytes")));
  return out;
}

}  // namespace wp::explain
