// Perfetto sink: the whole trace as one Perfetto protobuf file (open it in ui.perfetto.dev).
// Each traced thread gets a track with its write and sync calls as slices (sync phases nested
// under the sync); each disk gets request lanes, each NVMe queue command lanes, each journal a
// track of commits; flow arrows lead from a write to its requests, their NVMe commands and the
// cache flush that made them durable.
//
// A trace file is written once: the sink keeps the timelines and writes the file at summary().
// Timestamps are bpf_ktime_get_ns (CLOCK_MONOTONIC): every timestamped packet says so with
// timestamp_clock_id = BUILTIN_CLOCK_MONOTONIC, and a leading clock snapshot makes MONOTONIC the
// trace's primary clock, so the importer shows them as they are (its default is BOOTTIME, which
// it could not convert MONOTONIC to without a second clock reading we don't have).
#pragma once

#include <ostream>
#include <vector>

#include "sinks/sink.h"

namespace wp {

class PerfettoSink : public Sink {
 public:
  // `devices` name the tracks ("vda 254:0"); a device missing there is named by number.
  PerfettoSink(std::ostream& out, std::vector<DeviceInfo> devices)
      : out_(out), devices_(std::move(devices)) {}
  void timeline(const Timeline& item) override;
  void summary(const TraceSummary& totals) override;
  void flush() override;

 private:
  std::ostream& out_;
  std::vector<DeviceInfo> devices_;
  std::vector<Timeline> timelines_;
  bool written_ = false;
};

}  // namespace wp
