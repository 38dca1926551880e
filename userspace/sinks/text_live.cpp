// SPDX-License-Identifier: Apache-2.0
#include "sinks/text_live.h"

#include <fmt/format.h>

#include <variant>

#include "common/units.h"
#include "sinks/text_sink.h"
#include "sinks/wait_text.h"

namespace wp {
namespace {

// Width of "15:17:14.123456 ".
constexpr std::size_t kClockColumn = 16;

std::string offset_from_start(const SyscallEvent& call, Nanos t) {
  return human_offset(relative_ns(t, call.start_ns));
}

// When the update happened: the stage it reports, else (the end of a trace) the call's return.
Nanos update_time(const WriteTimeline& write) {
  switch (write.state) {
    case WriteState::Durable:
      if (write.durable_ns) return *write.durable_ns;
      break;
    case WriteState::Written:
      if (write.written_ns) return *write.written_ns;
      break;
    case WriteState::Discarded:
      if (write.discarded_ns) return *write.discarded_ns;
      break;
    default: break;
  }
  return call_end(write.call);
}

// The block's header line, headed by the item's id.
std::string with_id(std::string block, std::uint64_t id) {
  return fmt::format("#{} {}", id, block);
}

}  // namespace

std::string with_clock_column(std::string block, Nanos monotonic_ns,
                              const std::optional<ClockOffsets>& clock) {
  if (!clock) return block;
  std::string out = clock_column(realtime_of(monotonic_ns, *clock)) + " ";
  const std::string pad(kClockColumn, ' ');
  for (std::size_t i = 0; i < block.size(); ++i) {
    out += block[i];
    if (block[i] == '\n' && i + 1 < block.size()) out += pad;
  }
  return out;
}

std::string format_update_line(const WriteTimeline& write, std::optional<ItemProgress> progress) {
  const SyscallEvent& call = write.call;
  std::string line = fmt::format("#{} {} pid {}/{} ({})", write.id, call_name(call), call.pid,
                                 call.tid, printable_comm(call.comm));
  if (!call.path.empty())
    line += " " + printable_comm(call.path);
  else if (call.ino != 0)
    line += fmt::format(" ino {}", call.ino);
  line += "  ";
  const std::string pages = fmt::format("{} page{}", write.pages, write.pages == 1 ? "" : "s");
  const bool at_end =
      !progress && (write.state == WriteState::Dirty || write.state == WriteState::Written);
  switch (write.state) {
    case WriteState::Durable:
      line += "DURABLE";
      if (write.durable_ns) line += " " + offset_from_start(call, *write.durable_ns);
      if (write.durable_via != DurableVia::None)
        line += fmt::format(" via {}", durable_via_name(write.durable_via));
      break;
    case WriteState::Written:
      line += "WRITTEN";
      if (write.written_ns) line += " " + offset_from_start(call, *write.written_ns);
      line += fmt::format(" ({}), not durable", pages);
      break;
    case WriteState::Discarded:
      line += "DISCARDED";
      if (write.discarded_ns) line += " " + offset_from_start(call, *write.discarded_ns);
      line += ", never written";
      break;
    case WriteState::Dirty:
      line += fmt::format("DIRTY {}/{} pages pending", write.pages_pending, write.pages);
      break;
    case WriteState::Failed: line += "FAILED"; break;
    case WriteState::Memory: line += fmt::format("MEMORY ONLY ({}), no disk", pages); break;
    case WriteState::Handed:
      line += "HANDED to the FUSE daemon" + fuse_daemon_text(write.fuse);
      break;
    case WriteState::Lost:
      line += fmt::format("LOST: writeback failed ({})", errno_name(write.lost_error));
      break;
  }
  if (at_end)
    line +=
        write.incomplete ? " (incomplete: aged out or records lost)" : " at the end of the trace";
  else if (write.incomplete)
    line += " (incomplete)";
  return line + "\n";
}

std::string format_live_progress(ItemProgress progress, const Timeline& item,
                                 const SinkOptions& options,
                                 const std::optional<ClockOffsets>& clock) {
  if (progress == ItemProgress::Returned) {
    // Its why lines come with it: the stitcher names the waits (and the commit a wait is
    // chained to) when the call's record arrives, so they are final now, and the responder
    // sees why the call stalled the moment it returns.
    return with_clock_column(with_id(format_timeline(item, options), id_of(item)),
                             call_end(call_of(item)), clock);
  }
  const auto* write = std::get_if<WriteTimeline>(&item);
  if (write == nullptr) return {};
  return with_clock_column(format_update_line(*write, progress), update_time(*write), clock);
}

std::string format_live_complete(const Timeline& item, const SinkOptions& options,
                                 const std::optional<ClockOffsets>& clock) {
  const auto* write = std::get_if<WriteTimeline>(&item);
  if (write != nullptr && write->announced) {
    return with_clock_column(format_update_line(*write, std::nullopt), update_time(*write), clock);
  }
  return with_clock_column(with_id(format_timeline(item, options), id_of(item)),
                           call_end(call_of(item)), clock);
}

}  // namespace wp
