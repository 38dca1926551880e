// SPDX-License-Identifier: Apache-2.0
// What the tracer saw during a scenario's run, in a person's words (writepath demo). The load
// generator measures; explaining a trace is the agent's business, so loadgen knows nothing of
// timelines.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "loadgen/scenario.h"
#include "stitch/timeline.h"

namespace wp::explain {

// A call this slow is a stall: the demo asks for the off-CPU causes of every one, so an
// explanation can say where a stall's time went instead of guessing.
constexpr Nanos kStallNs = 1'000'000;

// The explanation of a run of `scenario` (its name, e.g. "wal"): `result` is what the load
// measured, `timelines` those of the load process and its threads. Throws Failure for a scenario
// without an explanation.
std::vector<std::string> explain_run(const std::string& scenario,
                                     const loadgen::ScenarioResult& result,
                                     const std::vector<Timeline>& timelines);

// One per scenario (agent/explain/<scenario>.cpp).
std::vector<std::string> explain_write_fsync(const loadgen::ScenarioResult& result,
                                             const std::vector<Timeline>& timelines);
std::vector<std::string> explain_wal(const loadgen::ScenarioResult& result,
                                     const std::vector<Timeline>& timelines);
std::vector<std::string> explain_group_commit(const loadgen::ScenarioResult& result,
                                              const std::vector<Timeline>& timelines);
std::vector<std::string> explain_cold_warm(const loadgen::ScenarioResult& result,
                                           const std::vector<Timeline>& timelines);
std::vector<std::string> explain_mmap_load(const loadgen::ScenarioResult& result,
                                           const std::vector<Timeline>& timelines);
std::vector<std::string> explain_odirect(const loadgen::ScenarioResult& result,
                                         const std::vector<Timeline>& timelines);
std::vector<std::string> explain_dirty_throttle(const loadgen::ScenarioResult& result,
                                                const std::vector<Timeline>& timelines);
std::vector<std::string> explain_noisy_neighbour(const loadgen::ScenarioResult& result,
                                                 const std::vector<Timeline>& timelines);
std::vector<std::string> explain_atomic_save(const loadgen::ScenarioResult& result,
                                             const std::vector<Timeline>& timelines);
std::vector<std::string> explain_kv_tier(const loadgen::ScenarioResult& result,
                                         const std::vector<Timeline>& timelines);

// Whether the explanation of `scenario` stands on read items (the demo then traces --reads).
bool explains_reads(const std::string& scenario);

// Whether a write item's syscall name (the JSON "syscall") is an io_uring op: io_uring_write,
// io_uring_write_fixed… (kv-tier's io_uring engine is explained from these items alone).
bool is_io_uring_op(std::string_view syscall);

}  // namespace wp::explain
