// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "agent/explain/explain.h"
#include "agent/explain/lines.h"
#include "analyze/hazards.h"
#include "common/units.h"
#include "loadgen/measure.h"

namespace wp::explain {

std::vector<std::string> explain_atomic_save(const loadgen::ScenarioResult&,
                                             const std::vector<Timeline>& timelines) {
  // Files are told apart by inode and time. The directory is the synced inode nobody wrote
  // to. A write was part of a safe save if its inode was fsynced after it: inode numbers are
  // reused (each rename frees the old checkpoint's, and the naive file, made later, may get
  // it), so the inode alone cannot tell.
  std::set<std::uint64_t> written;
  for (const auto& item : timelines)
    if (const auto* w = std::get_if<WriteTimeline>(&item)) written.insert(w->call.ino);
  std::vector<Nanos> file_fsyncs, dir_fsyncs;
  std::map<std::uint64_t, Nanos> last_fsync_start;  // by inode, files only
  const SyncTimeline* last_file = nullptr;
  const SyncTimeline* last_dir = nullptr;
  for (const auto& item : timelines) {
    const auto* sync = std::get_if<SyncTimeline>(&item);
    if (!sync || sync->call.syscall != Syscall::Fsync) continue;
    const Nanos latency = latency_ns(sync->call);
    if (!written.contains(sync->call.ino)) {
      dir_fsyncs.push_back(latency);
      last_dir = sync;
      continue;
    }
    file_fsyncs.push_back(latency);
    last_file = sync;
    Nanos& start = last_fsync_start[sync->call.ino];
    start = std::max(start, sync->call.start_ns);
  }
  std::vector<std::string> out;
  out.push_back(fmt::format("{} fsyncs of the temporary files, p50 {}; {} of the directory, p50 {}",
                            file_fsyncs.size(), human_duration(loadgen::summarize(file_fsyncs).p50),
                            dir_fsyncs.size(), human_duration(loadgen::summarize(dir_fsyncs).p50)));
  if (last_file) out.push_back("the last file " + fsync_phases_line(*last_file));
  if (last_dir) {
    // ext4 with a journal commits the rename; xfs and btrfs write their log from the fsync
    // itself; ext4 without a journal writes the directory's blocks.
    const char* how = !last_dir->commits.empty()            ? "a journal commit carried the rename"
                      : !last_dir->journal_requests.empty() ? "its own log write carried the rename"
                      : !last_dir->requests.empty() ? "no journal: it wrote the directory itself"
                                                    : "the rename was already on the device";
    out.push_back(fmt::format("the last directory {} ({})", fsync_phases_line(*last_dir), how));
  }

  // The naive saves' state when the scenario's last call returned: the trace goes on while
  // the workspace is torn down, and unmounting a scratch filesystem syncs it.
  Nanos finished_ns = 0;
  for (const auto& item : timelines)
    finished_ns =
        std::max(finished_ns, std::visit([](const auto& t) { return t.call.end_ns; }, item));
  std::size_t safe_writes = 0, safe_durable = 0, naive_writes = 0, naive_durable = 0,
              naive_written = 0, naive_durable_later = 0;
  for (const auto& item : timelines) {
    const auto* w = std::get_if<WriteTimeline>(&item);
    if (!w) continue;
    auto synced = last_fsync_start.find(w->call.ino);
    if (synced != last_fsync_start.end() && synced->second >= w->call.end_ns) {
      ++safe_writes;
      safe_durable += w->state == WriteState::Durable;
      continue;
    }
    ++naive_writes;
    auto by_end = [&](const std::optional<Nanos>& t) { return t && *t <= finished_ns; };
    naive_durable += by_end(w->durable_ns);
    naive_written += !by_end(w->durable_ns) && by_end(w->written_ns);
    naive_durable_later += w->durable_ns && !by_end(w->durable_ns);
  }
  out.push_back(fmt::format("safe saves: {} of {} writes durable", safe_durable, safe_writes));
  out.push_back(fmt::format(
      "naive overwrites, when the scenario finished: {} of {} writes durable, {} written to "
      "the device but not flushed, {} still dirty in the page cache",
      naive_durable, naive_writes, naive_written, naive_writes - naive_durable - naive_written));
  if (naive_durable_later)
    out.push_back(
        fmt::format("({} of them became durable only afterwards, when the "
                    "workspace was synced on its way out)",
                    naive_durable_later));

  // The saves' sequence as the hazard rules judged it (--unsafe RULE makes one mistake).
  std::map<std::string, std::size_t> hazards;
  for (const auto& item : timelines)
    std::visit(
        [&](const auto& t) {
          for (const Hazard& h : t.hazards) ++hazards[h.rule];
        },
        item);
  if (hazards.empty()) {
    out.push_back(
        "no crash-consistency hazard: each save synced its file before the rename and the "
        "directory after it (the naive overwrite renames nothing; its risk is the "
        "not-durable count above)");
  }
  for (const auto& [rule, count] : hazards) {
    const auto it = std::find_if(hazard_rules().begin(), hazard_rules().end(),
                                 [&](const HazardRuleInfo& r) { return rule == r.name; });
    out.push_back(
        fmt::format("HAZARD {} ×{}: {}", rule, count, it == hazard_rules().end() ? "" : it->fix));
  }
  return out;
}

}  // namespace wp::explain
