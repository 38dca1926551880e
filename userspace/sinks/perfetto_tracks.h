// SPDX-License-Identifier: Apache-2.0
// The Perfetto sink's packet layer: the track descriptors (processes, threads, disks, NVMe
// queues, journals, and the lanes that keep overlapping slices apart), the interning tables,
// and the encoding of slices as TrackEvent packets. The sink above it decides what to draw;
// this decides how it is written, and is the only part that knows the protobuf types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sinks/perfetto_sink.h"

namespace wp::perfetto {
class TracePacket;  // perfetto.pb.h, kept out of this header
}

namespace wp::pftrace {

// A debug annotation before interning: its name and one value.
struct Arg {
  using Value = std::variant<std::uint64_t, std::int64_t, std::string>;
  // A constructor rather than an aggregate: clang 14 (the fuzz build) has no parenthesized
  // aggregate initialization, which emplace_back needs.
  Arg(const char* arg_name, Value arg_value) : name(arg_name), value(std::move(arg_value)) {}
  const char* name;
  Value value;
};

// A slice (or, without an end, an instant) to draw on a track.
struct Slice {
  Nanos begin = 0;
  std::optional<Nanos> end;  // none: an instant
  std::string name;
  bool intern_name = true;  // false for names that never repeat ("commit 4711")
  std::vector<Arg> args;
  std::vector<std::uint64_t> flow_ids;              // flows leaving or passing through
  std::vector<std::uint64_t> terminating_flow_ids;  // flows ending here
};

// Slices a lane remembers exactly; older ones only as the time before which the lane is taken.
inline constexpr std::size_t kLaneMemory = 8;

// Slices that may overlap (requests in flight together), spread over child tracks ("lanes") so
// that no two on one lane overlap: the importer nests slices of a track by time, and concurrent
// requests are not nested in one another. Timelines arrive in the order they finish, not in the
// order their requests ran, so a lane remembers its last few slices exactly (a late slice may
// fit between them) and before those only the time it is taken until.
struct Lane {
  std::uint64_t uuid = 0;
  Nanos taken_until = 0;                       // everything before this may be taken
  std::deque<std::pair<Nanos, Nanos>> recent;  // exact [begin, end), in time order

  bool fits(Nanos begin, Nanos end) const;
  void take(Nanos begin, Nanos end);
};

struct LanePool {
  std::uint64_t parent_uuid = 0;
  std::string name;
  std::vector<Lane> lanes;
};

// Packets are appended to a pending buffer and written to the stream a timeline at a time.
class TrackWriter {
 public:
  // `id_seed` seeds the track and flow ids (PerfettoSink).
  TrackWriter(std::ostream& out, const std::vector<DeviceInfo>& devices, ClockReadings clocks,
              std::uint64_t id_seed);
  ~TrackWriter();
  TrackWriter(const TrackWriter&) = delete;
  TrackWriter& operator=(const TrackWriter&) = delete;

  // First, before any timestamp is converted: the clocks, MONOTONIC the trace's own. It also
  // starts the sequence's incremental state (the interning tables). Once; later calls do
  // nothing.
  void start();
  // Writes the packets pending to the stream.
  void write_pending();
  std::ostream& out() { return out_; }

  // Random, so that two traces merged into one don't collide; never 0, the importer's "none".
  std::uint64_t new_id();

  // The track of the call's thread, described (with its process) the first time.
  std::uint64_t thread_track(const SyscallEvent& call);
  LanePool& disk_pool(DevT disk, Nanos ts);
  LanePool& nvme_pool(DevT disk, std::uint16_t qid, Nanos ts);
  LanePool& journal_pool(DevT dev, Nanos ts);

  // A slice with its END (or an instant), alone on its track or nested in an enclosing one the
  // caller writes around it. Events of one track at equal timestamps keep their order here.
  void draw(std::uint64_t track, const Slice& slice);
  // Draws the slice on the first lane of the pool free for its whole span (an instant holds its
  // lane for one nanosecond, so that it never sits inside a slice), opening a lane if none is.
  void draw_on_lane(LanePool& pool, const Slice& slice);
  // An enclosing slice, written in two halves around the slices nested in it.
  void begin_slice(std::uint64_t track, const Slice& slice);
  void end_slice(std::uint64_t track, Nanos ts);

  // Entries held: tracks, lanes and their recent slices, interned names.
  std::size_t retained() const;

 private:
  enum class EventType { SliceBegin, SliceEnd, Instant };

  void emit(const perfetto::TracePacket& packet);
  void event(std::uint64_t track, Nanos ts, EventType type, const Slice* slice);
  void descriptor(std::optional<Nanos> ts, std::uint64_t uuid, std::uint64_t parent_uuid,
                  const std::string& name);
  void describe_process(Nanos ts, std::uint32_t pid, std::uint64_t uuid, const std::string& name);
  std::uint64_t disk_track(DevT disk, Nanos ts);
  std::string device_label(DevT dev) const;

  struct Process {
    std::uint64_t uuid = 0;
    std::string name;
    bool named_by_main_thread = false;
  };

  std::ostream& out_;
  const ClockReadings clocks_;
  std::mt19937_64 random_;
  std::map<DevT, std::string> device_names_;
  bool started_ = false;
  std::string pending_;  // the packets of the timeline being added

  std::map<std::uint32_t, Process> processes_;
  std::map<std::uint32_t, std::uint64_t> threads_;  // tid → track uuid
  std::map<DevT, std::uint64_t> disk_tracks_;
  std::map<DevT, LanePool> disk_pools_;
  std::map<std::pair<DevT, std::uint16_t>, LanePool> nvme_pools_;
  std::map<DevT, LanePool> journal_pools_;
  std::map<std::string, std::uint64_t> event_names_;       // name → iid
  std::map<std::string, std::uint64_t> annotation_names_;  // name → iid
};

}  // namespace wp::pftrace
