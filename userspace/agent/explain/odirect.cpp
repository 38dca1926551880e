// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "agent/explain/explain.h"
#include "common/units.h"

namespace wp::explain {

std::vector<std::string> explain_odirect(const loadgen::ScenarioResult&,
                                         const std::vector<Timeline>& timelines) {
  std::vector<std::string> out;
  for (const auto& item : timelines) {
    const auto* w = std::get_if<WriteTimeline>(&item);
    if (!w || !w->direct) continue;
    const SyscallEvent& call = w->call;
    if (w->state == WriteState::Failed) {
      out.push_back(fmt::format(
          "{} of {} B at offset {} failed with {}: {} pages dirtied, {} requests",
          syscall_name(call.syscall), call.count, call.pos, errno_name(static_cast<int>(call.ret)),
          call.pages_dirtied, w->requests.size()));
      continue;
    }
    out.push_back(fmt::format("{} of {} at offset {}: {} pages dirtied, {} requests of its own",
                              syscall_name(call.syscall), human_bytes(call.count), call.pos,
                              call.pages_dirtied, w->requests.size()));
    for (const auto& rq : w->requests) {
      std::string timing;
      if (const auto on_device = elapsed_ns(rq.issue_ns, rq.complete_ns))
        timing = fmt::format(", {} on the device", human_duration(*on_device));
      out.push_back(
          fmt::format("  request: {} at sector {}{}", human_bytes(rq.bytes), rq.sector, timing));
    }
    if (w->state == WriteState::Durable)
      out.push_back(fmt::format("  state: durable, via {}{}", durable_via_name(w->durable_via),
                                w->durable_via == DurableVia::NoWriteCache
                                    ? " (the device has no volatile cache: done is durable)"
                                    : " (not by the write itself: a later flush, e.g. the "
                                      "scratch filesystem's unmount at the end of the run)"));
    else
      out.push_back(
          fmt::format("  state: {} (on the device, perhaps only in its cache: no "
                      "FLUSH or FUA followed, so not durable)",
                      write_state_name(w->state)));
  }
  if (out.empty()) {
    out.push_back("no O_DIRECT writes were seen");
    return out;
  }
  // The point of the scenario, said in words whatever the states above.
  std::size_t durable_by_themselves = 0, direct = 0;
  for (const auto& item : timelines)
    if (const auto* w = std::get_if<WriteTimeline>(&item); w && w->direct) {
      ++direct;
      if (w->durable_via == DurableVia::Fua || w->durable_via == DurableVia::NoWriteCache)
        ++durable_by_themselves;
    }
  out.push_back(fmt::format(
      "so: O_DIRECT skips the page cache, not the device's cache. {} of these {} direct writes "
      "{} durable when {} returned; the rest needed a FLUSH afterwards (fdatasync, or O_DSYNC "
      "for FUA writes)",
      durable_by_themselves, direct, durable_by_themselves == 1 ? "was" : "were",
      durable_by_themselves == 1 ? "it" : "they"));
  return out;
}

}  // namespace wp::explain
