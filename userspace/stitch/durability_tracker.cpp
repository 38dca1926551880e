// SPDX-License-Identifier: Apache-2.0
#include "stitch/durability_tracker.h"

#include <algorithm>

namespace wp::stitch {

void DurabilityTracker::data_completed(const std::shared_ptr<Request>& r, Nanos ts) {
  if (r->fua_at_issue) {
    make_durable(*r, ts, DurableVia::Fua);
  } else if (!devices_.volatile_cache(r->tl.disk)) {
    make_durable(*r, ts, DurableVia::NoWriteCache);
  } else if (!r->tl.complete_inferred || !durable_by_earlier_flush(*r, ts)) {
    disks_[r->tl.disk].awaiting_flush.push_back(r);
  }
}

// A completion inferred after the fact (BlockTracker::infer_completion) can be older than
// FLUSH requests already done: the first of them that started after it made it durable.
bool DurabilityTracker::durable_by_earlier_flush(Request& r, Nanos completed) {
  auto it = disks_.find(r.tl.disk);
  if (it == disks_.end()) return false;
  for (const FlushRecord& f : it->second.flushes) {
    if (!f.covers_earlier || f.start < completed) continue;
    r.durable_inferred = f.request.complete_inferred;
    make_durable(r, f.end, DurableVia::Flush);
    return true;
  }
  return false;
}

void DurabilityTracker::flush_completed(DevT disk_dev, Nanos start, Nanos end,
                                        const RequestTimeline& request, bool covers_earlier) {
  Disk& disk = disks_[disk_dev];
  disk.flushes.push_back(FlushRecord{start, end, request, covers_earlier});
  trim_count(disk.flushes, limits_.max_history_per_key);
  if (!covers_earlier) return;
  // The list is in the order completions were learnt, which is not quite their time order: a
  // record is stamped before it is reserved in the ring buffer (two CPUs can swap the order of
  // close stamps), and an inferred completion is learnt after later ones. So every entry is
  // looked at, not just those up to the first that completed too late.
  std::erase_if(disk.awaiting_flush, [&](const std::shared_ptr<Request>& r) {
    if (r->tl.durable_ns) return true;
    // Data that completed after the flush started may not be in what it flushed.
    if (*r->tl.complete_ns > start) return false;
    // A flush whose completion was inferred ended no later than `end`: so is the durability.
    r->durable_inferred = request.complete_inferred;
    make_durable(*r, end, DurableVia::Flush);
    return true;
  });
}

void DurabilityTracker::make_durable(Request& r, Nanos ts, DurableVia via) {
  if (r.tl.durable_ns) return;
  r.tl.durable_ns = ts;
  r.via = via;
  on_durable_(r);
}

void DurabilityTracker::sweep(Nanos horizon) {
  for (auto& [dev, disk] : disks_) {
    prune_older(disk.awaiting_flush, horizon, [](const auto& r) { return *r->tl.complete_ns; });
    prune_older(disk.flushes, horizon, [](const FlushRecord& f) { return f.end; });
  }
}

std::vector<const FlushRecord*> DurabilityTracker::flushes_within(DevT disk, Nanos start,
                                                                  Nanos end) const {
  std::vector<const FlushRecord*> found;
  auto collect = [&](const Disk& d) {
    for (auto f = d.flushes.rbegin(); f != d.flushes.rend(); ++f) {
      if (f->end < start) break;
      if (f->end <= end) found.push_back(&*f);
    }
  };
  if (disk == 0) {
    for (const auto& [dev, d] : disks_) collect(d);
  } else if (auto it = disks_.find(disk); it != disks_.end()) {
    collect(it->second);
  }
  std::sort(found.begin(), found.end(), [](const FlushRecord* a, const FlushRecord* b) {
    return a->end != b->end ? a->end < b->end : a->start < b->start;
  });
  return found;
}

}  // namespace wp::stitch
