// SPDX-License-Identifier: Apache-2.0
// The HTML report's "Why the slowest calls were slow" list: for a slow call with named causes,
// what the page shows of each (time and share of the latency, the frame or tracepoint that
// decided it, its top frames, who woke it or held the lock, the journal commit and flushes it
// waited on), labelled as the text output labels them.
#pragma once

#include <nlohmann/json.hpp>

#include "stitch/timeline.h"

namespace wp {

// Calls the list shows: the slowest that have named causes.
inline constexpr std::size_t kWhyCalls = 10;
// Frames shown per cause and per waker.
inline constexpr std::size_t kWhyFrames = 5;

// The entry of `item` (which has named causes), times as offsets from `origin` (the page's
// first call): {"id", "kind", "syscall", "pid", "tid", "comm", "path", "latency_ns",
// "start_ns", "unslotted_ns", "labels": {"latency", "start", "unslotted"}, "waits": [{"cause",
// "ns", "share", "sleeps", "evidence", "frames", "waker", "holder", "commit", "flushes",
// "labels": {"ns", "share"}}]}. A waker: {"pid", "tid", "comm", "kernel_thread", "frames"}; a
// commit: {"dev", "transaction", "start_ns", "end_ns", "labels": {"start", "end", "ran"}}; a
// flush: {"dev", "rwbs", "device_ns", "labels": {"issue", "device"}}. Frames are short
// ("ext4_sync_file [ext4]"), innermost first.
nlohmann::ordered_json why_entry(const Timeline& item, Nanos origin);

}  // namespace wp
