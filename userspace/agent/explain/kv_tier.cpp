#include <fmt/format.h>

#include "agent/explain/explain.h"
#include "common/units.h"

namespace wp::explain {

std::vector<std::string> explain_kv_tier(const loadgen::ScenarioResult&,
                                         const std::vector<Timeline>& timelines) {
  struct Tally {
    std::uint64_t writes = 0, pages_dirtied = 0, requests = 0, durable = 0, written = 0;
  };
  Tally direct, buffered;
  for (const auto& item : timelines) {
    const auto* w = std::get_if<WriteTimeline>(&item);
    if (!w || !(w->call.file_flags & file_flag::kRegular)) continue;
    Tally& t = w->direct ? direct : buffered;
    ++t.writes;
    t.pages_dirtied += w->call.pages_dirtied;
    t.requests += w->requests.size();
    t.durable += w->state == WriteState::Durable;
    t.written += w->state == WriteState::Written;
  }
  auto line = [](const char* mode, const Tally& t) {
    return fmt::format(
        "{}: {} writes, {} pages dirtied, {} requests carried their data; {} "
        "written, {} durable by the end",
        mode, t.writes, t.pages_dirtied, t.requests, t.written, t.durable);
  };
  return {line("O_DIRECT", direct), line("buffered", buffered),
          "O_DIRECT writes reach the device before they return, dirtying nothing; buffered "
          "ones stop in the page cache until writeback. Neither mode fsyncs: whatever is "
          "durable became so through a later flush (a journal commit, or the scratch "
          "filesystem's unmount at the end of the run)"};
}

}  // namespace wp::explain
