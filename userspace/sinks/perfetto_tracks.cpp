// SPDX-License-Identifier: Apache-2.0
#include "sinks/perfetto_tracks.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/units.h"
#include "sinks/perfetto.pb.h"

namespace wp::pftrace {
namespace {

namespace pb = ::wp::perfetto;

// All our packets come from one writer: one sequence.
constexpr std::uint32_t kSequenceId = 1;
// Interning tables stop growing here; names past it are written inline.
constexpr std::size_t kMaxInternedNames = 4096;

void append_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

pb::TracePacket packet_at(std::optional<Nanos> ts) {
  pb::TracePacket p;
  p.set_trusted_packet_sequence_id(kSequenceId);
  if (ts) {
    p.set_timestamp(*ts);
    // On every packet rather than once in TracePacketDefaults: defaults are sequence state
    // the importer drops with the sequence's incremental state; this can't be lost.
    p.set_timestamp_clock_id(pb::BUILTIN_CLOCK_MONOTONIC);
  }
  return p;
}

// The iid of `name` in `table`, adding it to the packet's interned data if new; 0 once the
// table is full (the caller writes the name inline).
template <typename AddEntry>
std::uint64_t intern(std::map<std::string, std::uint64_t>& table, const std::string& name,
                     AddEntry add_entry) {
  if (auto it = table.find(name); it != table.end()) return it->second;
  if (table.size() >= kMaxInternedNames) return 0;
  const std::uint64_t iid = table.size() + 1;
  table.emplace(name, iid);
  auto* entry = add_entry();
  entry->set_iid(iid);
  entry->set_name(name);
  return iid;
}

}  // namespace

bool Lane::fits(Nanos begin, Nanos end) const {
  if (begin < taken_until) return false;
  return std::none_of(recent.begin(), recent.end(),
                      [&](const auto& s) { return begin < s.second && s.first < end; });
}

void Lane::take(Nanos begin, Nanos end) {
  recent.insert(std::upper_bound(recent.begin(), recent.end(), std::make_pair(begin, end)),
                {begin, end});
  if (recent.size() > kLaneMemory) {
    taken_until = std::max(taken_until, recent.front().second);
    recent.pop_front();
  }
}

TrackWriter::TrackWriter(std::ostream& out, const std::vector<DeviceInfo>& devices,
                         ClockReadings clocks, std::uint64_t id_seed)
    : out_(out), clocks_(clocks), random_(id_seed) {
  for (const auto& d : devices) device_names_[d.dev] = d.name;
}

TrackWriter::~TrackWriter() = default;

std::uint64_t TrackWriter::new_id() {
  std::uint64_t id = 0;
  while (id == 0) id = random_();
  return id;
}

void TrackWriter::emit(const pb::TracePacket& packet) {
  pending_.push_back('\x0a');  // Trace.packet: field 1, length-delimited
  const std::string bytes = packet.SerializeAsString();
  append_varint(pending_, bytes.size());
  pending_ += bytes;
}

void TrackWriter::write_pending() {
  out_.write(pending_.data(), static_cast<std::streamsize>(pending_.size()));
  pending_.clear();
}

void TrackWriter::start() {
  if (started_) return;
  started_ = true;
  pb::TracePacket clock = packet_at(std::nullopt);
  clock.set_sequence_flags(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
  pb::ClockSnapshot& snapshot = *clock.mutable_clock_snapshot();
  snapshot.set_primary_trace_clock(pb::BUILTIN_CLOCK_MONOTONIC);
  for (auto [id, value] : {std::pair{pb::BUILTIN_CLOCK_MONOTONIC, clocks_.monotonic},
                           std::pair{pb::BUILTIN_CLOCK_REALTIME, clocks_.realtime},
                           std::pair{pb::BUILTIN_CLOCK_BOOTTIME, clocks_.boottime}}) {
    pb::ClockSnapshot::Clock& c = *snapshot.add_clocks();
    c.set_clock_id(id);
    c.set_timestamp(value);
  }
  emit(clock);
}

void TrackWriter::event(std::uint64_t track, Nanos ts, EventType type, const Slice* slice) {
  pb::TracePacket p = packet_at(ts);
  pb::TrackEvent& e = *p.mutable_track_event();
  switch (type) {
    case EventType::SliceBegin: e.set_type(pb::TrackEvent::TYPE_SLICE_BEGIN); break;
    case EventType::SliceEnd: e.set_type(pb::TrackEvent::TYPE_SLICE_END); break;
    case EventType::Instant: e.set_type(pb::TrackEvent::TYPE_INSTANT); break;
  }
  e.set_track_uuid(track);
  bool interned = false;
  if (slice) {
    const std::uint64_t name_iid =
        slice->intern_name ? intern(event_names_, slice->name,
                                    [&] { return p.mutable_interned_data()->add_event_names(); })
                           : 0;
    if (name_iid) {
      e.set_name_iid(name_iid);
      interned = true;
    } else {
      e.set_name(slice->name);
    }
    for (const Arg& a : slice->args) {
      pb::DebugAnnotation& d = *e.add_debug_annotations();
      const std::uint64_t arg_iid = intern(annotation_names_, a.name, [&] {
        return p.mutable_interned_data()->add_debug_annotation_names();
      });
      if (arg_iid) {
        d.set_name_iid(arg_iid);
        interned = true;
      } else {
        d.set_name(a.name);
      }
      if (const auto* u = std::get_if<std::uint64_t>(&a.value)) d.set_uint_value(*u);
      if (const auto* i = std::get_if<std::int64_t>(&a.value)) d.set_int_value(*i);
      if (const auto* s = std::get_if<std::string>(&a.value)) d.set_string_value(*s);
    }
    for (auto id : slice->flow_ids) e.add_flow_ids(id);
    for (auto id : slice->terminating_flow_ids) e.add_terminating_flow_ids(id);
  }
  if (interned) p.set_sequence_flags(pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
  emit(p);
}

void TrackWriter::draw(std::uint64_t track, const Slice& slice) {
  if (!slice.end) {
    event(track, slice.begin, EventType::Instant, &slice);
    return;
  }
  event(track, slice.begin, EventType::SliceBegin, &slice);
  event(track, std::max(*slice.end, slice.begin), EventType::SliceEnd, nullptr);
}

void TrackWriter::begin_slice(std::uint64_t track, const Slice& slice) {
  event(track, slice.begin, EventType::SliceBegin, &slice);
}

void TrackWriter::end_slice(std::uint64_t track, Nanos ts) {
  event(track, ts, EventType::SliceEnd, nullptr);
}

void TrackWriter::descriptor(std::optional<Nanos> ts, std::uint64_t uuid, std::uint64_t parent_uuid,
                             const std::string& name) {
  pb::TracePacket p = packet_at(ts);
  pb::TrackDescriptor& d = *p.mutable_track_descriptor();
  d.set_uuid(uuid);
  if (parent_uuid) d.set_parent_uuid(parent_uuid);
  d.set_name(name);
  emit(p);
}

std::string TrackWriter::device_label(DevT dev) const {
  auto it = device_names_.find(dev);
  return it == device_names_.end() || it->second.empty() ? dev_string(dev)
                                                         : it->second + " " + dev_string(dev);
}

void TrackWriter::describe_process(Nanos ts, std::uint32_t pid, std::uint64_t uuid,
                                   const std::string& name) {
  pb::TracePacket p = packet_at(ts);
  pb::TrackDescriptor& d = *p.mutable_track_descriptor();
  d.set_uuid(uuid);
  d.mutable_process()->set_pid(static_cast<std::int32_t>(pid));
  d.mutable_process()->set_process_name(name);
  emit(p);
}

// A process track's name: its command, then its container's name (or short id) in brackets,
// so the processes of one container sort together in the UI's list.
namespace {
std::string process_name(const SyscallEvent& call) {
  if (!call.container) return call.comm;
  return fmt::format("{} [{}]", call.comm, call.container->label());
}
}  // namespace

std::uint64_t TrackWriter::thread_track(const SyscallEvent& call) {
  auto [process, new_process] = processes_.try_emplace(call.pid);
  const bool main_thread = call.tid == call.pid;
  const std::string name = process_name(call);
  if (new_process) {
    process->second.uuid = new_id();
    process->second.name = name;
    process->second.named_by_main_thread = main_thread;
    describe_process(call.start_ns, call.pid, process->second.uuid, name);
  } else if (main_thread && !process->second.named_by_main_thread) {
    // The main thread's name is the process's; another thread's only until it shows up.
    process->second.named_by_main_thread = true;
    if (process->second.name != name) {
      process->second.name = name;
      describe_process(call.start_ns, call.pid, process->second.uuid, name);
    }
  }
  auto [thread, new_thread] = threads_.try_emplace(call.tid, 0);
  if (new_thread) {
    thread->second = new_id();
    pb::TracePacket p = packet_at(call.start_ns);
    pb::TrackDescriptor& d = *p.mutable_track_descriptor();
    d.set_uuid(thread->second);
    d.set_parent_uuid(process->second.uuid);
    d.mutable_thread()->set_pid(static_cast<std::int32_t>(call.pid));
    d.mutable_thread()->set_tid(static_cast<std::int32_t>(call.tid));
    d.mutable_thread()->set_thread_name(call.comm);
    emit(p);
  }
  return thread->second;
}

std::uint64_t TrackWriter::disk_track(DevT disk, Nanos ts) {
  auto [it, added] = disk_tracks_.try_emplace(disk, 0);
  if (added) {
    it->second = new_id();
    descriptor(ts, it->second, 0, device_label(disk));
  }
  return it->second;
}

LanePool& TrackWriter::disk_pool(DevT disk, Nanos ts) {
  auto [it, added] = disk_pools_.try_emplace(disk);
  if (added) {
    it->second.parent_uuid = disk_track(disk, ts);
    it->second.name = device_label(disk);
  }
  return it->second;
}

LanePool& TrackWriter::nvme_pool(DevT disk, std::uint16_t qid, Nanos ts) {
  auto [it, added] = nvme_pools_.try_emplace({disk, qid});
  if (added) {
    auto name_it = device_names_.find(disk);
    const std::string disk_name = name_it == device_names_.end() || name_it->second.empty()
                                      ? dev_string(disk)
                                      : name_it->second;
    it->second.parent_uuid = new_id();
    it->second.name = disk_name + " q" + std::to_string(qid);
    descriptor(ts, it->second.parent_uuid, disk_track(disk, ts), it->second.name);
  }
  return it->second;
}

LanePool& TrackWriter::journal_pool(DevT dev, Nanos ts) {
  auto [it, added] = journal_pools_.try_emplace(dev);
  if (added) {
    it->second.parent_uuid = new_id();
    it->second.name = "journal " + device_label(dev);
    descriptor(ts, it->second.parent_uuid, 0, it->second.name);
  }
  return it->second;
}

void TrackWriter::draw_on_lane(LanePool& pool, const Slice& slice) {
  const Nanos begin = slice.begin;
  const Nanos end = slice.end ? std::max(*slice.end, begin + 1) : begin + 1;
  auto lane = std::find_if(pool.lanes.begin(), pool.lanes.end(),
                           [&](const Lane& l) { return l.fits(begin, end); });
  if (lane == pool.lanes.end()) {
    Lane added;
    added.uuid = new_id();
    descriptor(begin, added.uuid, pool.parent_uuid,
               pool.name + " #" + std::to_string(pool.lanes.size() + 1));
    pool.lanes.push_back(std::move(added));
    lane = std::prev(pool.lanes.end());
  }
  lane->take(begin, end);
  draw(lane->uuid, slice);
}

std::size_t TrackWriter::retained() const {
  std::size_t n = processes_.size() + threads_.size() + disk_tracks_.size() + event_names_.size() +
                  annotation_names_.size();
  for (const auto* pools : {&disk_pools_, &journal_pools_})
    for (const auto& [key, pool] : *pools)
      for (const auto& lane : pool.lanes) n += 1 + lane.recent.size();
  for (const auto& [key, pool] : nvme_pools_)
    for (const auto& lane : pool.lanes) n += 1 + lane.recent.size();
  return n;
}

}  // namespace wp::pftrace
