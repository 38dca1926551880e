#include "sinks/perfetto_sink.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "sinks/perfetto.pb.h"
#include "sinks/units.h"

namespace wp {
namespace {

namespace pb = ::wp::perfetto;

// All our packets come from one writer: one sequence.
constexpr std::uint32_t kSequenceId = 1;

pb::DebugAnnotation arg(const std::string& name, std::uint64_t value) {
  pb::DebugAnnotation a;
  a.set_name(name);
  a.set_uint_value(value);
  return a;
}

pb::DebugAnnotation signed_arg(const std::string& name, std::int64_t value) {
  pb::DebugAnnotation a;
  a.set_name(name);
  a.set_int_value(value);
  return a;
}

pb::DebugAnnotation text_arg(const std::string& name, const std::string& value) {
  pb::DebugAnnotation a;
  a.set_name(name);
  a.set_string_value(value);
  return a;
}

// A slice (or, without an end, an instant) to place on a track.
struct Slice {
  Nanos begin = 0;
  std::optional<Nanos> end;  // none: an instant
  std::string name;
  std::vector<pb::DebugAnnotation> args;
  std::vector<std::uint64_t> flow_ids;              // flows leaving or passing through
  std::vector<std::uint64_t> terminating_flow_ids;  // flows ending here
};

struct Track {
  std::uint64_t uuid = 0;
  std::vector<Slice> slices;
};

// Slices that may overlap (requests in flight together), spread over child tracks ("lanes") so
// that no two on one track overlap: the importer nests slices of a track by time, and
// concurrent requests are not nested in one another.
struct LanePool {
  std::uint64_t parent_uuid = 0;
  std::string name;
  std::vector<Slice> slices;
};

// A request as it appears in several timelines (a write's and the fsync that wrote it): the
// same request is the same disk, sector and issue and completion times.
using RequestKey = std::tuple<DevT, std::uint64_t, Nanos, Nanos, ReqOp>;

RequestKey request_key(const RequestTimeline& r) {
  return {r.disk, r.sector, r.issue_ns.value_or(0), r.complete_ns.value_or(0), r.op};
}

struct RequestEntry {
  RequestTimeline request;
  std::vector<std::uint64_t> flows_in;        // from the calls it carried data for (they end here)
  std::vector<std::uint64_t> flows_on;        // through it: its chain to its NVMe command and flush
  std::vector<std::uint64_t> flows_to_flush;  // flows of requests this flush made durable
};

// The first time we know the request existed at the device (or before, if that is all we know).
std::optional<Nanos> request_begin(const RequestTimeline& r) {
  if (r.issue_ns) return r.issue_ns;
  if (r.insert_ns) return r.insert_ns;
  return r.queue_ns;
}

Nanos first_known(const JournalCommit& c) {
  for (const auto& t : {c.start_ns, c.locking_ns, c.flushing_ns, c.logging_ns, c.end_ns})
    if (t) return *t;
  return 0;
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

// Builds the trace from the timelines: every uuid and flow id is local to one build.
class TraceBuilder {
 public:
  explicit TraceBuilder(const std::vector<DeviceInfo>& devices) {
    for (const auto& d : devices) device_names_[d.dev] = d.name;
  }

  pb::Trace build(const std::vector<Timeline>& timelines) {
    for (const auto& item : timelines)
      if (const auto* sync = std::get_if<SyncTimeline>(&item)) index_flushes(*sync);
    for (const auto& item : timelines) std::visit([this](const auto& t) { add(t); }, item);
    link_requests();
    place_requests();
    return render();
  }

 private:
  std::string device_label(DevT dev) const {
    auto it = device_names_.find(dev);
    return it == device_names_.end() || it->second.empty() ? dev_string(dev)
                                                           : it->second + " " + dev_string(dev);
  }

  std::uint64_t new_uuid() { return next_uuid_++; }
  std::uint64_t new_flow() { return next_flow_++; }

  Track& thread_track(const SyscallEvent& call) {
    auto& process = processes_[call.pid];
    // The main thread's name is the process's; another thread's only until it shows up.
    if (process.name.empty() || call.tid == call.pid) process.name = call.comm;
    auto [it, added] = threads_.try_emplace(call.tid);
    if (added) {
      it->second.pid = call.pid;
      it->second.name = call.comm;
      it->second.track.uuid = new_uuid();
    }
    return it->second.track;
  }

  std::uint64_t disk_track(DevT disk) {
    auto [it, added] = disk_tracks_.try_emplace(disk, 0);
    if (added) it->second = new_uuid();
    return it->second;
  }

  LanePool& disk_pool(DevT disk) {
    auto [it, added] = disk_pools_.try_emplace(disk);
    if (added) {
      it->second.parent_uuid = disk_track(disk);
      it->second.name = device_label(disk);
    }
    return it->second;
  }

  LanePool& nvme_pool(DevT disk, std::uint16_t qid) {
    auto [it, added] = nvme_pools_.try_emplace({disk, qid});
    if (added) {
      std::uint64_t queue_uuid = new_uuid();
      auto name_it = device_names_.find(disk);
      std::string disk_name = name_it == device_names_.end() ? dev_string(disk) : name_it->second;
      queue_tracks_.push_back(
          {queue_uuid, disk_track(disk), disk_name + " q" + std::to_string(qid)});
      it->second.parent_uuid = queue_uuid;
      it->second.name = queue_tracks_.back().name;
    }
    return it->second;
  }

  LanePool& journal_pool(DevT dev) {
    auto [it, added] = journal_pools_.try_emplace(dev);
    if (added) {
      std::uint64_t journal_uuid = new_uuid();
      std::string name = "journal " + device_label(dev);
      journal_tracks_.push_back({journal_uuid, 0, name});
      it->second.parent_uuid = journal_uuid;
      it->second.name = name;
    }
    return it->second;
  }

  RequestEntry& request_entry(const RequestTimeline& r) {
    auto [it, added] = requests_.try_emplace(request_key(r));
    RequestEntry& entry = it->second;
    if (added) {
      entry.request = r;
    } else {
      // Copies are snapshots taken at different moments: keep what any of them knew.
      if (!entry.request.durable_ns) entry.request.durable_ns = r.durable_ns;
      if (!entry.request.nvme) entry.request.nvme = r.nvme;
      if (entry.request.nvme && r.nvme && !entry.request.nvme->complete_ns)
        entry.request.nvme->complete_ns = r.nvme->complete_ns;
    }
    return entry;
  }

  // Flushes are only in sync timelines; index them first so that a write's requests, whatever
  // their order in the stream, find the flush that made them durable.
  void index_flushes(const SyncTimeline& sync) {
    for (const auto& flush : sync.flushes) {
      request_entry(flush);
      if (flush.complete_ns) flush_at_[{flush.disk, *flush.complete_ns}] = request_key(flush);
    }
  }

  void add(const WriteTimeline& write) {
    const SyscallEvent& call = write.call;
    Slice slice;
    slice.begin = call.start_ns;
    slice.end = std::max(call.end_ns, call.start_ns);
    const std::uint64_t bytes = call.ret > 0 ? static_cast<std::uint64_t>(call.ret) : call.count;
    slice.name = std::string(syscall_name(call.syscall)) + " " + human_bytes(bytes);
    slice.args.push_back(text_arg("dev", dev_string(call.dev)));
    slice.args.push_back(arg("ino", call.ino));
    slice.args.push_back(arg("offset", call.pos));
    slice.args.push_back(arg("bytes", bytes));
    if (call.ret < 0)
      slice.args.push_back(text_arg("error", errno_name(static_cast<int>(call.ret))));
    slice.args.push_back(text_arg("state", write_state_name(write.state)));
    if (write.durable_via != DurableVia::None)
      slice.args.push_back(text_arg("durable_via", durable_via_name(write.durable_via)));
    slice.args.push_back(arg("pages_dirtied", call.pages_dirtied));
    if (write.direct) slice.args.push_back(text_arg("direct", "yes"));
    if (write.incomplete) slice.args.push_back(text_arg("incomplete", "yes"));
    for (const auto& request : write.requests) {
      const std::uint64_t flow = new_flow();
      slice.flow_ids.push_back(flow);
      request_entry(request).flows_in.push_back(flow);
    }
    thread_track(call).slices.push_back(std::move(slice));
  }

  void add(const SyncTimeline& sync) {
    const SyscallEvent& call = sync.call;
    const Nanos start = call.start_ns;
    const Nanos end = std::max(call.end_ns, call.start_ns);
    Track& track = thread_track(call);
    Slice slice;
    slice.begin = start;
    slice.end = end;
    slice.name = syscall_name(call.syscall);
    if (call.dev != 0) slice.args.push_back(text_arg("dev", dev_string(call.dev)));
    slice.args.push_back(arg("ino", call.ino));
    slice.args.push_back(signed_arg("ret", call.ret));
    slice.args.push_back(arg("writeback_ns", sync.phases.writeback_ns));
    slice.args.push_back(arg("data_io_ns", sync.phases.data_io_ns));
    slice.args.push_back(arg("journal_ns", sync.phases.journal_ns));
    slice.args.push_back(arg("flush_ns", sync.phases.flush_ns));
    slice.args.push_back(arg("other_ns", sync.phases.other_ns));
    if (sync.incomplete) slice.args.push_back(text_arg("incomplete", "yes"));
    for (const auto& request : sync.requests) {
      const std::uint64_t flow = new_flow();
      slice.flow_ids.push_back(flow);
      request_entry(request).flows_in.push_back(flow);
    }
    for (const auto& commit : sync.commits) add_commit(commit);
    track.slices.push_back(std::move(slice));
    for (auto& phase : phase_slices(sync, start, end)) track.slices.push_back(std::move(phase));
  }

  // Where the sync's time went, as slices nested under it. The same priority sweep as the
  // stitcher's partition (flush over journal over data I/O over writeback); the writeback
  // interval runs to the last first-bio time of its requests, as the timeline has no later
  // bio times, so these slices place the phases and the sync's args give the exact totals.
  static std::vector<Slice> phase_slices(const SyncTimeline& sync, Nanos start, Nanos end) {
    static constexpr std::array<const char*, 4> kNames = {"flush", "journal", "data I/O",
                                                          "writeback"};
    std::array<std::vector<std::pair<Nanos, Nanos>>, 4> intervals;
    for (const auto& f : sync.flushes)
      if (f.complete_ns)
        intervals[0].emplace_back(f.issue_ns.value_or(*f.complete_ns), *f.complete_ns);
    for (const auto& c : sync.commits)
      intervals[1].emplace_back(first_known(c), c.end_ns.value_or(end));
    std::optional<Nanos> last_queued;
    for (const auto& r : sync.requests) {
      intervals[2].emplace_back(request_begin(r).value_or(start), r.complete_ns.value_or(end));
      if (r.queue_ns) last_queued = std::max(last_queued.value_or(0), *r.queue_ns);
    }
    if (last_queued) intervals[3].emplace_back(start, *last_queued);

    struct Edge {
      Nanos at;
      int phase;
      int delta;
    };
    std::vector<Edge> edges;
    for (int p = 0; p < 4; ++p) {
      for (const auto& [lo_raw, hi_raw] : intervals[p]) {
        const Nanos lo = std::max(lo_raw, start), hi = std::min(hi_raw, end);
        if (lo >= hi) continue;
        edges.push_back({lo, p, +1});
        edges.push_back({hi, p, -1});
      }
    }
    std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.at < b.at; });
    std::vector<Slice> slices;
    std::array<int, 4> active{};
    Nanos prev = start;
    auto account = [&](Nanos until) {
      if (until <= prev) return;
      int owner = -1;
      for (int p = 0; p < 4 && owner < 0; ++p)
        if (active[p] > 0) owner = p;
      if (owner >= 0) {
        if (!slices.empty() && slices.back().name == kNames[owner] && *slices.back().end == prev) {
          slices.back().end = until;
        } else {
          Slice s;
          s.begin = prev;
          s.end = until;
          s.name = kNames[owner];
          slices.push_back(std::move(s));
        }
      }
      prev = until;
    };
    for (const Edge& e : edges) {
      account(e.at);
      active[e.phase] += e.delta;
    }
    return slices;
  }

  void add_commit(const JournalCommit& commit) {
    auto key = std::make_tuple(commit.dev, commit.transaction, first_known(commit));
    if (!commits_seen_.insert(key).second) return;
    Slice slice;
    slice.begin = first_known(commit);
    slice.end = commit.end_ns;
    slice.name = "commit " + std::to_string(commit.transaction);
    slice.args.push_back(text_arg("dev", dev_string(commit.dev)));
    slice.args.push_back(arg("transaction", commit.transaction));
    auto phase_at = [&](const char* name, const std::optional<Nanos>& t) {
      if (t) slice.args.push_back(arg(name, *t - std::min(*t, slice.begin)));
    };
    phase_at("locking_at_ns", commit.locking_ns);
    phase_at("flushing_at_ns", commit.flushing_ns);
    phase_at("logging_at_ns", commit.logging_ns);
    journal_pool(commit.dev).slices.push_back(std::move(slice));
  }

  // Chains each request to its NVMe command and to the flush that made it durable.
  void link_requests() {
    for (auto& [key, entry] : requests_) {
      const RequestTimeline& r = entry.request;
      if (r.op == ReqOp::Flush) continue;
      const bool has_nvme = r.nvme && r.nvme->submit_ns;
      RequestEntry* flush = nullptr;
      if (r.durable_ns && *r.durable_ns != r.complete_ns.value_or(0)) {
        auto it = flush_at_.find({r.disk, *r.durable_ns});
        if (it != flush_at_.end()) flush = &requests_.at(it->second);
      }
      if (!has_nvme && !flush) continue;
      const std::uint64_t flow = new_flow();
      entry.flows_on.push_back(flow);
      if (flush) flush->flows_to_flush.push_back(flow);
    }
  }

  void place_requests() {
    for (auto& [key, entry] : requests_) {
      const RequestTimeline& r = entry.request;
      // A flush seen only completing (its issue was not traced) is a zero-length slice.
      const auto begin = request_begin(r) ? request_begin(r) : r.complete_ns;
      if (!begin) continue;
      Slice slice;
      slice.begin = *begin;
      if (r.complete_ns) slice.end = std::max(*r.complete_ns, *begin);
      slice.name = rwbs(r.op, r.flags, r.bytes);
      if (r.bytes) slice.name += " " + human_bytes(r.bytes);
      slice.args.push_back(text_arg("dev", dev_string(r.disk)));
      if (r.op != ReqOp::Flush) slice.args.push_back(arg("sector", r.sector));
      slice.args.push_back(arg("bytes", r.bytes));
      slice.args.push_back(arg("bios", r.bios));
      if (r.submit_tid) {
        slice.args.push_back(arg("submit_tid", *r.submit_tid));
        slice.args.push_back(text_arg("submit_comm", r.submit_comm));
        slice.args.push_back(text_arg("submit_why", submit_why_name(r.submit_why)));
      }
      if (r.durable_ns) slice.args.push_back(arg("durable_ns", *r.durable_ns));
      if (r.error) slice.args.push_back(text_arg("error", errno_name(r.error)));
      slice.terminating_flow_ids = entry.flows_in;
      slice.terminating_flow_ids.insert(slice.terminating_flow_ids.end(),
                                        entry.flows_to_flush.begin(), entry.flows_to_flush.end());
      slice.flow_ids = entry.flows_on;
      disk_pool(r.disk).slices.push_back(std::move(slice));

      if (r.nvme && r.nvme->submit_ns) {
        const NvmeCommand& nvme = *r.nvme;
        Slice command;
        command.begin = *nvme.submit_ns;
        if (nvme.complete_ns) command.end = std::max(*nvme.complete_ns, *nvme.submit_ns);
        command.name = nvme_opcode_name(nvme.opcode);
        if (r.bytes) command.name += " " + human_bytes(r.bytes);
        if (nvme.fua) command.name += " FUA";
        command.args.push_back(arg("qid", nvme.qid));
        command.args.push_back(arg("cid", nvme.cid));
        command.args.push_back(arg("opcode", nvme.opcode));
        command.args.push_back(arg("nsid", nvme.nsid));
        if (nvme.status) command.args.push_back(arg("status", *nvme.status));
        command.flow_ids = entry.flows_on;
        nvme_pool(r.disk, nvme.qid).slices.push_back(std::move(command));
      }
    }
  }

  // ---- rendering ----

  struct TimedEvent {
    Nanos ts = 0;
    pb::TrackEvent event;
  };

  pb::TracePacket& packet(pb::Trace& trace, std::optional<Nanos> ts) {
    pb::TracePacket& p = *trace.add_packet();
    p.set_trusted_packet_sequence_id(kSequenceId);
    if (ts) {
      p.set_timestamp(*ts);
      // On every packet rather than once in TracePacketDefaults: defaults are sequence state
      // the importer drops with the sequence's incremental state; this can't be lost.
      p.set_timestamp_clock_id(pb::BUILTIN_CLOCK_MONOTONIC);
    }
    return p;
  }

  static void descriptor(pb::TracePacket& p, std::uint64_t uuid, std::uint64_t parent_uuid,
                         const std::string& name) {
    pb::TrackDescriptor& d = *p.mutable_track_descriptor();
    d.set_uuid(uuid);
    if (parent_uuid) d.set_parent_uuid(parent_uuid);
    d.set_name(name);
  }

  // BEGIN/END events of one track, in an order that nests: a slice that starts inside another
  // and would outlast it is cut at the other's end (clock skew between CPUs can do that).
  static void track_events(std::uint64_t uuid, std::vector<Slice> slices,
                           std::vector<TimedEvent>& out) {
    std::stable_sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
      if (a.begin != b.begin) return a.begin < b.begin;
      return a.end.value_or(a.begin) > b.end.value_or(b.begin);  // the outer one first
    });
    std::vector<Nanos> open_ends;
    auto end_event = [&](Nanos ts) {
      TimedEvent e{ts, {}};
      e.event.set_type(pb::TrackEvent::TYPE_SLICE_END);
      e.event.set_track_uuid(uuid);
      out.push_back(std::move(e));
    };
    for (Slice& s : slices) {
      while (!open_ends.empty() && open_ends.back() <= s.begin) {
        end_event(open_ends.back());
        open_ends.pop_back();
      }
      TimedEvent e{s.begin, {}};
      e.event.set_track_uuid(uuid);
      e.event.set_name(s.name);
      for (auto& a : s.args) *e.event.add_debug_annotations() = std::move(a);
      for (auto id : s.flow_ids) e.event.add_flow_ids(id);
      for (auto id : s.terminating_flow_ids) e.event.add_terminating_flow_ids(id);
      if (!s.end) {
        e.event.set_type(pb::TrackEvent::TYPE_INSTANT);
        out.push_back(std::move(e));
        continue;
      }
      e.event.set_type(pb::TrackEvent::TYPE_SLICE_BEGIN);
      out.push_back(std::move(e));
      Nanos end = *s.end;
      if (!open_ends.empty()) end = std::min(end, open_ends.back());
      open_ends.push_back(end);
    }
    while (!open_ends.empty()) {
      end_event(open_ends.back());
      open_ends.pop_back();
    }
  }

  // Spreads a pool's slices over lanes: each goes to the first lane free at its start.
  void lane_events(pb::Trace& trace, std::optional<Nanos> first_ts, LanePool& pool,
                   std::vector<TimedEvent>& out) {
    std::stable_sort(pool.slices.begin(), pool.slices.end(),
                     [](const Slice& a, const Slice& b) { return a.begin < b.begin; });
    std::vector<Nanos> lane_free_at;
    std::vector<std::vector<Slice>> lanes;
    for (Slice& s : pool.slices) {
      std::size_t lane = 0;
      while (lane < lanes.size() && lane_free_at[lane] > s.begin) ++lane;
      if (lane == lanes.size()) {
        lanes.emplace_back();
        lane_free_at.push_back(0);
      }
      // An instant takes no time but must not sit inside a slice: it holds its lane past its
      // start by one nanosecond.
      lane_free_at[lane] = s.end ? *s.end : s.begin + 1;
      lanes[lane].push_back(std::move(s));
    }
    for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
      const std::uint64_t uuid = new_uuid();
      descriptor(packet(trace, first_ts), uuid, pool.parent_uuid,
                 pool.name + " #" + std::to_string(lane + 1));
      track_events(uuid, std::move(lanes[lane]), out);
    }
  }

  pb::Trace render() {
    std::optional<Nanos> first_ts;
    auto see = [&first_ts](Nanos ts) { first_ts = std::min(first_ts.value_or(ts), ts); };
    for (const auto& [tid, thread] : threads_)
      for (const auto& s : thread.track.slices) see(s.begin);
    for (auto* pools : {&disk_pools_, &journal_pools_})
      for (const auto& [key, pool] : *pools)
        for (const auto& s : pool.slices) see(s.begin);
    for (const auto& [key, pool] : nvme_pools_)
      for (const auto& s : pool.slices) see(s.begin);

    pb::Trace trace;
    // First, before any timestamp is converted: MONOTONIC is the trace's clock.
    pb::TracePacket& clock = packet(trace, std::nullopt);
    clock.set_sequence_flags(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    pb::ClockSnapshot& snapshot = *clock.mutable_clock_snapshot();
    snapshot.set_primary_trace_clock(pb::BUILTIN_CLOCK_MONOTONIC);
    pb::ClockSnapshot::Clock& monotonic = *snapshot.add_clocks();
    monotonic.set_clock_id(pb::BUILTIN_CLOCK_MONOTONIC);
    monotonic.set_timestamp(first_ts.value_or(0));

    std::map<std::uint32_t, std::uint64_t> process_uuids;
    for (const auto& [pid, process] : processes_) {
      pb::TracePacket& p = packet(trace, first_ts);
      const std::uint64_t uuid = new_uuid();
      process_uuids[pid] = uuid;
      pb::TrackDescriptor& d = *p.mutable_track_descriptor();
      d.set_uuid(uuid);
      d.mutable_process()->set_pid(static_cast<std::int32_t>(pid));
      d.mutable_process()->set_process_name(process.name);
    }
    std::vector<TimedEvent> events;
    for (auto& [tid, thread] : threads_) {
      pb::TracePacket& p = packet(trace, first_ts);
      pb::TrackDescriptor& d = *p.mutable_track_descriptor();
      d.set_uuid(thread.track.uuid);
      d.set_parent_uuid(process_uuids.at(thread.pid));
      d.mutable_thread()->set_pid(static_cast<std::int32_t>(thread.pid));
      d.mutable_thread()->set_tid(static_cast<std::int32_t>(tid));
      d.mutable_thread()->set_thread_name(thread.name);
      track_events(thread.track.uuid, std::move(thread.track.slices), events);
    }
    for (const auto& [disk, uuid] : disk_tracks_)
      descriptor(packet(trace, first_ts), uuid, 0, device_label(disk));
    for (const auto& t : queue_tracks_)
      descriptor(packet(trace, first_ts), t.uuid, t.parent_uuid, t.name);
    for (const auto& t : journal_tracks_)
      descriptor(packet(trace, first_ts), t.uuid, t.parent_uuid, t.name);
    for (auto& [disk, pool] : disk_pools_) lane_events(trace, first_ts, pool, events);
    for (auto& [queue, pool] : nvme_pools_) lane_events(trace, first_ts, pool, events);
    for (auto& [dev, pool] : journal_pools_) lane_events(trace, first_ts, pool, events);

    // In time order; each track's own order (ends before the begins they precede) is kept.
    std::stable_sort(events.begin(), events.end(),
                     [](const TimedEvent& a, const TimedEvent& b) { return a.ts < b.ts; });
    for (auto& e : events) *packet(trace, e.ts).mutable_track_event() = std::move(e.event);
    return trace;
  }

  struct Process {
    std::string name;
  };
  struct Thread {
    std::uint32_t pid = 0;
    std::string name;
    Track track;
  };
  struct NamedTrack {
    std::uint64_t uuid = 0;
    std::uint64_t parent_uuid = 0;
    std::string name;
  };

  std::map<DevT, std::string> device_names_;
  std::uint64_t next_uuid_ = 1;  // 0 is the importer's implicit global track
  std::uint64_t next_flow_ = 1;
  std::map<std::uint32_t, Process> processes_;
  std::map<std::uint32_t, Thread> threads_;
  std::map<DevT, std::uint64_t> disk_tracks_;
  std::vector<NamedTrack> queue_tracks_;
  std::vector<NamedTrack> journal_tracks_;
  std::map<DevT, LanePool> disk_pools_;
  std::map<std::pair<DevT, std::uint16_t>, LanePool> nvme_pools_;
  std::map<DevT, LanePool> journal_pools_;
  std::map<RequestKey, RequestEntry> requests_;
  std::map<std::pair<DevT, Nanos>, RequestKey> flush_at_;  // (disk, completion) → the flush
  std::set<std::tuple<DevT, std::uint32_t, Nanos>> commits_seen_;
};

}  // namespace

void PerfettoSink::timeline(const Timeline& item) {
  timelines_.push_back(item);
}

void PerfettoSink::summary(const TraceSummary& /*totals*/) {
  if (written_) return;
  written_ = true;
  TraceBuilder builder(devices_);
  builder.build(timelines_).SerializeToOstream(&out_);
  timelines_.clear();
}

void PerfettoSink::flush() {
  out_.flush();
}

}  // namespace wp
