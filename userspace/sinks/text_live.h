// SPDX-License-Identifier: Apache-2.0
// Live text lines: an item when its call returns (the block as it stands, headed by the item's
// id), then one update line per later event of it (written, durable, discarded, or its state
// at the end of the trace), keyed by the same id. And the -T wall-clock column.
#pragma once

#include <optional>
#include <string>

#include "sinks/sink.h"

namespace wp {

// The text for a pending item's snapshot: the block at its return, or its written line.
std::string format_live_progress(ItemProgress progress, const Timeline& item,
                                 const SinkOptions& options,
                                 const std::optional<ClockOffsets>& clock);
// The text for a complete item in live output: its update line if its return was shown, else
// its whole block with its id.
std::string format_live_complete(const Timeline& item, const SinkOptions& options,
                                 const std::optional<ClockOffsets>& clock);
// "#12 pwrite64 pid 7081/7081 (wp_workload) ino 12  DURABLE +1.06ms via flush": the one line
// saying how a write shown at its return went on.
// `progress`: the event it reports; none for the complete item.
std::string format_update_line(const WriteTimeline& write, std::optional<ItemProgress> progress);
// `block` with a wall-clock column: `realtime_ns` (HH:MM:SS.uuuuuu, local time) before its
// first line and blanks of that width before the others. Unchanged without a clock.
std::string with_clock_column(std::string block, Nanos monotonic_ns,
                              const std::optional<ClockOffsets>& clock);

}  // namespace wp
