// SPDX-License-Identifier: Apache-2.0
// serve's slow-call log: each call over --slow as one JSON line (the object `trace --format
// json` writes for it, causes included), at most a given number a second; the rest counted.
// The file is opened for appending and reopened on request (SIGHUP, after logrotate renamed it).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "agent/output_stream.h"
#include "common/nanos.h"
#include "common/wall_clock.h"
#include "sinks/json_sink.h"
#include "stitch/timeline.h"

namespace wp {

class SlowCallLog {
 public:
  // `path` "" or "-": standard output. Throws Failure (runtime) when the file cannot be opened.
  SlowCallLog(std::string path, Nanos threshold_ns, std::uint32_t per_second);

  // An item finished: written when its call took at least the threshold and the second's
  // budget allows (`now_ns`: the monotonic time it is seen), else counted as dropped.
  void offer(const Timeline& item, Nanos now_ns);
  void set_clock(const ClockOffsets& clock) { clock_ = clock; }
  // Reopens the file (standard output: nothing to do). On failure, keeps the old one and
  // returns why ("" on success).
  std::string reopen();
  // Writes out what is buffered; false (with error()) once a write failed.
  bool flush();
  std::string error() const { return out_->error(); }
  const std::string& name() const { return out_->name(); }

  std::uint64_t written() const { return written_.load(std::memory_order_relaxed); }
  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  std::unique_ptr<OutputStream> open() const;

  std::string path_;
  Nanos threshold_ns_;
  std::uint32_t per_second_;
  std::unique_ptr<OutputStream> out_;
  JsonLineFormatter formatter_;
  std::optional<ClockOffsets> clock_;
  Nanos window_start_ = 0;  // the current one-second budget began here
  std::uint32_t in_window_ = 0;
  // Read by the scrape thread.
  std::atomic<std::uint64_t> written_{0};
  std::atomic<std::uint64_t> dropped_{0};
};

}  // namespace wp
