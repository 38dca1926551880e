// SPDX-License-Identifier: Apache-2.0
// What the Perfetto sink's unit tests draw, and how they read it back: a scenario of two writes
// and an fsync on vda1, and a parser that reads the trace as the importer would (interned
// names resolved through the sequence's tables, tracks, slices from BEGIN/END pairs of each
// track in time order: the importer sorts, the sink streams timelines in the order they
// finish; flows from flow ids).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sinks/perfetto.pb.h"
#include "sinks/perfetto_sink.h"
#include "sinks/sink.h"

#include "builders.h"

namespace wp::perfetto_test {

namespace pb = ::wp::perfetto;
using namespace builders;

constexpr DevT kVda = make_dev(254, 0);
constexpr DevT kVda1 = make_dev(254, 1);
constexpr std::uint32_t kPid = 100;
constexpr std::uint32_t kTid = 101;

inline SyscallEvent call(Syscall syscall, Nanos start, Nanos end, std::uint64_t offset = 0) {
  return syscall_event({.syscall = syscall,
                        .start_ns = start,
                        .end_ns = end,
                        .pid = kPid,
                        .tid = kTid,
                        .comm = "db",
                        .dev = kVda1,
                        .pos = offset});
}

inline RequestTimeline data_request(std::uint64_t sector, Nanos issue, Nanos complete) {
  RequestTimeline r = write_request(kVda, sector, 8192, issue, complete);
  r.queue_ns = issue - 500;
  r.bios = 2;
  r.submit_tid = kTid;
  r.submit_comm = "db";
  r.submit_why = SubmitWhy::SyncSyscall;
  return r;
}

inline WriteTimeline write(Nanos start, Nanos end, std::uint64_t offset,
                           const RequestTimeline& request) {
  return durable_write(call(Syscall::Pwrite64, start, end, offset), request, request.durable_ns);
}

// Two writes whose pages went out in one request (with an NVMe command), then an fsync that
// wrote that request and an overlapping one, committed the journal and flushed the cache.
struct Scenario {
  RequestTimeline shared = data_request(2048, 10'000, 12'000);
  RequestTimeline overlapping = data_request(4096, 11'000, 13'000);
  RequestTimeline flush = flush_request(kVda, 18'000, 20'000);
  JournalCommit commit;
  std::vector<Timeline> timelines;

  Scenario() {
    shared.durable_ns = 20'000;
    shared.nvme = NvmeCommand{.qid = 1,
                              .cid = 5,
                              .opcode = 1,
                              .nsid = 1,
                              .fua = false,
                              .submit_ns = 10'100,
                              .complete_ns = 11'900,
                              .status = 0};
    overlapping.durable_ns = 20'000;
    commit.dev = kVda1;
    commit.transaction = 7;
    commit.start_ns = 14'000;
    commit.end_ns = 17'000;

    timelines.push_back(write(1'000, 2'000, 0, shared));
    timelines.push_back(write(3'000, 4'000, 4096, shared));
    SyncTimeline sync;
    sync.call = call(Syscall::Fsync, 9'000, 21'000);
    sync.requests = {shared, overlapping};
    sync.flushes = {flush};
    sync.commits = {commit};
    sync.segments = {{SyncPhase::Writeback, 9'000, 10'000}, {SyncPhase::DataIo, 10'000, 13'000},
                     {SyncPhase::Other, 13'000, 14'000},    {SyncPhase::Journal, 14'000, 17'000},
                     {SyncPhase::Other, 17'000, 18'000},    {SyncPhase::Flush, 18'000, 20'000},
                     {SyncPhase::Other, 20'000, 21'000}};
    sync.phases = {.writeback_ns = 1'000,
                   .data_io_ns = 3'000,
                   .journal_ns = 3'000,
                   .flush_ns = 2'000,
                   .other_ns = 3'000};
    timelines.push_back(sync);
  }
};

// The trace as the importer sees it: tracks by uuid, names through the interning tables, slices
// rebuilt from each track's BEGIN/END events sorted by time (stable: equal timestamps keep the
// order they were written in, as the importer's sort does).
struct ParsedSlice {
  std::uint64_t track = 0;
  std::string name;
  Nanos begin = 0;
  Nanos end = 0;
  int depth = 0;
  std::map<std::string, std::string> args;
  pb::TrackEvent begin_event;
};

struct ParsedTrace {
  pb::Trace trace;
  std::map<std::uint64_t, pb::TrackDescriptor> tracks;
  std::map<std::uint64_t, std::string> event_names;  // the interning tables at the end
  std::map<std::uint64_t, std::string> annotation_names;
  std::vector<ParsedSlice> slices;
  std::vector<ParsedSlice> instants;
  std::vector<std::string> errors;  // unbalanced BEGIN/END, unresolved names, unknown tracks

  const pb::TrackDescriptor* track_named(const std::string& name) const {
    for (const auto& [uuid, d] : tracks)
      if (d.name() == name) return &d;
    return nullptr;
  }
  std::vector<const ParsedSlice*> named(const std::string& name) const {
    std::vector<const ParsedSlice*> out;
    for (const auto& s : slices)
      if (s.name == name) out.push_back(&s);
    std::sort(out.begin(), out.end(),
              [](const ParsedSlice* a, const ParsedSlice* b) { return a->begin < b->begin; });
    return out;
  }
};

// An interned entry: defined once per iid (redefining one with another name is illegal).
inline void intern(std::map<std::uint64_t, std::string>& table, std::uint64_t iid,
                   const std::string& name, std::vector<std::string>& errors) {
  if (iid == 0) errors.push_back("interned entry with iid 0");
  auto [it, added] = table.try_emplace(iid, name);
  if (!added && it->second != name) errors.push_back("iid " + std::to_string(iid) + " redefined");
}

inline ParsedTrace parse(const std::string& bytes) {
  ParsedTrace parsed;
  EXPECT_TRUE(parsed.trace.ParseFromString(bytes));
  struct Event {
    Nanos ts = 0;
    pb::TrackEvent event;
    std::string name;
    std::map<std::string, std::string> args;
  };
  std::map<std::uint64_t, std::vector<Event>> by_track;
  bool state_valid = false;
  for (const auto& packet : parsed.trace.packet()) {
    if (packet.sequence_flags() & pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) {
      state_valid = true;
      parsed.event_names.clear();
      parsed.annotation_names.clear();
    }
    for (const auto& n : packet.interned_data().event_names())
      intern(parsed.event_names, n.iid(), n.name(), parsed.errors);
    for (const auto& n : packet.interned_data().debug_annotation_names())
      intern(parsed.annotation_names, n.iid(), n.name(), parsed.errors);
    if (packet.has_track_descriptor())
      parsed.tracks[packet.track_descriptor().uuid()] = packet.track_descriptor();
    if (!packet.has_track_event()) continue;
    const pb::TrackEvent& e = packet.track_event();
    if (!parsed.tracks.count(e.track_uuid()))
      parsed.errors.push_back("an event before its track's descriptor");
    Event event{packet.timestamp(), e, e.name(), {}};
    bool uses_interning = false;
    if (e.has_name_iid()) {
      uses_interning = true;
      auto it = parsed.event_names.find(e.name_iid());
      if (it == parsed.event_names.end())
        parsed.errors.push_back("unresolved event name iid " + std::to_string(e.name_iid()));
      else
        event.name = it->second;
    }
    for (const auto& a : e.debug_annotations()) {
      std::string name = a.name();
      if (a.has_name_iid()) {
        uses_interning = true;
        auto it = parsed.annotation_names.find(a.name_iid());
        if (it == parsed.annotation_names.end())
          parsed.errors.push_back("unresolved annotation name iid " + std::to_string(a.name_iid()));
        else
          name = it->second;
      }
      event.args[name] = a.has_string_value() ? a.string_value()
                         : a.has_int_value()  ? std::to_string(a.int_value())
                                              : std::to_string(a.uint_value());
    }
    if (uses_interning &&
        (!state_valid || !(packet.sequence_flags() & pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE)))
      parsed.errors.push_back("interned ids in a packet not marked as needing incremental state");
    by_track[e.track_uuid()].push_back(std::move(event));
  }
  for (auto& [uuid, events] : by_track) {
    std::stable_sort(events.begin(), events.end(),
                     [](const Event& a, const Event& b) { return a.ts < b.ts; });
    std::vector<ParsedSlice> stack;
    for (auto& e : events) {
      if (e.event.type() == pb::TrackEvent::TYPE_SLICE_END) {
        if (stack.empty()) {
          parsed.errors.push_back("END without BEGIN on track " + std::to_string(uuid));
          continue;
        }
        stack.back().end = e.ts;
        parsed.slices.push_back(std::move(stack.back()));
        stack.pop_back();
        continue;
      }
      ParsedSlice s;
      s.track = uuid;
      s.name = e.name;
      s.begin = e.ts;
      s.end = e.ts;
      s.depth = static_cast<int>(stack.size());
      s.args = std::move(e.args);
      s.begin_event = std::move(e.event);
      if (s.begin_event.type() == pb::TrackEvent::TYPE_SLICE_BEGIN)
        stack.push_back(std::move(s));
      else
        parsed.instants.push_back(std::move(s));
    }
    if (!stack.empty())
      parsed.errors.push_back("BEGIN without END on track " + std::to_string(uuid));
  }
  return parsed;
}

inline SinkOptions named_devices() {
  SinkOptions options;
  options.devices = {DeviceInfo{.dev = kVda, .disk = kVda, .name = "vda"},
                     DeviceInfo{.dev = kVda1, .disk = kVda, .name = "vda1"}};
  return options;
}

inline std::string render(const std::vector<Timeline>& timelines) {
  std::ostringstream out;
  auto sink = make_sink(OutputFormat::Perfetto, out, named_devices());
  for (const auto& t : timelines) sink->timeline(t);
  sink->summary(TraceSummary{});
  sink->flush();
  return out.str();
}

inline bool contains(const google::protobuf::RepeatedField<std::uint64_t>& ids, std::uint64_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace wp::perfetto_test
