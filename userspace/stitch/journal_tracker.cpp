// SPDX-License-Identifier: Apache-2.0
#include "stitch/journal_tracker.h"

#include <algorithm>

#include "stitch/io_state.h"

namespace wp::stitch {

void JournalTracker::on_journal(const JournalEvent& ev) {
  const std::uint64_t key = (static_cast<std::uint64_t>(ev.dev) << 32) | ev.transaction;
  std::shared_ptr<JournalCommit> commit;
  if (auto it = open_.find(key); it != open_.end()) commit = it->second;
  if (!commit || ev.phase == JournalPhase::Start) {
    commit = std::make_shared<JournalCommit>();
    commit->dev = ev.dev;
    commit->transaction = ev.transaction;
    open_[key] = commit;
    auto& list = commits_[ev.dev];
    list.push_back(commit);
    trim_count(list, limits_.max_history_per_key);
  }
  switch (ev.phase) {
    case JournalPhase::Start: commit->start_ns = ev.ts; break;
    case JournalPhase::Locking: commit->locking_ns = ev.ts; break;
    case JournalPhase::Flushing: commit->flushing_ns = ev.ts; break;
    case JournalPhase::Logging: commit->logging_ns = ev.ts; break;
    case JournalPhase::End:
      commit->end_ns = ev.ts;
      open_.erase(key);
      break;
  }
}

void JournalTracker::on_fs_log(const FsLogEvent& ev) {
  switch (ev.kind) {
    case FsLogKind::XfsForce: {
      auto& list = forces_[ev.tid];
      list.push_back(LogForce{ev.ts, ev.dev});
      trim_count(list, limits_.max_history_per_key);
      break;
    }
    case FsLogKind::XfsIclogDone: {
      auto& list = log_writes_done_[ev.dev];
      list.push_back(ev.ts);
      trim_count(list, limits_.max_history_per_key);
      break;
    }
    case FsLogKind::XfsIclogSync: break;  // the log write's own request says when it ran
  }
}

std::optional<std::pair<Nanos, Nanos>> JournalTracker::log_force_span(std::uint32_t tid, DevT dev,
                                                                      Nanos start,
                                                                      Nanos end) const {
  auto forces = forces_.find(tid);
  if (forces == forces_.end()) return std::nullopt;
  std::optional<Nanos> first_force;
  for (const LogForce& f : forces->second)
    if (f.dev == dev && f.ts >= start && f.ts <= end) {
      first_force = f.ts;
      break;
    }
  if (!first_force) return std::nullopt;
  auto done = log_writes_done_.find(dev);
  if (done == log_writes_done_.end()) return std::nullopt;
  std::optional<Nanos> last_done;
  for (auto t = done->second.rbegin(); t != done->second.rend(); ++t) {
    if (*t > end) continue;
    if (*t > *first_force) last_done = *t;
    break;
  }
  if (!last_done) return std::nullopt;
  return std::pair{*first_force, *last_done};
}

void JournalTracker::sweep(Nanos horizon) {
  for (auto it = forces_.begin(); it != forces_.end();) {
    prune_older(it->second, horizon, [](const LogForce& f) { return f.ts; });
    it = it->second.empty() ? forces_.erase(it) : std::next(it);
  }
  for (auto it = log_writes_done_.begin(); it != log_writes_done_.end();) {
    prune_older(it->second, horizon, [](Nanos t) { return t; });
    it = it->second.empty() ? log_writes_done_.erase(it) : std::next(it);
  }
  for (auto it = commits_.begin(); it != commits_.end();) {
    prune_older(it->second, horizon,
                [](const auto& c) { return c->end_ns.value_or(first_known(*c).value_or(0)); });
    it = it->second.empty() ? commits_.erase(it) : std::next(it);
  }
  for (auto it = open_.begin(); it != open_.end();) {
    it = first_known(*it->second).value_or(0) < horizon ? open_.erase(it) : std::next(it);
  }
}

std::vector<JournalCommit> JournalTracker::overlapping(DevT dev, Nanos start, Nanos end) const {
  std::vector<JournalCommit> found;
  auto collect = [&](const std::deque<std::shared_ptr<JournalCommit>>& list) {
    for (auto c = list.rbegin(); c != list.rend(); ++c) {
      const JournalCommit& commit = **c;
      if (commit.end_ns && *commit.end_ns < start) break;  // commits of a journal run in turn
      if (first_known(commit).value_or(0) > end) continue;
      found.push_back(commit);
    }
  };
  if (dev == 0) {
    for (const auto& [d, list] : commits_) collect(list);
  } else if (auto it = commits_.find(dev); it != commits_.end()) {
    collect(it->second);
  }
  std::sort(found.begin(), found.end(), [](const JournalCommit& a, const JournalCommit& b) {
    return first_known(a) < first_known(b);
  });
  return found;
}

}  // namespace wp::stitch
