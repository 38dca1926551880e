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

void JournalTracker::sweep(Nanos horizon) {
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
