// SPDX-License-Identifier: Apache-2.0
#include "analyze/hazards.h"

#include <fmt/format.h>

#include <array>
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

// HazardRule names kRules' entries by their index.
static_assert(kRules.size() == static_cast<std::size_t>(HazardRule::SyncOfTheWrongThing) + 1);

Hazard lost_but_acknowledged(const SyncTimeline& sync) {
  return Hazard{
      .rule = hazard_rule_name(HazardRule::LostButAcknowledged),
      .detail = fmt::format("{} returned 0 after {} write{} of this file {} lost to a failed "
                            "writeback",
                            syscall_name(sync.call.syscall), sync.lost_writes.size(),
                            sync.lost_writes.size() == 1 ? "" : "s",
                            sync.lost_writes.size() == 1 ? "was" : "were"),
      .related = sync.lost_writes};
}

Hazard direct_not_durable(const WriteTimeline& write) {
  return Hazard{
      .rule = hazard_rule_name(HazardRule::DirectNotDurable),
      .detail = fmt::format(
          "O_DIRECT {} written to the device at +{} but no FLUSH "
          "or FUA covered it before the trace ended",
          human_bytes(bytes_written(write.call)),
          human_duration(write.written_ns.value_or(write.call.start_ns) - write.call.start_ns)),
      .related = {}};
}

}  // namespace

const char* hazard_rule_name(HazardRule rule) {
  return kRules[static_cast<std::size_t>(rule)].name;
}

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
  if (!std::holds_alternative<WriteTimeline>(item)) return;  // name-change items: HazardAuditor
  auto& write = std::get<WriteTimeline>(item);
  write.hazards.clear();
  // Written (its data on the device) but not durable when emitted: only at the end of the
  // trace, or when it aged out (incomplete: then nothing is known, and nothing is said).
  // A device without a volatile cache made it durable when written (DurableVia::NoWriteCache).
  if (write.direct && write.state == WriteState::Written && !write.incomplete)
    write.hazards.push_back(direct_not_durable(write));
}

void HazardSummary::add(const Timeline& item) {
  std::visit(
      [this](const auto& t) {
        if (t.hazards.empty()) return;
        std::string file = t.call.path;
        if constexpr (std::is_same_v<std::decay_t<decltype(t)>, NameChangeTimeline>) {
          const bool two = t.op == NameChangeOp::Rename || t.op == NameChangeOp::Link;
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
