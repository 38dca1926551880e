#include "sinks/perfetto_sink.h"

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "sinks/perfetto.pb.h"
#include "common/units.h"

namespace wp {
namespace {

namespace pb = ::wp::perfetto;

// All our packets come from one writer: one sequence.
constexpr std::uint32_t kSequenceId = 1;

// How many distinct requests (and journal commits) the sink remembers to draw each once. A
// request shows up in the timelines of the calls it carried data for and of the syncs that
// waited for it; those timelines finish close together, well within this many requests.
constexpr std::size_t kRecentRequests = 4096;
constexpr std::size_t kRecentCommits = 1024;
// Interning tables stop growing here; names past it are written inline.
constexpr std::size_t kMaxInternedNames = 4096;
// Slices a lane remembers exactly; older ones only as the time before which the lane is taken.
constexpr std::size_t kLaneMemory = 8;

// A debug annotation before interning: its name and one value.
struct Arg {
  const char* name;
  std::variant<std::uint64_t, std::int64_t, std::string> value;
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

// The first time we know the request existed at the device (or before, if that is all we know);
// a flush seen only completing (its issue was not traced) begins there.
std::optional<Nanos> request_begin(const RequestTimeline& r) {
  if (auto start = request_start(r)) return start;
  return r.complete_ns;
}

std::string nvme_opcode_name(std::uint8_t opcode) {
  switch (opcode) {
    case 0x00: return "flush";
    case 0x01: return "write";
    case 0x02: return "read";
    case 0x08: return "write zeroes";
    case 0x09: return "dataset management";
  }
  return "opcode " + std::to_string(opcode);
}

void append_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// Slices that may overlap (requests in flight together), spread over child tracks ("lanes") so
// that no two on one lane overlap: the importer nests slices of a track by time, and concurrent
// requests are not nested in one another. Timelines arrive in the order they finish, not in the
// order their requests ran, so a lane remembers its last few slices exactly (a late slice may
// fit between them) and before those only the time it is taken until.
struct Lane {
  std::uint64_t uuid = 0;
  Nanos taken_until = 0;                       // everything before this may be taken
  std::deque<std::pair<Nanos, Nanos>> recent;  // exact [begin, end), in time order

  bool fits(Nanos begin, Nanos end) const {
    if (begin < taken_until) return false;
    return std::none_of(recent.begin(), recent.end(),
                        [&](const auto& s) { return begin < s.second && s.first < end; });
  }
  void take(Nanos begin, Nanos end) {
    recent.insert(std::upper_bound(recent.begin(), recent.end(), std::make_pair(begin, end)),
                  {begin, end});
    if (recent.size() > kLaneMemory) {
      taken_until = std::max(taken_until, recent.front().second);
      recent.pop_front();
    }
  }
};

struct LanePool {
  std::uint64_t parent_uuid = 0;
  std::string name;
  std::vector<Lane> lanes;
};

// A request as it appears in several timelines (a write's and the fsync that wrote it): the
// same disk, sector and issue time.
using RequestKey = std::tuple<DevT, std::uint64_t, Nanos>;

struct SeenRequest {
  std::uint64_t chain = 0;  // flow through the request to its NVMe command and its flush
  bool nvme_drawn = false;  // its NVMe command (a later copy may be the first to know it)
  std::optional<Nanos> awaiting_flush_at;  // in `awaiting_flush_` under this completion time
};

using CommitKey = std::tuple<DevT, std::uint32_t, Nanos>;

}  // namespace

ClockReadings read_clocks() {
  auto read = [](clockid_t id) {
    timespec ts{};
    clock_gettime(id, &ts);
    return static_cast<Nanos>(ts.tv_sec) * 1'000'000'000 + static_cast<Nanos>(ts.tv_nsec);
  };
  ClockReadings clocks;
  clocks.monotonic = read(CLOCK_MONOTONIC);
  clocks.realtime = read(CLOCK_REALTIME);
  clocks.boottime = read(CLOCK_BOOTTIME);
  return clocks;
}

// Turns timelines into packets as they come. Flows are written as they can be known when the
// first slice of each is written, since nothing written can be amended:
//  - call → request: when the call's timeline is the first to show the request (the request is
//    drawn then). A request shared by several calls (writes whose pages went out together, and
//    the fsync that sent them) gets the arrow from the first of them to arrive only.
//  - request → NVMe command: always; the command may be drawn from a later copy of the request.
//  - request → flush: when the request was drawn before the flush that made it durable (a
//    write's or sync's request before the sync timeline holding the flush, or both in one
//    sync timeline, the common case). A request first seen after its flush was drawn gets none.
// (Keeping every timeline until the end of the trace linked them all, at the cost of memory
// growing with the trace.)
class PerfettoSink::Writer {
 public:
  Writer(std::ostream& out, const std::vector<DeviceInfo>& devices, ClockReadings clocks)
      : out_(out), clocks_(clocks), random_(std::random_device{}()) {
    for (const auto& d : devices) device_names_[d.dev] = d.name;
  }

  void add(const Timeline& item) {
    start();
    std::visit([this](const auto& t) { add_item(t); }, item);
    out_.write(pending_.data(), static_cast<std::streamsize>(pending_.size()));
    pending_.clear();
  }

  void finish() {
    start();
    out_.write(pending_.data(), static_cast<std::streamsize>(pending_.size()));
    pending_.clear();
  }

  std::ostream& out() { return out_; }

  std::size_t retained() const {
    std::size_t n = processes_.size() + threads_.size() + disk_tracks_.size() +
                    event_names_.size() + annotation_names_.size() + recent_requests_.size() +
                    recent_request_order_.size() + awaiting_flush_.size() + recent_commits_.size() +
                    recent_commit_order_.size();
    for (const auto* pools : {&disk_pools_, &journal_pools_})
      for (const auto& [key, pool] : *pools)
        for (const auto& lane : pool.lanes) n += 1 + lane.recent.size();
    for (const auto& [key, pool] : nvme_pools_)
      for (const auto& lane : pool.lanes) n += 1 + lane.recent.size();
    return n;
  }

 private:
  // ---- ids ----

  // Random, so that two traces merged into one don't collide; 0 is the importer's "none".
  std::uint64_t new_id() {
    std::uint64_t id = 0;
    while (id == 0) id = random_();
    return id;
  }

  // ---- packets ----

  void emit(const pb::TracePacket& packet) {
    pending_.push_back('\x0a');  // Trace.packet: field 1, length-delimited
    const std::string bytes = packet.SerializeAsString();
    append_varint(pending_, bytes.size());
    pending_ += bytes;
  }

  static pb::TracePacket packet_at(std::optional<Nanos> ts) {
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

  // First, before any timestamp is converted: the clocks, MONOTONIC the trace's own. It also
  // starts the sequence's incremental state (the interning tables).
  void start() {
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

  // The iid of `name` in `table`, adding it to the packet's interned data if new; 0 once the
  // table is full (the caller writes the name inline).
  template <typename AddEntry>
  static std::uint64_t intern(std::map<std::string, std::uint64_t>& table, const std::string& name,
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

  void event(std::uint64_t track, Nanos ts, pb::TrackEvent::Type type, const Slice* slice) {
    pb::TracePacket p = packet_at(ts);
    pb::TrackEvent& e = *p.mutable_track_event();
    e.set_type(type);
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

  // A slice with its END (or an instant), alone on its track or nested in an enclosing one the
  // caller writes around it. Events of one track at equal timestamps keep their order here.
  void draw(std::uint64_t track, const Slice& slice) {
    if (!slice.end) {
      event(track, slice.begin, pb::TrackEvent::TYPE_INSTANT, &slice);
      return;
    }
    event(track, slice.begin, pb::TrackEvent::TYPE_SLICE_BEGIN, &slice);
    event(track, std::max(*slice.end, slice.begin), pb::TrackEvent::TYPE_SLICE_END, nullptr);
  }

  void descriptor(std::optional<Nanos> ts, std::uint64_t uuid, std::uint64_t parent_uuid,
                  const std::string& name) {
    pb::TracePacket p = packet_at(ts);
    pb::TrackDescriptor& d = *p.mutable_track_descriptor();
    d.set_uuid(uuid);
    if (parent_uuid) d.set_parent_uuid(parent_uuid);
    d.set_name(name);
    emit(p);
  }

  // ---- tracks ----

  std::string device_label(DevT dev) const {
    auto it = device_names_.find(dev);
    return it == device_names_.end() || it->second.empty() ? dev_string(dev)
                                                           : it->second + " " + dev_string(dev);
  }

  void describe_process(Nanos ts, std::uint32_t pid, std::uint64_t uuid, const std::string& name) {
    pb::TracePacket p = packet_at(ts);
    pb::TrackDescriptor& d = *p.mutable_track_descriptor();
    d.set_uuid(uuid);
    d.mutable_process()->set_pid(static_cast<std::int32_t>(pid));
    d.mutable_process()->set_process_name(name);
    emit(p);
  }

  std::uint64_t thread_track(const SyscallEvent& call) {
    auto [process, new_process] = processes_.try_emplace(call.pid);
    const bool main_thread = call.tid == call.pid;
    if (new_process) {
      process->second.uuid = new_id();
      process->second.name = call.comm;
      process->second.named_by_main_thread = main_thread;
      describe_process(call.start_ns, call.pid, process->second.uuid, call.comm);
    } else if (main_thread && !process->second.named_by_main_thread) {
      // The main thread's name is the process's; another thread's only until it shows up.
      process->second.named_by_main_thread = true;
      if (process->second.name != call.comm) {
        process->second.name = call.comm;
        describe_process(call.start_ns, call.pid, process->second.uuid, call.comm);
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

  std::uint64_t disk_track(DevT disk, Nanos ts) {
    auto [it, added] = disk_tracks_.try_emplace(disk, 0);
    if (added) {
      it->second = new_id();
      descriptor(ts, it->second, 0, device_label(disk));
    }
    return it->second;
  }

  LanePool& disk_pool(DevT disk, Nanos ts) {
    auto [it, added] = disk_pools_.try_emplace(disk);
    if (added) {
      it->second.parent_uuid = disk_track(disk, ts);
      it->second.name = device_label(disk);
    }
    return it->second;
  }

  LanePool& nvme_pool(DevT disk, std::uint16_t qid, Nanos ts) {
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

  LanePool& journal_pool(DevT dev, Nanos ts) {
    auto [it, added] = journal_pools_.try_emplace(dev);
    if (added) {
      it->second.parent_uuid = new_id();
      it->second.name = "journal " + device_label(dev);
      descriptor(ts, it->second.parent_uuid, 0, it->second.name);
    }
    return it->second;
  }

  // Draws the slice on the first lane of the pool free for its whole span (an instant holds its
  // lane for one nanosecond, so that it never sits inside a slice), opening a lane if none is.
  void draw_on_lane(LanePool& pool, const Slice& slice) {
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

  // ---- requests ----

  static RequestKey request_key(const RequestTimeline& r) {
    return {r.disk, r.sector, request_begin(r).value_or(0)};
  }

  // Remembers a request just drawn, forgetting the oldest past the window.
  SeenRequest& remember(const RequestKey& key) {
    recent_request_order_.push_back(key);
    if (recent_request_order_.size() > kRecentRequests) {
      const RequestKey oldest = recent_request_order_.front();
      recent_request_order_.pop_front();
      if (auto it = recent_requests_.find(oldest); it != recent_requests_.end()) {
        forget_awaiting_flush(oldest, it->second);
        recent_requests_.erase(it);
      }
    }
    return recent_requests_[key];
  }

  void forget_awaiting_flush(const RequestKey& key, SeenRequest& seen) {
    if (!seen.awaiting_flush_at) return;
    auto [lo, hi] = awaiting_flush_.equal_range({std::get<0>(key), *seen.awaiting_flush_at});
    for (auto it = lo; it != hi; ++it) {
      if (it->second == key) {
        awaiting_flush_.erase(it);
        break;
      }
    }
    seen.awaiting_flush_at.reset();
  }

  // A data request made durable by a later FLUSH waits for that flush to be drawn.
  void await_flush(const RequestKey& key, SeenRequest& seen, const RequestTimeline& r) {
    if (seen.awaiting_flush_at || !r.durable_ns || r.op == ReqOp::Flush) return;
    if (*r.durable_ns == r.complete_ns.value_or(0)) return;  // FUA or no write cache
    seen.awaiting_flush_at = *r.durable_ns;
    awaiting_flush_.emplace(std::make_pair(r.disk, *r.durable_ns), key);
  }

  void draw_nvme(const RequestTimeline& r, std::uint64_t chain) {
    const NvmeCommand& nvme = *r.nvme;
    Slice command;
    command.begin = *nvme.submit_ns;
    if (nvme.complete_ns) command.end = std::max(*nvme.complete_ns, *nvme.submit_ns);
    command.name = nvme_opcode_name(nvme.opcode);
    if (r.bytes) command.name += " " + human_bytes(r.bytes);
    if (nvme.fua) command.name += " FUA";
    command.args = {{"qid", std::uint64_t{nvme.qid}},
                    {"cid", std::uint64_t{nvme.cid}},
                    {"opcode", std::uint64_t{nvme.opcode}},
                    {"nsid", std::uint64_t{nvme.nsid}}};
    if (nvme.status) command.args.push_back({"status", std::uint64_t{*nvme.status}});
    if (chain) command.flow_ids.push_back(chain);
    draw_on_lane(nvme_pool(r.disk, nvme.qid, command.begin), command);
  }

  // Whether a flow leads from the timeline's call to the request: the call's data requests, not
  // the flushes that happened to complete during a sync.
  enum class Cause { Call, Device };

  // Draws the request the first time it is seen and returns the flow id the calling slice must
  // carry to it (none if it was drawn before). A later copy can still draw its NVMe command.
  std::optional<std::uint64_t> draw_request(const RequestTimeline& r, Cause cause) {
    const RequestKey key = request_key(r);
    const bool has_nvme = r.nvme && r.nvme->submit_ns;
    if (auto it = recent_requests_.find(key); it != recent_requests_.end()) {
      SeenRequest& seen = it->second;
      await_flush(key, seen, r);
      if (has_nvme && !seen.nvme_drawn) {
        seen.nvme_drawn = true;
        draw_nvme(r, seen.chain);
      }
      return std::nullopt;
    }
    const auto begin = request_begin(r);
    if (!begin) return std::nullopt;

    Slice slice;
    slice.begin = *begin;
    if (r.complete_ns) slice.end = std::max(*r.complete_ns, *begin);
    slice.name = rwbs(r.op, r.flags, r.bytes);
    if (r.bytes) slice.name += " " + human_bytes(r.bytes);
    slice.args.push_back({"dev", dev_string(r.disk)});
    if (r.op != ReqOp::Flush) slice.args.push_back({"sector", std::uint64_t{r.sector}});
    slice.args.push_back({"bytes", std::uint64_t{r.bytes}});
    slice.args.push_back({"bios", std::uint64_t{r.bios}});
    if (r.submit_tid) {
      slice.args.push_back({"submit_tid", std::uint64_t{*r.submit_tid}});
      slice.args.push_back({"submit_comm", r.submit_comm});
      slice.args.push_back({"submit_why", std::string(submit_why_name(r.submit_why))});
    }
    if (r.durable_ns) slice.args.push_back({"durable_ns", std::uint64_t{*r.durable_ns}});
    if (r.error) slice.args.push_back({"error", std::string(errno_name(r.error))});

    std::optional<std::uint64_t> from_call;
    if (cause == Cause::Call) {
      from_call = new_id();
      slice.terminating_flow_ids.push_back(*from_call);
    }
    SeenRequest& seen = remember(key);
    if (r.op == ReqOp::Flush) {
      for (auto chain : flush_made_durable(r)) slice.terminating_flow_ids.push_back(chain);
    } else {
      seen.chain = new_id();
      slice.flow_ids.push_back(seen.chain);
      await_flush(key, seen, r);
    }
    draw_on_lane(disk_pool(r.disk, slice.begin), slice);
    if (has_nvme) {
      seen.nvme_drawn = true;
      draw_nvme(r, seen.chain);
    }
    return from_call;
  }

  // The chains of the drawn requests this flush made durable: they end at the flush.
  std::vector<std::uint64_t> flush_made_durable(const RequestTimeline& flush) {
    std::vector<std::uint64_t> chains;
    if (!flush.complete_ns) return chains;
    auto [lo, hi] = awaiting_flush_.equal_range({flush.disk, *flush.complete_ns});
    for (auto it = lo; it != hi;) {
      if (auto seen = recent_requests_.find(it->second); seen != recent_requests_.end()) {
        chains.push_back(seen->second.chain);
        seen->second.awaiting_flush_at.reset();
      }
      it = awaiting_flush_.erase(it);
    }
    return chains;
  }

  // ---- timelines ----

  void add_item(const WriteTimeline& write) {
    const SyscallEvent& call = write.call;
    Slice slice;
    slice.begin = call.start_ns;
    slice.end = std::max(call.end_ns, call.start_ns);
    const std::uint64_t bytes = call.ret > 0 ? static_cast<std::uint64_t>(call.ret) : call.count;
    slice.name = std::string(syscall_name(call.syscall)) + " " + human_bytes(bytes);
    slice.args.push_back({"dev", dev_string(call.dev)});
    slice.args.push_back({"ino", std::uint64_t{call.ino}});
    slice.args.push_back({"offset", std::uint64_t{call.pos}});
    slice.args.push_back({"bytes", bytes});
    if (call.ret < 0) slice.args.push_back({"error", errno_name(static_cast<int>(call.ret))});
    slice.args.push_back({"state", std::string(write_state_name(write.state))});
    if (write.durable_via != DurableVia::None)
      slice.args.push_back({"durable_via", std::string(durable_via_name(write.durable_via))});
    slice.args.push_back({"pages_dirtied", std::uint64_t{call.pages_dirtied}});
    if (write.direct) slice.args.push_back({"direct", std::string("yes")});
    if (write.incomplete) slice.args.push_back({"incomplete", std::string("yes")});
    const std::uint64_t track = thread_track(call);
    for (const auto& request : write.requests)
      if (auto flow = draw_request(request, Cause::Call)) slice.flow_ids.push_back(*flow);
    draw(track, slice);
  }

  void add_item(const SyncTimeline& sync) {
    const SyscallEvent& call = sync.call;
    const Nanos start = call.start_ns;
    const Nanos end = std::max(call.end_ns, call.start_ns);
    Slice slice;
    slice.begin = start;
    slice.end = end;
    slice.name = syscall_name(call.syscall);
    if (call.dev != 0) slice.args.push_back({"dev", dev_string(call.dev)});
    slice.args.push_back({"ino", std::uint64_t{call.ino}});
    slice.args.push_back({"ret", std::int64_t{call.ret}});
    slice.args.push_back({"writeback_ns", std::uint64_t{sync.phases.writeback_ns}});
    slice.args.push_back({"data_io_ns", std::uint64_t{sync.phases.data_io_ns}});
    slice.args.push_back({"journal_ns", std::uint64_t{sync.phases.journal_ns}});
    slice.args.push_back({"flush_ns", std::uint64_t{sync.phases.flush_ns}});
    slice.args.push_back({"other_ns", std::uint64_t{sync.phases.other_ns}});
    if (sync.incomplete) slice.args.push_back({"incomplete", std::string("yes")});
    const std::uint64_t track = thread_track(call);
    // Data requests before the flushes: a flush ends the chains of the requests it made durable
    // that are drawn by then.
    for (const auto& request : sync.requests)
      if (auto flow = draw_request(request, Cause::Call)) slice.flow_ids.push_back(*flow);
    for (const auto& flush : sync.flushes) draw_request(flush, Cause::Device);
    for (const auto& commit : sync.commits) add_commit(commit);

    // The sync, and where its time went nested under it: the stitcher's phase segments, as they
    // are (time no phase covers is not drawn; the sync's args give the exact totals).
    event(track, start, pb::TrackEvent::TYPE_SLICE_BEGIN, &slice);
    for (const PhaseSegment& segment : sync.segments) {
      if (segment.phase == SyncPhase::Other) continue;
      Slice phase;
      phase.begin = std::clamp(segment.start_ns, start, end);
      phase.end = std::clamp(segment.end_ns, phase.begin, end);
      if (*phase.end == phase.begin) continue;
      phase.name = sync_phase_label(segment.phase);
      draw(track, phase);
    }
    event(track, end, pb::TrackEvent::TYPE_SLICE_END, nullptr);
  }

  void add_commit(const JournalCommit& commit) {
    const CommitKey key{commit.dev, commit.transaction, first_known(commit)};
    if (!recent_commits_.insert(key).second) return;
    recent_commit_order_.push_back(key);
    if (recent_commit_order_.size() > kRecentCommits) {
      recent_commits_.erase(recent_commit_order_.front());
      recent_commit_order_.pop_front();
    }
    Slice slice;
    slice.begin = first_known(commit);
    if (commit.end_ns) slice.end = std::max(*commit.end_ns, slice.begin);
    slice.name = "commit " + std::to_string(commit.transaction);
    slice.intern_name = false;
    slice.args.push_back({"dev", dev_string(commit.dev)});
    slice.args.push_back({"transaction", std::uint64_t{commit.transaction}});
    auto phase_at = [&](const char* name, const std::optional<Nanos>& t) {
      if (t) slice.args.push_back({name, std::uint64_t{*t - std::min(*t, slice.begin)}});
    };
    phase_at("locking_at_ns", commit.locking_ns);
    phase_at("flushing_at_ns", commit.flushing_ns);
    phase_at("logging_at_ns", commit.logging_ns);
    draw_on_lane(journal_pool(commit.dev, slice.begin), slice);
  }

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

  std::map<RequestKey, SeenRequest> recent_requests_;
  std::deque<RequestKey> recent_request_order_;  // oldest first
  // (disk, durable time) → drawn requests made durable by a flush not drawn yet.
  std::multimap<std::pair<DevT, Nanos>, RequestKey> awaiting_flush_;
  std::set<CommitKey> recent_commits_;
  std::deque<CommitKey> recent_commit_order_;  // oldest first
};

PerfettoSink::PerfettoSink(std::ostream& out, std::vector<DeviceInfo> devices)
    : PerfettoSink(out, std::move(devices), read_clocks()) {}

PerfettoSink::PerfettoSink(std::ostream& out, std::vector<DeviceInfo> devices, ClockReadings clocks)
    : writer_(std::make_unique<Writer>(out, devices, clocks)) {}

PerfettoSink::~PerfettoSink() = default;

void PerfettoSink::timeline(const Timeline& item) {
  writer_->add(item);
}

void PerfettoSink::summary(const TraceSummary& /*totals*/) {
  writer_->finish();
}

void PerfettoSink::flush() {
  writer_->finish();
  writer_->out().flush();
}

std::size_t PerfettoSink::retained() const {
  return writer_->retained();
}

}  // namespace wp
