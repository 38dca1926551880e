// SPDX-License-Identifier: Apache-2.0
#include "sinks/text_why.h"

#include <fmt/format.h>

#include <algorithm>
#include <variant>

#include "common/units.h"
#include "sinks/text_sink.h"
#include "sinks/wait_text.h"

namespace wp {
namespace {

// Frames shown per cause: enough to see the wait and what the call was doing.
constexpr std::size_t kMaxFrames = 5;
// Under "why  ", so the continuation lines read as part of it.
constexpr std::string_view kContinued = "     ";
// Flushes named on a chain line before "+N more".
constexpr std::size_t kMaxFlushes = 3;

// Columns a line takes: its UTF-8 characters (frames and comms are printable ASCII once
// escaped; "…" is the one wider character the lines use).
std::size_t columns(std::string_view line) {
  return static_cast<std::size_t>(std::count_if(line.begin(), line.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  }));
}

std::string plural_sleeps(std::uint32_t n) {
  return fmt::format("({} sleep{})", n, n == 1 ? "" : "s");
}

// "jbd2_log_wait_commit" is a frame ("in …"); "vmscan:mm_vmscan_memcg_reclaim" a tracepoint
// ("by …") that timed the wait.
std::string evidence_text(const std::string& evidence) {
  if (evidence.empty()) return "";
  const bool tracepoint = evidence.find(':') != std::string::npos;
  return fmt::format(" {} {}", tracepoint ? "by" : "in", printable_comm(evidence));
}

// `head`, then each of `tails` after "; " while the line fits, else on a continuation line.
void add_joined(std::vector<std::string>& lines, std::string head,
                const std::vector<std::string>& tails, std::size_t width) {
  for (const std::string& tail : tails) {
    if (columns(head) + 2 + columns(tail) <= width) {
      head += "; " + tail;
    } else {
      lines.push_back(std::move(head));
      head = std::string(kContinued) + tail;
    }
  }
  lines.push_back(std::move(head));
}

// "at a < b < c": as many of the top frames as fit (at least one, at most kMaxFrames).
std::string fitted_frames(const std::vector<std::string>& frames, std::size_t width) {
  std::string best;
  for (std::size_t n = 1; n <= std::min(frames.size(), kMaxFrames); ++n) {
    std::string line = std::string(kContinued) + frames_line(frames, n);
    if (n > 1 && columns(line) > width) break;
    best = std::move(line);
  }
  return best;
}

// "commit 5 dev 7:0 +1.20ms..+281.3ms (ran 280.1ms); flush 7:0 1.70ms, flush 7:0 1.21ms".
std::vector<std::string> chain_parts(const WaitChain& chain, Nanos origin) {
  std::vector<std::string> parts;
  auto offset = [origin](const std::optional<Nanos>& t) {
    return t ? human_offset(relative_ns(*t, origin)) : std::string("?");
  };
  if (chain.commit) {
    const JournalCommit& c = *chain.commit;
    std::string text =
        fmt::format("waited on journal commit {} dev {} {}..{}", c.transaction, dev_string(c.dev),
                    offset(c.start_ns), c.end_ns ? offset(c.end_ns) : std::string("(not ended)"));
    if (const auto ran = elapsed_ns(c.start_ns, c.end_ns))
      text += fmt::format(" (ran {})", human_duration(*ran));
    parts.push_back(std::move(text));
  }
  std::vector<std::string> flushes;
  for (const RequestTimeline& flush : chain.flushes) {
    if (flushes.size() == kMaxFlushes) {
      flushes.push_back(fmt::format("+{} more", chain.flushes.size() - kMaxFlushes));
      break;
    }
    const auto device = elapsed_ns(request_start(flush), flush.complete_ns);
    flushes.push_back(fmt::format("{} {} {}", rwbs(flush.op, flush.flags, flush.bytes),
                                  dev_string(flush.disk),
                                  device ? human_duration(*device) : "not completed"));
  }
  if (!flushes.empty()) {
    std::string text = chain.commit ? "its flushes " : "waited on flushes ";
    text += fmt::format("{}", fmt::join(flushes, ", "));
    parts.push_back(std::move(text));
  }
  return parts;
}

}  // namespace

std::vector<std::string> why_lines(const SlowCauses& causes, Nanos origin, std::size_t width) {
  std::vector<std::string> lines;
  for (const NamedWait& wait : causes.waits) {
    std::string head = wait.cause == WaitCause::Other
                           ? std::string("why  blocked (other)")
                           : fmt::format("why  {}", wait_cause_name(wait.cause));
    head += " " + human_duration(wait.ns);
    if (wait.sleeps != 0) head += " " + plural_sleeps(wait.sleeps);
    head += evidence_text(wait.evidence);
    std::vector<std::string> tails;
    if (wait.holder)
      tails.push_back(fmt::format("held by {} pid {}/{}", printable_comm(wait.holder->comm),
                                  wait.holder->pid, wait.holder->tid));
    if (wait.waker) tails.push_back("woken by " + waker_text(*wait.waker));
    add_joined(lines, std::move(head), tails, width);
    if (!wait.frames.empty()) lines.push_back(fitted_frames(wait.frames, width));
    std::vector<std::string> chain = chain_parts(wait.chain, origin);
    if (!chain.empty()) {
      std::string first = std::string(kContinued) + chain.front();
      add_joined(lines, std::move(first), {chain.begin() + 1, chain.end()}, width);
    }
  }
  return lines;
}

std::string format_why_legend() {
  return "why:    what a slow call waited on, each named by one rule from its sleeps' kernel\n"
         "        stacks and the call's tracepoints (docs/guide/slow-calls.md); its time, its\n"
         "        sleeps, the frame or tracepoint that decided it, who woke it; \"at\" its\n"
         "        longest sleep's top frames, innermost first (a < b: a called from b);\n"
         "        blocked (other): a sleep no rule names, shown with its stack.\n";
}

}  // namespace wp
