// SPDX-License-Identifier: Apache-2.0
// Lines several explanations share.
#pragma once

#include <string>
#include <vector>

#include "stitch/timeline.h"

namespace wp::explain {

// "fsync 5.20ms: writeback 0.40ms, data-io 1.10ms, journal 2.00ms, flush 1.50ms, other 0.20ms"
std::string fsync_phases_line(const SyncTimeline& sync);

// "16 of 16 writes durable by the end"
std::string durable_writes_line(const std::vector<Timeline>& timelines);

}  // namespace wp::explain
