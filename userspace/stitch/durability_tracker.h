// SPDX-License-Identifier: Apache-2.0
// Durability tracker: when completed data reaches stable media. Data completed on a disk with
// a volatile write cache is durable once a FLUSH that started after its completion has
// completed; FUA data at its flush sequence's end (or at completion when the device does FUA
// natively); data on a disk without a volatile cache at completion. It also keeps each disk's
// recent flushes for the sync assembler.
// Rules: docs/reference/stitching-rules.md, "Durability";
// tests: tests/unit/durability_tracker_test.cpp.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <unordered_map>

#include "stitch/io_state.h"
#include "stitch/stitcher.h"

namespace wp::stitch {

class DurabilityTracker {
 public:
  // `on_durable` hears of every request that became durable (once each).
  DurabilityTracker(const StitchLimits& limits, const DeviceTable& devices,
                    std::function<void(Request&)> on_durable)
      : limits_(limits), devices_(devices), on_durable_(std::move(on_durable)) {}

  // Data request `r` completed at `ts` without error.
  void data_completed(const std::shared_ptr<Request>& r, Nanos ts);
  // A cache flush completed (see BlockListener::flush_completed).
  void flush_completed(DevT disk, Nanos start, Nanos end, const RequestTimeline& request,
                       bool covers_earlier);
  void make_durable(Request& r, Nanos ts, DurableVia via);
  void sweep(Nanos horizon);

  // Flushes completed on `disk` (or, with disk 0, on every disk) within [start, end], by end.
  std::vector<const FlushRecord*> flushes_within(DevT disk, Nanos start, Nanos end) const;

 private:
  struct Disk {
    // Data requests completed but not yet durable, in completion order (so in time order,
    // but for a completion inferred late, which may wait behind newer ones: an upper bound).
    std::deque<std::shared_ptr<Request>> awaiting_flush;
    std::deque<FlushRecord> flushes;  // completion order
  };

  bool durable_by_earlier_flush(Request& r, Nanos completed);

  const StitchLimits& limits_;
  const DeviceTable& devices_;
  std::function<void(Request&)> on_durable_;
  std::unordered_map<DevT, Disk> disks_;
};

}  // namespace wp::stitch
