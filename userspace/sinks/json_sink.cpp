#include "sinks/json_sink.h"

#include <optional>
#include <string>
#include <variant>

#include "sinks/units.h"

namespace wp {
namespace {

// Insertion-ordered so every line starts with "type" and reads in journey order.
using json = nlohmann::ordered_json;

template <typename T>
json optional_json(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

// The kernel reports block errors as negative errnos; 0 means success.
json error_json(std::int64_t negative_errno) {
  if (negative_errno >= 0) return nullptr;
  return errno_name(static_cast<int>(negative_errno));
}

Nanos latency_ns(const SyscallEvent& call) {
  return call.end_ns > call.start_ns ? call.end_ns - call.start_ns : 0;
}

// Device 0 (major 0, minor 0) is never a real device: the anonymous-dev allocator starts at
// minor 1. The stitcher leaves it 0 when a call has no file (sync(2)).
json dev_json(DevT dev) {
  return dev == 0 ? json(nullptr) : json(dev_string(dev));
}

json fd_json(int fd) {
  return fd < 0 ? json(nullptr) : json(fd);
}

// Who made the call, on which file: the first keys of every syscall object.
json call_identity_json(const char* type, const SyscallEvent& call) {
  return json{
      {"type", type},
      {"pid", call.pid},
      {"tid", call.tid},
      {"comm", call.comm},
      {"syscall", syscall_name(call.syscall)},
      {"fd", fd_json(call.fd)},
      {"dev", dev_json(call.dev)},
      {"ino", call.ino},
  };
}

void add_call_times(json& object, const SyscallEvent& call) {
  object["start_ns"] = call.start_ns;
  object["end_ns"] = call.end_ns;
  object["latency_ns"] = latency_ns(call);
}

json nvme_json(const NvmeCommand& nvme) {
  return json{
      {"qid", nvme.qid},
      {"cid", nvme.cid},
      {"opcode", nvme.opcode},
      {"nsid", nvme.nsid},
      {"fua", nvme.fua},
      {"submit_ns", optional_json(nvme.submit_ns)},
      {"complete_ns", optional_json(nvme.complete_ns)},
      {"status", optional_json(nvme.status)},
  };
}

json requests_json(const std::vector<RequestTimeline>& requests) {
  json array = json::array();
  for (const RequestTimeline& request : requests) array.push_back(request_json(request));
  return array;
}

json commit_json(const JournalCommit& commit) {
  return json{
      {"dev", dev_string(commit.dev)},
      {"transaction", commit.transaction},
      {"start_ns", optional_json(commit.start_ns)},
      {"locking_ns", optional_json(commit.locking_ns)},
      {"flushing_ns", optional_json(commit.flushing_ns)},
      {"logging_ns", optional_json(commit.logging_ns)},
      {"end_ns", optional_json(commit.end_ns)},
  };
}

}  // namespace

// Where a slow call's time went (null when causes were not asked for: --min-latency).
json causes_json(const std::optional<SlowCauses>& causes) {
  if (!causes) return nullptr;
  return {{"on_cpu_ns", causes->on_cpu_ns},
          {"throttled_ns", causes->throttle_ns},
          {"writeback_wait_ns", causes->writeback_wait_ns},
          {"blocked_ns", causes->blocked_ns},
          {"runnable_ns", causes->runnable_ns}};
}

json request_json(const RequestTimeline& request) {
  return json{
      {"dev", dev_string(request.disk)},
      // A cache flush has no sector (the kernel leaves it at -1).
      {"sector", request.op == ReqOp::Flush ? json(nullptr) : json(request.sector)},
      {"bytes", request.bytes},
      {"rwbs", rwbs(request.op, request.flags, request.bytes)},
      {"fua", (request.flags & req_flag::kFua) != 0},
      {"bios", request.bios},
      {"submitter", request.submit_tid ? json{{"tid", *request.submit_tid},
                                              {"comm", request.submit_comm},
                                              {"why", submit_why_name(request.submit_why)}}
                                       : json(nullptr)},
      {"queue_ns", optional_json(request.queue_ns)},
      {"insert_ns", optional_json(request.insert_ns)},
      {"issue_ns", optional_json(request.issue_ns)},
      {"complete_ns", optional_json(request.complete_ns)},
      {"durable_ns", optional_json(request.durable_ns)},
      {"error", error_json(request.error)},
      {"nvme", request.nvme ? nvme_json(*request.nvme) : json(nullptr)},
  };
}

json write_json(const WriteTimeline& write) {
  const SyscallEvent& call = write.call;
  json object = call_identity_json("write", call);
  object["offset"] = call.pos;
  object["bytes"] = call.ret > 0 ? static_cast<std::uint64_t>(call.ret) : std::uint64_t{0};
  object["requested"] = call.count;
  object["ret"] = call.ret;
  object["error"] = error_json(call.ret);
  object["direct"] = write.direct;
  object["sync"] = write.sync;
  object["append"] = (call.file_flags & file_flag::kAppend) != 0;
  add_call_times(object, call);
  object["pages_dirtied"] = call.pages_dirtied;
  object["throttled_ns"] = call.throttle_ns;
  object["throttle_events"] = call.throttle_events;
  object["writeback_waits"] = call.writeback_waits;
  object["state"] = write_state_name(write.state);
  object["pages"] = write.pages;
  object["pages_pending"] = write.pages_pending;
  object["requests"] = requests_json(write.requests);
  object["written_ns"] = optional_json(write.written_ns);
  object["durable_ns"] = optional_json(write.durable_ns);
  object["durable_via"] = write.durable_via == DurableVia::None
                              ? json(nullptr)
                              : json(durable_via_name(write.durable_via));
  object["incomplete"] = write.incomplete;
  object["causes"] = causes_json(write.causes);
  json pauses = json::array();
  for (const auto& p : write.throttles)
    pauses.push_back({{"ts", p.ts},
                      {"pause_ms", p.pause_ms},
                      {"dirty_pages", p.dirty_pages},
                      {"limit_pages", p.limit_pages}});
  object["throttle_pauses"] = pauses;
  return object;
}

json sync_json(const SyncTimeline& sync) {
  const SyscallEvent& call = sync.call;
  json object = call_identity_json("fsync", call);
  add_call_times(object, call);
  object["ret"] = call.ret;
  object["error"] = error_json(call.ret);
  object["phases"] = json{
      {"writeback_ns", sync.phases.writeback_ns}, {"data_io_ns", sync.phases.data_io_ns},
      {"journal_ns", sync.phases.journal_ns},     {"flush_ns", sync.phases.flush_ns},
      {"other_ns", sync.phases.other_ns},
  };
  object["requests"] = requests_json(sync.requests);
  object["flushes"] = requests_json(sync.flushes);
  json commits = json::array();
  for (const JournalCommit& commit : sync.commits) commits.push_back(commit_json(commit));
  object["journal_commits"] = std::move(commits);
  object["incomplete"] = sync.incomplete;
  object["causes"] = causes_json(sync.causes);
  return object;
}

json timeline_json(const Timeline& item) {
  return std::visit(
      [](const auto& timeline) -> json {
        using T = std::decay_t<decltype(timeline)>;
        if constexpr (std::is_same_v<T, WriteTimeline>) {
          return write_json(timeline);
        } else {
          return sync_json(timeline);
        }
      },
      item);
}

namespace {

json phases_json(const SyncPhaseSummary& phases) {
  json out = json::object();
  for (std::size_t i = 0; i < SyncPhaseSummary::kPhases.size(); ++i) {
    PhaseStats s = phases.phase(i);
    // log2 buckets as {"lower bound ns": count}, non-empty ones only.
    json histogram = json::object();
    for (std::size_t b = 0; b < s.histogram.buckets.size(); ++b)
      if (s.histogram.buckets[b])
        histogram[std::to_string(b == 0 ? 0 : Nanos{1} << b)] = s.histogram.buckets[b];
    out[std::string(SyncPhaseSummary::kPhases[i]) + "_ns"] = {{"p50", s.p50},
                                                              {"p99", s.p99},
                                                              {"max", s.max},
                                                              {"total", s.total},
                                                              {"log2_histogram", histogram}};
  }
  return out;
}

json direct_io_json(const DirectIoSummary& direct) {
  json out = json::array();
  for (const auto& v : direct.verdicts())
    out.push_back({{"pid", v.pid},
                   {"comm", v.comm},
                   {"dev", dev_string(v.dev)},
                   {"ino", v.ino},
                   {"writes", v.writes},
                   {"bytes", v.bytes},
                   {"pages_dirtied", v.pages_dirtied},
                   {"buffered_bytes", v.buffered_bytes},
                   {"einval", v.einval},
                   {"other_errors", v.other_errors},
                   {"bypassed_page_cache", v.bypassed()}});
  return out;
}

}  // namespace

json summary_json(const TraceSummary& totals) {
  return json{
      {"type", "summary"},
      {"events", totals.events},
      {"lost", totals.lost},
      {"lost_by_hook", totals.lost_by_hook},
      {"writes", totals.writes},
      {"fsyncs", totals.fsyncs},
      {"incomplete", totals.incomplete},
      {"aged_out", totals.aged_out},
      {"duration_ns", totals.duration_ns},
      {"fsync_phases",
       totals.sync_phases.syncs() ? phases_json(totals.sync_phases) : json(nullptr)},
      {"direct_io", direct_io_json(totals.direct_io)},
  };
}

std::string json_line(const json& object) {
  return object.dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

void JsonSink::timeline(const Timeline& item) {
  emit(timeline_json(item));
}

void JsonSink::summary(const TraceSummary& totals) {
  emit(summary_json(totals));
}

void JsonSink::flush() {
  out_.flush();
}

void JsonSink::emit(const json& object) {
  out_ << json_line(object) << '\n';
  out_.flush();
}

}  // namespace wp
