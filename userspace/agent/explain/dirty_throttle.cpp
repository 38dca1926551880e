// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "agent/explain/explain.h"
#include "common/units.h"

namespace wp::explain {
namespace {

// How many of the logger's slowest appends are shown.
constexpr std::size_t kSlowestShown = 5;

// Where the shown stalls' time went, summed: a cause is named only when the trace measured it.
struct StallTime {
  const char* what;
  Nanos ns = 0;
};

std::string stall_cause_line(const std::vector<const WriteTimeline*>& stalls) {
  std::array<StallTime, 5> parts = {
      StallTime{"asleep in dirty throttling (balance_dirty_pages) of the logger itself: the "
                "flood's dirty pages set the pace for every writer"},
      StallTime{"asleep on a page under writeback"},
      StallTime{"asleep for something the trace does not name (a lock, the journal, I/O): not "
                "dirty throttling"},
      StallTime{"runnable, waiting for a CPU"},
      StallTime{"on CPU"},
  };
  Nanos total = 0;
  std::size_t with_causes = 0;
  for (const auto* w : stalls) {
    total += latency_ns(w->call);
    if (!w->causes) continue;
    ++with_causes;
    parts[0].ns += w->causes->throttle_ns;
    parts[1].ns += w->causes->writeback_wait_ns;
    parts[2].ns += w->causes->blocked_ns;
    parts[3].ns += w->causes->runnable_ns;
    parts[4].ns += w->causes->on_cpu_ns;
  }
  if (with_causes == 0)
    return "the trace has no off-CPU causes for those stalls: it cannot say where their time "
           "went";
  const auto top = std::max_element(parts.begin(), parts.end(),
                                    [](const auto& a, const auto& b) { return a.ns < b.ns; });
  return fmt::format(
      "of those stalls' {}, {} ({:.0f}%) went {}", human_duration(total), human_duration(top->ns),
      total ? 100.0 * static_cast<double>(top->ns) / static_cast<double>(total) : 0.0, top->what);
}

}  // namespace

std::vector<std::string> explain_dirty_throttle(const loadgen::ScenarioResult&,
                                                const std::vector<Timeline>& timelines) {
  // The scenario's threads are named: "flood" floods the page cache, "logger" appends.
  std::vector<const WriteTimeline*> log_writes;
  std::uint64_t flood_writes = 0, flood_pauses = 0;
  Nanos flood_throttle = 0, flood_time = 0, longest_flood_throttle = 0;
  std::optional<Nanos> origin;
  for (const auto& item : timelines) {
    const auto* w = std::get_if<WriteTimeline>(&item);
    if (!w || (w->call.comm != "logger" && w->call.comm != "flood")) continue;
    origin = std::min(origin.value_or(w->call.start_ns), w->call.start_ns);
    if (w->call.comm == "logger") {
      log_writes.push_back(w);
    } else {
      ++flood_writes;
      flood_pauses += w->call.throttle_events;
      flood_throttle += w->call.throttle_ns;
      flood_time += latency_ns(w->call);
      longest_flood_throttle = std::max(longest_flood_throttle, w->call.throttle_ns);
    }
  }
  std::vector<std::string> out;
  out.push_back(fmt::format(
      "flood writer: {} writes, throttled {} in all ({} balance_dirty_pages pauses, {:.0f}% of "
      "its time in write), at most {} in one write",
      flood_writes, human_duration(flood_throttle), flood_pauses,
      flood_time ? 100.0 * static_cast<double>(flood_throttle) / static_cast<double>(flood_time)
                 : 0.0,
      human_duration(longest_flood_throttle)));
  if (log_writes.empty()) {
    out.push_back("logger: no appends traced");
    return out;
  }

  auto latency = [](const WriteTimeline* w) { return latency_ns(w->call); };
  std::sort(log_writes.begin(), log_writes.end(),
            [&](const auto* a, const auto* b) { return latency(a) > latency(b); });
  const Nanos slowest = latency(log_writes.front());
  if (slowest < kStallNs) {
    out.push_back(fmt::format(
        "no stall: the logger's slowest of {} appends took {}, below the {} that counts as one "
        "(the median {}); nothing to explain",
        log_writes.size(), human_duration(slowest), human_duration(kStallNs),
        human_duration(latency(log_writes[log_writes.size() / 2]))));
    return out;
  }
  std::vector<const WriteTimeline*> stalls;
  for (const auto* w : log_writes)
    if (latency(w) >= kStallNs && stalls.size() < kSlowestShown) stalls.push_back(w);
  const auto stalled = static_cast<std::size_t>(std::count_if(
      log_writes.begin(), log_writes.end(), [&](const auto* w) { return latency(w) >= kStallNs; }));
  out.push_back(fmt::format("logger: {} appends traced, {} stalled for {} or more; the slowest:",
                            log_writes.size(), stalled, human_duration(kStallNs)));
  for (const auto* w : stalls) {
    const SyscallEvent& call = w->call;
    std::string line =
        fmt::format("  at +{}: {} B in {}: throttled {} ({} pauses)",
                    human_duration(call.start_ns - *origin), call.count, human_duration(latency(w)),
                    human_duration(call.throttle_ns), call.throttle_events);
    if (const auto& c = w->causes)
      line += fmt::format(
          "; on CPU {}, asleep throttled {}, waiting on writeback {}, blocked {}, runnable {}",
          human_duration(c->on_cpu_ns), human_duration(c->throttle_ns),
          human_duration(c->writeback_wait_ns), human_duration(c->blocked_ns),
          human_duration(c->runnable_ns));
    out.push_back(std::move(line));
  }
  out.push_back(stall_cause_line(stalls));
  return out;
}

}  // namespace wp::explain
