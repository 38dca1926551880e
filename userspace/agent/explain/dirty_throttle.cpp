#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "agent/explain/explain.h"
#include "common/units.h"

namespace wp::explain {

// How many of the logger's slowest appends are shown.
constexpr std::size_t kSlowestShown = 5;

std::vector<std::string> explain_dirty_throttle(const loadgen::ScenarioResult&,
                                                const std::vector<Timeline>& timelines) {
  // The logger appends with write(2), the flood with pwrite64 (write_all): the syscall
  // tells them apart. Only writes on the flood's filesystem count: the sysctl writes to
  // /proc are write(2)s to regular files too.
  std::optional<DevT> scratch_dev;
  for (const auto& item : timelines)
    if (const auto* w = std::get_if<WriteTimeline>(&item);
        w && w->call.syscall == Syscall::Pwrite64 && (w->call.file_flags & file_flag::kRegular))
      scratch_dev = w->call.dev;
  std::vector<const WriteTimeline*> log_writes;
  std::uint64_t flood_writes = 0, flood_pauses = 0;
  Nanos flood_throttle = 0, flood_time = 0, longest_flood_throttle = 0;
  std::optional<Nanos> origin;
  for (const auto& item : timelines) {
    const auto* w = std::get_if<WriteTimeline>(&item);
    if (!w || w->call.dev != scratch_dev) continue;
    origin = std::min(origin.value_or(w->call.start_ns), w->call.start_ns);
    if (w->call.syscall == Syscall::Write) {
      log_writes.push_back(w);
    } else if (w->call.syscall == Syscall::Pwrite64) {
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

  auto latency = [](const WriteTimeline* w) { return latency_ns(w->call); };
  std::sort(log_writes.begin(), log_writes.end(),
            [&](const auto* a, const auto* b) { return latency(a) > latency(b); });
  out.push_back(fmt::format("logger: {} appends traced; the slowest:", log_writes.size()));
  std::size_t throttled = 0;
  Nanos waited_elsewhere = 0;
  for (std::size_t i = 0; i < std::min(kSlowestShown, log_writes.size()); ++i) {
    const SyscallEvent& call = log_writes[i]->call;
    const Nanos total = latency(log_writes[i]);
    const Nanos other = total > call.throttle_ns ? total - call.throttle_ns : 0;
    throttled += call.throttle_ns > 0;
    waited_elsewhere += other;
    std::string line = fmt::format(
        "  at +{}: {} B in {}: throttled {} ({} pauses)", human_duration(call.start_ns - *origin),
        call.count, human_duration(total), human_duration(call.throttle_ns), call.throttle_events);
    // With the off-CPU causes (the demo asks for them) "elsewhere" gets its names.
    if (const auto& c = log_writes[i]->causes) {
      line += fmt::format(
          "; on CPU {}, asleep throttled {}, waiting on writeback {}, "
          "blocked {}, runnable {}",
          human_duration(c->on_cpu_ns), human_duration(c->throttle_ns),
          human_duration(c->writeback_wait_ns), human_duration(c->blocked_ns),
          human_duration(c->runnable_ns));
    } else {
      line += fmt::format(", {} elsewhere", human_duration(other));
    }
    out.push_back(std::move(line));
  }
  if (!log_writes.empty()) {
    out.push_back(
        throttled == 0
            ? fmt::format("the logger was never throttled itself in those: its {} went to "
                          "waiting on something else (the journal, a page under writeback, "
                          "the device queue the flood fills)",
                          human_duration(waited_elsewhere))
            : fmt::format("the logger itself was throttled in {} of them; {} of their time "
                          "went elsewhere",
                          throttled, human_duration(waited_elsewhere)));
  }
  return out;
}

}  // namespace wp::explain
