// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "agent/explain/explain.h"
#include "common/units.h"

namespace wp::explain {

bool is_io_uring_op(std::string_view syscall) {
  return syscall.starts_with("io_uring_");
}

namespace {

struct Tally {
  std::uint64_t writes = 0, pages_dirtied = 0, requests = 0, own_requests = 0, durable = 0,
                written = 0;
};

void count(Tally& t, const WriteTimeline& w) {
  ++t.writes;
  t.pages_dirtied += w.call.pages_dirtied;
  t.requests += w.requests.size();
  for (const auto& rq : w.requests) t.own_requests += rq.submit_tid == w.call.tid;
  t.durable += w.state == WriteState::Durable;
  t.written += w.state == WriteState::Written;
}

std::string tally_line(const std::string& mode, const Tally& t) {
  return fmt::format(
      "{}: {} writes, {} pages dirtied, {} requests carried their data; {} "
      "written, {} durable by the end",
      mode, t.writes, t.pages_dirtied, t.requests, t.written, t.durable);
}

constexpr const char* kNoFsync =
    "Neither mode fsyncs: whatever is durable became so through a later flush (a journal "
    "commit, or the scratch filesystem's unmount at the end of the run)";

// The io_uring engine: what the trace's io_uring items show, and only that. Writes the
// tracer saw as other calls are the load's too (a ring set up, the read-back) but not the
// blocks, so they are named apart rather than taken for the ring's.
std::vector<std::string> explain_io_uring(const std::vector<Timeline>& timelines) {
  Tally direct, buffered;
  std::uint64_t other_writes = 0;
  for (const auto& item : timelines) {
    const auto* w = std::get_if<WriteTimeline>(&item);
    if (!w || !(w->call.file_flags & file_flag::kRegular)) continue;
    if (!is_io_uring_op(syscall_name(w->call.syscall))) {
      ++other_writes;
      continue;
    }
    count(w->direct ? direct : buffered, *w);
  }
  std::vector<std::string> out;
  if (direct.writes + buffered.writes == 0) {
    out.push_back(
        "the tracer saw no io_uring writes: the blocks went through the ring, but this trace "
        "has no item for an io_uring op, so it cannot show where their data went (the load's "
        "figures above do: the page cache residency of each file)");
    if (other_writes > 0)
      out.push_back(fmt::format("({} writes by other calls were seen; they are not the ring's)",
                                other_writes));
    return out;
  }
  out.push_back(tally_line("io_uring O_DIRECT", direct));
  out.push_back(tally_line("io_uring buffered", buffered));
  if (direct.writes == 0)
    out.push_back("no O_DIRECT io_uring write was seen, so the trace shows no bypass");
  else if (direct.pages_dirtied == 0 && direct.own_requests == direct.requests)
    out.push_back(fmt::format(
        "the O_DIRECT ops bypassed the page cache: 0 pages dirtied; all {} of their data "
        "requests were issued by the thread that submitted the op",
        direct.requests));
  else if (direct.pages_dirtied == 0)
    out.push_back(fmt::format(
        "the O_DIRECT ops bypassed the page cache: 0 pages dirtied; {} of their {} data "
        "requests were issued by the thread that submitted the op, the rest by another thread "
        "(io_uring's workers take an op that cannot be issued without blocking)",
        direct.own_requests, direct.requests));
  else
    out.push_back(fmt::format(
        "the O_DIRECT ops dirtied {} pages: some fell back to the page cache (an unaligned "
        "write, or a file system that does so for writes past the end of the file)",
        direct.pages_dirtied));
  out.push_back(kNoFsync);
  return out;
}

}  // namespace

std::vector<std::string> explain_kv_tier(const loadgen::ScenarioResult& result,
                                         const std::vector<Timeline>& timelines) {
  if (result.figures.value("engine", std::string("pwrite")) == "io_uring")
    return explain_io_uring(timelines);
  Tally direct, buffered;
  for (const auto& item : timelines) {
    const auto* w = std::get_if<WriteTimeline>(&item);
    if (!w || !(w->call.file_flags & file_flag::kRegular)) continue;
    count(w->direct ? direct : buffered, *w);
  }
  return {tally_line("O_DIRECT", direct), tally_line("buffered", buffered),
          std::string("O_DIRECT writes reach the device before they return, dirtying nothing; "
                      "buffered ones stop in the page cache until writeback. ") +
              kNoFsync};
}

}  // namespace wp::explain
