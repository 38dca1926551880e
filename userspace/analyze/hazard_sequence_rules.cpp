// SPDX-License-Identifier: Apache-2.0
// The sequence rules HazardAuditor applies to the items it held, once decide() has replayed
// the trace: rename-of-unsynced-data, write-after-fsync-before-rename and name-not-durable on
// renames, links and creates; sync-of-the-wrong-thing on sync_file_range and msync(MS_ASYNC).
#include "analyze/hazards.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace wp {
namespace {

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

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
// rename away of it among the held name-change items.
bool HazardAuditor::name_survives(const std::string& path, Nanos after) const {
  const auto it = index_.removed.find(path);
  if (it == index_.removed.end()) return true;
  return std::lower_bound(it->second.begin(), it->second.end(), after) == it->second.end();
}

void HazardAuditor::hazards_of(NameChangeTimeline& item, const GenKey* file,
                               std::optional<bool> replaced) {
  item.hazards.clear();
  item.name_synced_by.reset();
  if (item.call.ret < 0) return;
  const Nanos start = item.call.start_ns, end = call_end(item.call);
  // The name the call made, and the directory it is in (by inode when the name is a plain
  // name in the directory the record resolved; by path always).
  const bool two = item.op == NameChangeOp::Rename || item.op == NameChangeOp::Link;
  const bool makes = two || item.op == NameChangeOp::Mkdir ||
                     (item.op == NameChangeOp::Open && (item.flags & WP_NS_CREATE));
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

  if (item.op == NameChangeOp::Rename) {
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
            .rule = hazard_rule_name(HazardRule::WriteAfterFsyncBeforeRename),
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
            .rule = hazard_rule_name(HazardRule::RenameOfUnsyncedData),
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
  if (item.op == NameChangeOp::Link) {
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
        .rule = hazard_rule_name(HazardRule::NameNotDurable),
        .detail = fmt::format("{} made {}; the process replied on fd {} (#{}) before its "
                              "directory {} or the file was synced",
                              name_change_op_name(item.op), name, reply->fd, reply->id, dir_named),
        .related = {reply->id}});
    return;
  }
  item.hazards.push_back(Hazard{
      .rule = hazard_rule_name(HazardRule::NameNotDurable),
      .detail = fmt::format("{} made {}; neither its directory {} nor the file was synced after "
                            "it before the trace ended",
                            name_change_op_name(item.op), name, dir_named),
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
      .rule = hazard_rule_name(HazardRule::SyncOfTheWrongThing),
      .detail =
          fmt::format("{} was the file's last sync: no fsync or fdatasync followed it "
                      "before the trace ended",
                      (sync.call.syscall == Syscall::Msync) ? "msync(MS_ASYNC)"
                                                            : syscall_name(sync.call.syscall)),
      .related = {}});
}

}  // namespace wp
