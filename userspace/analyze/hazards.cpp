#include "analyze/hazards.h"

#include <fmt/format.h>

#include <array>

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
};

// kRules' indices, so that a hazard's rule is the documented rule's name.
constexpr std::size_t kLostButAcknowledged = 0, kDirectNotDurable = 1;

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
        for (const Hazard& h : t.hazards) ++by_rule_[h.rule];
      },
      item);
}

}  // namespace wp
