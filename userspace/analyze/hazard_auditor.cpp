// SPDX-License-Identifier: Apache-2.0
// HazardAuditor's bookkeeping: the facts it keeps of each write and sync, the items it holds,
// and the replay at the end that gives each file its names and lifetimes before the sequence
// rules (hazard_sequence_rules.cpp) judge the held items.
#include "analyze/hazards.h"

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>

namespace wp {
namespace {

// A sync that makes the file durable (Full), one that does not though it looks as if it might
// (Wrong), one of every file (Global: sync, syncfs), or none of those (nullopt: failed).
std::optional<HazardAuditor::SyncKind> sync_kind(const SyncTimeline& sync) {
  using K = HazardAuditor::SyncKind;
  const SyscallEvent& call = sync.call;
  if (call.ret != 0) return std::nullopt;
  switch (call.syscall) {
    case Syscall::Sync:
    case Syscall::Syncfs: return K::Global;
    case Syscall::SyncFileRange:
    case Syscall::IoUringSyncFileRange: return K::Wrong;
    case Syscall::Msync: return (call.call_flags & call_flag::kMsSync) ? K::Full : K::Wrong;
    default: return K::Full;
  }
}

bool holds(const Timeline& item) {
  // A close changes no name and makes nothing durable: no rule waits on it.
  // Nor does a send: it is kept as a fact (HazardAuditor::take).
  if (const auto* ns = std::get_if<NameChangeTimeline>(&item))
    return ns->op != NameChangeOp::Close && ns->op != NameChangeOp::Send;
  const auto* sync = std::get_if<SyncTimeline>(&item);
  return sync && sync_kind(*sync) == HazardAuditor::SyncKind::Wrong;
}

}  // namespace

void HazardAuditor::take(Timeline&& item, const Out& out) {
  // A read changes nothing a crash could lose: no hazard, and no fact the rules keep.
  if (std::holds_alternative<ReadTimeline>(item)) {
    out(std::move(item));
    return;
  }
  add_hazards(item);
  const SyscallEvent& call = call_of(item);
  const FileKey file{call.dev, call.ino};
  // sync(2) names no file (and covers them all): kept under (0, 0).
  const auto* as_sync = std::get_if<SyncTimeline>(&item);
  const bool global = as_sync && sync_kind(*as_sync) == SyncKind::Global;
  if ((call.ino != 0 || global) && (files_.contains(file) || facts_ < max_facts_)) {
    FileFacts& facts = files_[file];
    const auto keep = [this](auto& list, auto fact) {
      list.push_back(std::move(fact));
      if (list.size() > kFactsPerFile)
        list.pop_front();
      else
        ++facts_;
    };
    if (const auto* write = std::get_if<WriteTimeline>(&item); write && call.ret > 0)
      keep(facts.writes, WriteFact{write->id, file, 0, call.start_ns, call_end(call),
                                   write->durable_ns, write->state == WriteState::Memory});
    if (const auto* sync = std::get_if<SyncTimeline>(&item))
      if (const auto kind = sync_kind(*sync))
        keep(facts.syncs,
             SyncFact{sync->id, file, 0, call.path, call.start_ns, call_end(call), *kind});
    // A path fact when the file's name changes, not per item.
    if (call.ino != 0 && !call.path.empty() && call.path != facts.last_path &&
        !std::holds_alternative<NameChangeTimeline>(item)) {
      facts.last_path = call.path;
      paths_.push_back({call.start_ns, call.path, file});
      ++facts_;
    }
  }
  if (const auto* ns = std::get_if<NameChangeTimeline>(&item);
      ns && ns->op == NameChangeOp::Send && ns->call.ret >= 0) {
    auto& list = sends_[ns->call.pid];
    if (list.size() < kFactsPerFile) list.push_back({ns->id, ns->call.start_ns, ns->call.fd});
  }
  if (!holds(item)) return out(std::move(item));
  held_.push_back(std::move(item));
  if (held_.size() > max_held_) {
    ++undecided_;
    out(std::move(held_.front()));
    held_.pop_front();
  }
}

void HazardAuditor::finish(const Out& out) {
  decide();
  std::sort(held_.begin(), held_.end(),
            [](const Timeline& a, const Timeline& b) { return id_of(a) < id_of(b); });
  for (auto& item : held_) out(std::move(item));
  held_.clear();
}

// Replays the trace in time order: which path names which file (each write's and sync's file
// under the path it had, and what the held name-change calls did to names), and each file's
// lifetimes, so that an inode number reused by a new file (ext4 hands a freed one out again at
// once) is not taken for the old one: a file's generation moves on when its last name goes
// (unlink, a rename over it) and when it is made or emptied again (an exclusive create, a
// truncating open). Then applies the rules, each within one generation of a file.
void HazardAuditor::decide() {
  writes_.clear();
  syncs_.clear();
  for (auto& [file, facts] : files_) {
    writes_.insert(writes_.end(), facts.writes.begin(), facts.writes.end());
    syncs_.insert(syncs_.end(), facts.syncs.begin(), facts.syncs.end());
  }
  enum Kind : std::uint8_t { kName, kWrite, kSync, kHeld };
  struct Step {
    Nanos at;
    Kind kind;
    std::size_t index;
  };
  std::vector<Step> order;
  order.reserve(paths_.size() + writes_.size() + syncs_.size() + held_.size());
  for (std::size_t i = 0; i < paths_.size(); ++i) order.push_back({paths_[i].at, kName, i});
  for (std::size_t i = 0; i < writes_.size(); ++i) order.push_back({writes_[i].start, kWrite, i});
  for (std::size_t i = 0; i < syncs_.size(); ++i) order.push_back({syncs_[i].start, kSync, i});
  for (std::size_t i = 0; i < held_.size(); ++i)
    order.push_back({call_end(call_of(held_[i])), kHeld, i});
  std::stable_sort(order.begin(), order.end(),
                   [](const Step& a, const Step& b) { return a.at < b.at; });

  std::map<std::string, FileKey> named;  // path → the file it names now
  std::map<FileKey, std::uint32_t> names_of, generation;
  // Its last name gone: the file's lifetime ends, deleted (unlink) or replaced (renamed over).
  const auto unname = [&](std::map<std::string, FileKey>::iterator it, bool deleted) {
    const FileKey file = it->second;
    named.erase(it);
    if (--names_of[file] != 0) return;
    if (deleted) deleted_.insert({file, generation[file]});
    ++generation[file];
  };
  const auto name = [&](const std::string& path, FileKey file) {
    auto it = named.find(path);
    if (it != named.end() && it->second == file) return;
    if (it != named.end()) {
      // What we knew of the old file under this name was only what its items said: no
      // removal is implied (the kernel said the inode now has this name), so no new generation.
      --names_of[it->second];
      it->second = file;
    } else {
      named.emplace(path, file);
    }
    ++names_of[file];
  };
  // Whether a path names a file, as far as the trace can tell: true once a file was seen
  // under it or a call made it or failed because it existed (mv tries RENAME_NOREPLACE
  // first), false once a call removed it or failed for want of it (PostgreSQL unlinks its
  // cache files at startup, whether or not they are there); absent from the map: unknown.
  std::map<std::string, bool> present;
  const auto seen = [&](const std::string& path, bool is) {
    if (!path.empty()) present[path] = is;
  };
  std::vector<std::optional<GenKey>> moved(held_.size());
  replaced_.assign(held_.size(), std::nullopt);
  for (const Step& step : order) {
    switch (step.kind) {
      case kName:
        name(paths_[step.index].path, paths_[step.index].file);
        seen(paths_[step.index].path, true);
        continue;
      case kWrite: writes_[step.index].gen = generation[writes_[step.index].file]; continue;
      case kSync: syncs_[step.index].gen = generation[syncs_[step.index].file]; continue;
      case kHeld: break;
    }
    auto* ns = std::get_if<NameChangeTimeline>(&held_[step.index]);
    if (!ns) continue;
    const std::string& from = ns->paths[0];
    const std::string& to = ns->paths[1];
    if (ns->call.ret < 0) {
      const bool two = ns->op == NameChangeOp::Rename || ns->op == NameChangeOp::Link;
      if (ns->call.ret == -EEXIST) seen(two ? to : from, true);
      if (ns->call.ret == -ENOENT && (ns->op == NameChangeOp::Unlink || two)) seen(from, false);
      continue;
    }
    switch (ns->op) {
      case NameChangeOp::Open:
      case NameChangeOp::Mkdir: seen(from, true); break;
      case NameChangeOp::Unlink:
      case NameChangeOp::Rmdir: seen(from, false); break;
      case NameChangeOp::Rename:
        if (ns->flags & WP_NS_EXCHANGE) break;  // both names stay taken
        if (ns->flags & WP_NS_NOREPLACE)
          replaced_[step.index] = false;  // it would have failed with EEXIST
        else if (const auto it = present.find(to); it != present.end())
          replaced_[step.index] = it->second;
        seen(from, false);
        seen(to, true);
        break;
      case NameChangeOp::Link: seen(to, true); break;
      default: break;
    }
    switch (ns->op) {
      case NameChangeOp::Open: {
        if (!ns->call.ino || from.empty() || (ns->flags & WP_NS_DIR)) break;
        const FileKey file{ns->call.dev, ns->call.ino};
        if (ns->flags & (WP_NS_EXCL | WP_NS_TRUNC)) ++generation[file];  // made or emptied
        name(from, file);
        moved[step.index] = GenKey{file, generation[file]};
        break;
      }
      case NameChangeOp::Rename:
      case NameChangeOp::Link: {
        auto it = named.find(from);
        if (from.empty() || to.empty() || it == named.end()) break;
        const FileKey file = it->second;
        moved[step.index] = GenKey{file, generation[file]};
        if (ns->flags & WP_NS_EXCHANGE) {
          auto other = named.find(to);
          if (other != named.end()) {
            const FileKey swapped = other->second;
            other->second = file;
            it->second = swapped;
          } else {
            named.erase(it);
            named[to] = file;
          }
          break;
        }
        if (auto over = named.find(to); over != named.end() && over->second != file)
          unname(over, false);  // the file renamed over loses this name
        if (ns->op == NameChangeOp::Rename) {
          named.erase(it);
          --names_of[file];
        }
        name(to, file);
        break;
      }
      case NameChangeOp::Unlink:
      case NameChangeOp::Rmdir:
        if (auto it = named.find(from); it != named.end()) unname(it, true);
        break;
      default: break;
    }
  }
  index_ = {};
  for (const WriteFact& w : writes_) index_.writes[{w.file, w.gen}].push_back(&w);
  for (const SyncFact& f : syncs_) {
    index_.sync_by_id[f.id] = &f;
    if (f.kind == SyncKind::Wrong) {
      index_.syncs[{f.file, f.gen}].push_back(&f);
      continue;
    }
    if (f.kind == SyncKind::Global) {
      index_.global_syncs.push_back(&f);
      continue;
    }
    index_.syncs[{f.file, f.gen}].push_back(&f);
    index_.full_syncs[f.file].push_back(&f);
    if (!f.path.empty()) index_.full_syncs_of_path[f.path].push_back(&f);
  }
  for (const Timeline& item : held_) {
    const auto* ns = std::get_if<NameChangeTimeline>(&item);
    if (!ns || ns->call.ret < 0 || ns->paths[0].empty()) continue;
    if (ns->op == NameChangeOp::Unlink || ns->op == NameChangeOp::Rmdir ||
        (ns->op == NameChangeOp::Rename && !(ns->flags & WP_NS_EXCHANGE)))
      index_.removed[ns->paths[0]].push_back(ns->call.start_ns);
  }
  for (auto& [path, times] : index_.removed) std::sort(times.begin(), times.end());
  // (writes_ and syncs_ are in emission order; the rules want time order within a file.)
  for (auto& [file, list] : index_.writes)
    std::sort(list.begin(), list.end(),
              [](const WriteFact* a, const WriteFact* b) { return a->start < b->start; });
  const auto by_start = [](const SyncFact* a, const SyncFact* b) { return a->start < b->start; };
  for (auto& [file, list] : index_.syncs) std::sort(list.begin(), list.end(), by_start);
  for (auto& [file, list] : index_.full_syncs) std::sort(list.begin(), list.end(), by_start);
  for (auto& [path, list] : index_.full_syncs_of_path)
    std::sort(list.begin(), list.end(), by_start);
  std::sort(index_.global_syncs.begin(), index_.global_syncs.end(), by_start);

  for (std::size_t h = 0; h < held_.size(); ++h) {
    if (auto* ns = std::get_if<NameChangeTimeline>(&held_[h]))
      hazards_of(*ns, moved[h] ? &*moved[h] : nullptr, replaced_[h]);
    else if (auto* sync = std::get_if<SyncTimeline>(&held_[h]))
      hazards_of(*sync);
  }
}

}  // namespace wp
