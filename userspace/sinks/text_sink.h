// SPDX-License-Identifier: Apache-2.0
// Human text sink: one block per finished item, a header line with the verdict (latency, state,
// when it became durable) and one indented line per stage, with times relative to the syscall's
// start in a right-aligned column so a person can read the journey top to bottom.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "sinks/sink.h"
#include "sinks/text_summary.h"

namespace wp {

// The blocks the sink writes, each ending in '\n' (the summary's: text_summary.h). Exposed
// for tests.
std::string format_timeline(const Timeline& item, const SinkOptions& options);

// A process name safe to print to a terminal: control characters (C0, DEL, UTF-8-encoded C1)
// and backslash become \xNN / \\, since any process can set its comm to an escape sequence.
std::string printable_comm(std::string_view comm);
// "dd (pid 4211, cgroup /batch.slice)": a process whose data a disk wrote (a neighbour).
std::string owner_text(const IoOwner& owner);
// " bindfs (pid 812/813)" for the FUSE daemon that answered a call (", which answered EIO"
// when it refused), "" when the kernel did not say which.
std::string fuse_daemon_text(const std::optional<FuseDaemon>& daemon);

class TextSink : public Sink {
 public:
  TextSink(std::ostream& out, SinkOptions options)
      : out_(out), options_(options), clock_(options.timestamps ? options.clock : std::nullopt) {}
  void timeline(const Timeline& item) override;
  void progress(ItemProgress progress, const Timeline& item) override;
  void clock(const ClockOffsets& offsets) override {
    if (options_.timestamps) clock_ = offsets;
  }
  void summary(const TraceSummary& totals) override;
  void flush() override;

 private:
  std::ostream& out_;
  SinkOptions options_;
  // The legend, once, before the first block it explains (`block`: the item's block is
  // printed, not only its update line; `why`: its why lines are).
  void show_legend_for(const Timeline& item, bool block, bool why);
  bool legend_shown_ = false;          // the legend goes before the first item it explains, once
  bool why_legend_shown_ = false;      // and the why lines' part, before the first of them
  std::optional<ClockOffsets> clock_;  // with -T: the current offsets (none: no column)
  // Items name their cgroup when asked (--cgroup), or from the first one of a second cgroup on.
  void note_cgroup(const Timeline& item);
  std::string first_cgroup_;  // the cgroup of the first item that had one
};

}  // namespace wp
