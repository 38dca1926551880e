// SPDX-License-Identifier: Apache-2.0
#include "sinks/perfetto_sink.h"

#include <fmt/format.h>
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

#include "common/units.h"
#include "sinks/perfetto_tracks.h"
#include "sinks/wait_text.h"

namespace wp {
namespace {

// How many distinct requests (and journal commits) the sink remembers to draw each once. A
// request shows up in the timelines of the calls it carried data for and of the syncs that
// waited for it; those timelines finish close together, well within this many requests.
constexpr std::size_t kRecentRequests = 4096;
constexpr std::size_t kRecentCommits = 1024;
// Frames a cause's or a stack's annotation shows: the wait and what the call was doing.
constexpr std::size_t kAnnotatedFrames = 6;

using pftrace::LanePool;
using pftrace::Slice;

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
  Writer(std::ostream& out, const std::vector<DeviceInfo>& devices, ClockReadings clocks,
         std::uint64_t id_seed)
      : tracks_(out, devices, clocks, id_seed) {}

  void add(const Timeline& item) {
    tracks_.start();
    std::visit([this](const auto& t) { add_item(t); }, item);
    tracks_.write_pending();
  }

  void finish() {
    tracks_.start();
    tracks_.write_pending();
  }

  std::ostream& out() { return tracks_.out(); }

  std::size_t retained() const {
    return tracks_.retained() + recent_requests_.size() + recent_request_order_.size() +
           awaiting_flush_.size() + recent_commits_.size() + recent_commit_order_.size() +
           arg_names_.size();
  }

 private:
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
    tracks_.draw_on_lane(tracks_.nvme_pool(r.disk, nvme.qid, command.begin), command);
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
    // Its end is an upper bound: the kernel did not deliver the completion.
    if (r.complete_inferred) slice.args.push_back({"complete_inferred", std::string("true")});

    std::optional<std::uint64_t> from_call;
    if (cause == Cause::Call) {
      from_call = tracks_.new_id();
      slice.terminating_flow_ids.push_back(*from_call);
    }
    SeenRequest& seen = remember(key);
    if (r.op == ReqOp::Flush) {
      for (auto chain : flush_made_durable(r)) slice.terminating_flow_ids.push_back(chain);
    } else if (r.op != ReqOp::Read) {  // a read's chain ends here: no flush makes it durable
      seen.chain = tracks_.new_id();
      slice.flow_ids.push_back(seen.chain);
      await_flush(key, seen, r);
    }
    tracks_.draw_on_lane(tracks_.disk_pool(r.disk, slice.begin), slice);
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

  // ---- slow calls' causes ----

  // An annotation name made of data ("why.journal-commit.ns"): kept for the sink's life,
  // since a slice's args name by pointer. Few: a name per cause and part, per stack slot.
  const char* arg_name(std::string name) {
    return arg_names_.insert(std::move(name)).first->c_str();
  }

  // The call's named waits (cause → ns, the evidence, the top frames, the waker, the holder,
  // the commit) and each of its sleep stacks with its waker, as the slice's annotations; the
  // chain's commit and flushes drawn on their tracks, the commit with a flow from the call
  // when this is the first to draw it.
  void add_causes(Slice& slice, const std::optional<SlowCauses>& causes) {
    if (!causes) return;
    std::set<WaitCause> named;
    for (std::size_t i = 0; i < causes->waits.size(); ++i) {
      const NamedWait& wait = causes->waits[i];
      std::string base = std::string("why.") + wait_cause_name(wait.cause);
      if (!named.insert(wait.cause).second) base += "." + std::to_string(i);  // a second "other"
      // push_back of a built Arg: emplacing the variant trips gcc 12's maybe-uninitialized.
      auto arg = [&](const char* part, auto value) {
        slice.args.push_back(pftrace::Arg(arg_name(base + part), std::move(value)));
      };
      arg(".ns", std::uint64_t{wait.ns});
      if (wait.sleeps != 0) arg(".sleeps", std::uint64_t{wait.sleeps});
      if (!wait.evidence.empty()) arg(".evidence", wait.evidence);
      if (!wait.frames.empty()) arg(".frames", frames_line(wait.frames, kAnnotatedFrames));
      if (wait.waker) arg(".waker", waker_text(*wait.waker));
      if (wait.holder)
        arg(".holder",
            fmt::format("{} (pid {}/{})", wait.holder->comm, wait.holder->pid, wait.holder->tid));
      if (const auto& commit = wait.chain.commit) {
        arg(".commit", fmt::format("{} on {}", commit->transaction, dev_string(commit->dev)));
        // The importer follows a flow forward in time: from the call into a commit that began
        // during it, from a commit already running into the call.
        if (auto flow = add_commit(*commit, slice.begin)) {
          if (first_known(*commit).value_or(0) >= slice.begin)
            slice.flow_ids.push_back(*flow);
          else
            slice.terminating_flow_ids.push_back(*flow);
        }
      }
      for (const RequestTimeline& flush : wait.chain.flushes) draw_request(flush, Cause::Device);
    }
    for (std::size_t i = 0; i < causes->sleeps.size(); ++i) {
      const OffCpuSleep& sleep = causes->sleeps[i];
      const std::string base = "stack." + std::to_string(i);
      slice.args.push_back(
          pftrace::Arg(arg_name(base),
                       fmt::format("{} ({} sleep{}, {}) {}", human_duration(sleep.ns), sleep.sleeps,
                                   sleep.sleeps == 1 ? "" : "s", sleep_flag_name(sleep.flag),
                                   frames_line(frame_names(sleep.stack), kAnnotatedFrames))));
      if (sleep.waker)
        slice.args.push_back(
            pftrace::Arg(arg_name(base + ".waker"),
                         waker_text(*sleep.waker) + " " +
                             frames_line(frame_names(sleep.waker->stack), kAnnotatedFrames)));
    }
    if (causes->unslotted_ns != 0)
      slice.args.push_back({"unslotted_ns", std::uint64_t{causes->unslotted_ns}});
  }

  // ---- timelines ----

  // The call's file as the caller sees it, and the upper file under an overlay one.
  static void add_file_args(Slice& slice, const SyscallEvent& call) {
    if (stat_dev(call) != 0) slice.args.push_back({"dev", dev_string(stat_dev(call))});
    slice.args.push_back({"ino", std::uint64_t{stat_ino(call)}});
    if (!call.path.empty()) slice.args.push_back({"path", call.path});
    if (call.view_dev != 0) {
      slice.args.push_back({"backing_dev", dev_string(call.dev)});
      slice.args.push_back({"backing_ino", std::uint64_t{call.ino}});
    }
  }

  void add_item(const WriteTimeline& write) {
    const SyscallEvent& call = write.call;
    Slice slice;
    slice.begin = call.start_ns;
    slice.end = call_end(call);
    const std::uint64_t bytes = call.ret > 0 ? static_cast<std::uint64_t>(call.ret) : call.count;
    slice.name = std::string(call_name(call)) + " " + human_bytes(bytes);
    add_file_args(slice, call);
    slice.args.push_back({"offset", std::uint64_t{call.pos}});
    slice.args.push_back({"bytes", bytes});
    if (call.ret < 0) slice.args.push_back({"error", errno_name(static_cast<int>(call.ret))});
    slice.args.push_back({"state", std::string(write_state_name(write.state))});
    if (write.durable_via != DurableVia::None)
      slice.args.push_back({"durable_via", std::string(durable_via_name(write.durable_via))});
    slice.args.push_back({"pages_dirtied", std::uint64_t{call.pages_dirtied}});
    if (const auto& f = write.store_faults) {
      slice.args.push_back({"faults", std::uint64_t{f->faults}});
      slice.args.push_back({"whole_folio_faults", std::uint64_t{f->whole_folio}});
    }
    if (write.discarded_ns)
      slice.args.push_back({"discarded_ns", static_cast<std::uint64_t>(*write.discarded_ns)});
    if (const auto& d = write.inline_data) {
      slice.args.push_back({"inline_fs", std::string(inline_fs_name(d->fs))});
      slice.args.push_back({"inline_ns", static_cast<std::uint64_t>(d->ns)});
      slice.args.push_back({"inline_transaction", std::uint64_t{d->transaction}});
      if (d->committed_ns)
        slice.args.push_back({"committed_ns", static_cast<std::uint64_t>(*d->committed_ns)});
    }
    if (write.lost_ns) {
      slice.args.push_back({"lost_ns", static_cast<std::uint64_t>(*write.lost_ns)});
      slice.args.push_back({"lost_error", errno_name(write.lost_error)});
    }
    if (write.fuse)
      slice.args.push_back(
          {"fuse_daemon", fmt::format("{} (pid {})", write.fuse->comm, write.fuse->pid)});
    if (write.direct) slice.args.push_back({"direct", std::string("yes")});
    if (write.incomplete) slice.args.push_back({"incomplete", std::string("yes")});
    add_context_args(slice, call);
    const std::uint64_t track = tracks_.thread_track(call);
    for (const auto& request : write.requests)
      if (auto flow = draw_request(request, Cause::Call)) slice.flow_ids.push_back(*flow);
    add_causes(slice, write.causes);
    tracks_.draw(track, slice);
  }

  // Where the call came from and where the host has its file: the cgroup, the container (its
  // name or short id, runtime and pod), the file's host path; each only when known.
  static void add_context_args(Slice& slice, const SyscallEvent& call) {
    if (!call.cgroup.empty()) slice.args.push_back({"cgroup", call.cgroup});
    if (call.container) {
      const Container& c = *call.container;
      slice.args.push_back({"container", std::string(c.label())});
      slice.args.push_back({"container_id", c.id});
      slice.args.push_back({"container_runtime", std::string(container_runtime_name(c.runtime))});
      if (!c.pod_name.empty() || !c.pod_uid.empty())
        slice.args.push_back({"pod", c.pod_name.empty() ? c.pod_uid : c.pod_name});
      if (!c.pod_namespace.empty()) slice.args.push_back({"namespace", c.pod_namespace});
      if (!c.hostname.empty()) slice.args.push_back({"hostname", c.hostname});
    }
    if (!call.host_path.empty()) slice.args.push_back({"host_path", call.host_path});
  }

  // A name-change call: a slice on its thread named by what it did, its names as arguments.
  void add_item(const NameChangeTimeline& item) {
    const SyscallEvent& call = item.call;
    Slice slice;
    slice.begin = call.start_ns;
    slice.end = call_end(call);
    slice.name = fmt::format("{} {}", call_name(call), name_change_op_name(item.op));
    if (call.ino) add_file_args(slice, call);
    for (std::size_t i = 0; i < item.names.size(); ++i) {
      const std::string& shown = item.paths[i].empty() ? item.names[i] : item.paths[i];
      if (!shown.empty()) slice.args.push_back({i ? "new_name" : "name", shown});
    }
    slice.args.push_back({"ret", std::int64_t{call.ret}});
    for (const Hazard& hazard : item.hazards) slice.args.push_back({"hazard", hazard.rule});
    if (item.incomplete) slice.args.push_back({"incomplete", std::string("yes")});
    add_context_args(slice, call);
    tracks_.draw(tracks_.thread_track(call), slice);
  }

  // A read or a fault on a file mapping: a slice on its thread, where its pages came from as
  // arguments (a fault's slice ends at its last page-cache event).
  void add_item(const ReadTimeline& item) {
    const SyscallEvent& call = item.call;
    Slice slice;
    slice.begin = call.start_ns;
    slice.end = call_end(call);
    slice.name = call_name(call);
    add_file_args(slice, call);
    slice.args.push_back({"ret", std::int64_t{call.ret}});
    slice.args.push_back({"pages", std::uint64_t{item.pages}});
    slice.args.push_back({"pages_from_device", std::uint64_t{item.pages_from_device}});
    slice.args.push_back({"pages_cached", std::uint64_t{item.pages_cached}});
    if (item.readahead_pages != 0)
      slice.args.push_back({"readahead_pages", std::uint64_t{item.readahead_pages}});
    if (item.fault)
      slice.args.push_back({"fault", std::string(item.fault->major ? "major" : "minor")});
    if (item.incomplete) slice.args.push_back({"incomplete", std::string("yes")});
    add_context_args(slice, call);
    const std::uint64_t track = tracks_.thread_track(call);
    // Its read requests on the disk's tracks, a flow from the call to each, as a write's.
    for (const auto& request : item.requests)
      if (auto flow = draw_request(request, Cause::Call)) slice.flow_ids.push_back(*flow);
    tracks_.draw(track, slice);
  }

  void add_item(const SyncTimeline& sync) {
    const SyscallEvent& call = sync.call;
    const Nanos start = call.start_ns;
    const Nanos end = call_end(call);
    Slice slice;
    slice.begin = start;
    slice.end = end;
    slice.name = call_name(call);
    add_file_args(slice, call);
    slice.args.push_back({"ret", std::int64_t{call.ret}});
    for (const SyncPhaseInfo& phase : kSyncPhases)
      slice.args.emplace_back(phase.json_key, std::uint64_t{sync.phases.*phase.total});
    if (sync.incomplete) slice.args.push_back({"incomplete", std::string("yes")});
    add_context_args(slice, call);
    const std::uint64_t track = tracks_.thread_track(call);
    // Data requests before the flushes: a flush ends the chains of the requests it made durable
    // that are drawn by then.
    for (const auto& request : sync.requests)
      if (auto flow = draw_request(request, Cause::Call)) slice.flow_ids.push_back(*flow);
    for (const auto& request : sync.journal_requests)
      if (auto flow = draw_request(request, Cause::Call)) slice.flow_ids.push_back(*flow);
    // Before the sync's commits: the commit a wait names is drawn with the flow to it.
    add_causes(slice, sync.causes);
    for (const auto& flush : sync.flushes) draw_request(flush, Cause::Device);
    for (const auto& commit : sync.commits) add_commit(commit, std::nullopt);

    // The sync, and where its time went nested under it: the stitcher's phase segments, as they
    // are (time no phase covers is not drawn; the sync's args give the exact totals).
    tracks_.begin_slice(track, slice);
    for (const PhaseSegment& segment : sync.segments) {
      if (segment.phase == SyncPhase::Other) continue;
      Slice phase;
      phase.begin = std::clamp(segment.start_ns, start, end);
      phase.end = std::clamp(segment.end_ns, phase.begin, end);
      if (*phase.end == phase.begin) continue;
      phase.name = sync_phase_label(segment.phase);
      tracks_.draw(track, phase);
    }
    tracks_.end_slice(track, end);
  }

  // Draws the commit the first time it is seen; `waiter_begin`: a call that began then waited
  // on it, and the flow id linking the two is returned (none if it was drawn before), begun
  // by whichever of the two began first.
  std::optional<std::uint64_t> add_commit(const JournalCommit& commit,
                                          std::optional<Nanos> waiter_begin) {
    const Nanos begin = first_known(commit).value_or(0);
    const CommitKey key{commit.dev, commit.transaction, begin};
    if (!recent_commits_.insert(key).second) return std::nullopt;
    recent_commit_order_.push_back(key);
    if (recent_commit_order_.size() > kRecentCommits) {
      recent_commits_.erase(recent_commit_order_.front());
      recent_commit_order_.pop_front();
    }
    Slice slice;
    slice.begin = begin;
    if (commit.end_ns) slice.end = std::max(*commit.end_ns, slice.begin);
    slice.name = "commit " + std::to_string(commit.transaction);
    slice.intern_name = false;
    slice.args.push_back({"dev", dev_string(commit.dev)});
    slice.args.push_back({"transaction", std::uint64_t{commit.transaction}});
    auto phase_at = [&](const char* name, const std::optional<Nanos>& t) {
      if (t) slice.args.push_back({name, elapsed_ns(slice.begin, *t)});
    };
    phase_at("locking_at_ns", commit.locking_ns);
    phase_at("flushing_at_ns", commit.flushing_ns);
    phase_at("logging_at_ns", commit.logging_ns);
    std::optional<std::uint64_t> flow;
    if (waiter_begin) {
      flow = tracks_.new_id();
      (slice.begin >= *waiter_begin ? slice.terminating_flow_ids : slice.flow_ids).push_back(*flow);
    }
    tracks_.draw_on_lane(tracks_.journal_pool(commit.dev, slice.begin), slice);
    return flow;
  }

  pftrace::TrackWriter tracks_;
  std::map<RequestKey, SeenRequest> recent_requests_;
  std::deque<RequestKey> recent_request_order_;  // oldest first
  // (disk, durable time) → drawn requests made durable by a flush not drawn yet.
  std::multimap<std::pair<DevT, Nanos>, RequestKey> awaiting_flush_;
  std::set<CommitKey> recent_commits_;
  std::deque<CommitKey> recent_commit_order_;  // oldest first
  std::set<std::string> arg_names_;            // node-based: the names stay where they are
};

PerfettoSink::PerfettoSink(std::ostream& out, std::vector<DeviceInfo> devices)
    : PerfettoSink(out, std::move(devices), read_clocks()) {}

PerfettoSink::PerfettoSink(std::ostream& out, std::vector<DeviceInfo> devices, ClockReadings clocks,
                           std::optional<std::uint64_t> id_seed)
    : writer_(std::make_unique<Writer>(out, devices, clocks,
                                       id_seed ? *id_seed : std::random_device{}())) {}

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
