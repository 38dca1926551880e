// SPDX-License-Identifier: Apache-2.0
// Perfetto sink: the trace as a Perfetto protobuf file (open it in ui.perfetto.dev). Each traced
// thread gets a track with its write and sync calls as slices (sync phases nested under the
// sync); each disk gets request lanes, each NVMe queue command lanes, each journal a track of
// commits; flow arrows lead from a call to the requests it caused, from a request to its NVMe
// command and to the cache flush that made it durable.
//
// The file is streamed: a Perfetto trace is a concatenation of length-delimited TracePackets
// (field 1 of Trace), so each timeline's packets are appended as it arrives. The sink keeps only
// what later packets refer to: the tracks it has described, the lanes' recent occupancy, the
// interning tables, and bounded windows of recently seen requests and journal commits (the same
// request or commit appears in several timelines and is drawn once). Its memory is bounded by
// the number of threads, devices and names, never by the number of timelines.
//
// Timestamps are bpf_ktime_get_ns (CLOCK_MONOTONIC): every timestamped packet says so with
// timestamp_clock_id = BUILTIN_CLOCK_MONOTONIC, and the leading clock snapshot (MONOTONIC,
// REALTIME and BOOTTIME read together when the sink is created) makes MONOTONIC the trace's
// primary clock, so the importer shows times as they are, can show wall-clock time, and can
// merge the file with a system Perfetto trace (whose default clock is BOOTTIME).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <ostream>
#include <vector>

#include "sinks/sink.h"

namespace wp {

// The clocks of the trace's clock snapshot, read at one moment.
struct ClockReadings {
  Nanos monotonic = 0;
  Nanos realtime = 0;
  Nanos boottime = 0;
};

// MONOTONIC, REALTIME and BOOTTIME, read back to back.
ClockReadings read_clocks();

class PerfettoSink : public Sink {
 public:
  // `devices` name the tracks ("vda 254:0"); a device missing there is named by number. Reads
  // the clocks for the snapshot now.
  PerfettoSink(std::ostream& out, std::vector<DeviceInfo> devices);
  // `id_seed`: the track and flow ids drawn from it (the golden cases' fixed output); by
  // default random, so that traces merged in one Perfetto session never share an id.
  PerfettoSink(std::ostream& out, std::vector<DeviceInfo> devices, ClockReadings clocks,
               std::optional<std::uint64_t> id_seed = std::nullopt);
  ~PerfettoSink() override;

  void timeline(const Timeline& item) override;
  void summary(const TraceSummary& totals) override;
  void flush() override;

  // Entries the sink holds between timelines (tracks, lanes and their recent slices, interned
  // names, remembered requests and commits): what must stay flat however long the trace.
  std::size_t retained() const;

 private:
  class Writer;
  std::unique_ptr<Writer> writer_;
};

}  // namespace wp
