// SPDX-License-Identifier: Apache-2.0
#include "analyze/hazards.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <map>
#include <optional>
#include <type_traits>

#include "common/units.h"

namespace wp {
namespace {

constexpr std::array kRules = {
    HazardRuleInfo{
        .name = "lost-but-acknowledged",
        .why = "the sync returned 0 although writeback of this file had already failed and "
               "lost data: the error went to another file description, another sync, or "
               "nowhere (errseq reports an error once per open file), so the application "
               "believes data is durable that no disk holds",
        .file_systems = "all (the page cache's writeback error reporting, since Linux 4.13)",
        .reference = "PostgreSQL's fsyncgate (2018); Rebello et al., \"Can Applications "
                     "Recover from fsync Failures?\", USENIX ATC 2020",
        .fix = "treat a failed fsync as fatal and keep the file open from write to sync; "
               "check the other syncs of the file listed in `related`"},
    HazardRuleInfo{
        .name = "direct-not-durable",
        .why = "an O_DIRECT write bypasses the page cache, not the device's volatile write "
               "cache: it reached the device, but no cache FLUSH or FUA write covered it "
               "before the trace ended, so a power loss can still lose it",
        .file_systems = "all, on devices with a volatile write cache (queue/write_cache says "
                        "\"write back\")",
        .reference = "Linux Documentation/block/writeback_cache_control.rst; open(2), "
                     "NOTES on O_DIRECT",
        .fix = "open with O_DSYNC as well (FUA or a flush per write), or fdatasync after the "
               "writes that must survive"},
    HazardRuleInfo{
        .name = "rename-of-unsynced-data",
        .why = "the file was renamed over another while data written to it was not yet "
               "durable: after a crash the new name can be durable before the data, and the "
               "application finds an empty or half-written file where the old one was (a "
               "name the trace saw free counts only for a file the application synced)",
        .file_systems = "all; ext4's auto_da_alloc starts writeback of a file renamed over "
                        "another, which narrows the window but makes nothing durable, and xfs "
                        "and btrfs have no such heuristic",
        .reference = "Pillai et al., \"All File Systems Are Not Created Equal\" (ALICE), OSDI "
                     "2014; ext4(5), auto_da_alloc",
        .fix = "fsync (or fdatasync) the file after its last write and before the rename"},
    HazardRuleInfo{
        .name = "write-after-fsync-before-rename",
        .why = "the file was synced, then written again, then renamed: the rename publishes "
               "data the sync did not cover, so a crash can leave the new name with the "
               "later write missing or torn",
        .file_systems = "all: no file system orders a later write before a rename",
        .reference = "Pillai et al., ALICE, OSDI 2014 (ordering vulnerabilities)",
        .fix = "move the sync after the last write, right before the rename"},
    HazardRuleInfo{
        .name = "name-not-durable",
        .why = "a name was made (a rename, or a link to data the application synced) and kept, "
               "but neither the directory holding it nor the file was synced afterwards by a "
               "traced process before the trace ended, or before the process's next reply "
               "(its first socket send after the name): a crash can lose the name, so the "
               "data is unreachable or the old file comes back after the client was told",
        .file_systems = "all; on ext4, xfs and btrfs an fsync of the file itself after the "
                        "rename also carries its name (so does a later journal commit, but "
                        "nothing says when); fsync(2): \"an explicit fsync() on a file "
                        "descriptor for the directory is also needed\"",
        .reference = "fsync(2), NOTES; Pillai et al., ALICE, OSDI 2014",
        .fix = "open the directory (O_RDONLY|O_DIRECTORY) and fsync it after the rename or "
               "create"},
    HazardRuleInfo{
        .name = "sync-of-the-wrong-thing",
        .why = "the last sync of the file was sync_file_range(2) or msync(MS_ASYNC): "
               "sync_file_range writes data pages only, no metadata and no device cache "
               "flush, and MS_ASYNC starts no I/O at all, so neither makes the file durable",
        .file_systems = "all: both are file-system independent in what they leave out",
        .reference = "sync_file_range(2), \"Warning\"; msync(2)",
        .fix = "use fsync or fdatasync (msync(MS_SYNC) for a mapping) where durability is "
               "needed; keep sync_file_range for starting writeback early"},
};

// kRules' indices, so that a hazard's rule is the documented rule's name.
constexpr std::size_t kLostButAcknowledged = 0, kDirectNotDurable = 1, kRenameUnsynced = 2,
                      kWriteAfterSync = 3, kNameNotDurable = 4, kWrongSync = 5;

Hazard lost_but_acknowledged(const SyncTimeline& sync) {
  return Hazard{
      .rule = kRules[kLostButAcknowledged].name,
      .detail = fmt::format("{} returned 0 after {} write{} of this file {} lost to a failed "
                            "writeback",
                            syscall_name(sync.call.syscall), sync.lost_writes.size(),
                            sync.lost_writes.size() == 1 ? "" : "s",
                            sync.lost_writes.size() == 1 ? "was" : "were"),
      .related = sync.lost_writes};
}

Hazard direct_not_durable(const WriteTimeline& write) {
  return Hazard{
      .rule = kRules[kDirectNotDurable].name,
      .detail = fmt::format(
          "O_DIRECT {} written to the device at +{} but no FLUSH "
          "or FUA covered it before the trace ended",
          human_bytes(bytes_written(write.call)),
          human_duration(write.written_ns.value_or(write.call.start_ns) - write.call.start_ns)),
      .related = {}};
}

}  // namespace

std::span<const HazardRuleInfo> hazard_rules() {
  return kRules;
}

void add_hazards(Timeline& item) {
  if (auto* sync = std::get_if<SyncTimeline>(&item)) {
    sync->hazards.clear();
    // The stitcher lists the file's writes lost before the call ended that no earlier sync
    // was told of; a sync that returned 0 with any is the acknowledgement of lost data.
    if (sync->loss_unreported && !sync->lost_writes.empty())
      sync->hazards.push_back(lost_but_acknowledged(*sync));
    return;
  }
  if (!std::holds_alternative<WriteTimeline>(item)) return;  // namespace items: HazardAuditor
  auto& write = std::get<WriteTimeline>(item);
  write.hazards.clear();
  // Written (its data on the device) but not durable when emitted: only at the end of the
  // trace, or when it aged out (incomplete: then nothing is known, and nothing is said).
  // A device without a volatile cache made it durable when written (DurableVia::NoWriteCache).
  if (write.direct && write.state == WriteState::Written && !write.incomplete)
    write.hazards.push_back(direct_not_durable(write));
}

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
  if (const auto* ns = std::get_if<NamespaceTimeline>(&item))
    return ns->op != NamespaceOp::Close && ns->op != NamespaceOp::Send;
  const auto* sync = std::get_if<SyncTimeline>(&item);
  return sync && sync_kind(*sync) == HazardAuditor::SyncKind::Wrong;
}

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

void HazardAuditor::take(Timeline&& item, const Out& out) {
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
        !std::holds_alternative<NamespaceTimeline>(item)) {
      facts.last_path = call.path;
      paths_.push_back({call.start_ns, call.path, file});
      ++facts_;
    }
  }
  if (const auto* ns = std::get_if<NamespaceTimeline>(&item);
      ns && ns->op == NamespaceOp::Send && ns->call.ret >= 0) {
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
// under the path it had, and what the held namespace calls did to names), and each file's
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
    auto* ns = std::get_if<NamespaceTimeline>(&held_[step.index]);
    if (!ns) continue;
    const std::string& from = ns->paths[0];
    const std::string& to = ns->paths[1];
    if (ns->call.ret < 0) {
      const bool two = ns->op == NamespaceOp::Rename || ns->op == NamespaceOp::Link;
      if (ns->call.ret == -EEXIST) seen(two ? to : from, true);
      if (ns->call.ret == -ENOENT && (ns->op == NamespaceOp::Unlink || two)) seen(from, false);
      continue;
    }
    switch (ns->op) {
      case NamespaceOp::Open:
      case NamespaceOp::Mkdir: seen(from, true); break;
      case NamespaceOp::Unlink:
      case NamespaceOp::Rmdir: seen(from, false); break;
      case NamespaceOp::Rename:
        if (ns->flags & WP_NS_EXCHANGE) break;  // both names stay taken
        if (ns->flags & WP_NS_NOREPLACE)
          replaced_[step.index] = false;  // it would have failed with EEXIST
        else if (const auto it = present.find(to); it != present.end())
          replaced_[step.index] = it->second;
        seen(from, false);
        seen(to, true);
        break;
      case NamespaceOp::Link: seen(to, true); break;
      default: break;
    }
    switch (ns->op) {
      case NamespaceOp::Open: {
        if (!ns->call.ino || from.empty() || (ns->flags & WP_NS_DIR)) break;
        const FileKey file{ns->call.dev, ns->call.ino};
        if (ns->flags & (WP_NS_EXCL | WP_NS_TRUNC)) ++generation[file];  // made or emptied
        name(from, file);
        moved[step.index] = GenKey{file, generation[file]};
        break;
      }
      case NamespaceOp::Rename:
      case NamespaceOp::Link: {
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
        if (ns->op == NamespaceOp::Rename) {
          named.erase(it);
          --names_of[file];
        }
        name(to, file);
        break;
      }
      case NamespaceOp::Unlink:
      case NamespaceOp::Rmdir:
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
    const auto* ns = std::get_if<NamespaceTimeline>(&item);
    if (!ns || ns->call.ret < 0 || ns->paths[0].empty()) continue;
    if (ns->op == NamespaceOp::Unlink || ns->op == NamespaceOp::Rmdir ||
        (ns->op == NamespaceOp::Rename && !(ns->flags & WP_NS_EXCHANGE)))
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
    if (auto* ns = std::get_if<NamespaceTimeline>(&held_[h]))
      hazards_of(*ns, moved[h] ? &*moved[h] : nullptr, replaced_[h]);
    else if (auto* sync = std::get_if<SyncTimeline>(&held_[h]))
      hazards_of(*sync);
  }
}

// Whether the name `item` made was made durable after it: the directory synced (by inode, or
// by path when the name's directory is known only so), the whole file system or machine
// synced, or the file itself fsynced under it: on ext4, xfs and btrfs (the file systems the
// trace stitches) the journal commit or log write of that fsync carries the name made before
// it (ext4 waits for the transaction of the inode's last change, which the create or rename
// is; xfs forces its log past it; btrfs logs a new inode's names with it).
const HazardAuditor::SyncFact* HazardAuditor::name_synced_after(Nanos after, FileKey dir,
                                                                const std::string& dir_path,
                                                                const GenKey* file) const {
  // The first sync of a list (in start order) to start at `after` or later.
  const auto first_since = [after](const std::vector<const SyncFact*>& list) -> const SyncFact* {
    const auto it = std::lower_bound(list.begin(), list.end(), after,
                                     [](const SyncFact* s, Nanos t) { return s->start < t; });
    return it == list.end() ? nullptr : *it;
  };
  const SyncFact* first = nullptr;
  const auto consider = [&](const SyncFact* s) {
    if (s && s->kind != SyncKind::Wrong && (!first || s->start < first->start)) first = s;
  };
  consider(first_since(index_.global_syncs));
  if (auto it = index_.full_syncs.find(dir); dir.second && it != index_.full_syncs.end())
    consider(first_since(it->second));
  if (auto it = index_.full_syncs_of_path.find(dir_path);
      !dir_path.empty() && it != index_.full_syncs_of_path.end())
    consider(first_since(it->second));
  if (file)
    if (auto it = index_.syncs.find({file->file, file->gen}); it != index_.syncs.end())
      for (const SyncFact* s : it->second)
        if (s->kind == SyncKind::Full && s->start >= after) {
          consider(s);
          break;
        }
  return first;
}

// Whether `path` still names what it named at `after` when the trace ends: no later unlink or
// rename away of it among the held namespace items.
bool HazardAuditor::name_survives(const std::string& path, Nanos after) const {
  const auto it = index_.removed.find(path);
  if (it == index_.removed.end()) return true;
  return std::lower_bound(it->second.begin(), it->second.end(), after) == it->second.end();
}

void HazardAuditor::hazards_of(NamespaceTimeline& item, const GenKey* file,
                               std::optional<bool> replaced) {
  item.hazards.clear();
  item.name_synced_by.reset();
  if (item.call.ret < 0) return;
  const Nanos start = item.call.start_ns, end = call_end(item.call);
  // The name the call made, and the directory it is in (by inode when the name is a plain
  // name in the directory the record resolved; by path always).
  const bool two = item.op == NamespaceOp::Rename || item.op == NamespaceOp::Link;
  const bool makes = two || item.op == NamespaceOp::Mkdir ||
                     (item.op == NamespaceOp::Open && (item.flags & WP_NS_CREATE));
  if (!makes) return;
  const std::size_t which = two ? 1 : 0;
  const std::string& name = item.paths[which];
  FileKey dir{0, 0};
  if (item.names[which].find('/') == std::string::npos)
    dir = {item.dirs[which].dev, item.dirs[which].ino};
  const std::string dir_path = parent_of(name);
  const SyncFact* synced_by = name.empty() ? nullptr : name_synced_after(end, dir, dir_path, file);
  if (synced_by) item.name_synced_by = synced_by->id;
  // A create or mkdir is not judged: the only sync that says a created file's data matters is
  // one of the file itself, made after it, and that carries its name too (name_synced_after).
  if (!two || !file) return;

  static const std::vector<const WriteFact*> kNoWrites;
  static const std::vector<const SyncFact*> kNoSyncs;
  const auto writes_it = index_.writes.find({file->file, file->gen});
  const auto syncs_it = index_.syncs.find({file->file, file->gen});
  const auto& writes = writes_it == index_.writes.end() ? kNoWrites : writes_it->second;
  const auto& syncs = syncs_it == index_.syncs.end() ? kNoSyncs : syncs_it->second;

  // A rename to a name the trace saw free replaced nothing: a crash can lose the new file
  // but brings back no older version of it, and an application that never synced the file
  // asked nothing of it (PostgreSQL's relation cache and statistics files, rebuilt when
  // missing or bad). Judged only when the application synced the file; a rename over a file,
  // or over a name the trace cannot tell about, always.
  const bool new_name = replaced.has_value() && !*replaced;
  const bool synced_ever = std::any_of(syncs.begin(), syncs.end(),
                                       [](const SyncFact* s) { return s->kind == SyncKind::Full; });
  if (new_name && !synced_ever) return;

  if (item.op == NamespaceOp::Rename) {
    // Not durable when renamed: neither seen durable by then nor covered by a sync of the file
    // that began after it and returned 0 before the rename (the kernel's word that it is
    // durable, whatever the trace saw of its flush).
    const auto synced = [&](const WriteFact* w) {
      return std::any_of(syncs.begin(), syncs.end(), [&](const SyncFact* s) {
        return s->kind == SyncKind::Full && s->start >= w->end && s->end <= start;
      });
    };
    std::vector<const WriteFact*> undurable;
    for (const WriteFact* w : writes)
      if (w->end <= start && !w->memory && !(w->durable && *w->durable <= start) && !synced(w))
        undurable.push_back(w);
    if (!undurable.empty()) {
      const SyncFact* last_sync = nullptr;
      bool wrong_sync = false;
      for (const SyncFact* s : syncs) {
        if (s->end > start) continue;
        if (s->kind == SyncKind::Full && (!last_sync || s->end > last_sync->end)) last_sync = s;
        if (s->kind == SyncKind::Wrong && s->end >= undurable.front()->end) wrong_sync = true;
      }
      std::vector<std::uint64_t> after;
      if (last_sync)
        for (const WriteFact* w : undurable)
          if (w->start >= last_sync->end) after.push_back(w->id);
      if (!after.empty()) {
        after.push_back(last_sync->id);
        item.hazards.push_back(Hazard{
            .rule = kRules[kWriteAfterSync].name,
            .detail = fmt::format("{} write{} to the file after its sync #{} and before this "
                                  "rename {} not durable when it was renamed",
                                  after.size() - 1, after.size() == 2 ? "" : "s", last_sync->id,
                                  after.size() == 2 ? "was" : "were"),
            .related = after});
      } else if (!wrong_sync && !new_name) {
        // (A sync_file_range of it is the cause, said on that sync: not said twice.)
        std::vector<std::uint64_t> ids;
        for (const WriteFact* w : undurable) ids.push_back(w->id);
        item.hazards.push_back(Hazard{
            .rule = kRules[kRenameUnsynced].name,
            .detail = fmt::format("{} write{} to the file {} not durable when it was renamed{}",
                                  ids.size(), ids.size() == 1 ? "" : "s",
                                  ids.size() == 1 ? "was" : "were",
                                  last_sync ? "" : ", and it was never synced"),
            .related = ids});
      }
    }
  }

  // The name: made here, kept to the end, never made durable.
  if (name.empty() || !name_survives(name, end)) return;
  if (item.op == NamespaceOp::Link) {
    // A link: only a name whose data the application synced, so asked to keep (git's objects:
    // written and fsynced under a temporary name, then linked).
    if (std::none_of(syncs.begin(), syncs.end(),
                     [](const SyncFact* s) { return s->kind == SyncKind::Full; }))
      return;
  }
  // The process's reply after the name (its first socket send): the name should have been
  // durable before it, not merely before the trace ended.
  const SendFact* reply = nullptr;
  if (const auto it = sends_.find(item.call.pid); it != sends_.end())
    for (const SendFact& send : it->second)
      if (send.start >= end) {
        reply = &send;
        break;
      }
  if (synced_by && (!reply || synced_by->end <= reply->start)) return;
  const std::string dir_named = dir_path.empty() ? std::string("(unknown)") : dir_path;
  if (reply) {
    item.hazards.push_back(Hazard{
        .rule = kRules[kNameNotDurable].name,
        .detail = fmt::format("{} made {}; the process replied on fd {} (#{}) before its "
                              "directory {} or the file was synced",
                              namespace_op_name(item.op), name, reply->fd, reply->id, dir_named),
        .related = {reply->id}});
    return;
  }
  item.hazards.push_back(Hazard{
      .rule = kRules[kNameNotDurable].name,
      .detail = fmt::format("{} made {}; neither its directory {} nor the file was synced after "
                            "it before the trace ended",
                            namespace_op_name(item.op), name, dir_named),
      .related = {}});
}

void HazardAuditor::hazards_of(SyncTimeline& sync) {
  const auto found = index_.sync_by_id.find(sync.id);
  if (found == index_.sync_by_id.end()) return;  // past max_facts: not known well enough
  const SyncFact* fact = found->second;
  const GenKey file{fact->file, fact->gen};
  // A file deleted since (a scratch file never published) leaves nothing to lose; one
  // replaced by a rename over it was the live version until then, and is judged.
  if (deleted_.contains({file.file, file.gen})) return;
  const Nanos start = sync.call.start_ns, end = call_end(sync.call);
  const auto writes = index_.writes.find({file.file, file.gen});
  if (writes == index_.writes.end() ||
      std::none_of(writes->second.begin(), writes->second.end(),
                   [&](const WriteFact* w) { return w->end <= start && !w->memory; }))
    return;
  if (!index_.global_syncs.empty() && index_.global_syncs.back()->start >= end) return;
  for (const SyncFact* s : index_.syncs.at({file.file, file.gen}))
    if (s->start >= end && s->kind == SyncKind::Full) return;
  sync.hazards.push_back(Hazard{
      .rule = kRules[kWrongSync].name,
      .detail =
          fmt::format("{} was the file's last sync: no fsync or fdatasync followed it "
                      "before the trace ended",
                      (sync.call.syscall == Syscall::Msync) ? "msync(MS_ASYNC)"
                                                            : syscall_name(sync.call.syscall)),
      .related = {}});
}

void HazardSummary::add(const Timeline& item) {
  std::visit(
      [this](const auto& t) {
        if (t.hazards.empty()) return;
        std::string file = t.call.path;
        if constexpr (std::is_same_v<std::decay_t<decltype(t)>, NamespaceTimeline>) {
          const bool two = t.op == NamespaceOp::Rename || t.op == NamespaceOp::Link;
          const std::string& named = two ? t.paths[1] : t.paths[0];
          if (!named.empty()) file = named;
        }
        // A file whose path never arrived is named as stat() would name it.
        if (file.empty() && t.call.ino != 0)
          file = fmt::format("dev {} ino {}", dev_string(stat_dev(t.call)), stat_ino(t.call));
        const std::string process = fmt::format("{} {}", t.call.comm, t.call.pid);
        for (const Hazard& h : t.hazards) {
          ++by_rule_[h.rule];
          if (!file.empty()) ++by_file_[file];
          ++by_process_[process];
        }
      },
      item);
}

}  // namespace wp
