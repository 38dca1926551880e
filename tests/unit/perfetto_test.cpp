// SPDX-License-Identifier: Apache-2.0
// Perfetto sink: hand-built timelines in, a protobuf trace out, parsed back with the generated
// classes and checked as the importer would read it: interned names resolved through the
// sequence's tables, tracks, slices from BEGIN/END pairs of each track in time order (the importer
// sorts; the sink streams timelines in the order they finish), flows from flow ids, every
// timestamp on CLOCK_MONOTONIC.
#include <gtest/gtest.h>

#include "common/container.h"

#include <cerrno>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <streambuf>
#include <string>
#include <tuple>
#include <vector>

#include "sinks/perfetto.pb.h"
#include "sinks/perfetto_sink.h"
#include "sinks/sink.h"

#include "builders.h"
#include "slow_waits.h"

namespace wp {
namespace {

namespace pb = ::wp::perfetto;
using namespace builders;

constexpr DevT kVda = make_dev(254, 0);
constexpr DevT kVda1 = make_dev(254, 1);
constexpr std::uint32_t kPid = 100;
constexpr std::uint32_t kTid = 101;

SyscallEvent call(Syscall syscall, Nanos start, Nanos end, std::uint64_t offset = 0) {
  return syscall_event({.syscall = syscall,
                        .start_ns = start,
                        .end_ns = end,
                        .pid = kPid,
                        .tid = kTid,
                        .comm = "db",
                        .dev = kVda1,
                        .pos = offset});
}

RequestTimeline data_request(std::uint64_t sector, Nanos issue, Nanos complete) {
  RequestTimeline r = write_request(kVda, sector, 8192, issue, complete);
  r.queue_ns = issue - 500;
  r.bios = 2;
  r.submit_tid = kTid;
  r.submit_comm = "db";
  r.submit_why = SubmitWhy::SyncSyscall;
  return r;
}

WriteTimeline write(Nanos start, Nanos end, std::uint64_t offset, const RequestTimeline& request) {
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
void intern(std::map<std::uint64_t, std::string>& table, std::uint64_t iid, const std::string& name,
            std::vector<std::string>& errors) {
  if (iid == 0) errors.push_back("interned entry with iid 0");
  auto [it, added] = table.try_emplace(iid, name);
  if (!added && it->second != name) errors.push_back("iid " + std::to_string(iid) + " redefined");
}

ParsedTrace parse(const std::string& bytes) {
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

SinkOptions named_devices() {
  SinkOptions options;
  options.devices = {DeviceInfo{.dev = kVda, .disk = kVda, .name = "vda"},
                     DeviceInfo{.dev = kVda1, .disk = kVda, .name = "vda1"}};
  return options;
}

std::string render(const std::vector<Timeline>& timelines) {
  std::ostringstream out;
  auto sink = make_sink(OutputFormat::Perfetto, out, named_devices());
  for (const auto& t : timelines) sink->timeline(t);
  sink->summary(TraceSummary{});
  sink->flush();
  return out.str();
}

bool contains(const google::protobuf::RepeatedField<std::uint64_t>& ids, std::uint64_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Counts the bytes written and keeps none of them.
class CountingBuffer : public std::streambuf {
 public:
  std::uint64_t bytes = 0;

 protected:
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) ++bytes;
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char*, std::streamsize n) override {
    bytes += static_cast<std::uint64_t>(n);
    return n;
  }
};

TEST(PerfettoSink, DeclaresMonotonicClockOnEveryTimestampedPacket) {
  ParsedTrace parsed = parse(render(Scenario().timelines));
  ASSERT_GT(parsed.trace.packet_size(), 0);
  const pb::TracePacket& first = parsed.trace.packet(0);
  ASSERT_TRUE(first.has_clock_snapshot());
  EXPECT_EQ(first.clock_snapshot().primary_trace_clock(), pb::BUILTIN_CLOCK_MONOTONIC);
  EXPECT_EQ(first.sequence_flags(), pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
  int timestamped = 0;
  for (const auto& packet : parsed.trace.packet()) {
    EXPECT_EQ(packet.trusted_packet_sequence_id(), 1u);
    if (!packet.has_timestamp()) continue;
    ++timestamped;
    EXPECT_EQ(packet.timestamp_clock_id(), 3u);  // BUILTIN_CLOCK_MONOTONIC
  }
  EXPECT_GT(timestamped, 10);
}

TEST(PerfettoSink, ClockSnapshotHasMonotonicRealtimeAndBoottime) {
  std::ostringstream out;
  PerfettoSink sink(
      out, {},
      ClockReadings{.monotonic = 5'000, .realtime = 1'700'000'000'000'000'000, .boottime = 7'000});
  sink.summary(TraceSummary{});
  ParsedTrace parsed = parse(out.str());
  ASSERT_EQ(parsed.trace.packet_size(), 1);
  std::map<std::uint32_t, std::uint64_t> clocks;
  for (const auto& c : parsed.trace.packet(0).clock_snapshot().clocks())
    clocks[c.clock_id()] = c.timestamp();
  EXPECT_EQ(clocks, (std::map<std::uint32_t, std::uint64_t>{
                        {1, 1'700'000'000'000'000'000}, {3, 5'000}, {6, 7'000}}));

  // Read for real: BOOTTIME counts suspend on top of MONOTONIC, and both were read together.
  const ClockReadings now = read_clocks();
  EXPECT_GE(now.boottime, now.monotonic);
  EXPECT_GT(now.monotonic, 0u);
  EXPECT_GT(now.realtime, now.boottime);  // the epoch is long before this machine booted
}

TEST(PerfettoSink, ThreadAndProcessTracksCarryTheIds) {
  ParsedTrace parsed = parse(render(Scenario().timelines));
  const pb::TrackDescriptor* process = nullptr;
  const pb::TrackDescriptor* thread = nullptr;
  int process_tracks = 0, thread_tracks = 0;
  for (const auto& packet : parsed.trace.packet()) {
    process_tracks += packet.track_descriptor().has_process();
    thread_tracks += packet.track_descriptor().has_thread();
  }
  EXPECT_EQ(process_tracks, 1) << "described once, when first seen";
  EXPECT_EQ(thread_tracks, 1);
  for (const auto& [uuid, d] : parsed.tracks) {
    if (d.has_process()) process = &d;
    if (d.has_thread()) thread = &d;
  }
  ASSERT_NE(process, nullptr);
  ASSERT_NE(thread, nullptr);
  EXPECT_EQ(process->process().pid(), 100);
  EXPECT_EQ(process->process().process_name(), "db");
  EXPECT_EQ(thread->thread().pid(), 100);
  EXPECT_EQ(thread->thread().tid(), 101);
  EXPECT_EQ(thread->thread().thread_name(), "db");
  EXPECT_EQ(thread->parent_uuid(), process->uuid());
}

TEST(PerfettoSink, ProcessIsRenamedWhenItsMainThreadShowsUp) {
  WriteTimeline worker = write(1'000, 2'000, 0, data_request(64, 1'500, 1'800));
  worker.call.comm = "db-worker";
  WriteTimeline main = write(3'000, 4'000, 0, data_request(128, 3'500, 3'800));
  main.call.tid = kPid;
  ParsedTrace parsed = parse(render({worker, main}));
  std::vector<std::string> process_names;
  for (const auto& packet : parsed.trace.packet())
    if (packet.track_descriptor().has_process())
      process_names.push_back(packet.track_descriptor().process().process_name());
  EXPECT_EQ(process_names, (std::vector<std::string>{"db-worker", "db"}));
}

TEST(PerfettoSink, DiscardedWriteSaysSoWithItsTime) {
  WriteTimeline discarded = dirty_write(call(Syscall::Pwrite64, 1'000, 2'000, 0));
  discarded.state = WriteState::Discarded;
  discarded.discarded_ns = 7'000;
  ParsedTrace parsed = parse(render({discarded}));
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  auto writes = parsed.named("pwrite64 4 KiB");
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0]->args.at("state"), "discarded");
  EXPECT_EQ(writes[0]->args.at("discarded_ns"), "7000");
  EXPECT_EQ(writes[0]->args.count("durable_via"), 0u);
}

TEST(PerfettoSink, LostWriteSaysWhenAndWithWhichError) {
  WriteTimeline lost = dirty_write(call(Syscall::Pwrite64, 1'000, 2'000, 0));
  lost.state = WriteState::Lost;
  lost.lost_ns = 9'000;
  lost.lost_error = -EIO;
  ParsedTrace parsed = parse(render({lost}));
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  auto writes = parsed.named("pwrite64 4 KiB");
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0]->args.at("state"), "lost");
  EXPECT_EQ(writes[0]->args.at("lost_ns"), "9000");
  EXPECT_EQ(writes[0]->args.at("lost_error"), "EIO");
}

// An overlay file: dev and ino as the application sees them, the upper file as backing_*.
TEST(PerfettoSink, AnOverlayFileCarriesItsBackingFile) {
  WriteTimeline write = dirty_write(call(Syscall::Pwrite64, 1'000, 2'000, 0));
  write.call.view_dev = make_dev(0, 39);
  write.call.view_ino = 16;
  ParsedTrace parsed = parse(render({write}));
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  auto writes = parsed.named("pwrite64 4 KiB");
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0]->args.at("dev"), "0:39");
  EXPECT_EQ(writes[0]->args.at("ino"), "16");
  EXPECT_EQ(writes[0]->args.at("backing_dev"), dev_string(write.call.dev));
  EXPECT_EQ(writes[0]->args.at("backing_ino"), std::to_string(write.call.ino));
}

TEST(PerfettoSink, ItemsCarryTheirFilesPathAsAnArg) {
  WriteTimeline named = dirty_write(call(Syscall::Pwrite64, 1'000, 2'000, 0));
  named.call.path = "/mnt/data/app.log";
  WriteTimeline unnamed = dirty_write(call(Syscall::Pwrite64, 3'000, 4'000, 0));
  ParsedTrace parsed = parse(render({named, unnamed}));
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  auto writes = parsed.named("pwrite64 4 KiB");
  ASSERT_EQ(writes.size(), 2u) << "the slice name stays the call and its size";
  EXPECT_EQ(writes[0]->args.at("path"), "/mnt/data/app.log");
  EXPECT_EQ(writes[1]->args.count("path"), 0u);
  EXPECT_EQ(writes[1]->args.at("ino"), "12");
}

TEST(PerfettoSink, WritesAndSyncsNameTheirCgroup) {
  WriteTimeline write = dirty_write(call(Syscall::Pwrite64, 1'000, 2'000, 0));
  write.call.cgroup = "/kubepods.slice/pod1";
  SyncTimeline sync;
  sync.call = call(Syscall::Fsync, 3'000, 4'000, 0);
  sync.call.cgroup = "/kubepods.slice/pod1";
  WriteTimeline unknown = dirty_write(call(Syscall::Pwrite64, 5'000, 6'000, 4096));
  ParsedTrace parsed = parse(render({write, sync, unknown}));
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  auto writes = parsed.named("pwrite64 4 KiB");
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_EQ(writes[0]->args.at("cgroup"), "/kubepods.slice/pod1");
  EXPECT_EQ(writes[1]->args.count("cgroup"), 0u);  // not known: no arg
  auto syncs = parsed.named("fsync");
  ASSERT_EQ(syncs.size(), 1u);
  EXPECT_EQ(syncs[0]->args.at("cgroup"), "/kubepods.slice/pod1");
}

// A container's calls say which container and where the host has the file; its processes'
// tracks carry the container's name, so one container's processes sort together.
TEST(PerfettoSink, AContainersCallsNameItAndItsProcessTrackToo) {
  WriteTimeline write = dirty_write(call(Syscall::Pwrite64, 1'000, 2'000, 0));
  write.call.cgroup = "/kubepods/burstable/pod8c1d0f2e/" + std::string(64, 'e');
  Container c = container_of_cgroup(write.call.cgroup).value();
  c.name = "api";
  c.pod_name = "api-7f9";
  c.pod_namespace = "shop";
  c.hostname = "api-7f9";
  write.call.container = std::make_shared<const Container>(c);
  write.call.path = "/data/x";
  write.call.host_path = "/var/lib/kubelet/pods/8c1d/volumes/data/x";
  WriteTimeline on_host = dirty_write(call(Syscall::Pwrite64, 3'000, 4'000, 4096));
  on_host.call.pid = on_host.call.tid = 4242;
  on_host.call.comm = "cron";
  ParsedTrace parsed = parse(render({write, on_host}));
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  auto writes = parsed.named("pwrite64 4 KiB");
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_EQ(writes[0]->args.at("container"), "api");
  EXPECT_EQ(writes[0]->args.at("container_id"), std::string(64, 'e'));
  EXPECT_EQ(writes[0]->args.at("container_runtime"), "containerd");
  EXPECT_EQ(writes[0]->args.at("pod"), "api-7f9");
  EXPECT_EQ(writes[0]->args.at("namespace"), "shop");
  EXPECT_EQ(writes[0]->args.at("hostname"), "api-7f9");
  EXPECT_EQ(writes[0]->args.at("host_path"), "/var/lib/kubelet/pods/8c1d/volumes/data/x");
  EXPECT_EQ(writes[1]->args.count("container"), 0u);
  EXPECT_EQ(writes[1]->args.count("host_path"), 0u);
  std::vector<std::string> process_names;
  for (const auto& packet : parsed.trace.packet())
    if (packet.track_descriptor().has_process())
      process_names.push_back(packet.track_descriptor().process().process_name());
  EXPECT_EQ(process_names, (std::vector<std::string>{write.call.comm + " [api]", "cron"}));
}

TEST(PerfettoSink, WriteAndFsyncAreSlicesOnTheThreadTrack) {
  ParsedTrace parsed = parse(render(Scenario().timelines));
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  auto writes = parsed.named("pwrite64 4 KiB");
  ASSERT_EQ(writes.size(), 2u);
  const ParsedSlice& w = *writes[0];
  EXPECT_EQ(w.begin, 1'000u);
  EXPECT_EQ(w.end, 2'000u);
  EXPECT_TRUE(parsed.tracks.at(w.track).has_thread());
  EXPECT_EQ(w.args.at("dev"), "254:1");
  EXPECT_EQ(w.args.at("ino"), "12");
  EXPECT_EQ(w.args.at("offset"), "0");
  EXPECT_EQ(w.args.at("bytes"), "4096");
  EXPECT_EQ(w.args.at("state"), "durable");
  EXPECT_EQ(w.args.at("durable_via"), "flush");
  EXPECT_EQ(w.args.at("pages_dirtied"), "1");

  auto fsyncs = parsed.named("fsync");
  ASSERT_EQ(fsyncs.size(), 1u);
  EXPECT_EQ(fsyncs[0]->track, w.track);
  EXPECT_EQ(fsyncs[0]->begin, 9'000u);
  EXPECT_EQ(fsyncs[0]->end, 21'000u);
  EXPECT_EQ(fsyncs[0]->args.at("ret"), "0");
  EXPECT_EQ(fsyncs[0]->args.at("journal_ns"), "3000");
}

TEST(PerfettoSink, SyncPhasesAreTheStitchersSegmentsNestedUnderTheSync) {
  ParsedTrace parsed = parse(render(Scenario().timelines));
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  const std::uint64_t thread = parsed.named("fsync")[0]->track;
  std::vector<std::tuple<std::string, Nanos, Nanos>> phases;
  for (const auto& s : parsed.slices) {
    if (s.track != thread || s.depth != 1) continue;
    phases.emplace_back(s.name, s.begin, s.end);
  }
  std::sort(phases.begin(), phases.end(),
            [](const auto& a, const auto& b) { return std::get<1>(a) < std::get<1>(b); });
  // The Other segments are not drawn: time no phase covers stays bare under the sync.
  EXPECT_EQ(phases,
            (std::vector<std::tuple<std::string, Nanos, Nanos>>{{"writeback", 9'000, 10'000},
                                                                {"data I/O", 10'000, 13'000},
                                                                {"journal", 14'000, 17'000},
                                                                {"flush", 18'000, 20'000}}));
  EXPECT_TRUE(parsed.named("other").empty());
}

// The sync's own log write (an xfs iclog) is drawn on the device like its data requests.
TEST(PerfettoSink, SyncsJournalRequestsGoOnTheDeviceLanes) {
  Scenario scenario;
  auto& sync = std::get<SyncTimeline>(scenario.timelines.back());
  RequestTimeline log_write = data_request(307256, 14'000, 15'000);
  log_write.bytes = 1536;
  log_write.flags |= req_flag::kMeta;
  sync.journal_requests = {log_write};
  ParsedTrace parsed = parse(render(scenario.timelines));
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  const pb::TrackDescriptor* device = parsed.track_named("vda 254:0");
  ASSERT_NE(device, nullptr);
  std::vector<const ParsedSlice*> drawn;
  for (const auto& s : parsed.slices)
    if (s.args.count("sector") && s.args.at("sector") == "307256") drawn.push_back(&s);
  ASSERT_EQ(drawn.size(), 1u);
  EXPECT_EQ(parsed.tracks.at(drawn[0]->track).parent_uuid(), device->uuid());
  EXPECT_EQ(drawn[0]->begin, 14'000u);
  EXPECT_EQ(drawn[0]->end, 15'000u);
}

TEST(PerfettoSink, RequestsGoOnDeviceLanesOnceEachWithoutOverlap) {
  ParsedTrace parsed = parse(render(Scenario().timelines));
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  const pb::TrackDescriptor* device = parsed.track_named("vda 254:0");
  ASSERT_NE(device, nullptr);
  auto shared = parsed.named("W 8 KiB");
  ASSERT_EQ(shared.size(), 2u);  // the shared request once (two writes, one fsync), the other
  for (const ParsedSlice* s : shared)
    EXPECT_EQ(parsed.tracks.at(s->track).parent_uuid(), device->uuid());
  EXPECT_EQ(shared[0]->begin, 10'000u);
  EXPECT_EQ(shared[0]->end, 12'000u);
  EXPECT_EQ(shared[0]->args.at("sector"), "2048");
  EXPECT_EQ(shared[1]->begin, 11'000u);
  EXPECT_NE(shared[0]->track, shared[1]->track) << "in flight together: separate lanes";

  auto flushes = parsed.named("FF");
  ASSERT_EQ(flushes.size(), 1u);
  EXPECT_EQ(parsed.tracks.at(flushes[0]->track).parent_uuid(), device->uuid());

  const pb::TrackDescriptor* queue = parsed.track_named("vda q1");
  ASSERT_NE(queue, nullptr);
  EXPECT_EQ(queue->parent_uuid(), device->uuid());
  auto commands = parsed.named("write 8 KiB");
  ASSERT_EQ(commands.size(), 1u);
  EXPECT_EQ(parsed.tracks.at(commands[0]->track).parent_uuid(), queue->uuid());
  EXPECT_EQ(commands[0]->begin, 10'100u);
  EXPECT_EQ(commands[0]->end, 11'900u);

  const pb::TrackDescriptor* journal = parsed.track_named("journal vda1 254:1");
  ASSERT_NE(journal, nullptr);
  auto commits = parsed.named("commit 7");
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_EQ(parsed.tracks.at(commits[0]->track).parent_uuid(), journal->uuid());
}

// Lanes hold no nested or overlapping slices; thread tracks only properly nested ones.
void expect_lanes_apart(const ParsedTrace& parsed) {
  for (const auto& a : parsed.slices) {
    for (const auto& b : parsed.slices) {
      if (&a == &b || a.track != b.track) continue;
      const bool overlap = a.begin < b.end && b.begin < a.end;
      const bool nested =
          (a.begin <= b.begin && b.end <= a.end) || (b.begin <= a.begin && a.end <= b.end);
      if (parsed.tracks.at(a.track).has_thread())
        EXPECT_TRUE(!overlap || nested) << a.name << " and " << b.name;
      else
        EXPECT_FALSE(overlap) << a.name << " and " << b.name << " share a lane";
    }
  }
}

TEST(PerfettoSink, LanesStayApartWhenRequestsArriveOutOfTimeOrder) {
  expect_lanes_apart(parse(render(Scenario().timelines)));
  // Timelines finish in any order: a late one brings requests from before, and between, those
  // already drawn.
  std::vector<Timeline> timelines;
  for (Nanos t : {50'000, 10'000, 30'000, 20'000, 40'000, 15'000, 35'000, 12'000}) {
    RequestTimeline r = data_request(t / 8, t, t + 6'000);
    timelines.push_back(write(t - 1'000, t - 500, 0, r));
  }
  ParsedTrace parsed = parse(render(timelines));
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  EXPECT_EQ(parsed.named("W 8 KiB").size(), 8u);
  expect_lanes_apart(parsed);
  std::set<std::uint64_t> lanes;
  for (const ParsedSlice* s : parsed.named("W 8 KiB")) lanes.insert(s->track);
  EXPECT_LE(lanes.size(), 3u) << "a lane is reused where it is free, not only after its last";
}

TEST(PerfettoSink, FlowsLeadFromWriteToRequestToNvmeToFlush) {
  ParsedTrace parsed = parse(render(Scenario().timelines));
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  auto writes = parsed.named("pwrite64 4 KiB");
  ASSERT_EQ(writes[0]->begin_event.flow_ids_size(), 1);
  const std::uint64_t write_flow = writes[0]->begin_event.flow_ids(0);
  // The second write's request was drawn already, from the first: no arrow can reach it.
  EXPECT_EQ(writes[1]->begin_event.flow_ids_size(), 0);

  const ParsedSlice* request = parsed.named("W 8 KiB")[0];
  ASSERT_EQ(request->begin, 10'000u);
  EXPECT_EQ(request->begin_event.terminating_flow_ids_size(), 1);
  EXPECT_TRUE(contains(request->begin_event.terminating_flow_ids(), write_flow));
  ASSERT_EQ(request->begin_event.flow_ids_size(), 1);
  const std::uint64_t chain = request->begin_event.flow_ids(0);

  // The fsync leads to the request it was the first to show.
  const ParsedSlice& fsync = *parsed.named("fsync")[0];
  ASSERT_EQ(fsync.begin_event.flow_ids_size(), 1);
  const ParsedSlice* overlapping = parsed.named("W 8 KiB")[1];
  EXPECT_TRUE(
      contains(overlapping->begin_event.terminating_flow_ids(), fsync.begin_event.flow_ids(0)));

  const ParsedSlice& command = *parsed.named("write 8 KiB")[0];
  EXPECT_TRUE(contains(command.begin_event.flow_ids(), chain));
  const ParsedSlice& flush = *parsed.named("FF")[0];
  EXPECT_TRUE(contains(flush.begin_event.terminating_flow_ids(), chain));
  // The other request, made durable by the same flush, has its own chain into it.
  ASSERT_EQ(flush.begin_event.terminating_flow_ids_size(), 2);
  EXPECT_TRUE(
      contains(flush.begin_event.terminating_flow_ids(), overlapping->begin_event.flow_ids(0)));
  EXPECT_NE(chain, overlapping->begin_event.flow_ids(0));
}

TEST(PerfettoSink, NvmeCommandKnownOnlyToALaterCopyIsDrawnOnTheRequestsChain) {
  Scenario scenario;
  RequestTimeline early = scenario.shared;
  early.nvme.reset();  // a snapshot taken before the command was matched
  ParsedTrace parsed =
      parse(render({write(1'000, 2'000, 0, early), write(3'000, 4'000, 4096, scenario.shared)}));
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  ASSERT_EQ(parsed.named("W 8 KiB").size(), 1u);
  auto commands = parsed.named("write 8 KiB");
  ASSERT_EQ(commands.size(), 1u);
  const ParsedSlice& request = *parsed.named("W 8 KiB")[0];
  ASSERT_EQ(request.begin_event.flow_ids_size(), 1);
  EXPECT_TRUE(contains(commands[0]->begin_event.flow_ids(), request.begin_event.flow_ids(0)));
}

TEST(PerfettoSink, NamesAreInternedOnceAndResolve) {
  ParsedTrace parsed = parse(render(Scenario().timelines));
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  int name_entries = 0, annotation_entries = 0, inline_names = 0;
  for (const auto& packet : parsed.trace.packet()) {
    for (const auto& n : packet.interned_data().event_names())
      name_entries += n.name() == "pwrite64 4 KiB";
    for (const auto& n : packet.interned_data().debug_annotation_names())
      annotation_entries += n.name() == "dev";
    inline_names += packet.track_event().has_name();
  }
  EXPECT_EQ(name_entries, 1) << "two writes, one entry";
  EXPECT_EQ(annotation_entries, 1) << "on writes, requests, syncs and commits, one entry";
  EXPECT_EQ(inline_names, 1) << "only the commit, whose name never repeats";
  EXPECT_EQ(parsed.named("pwrite64 4 KiB")[1]->begin_event.name_iid(),
            parsed.named("pwrite64 4 KiB")[0]->begin_event.name_iid());
}

TEST(PerfettoSink, StreamsEachTimelineAsItArrives) {
  std::ostringstream out;
  auto sink = make_sink(OutputFormat::Perfetto, out, named_devices());
  std::string before = out.str();
  EXPECT_TRUE(before.empty()) << "nothing until there is something to write";
  for (const auto& t : Scenario().timelines) {
    sink->timeline(t);
    const std::string now = out.str();
    ASSERT_GT(now.size(), before.size());
    EXPECT_EQ(now.compare(0, before.size(), before), 0) << "appended, never rewritten";
    EXPECT_TRUE(parse(now).errors.empty()) << "a whole trace after every timeline";
    before = now;
  }
  sink->summary(TraceSummary{});
  EXPECT_EQ(out.str(), before);
}

TEST(PerfettoSink, TrackUuidsAndFlowIdsDifferBetweenTraces) {
  ParsedTrace a = parse(render(Scenario().timelines));
  ParsedTrace b = parse(render(Scenario().timelines));
  auto ids_of = [](const ParsedTrace& parsed) {
    std::set<std::uint64_t> ids;
    for (const auto& [uuid, d] : parsed.tracks) ids.insert(uuid);
    for (const auto& s : parsed.slices)
      for (auto id : s.begin_event.flow_ids()) ids.insert(id);
    return ids;
  };
  const std::set<std::uint64_t> ids_a = ids_of(a), ids_b = ids_of(b);
  EXPECT_GT(ids_a.size(), 10u);
  std::vector<std::uint64_t> shared;
  std::set_intersection(ids_a.begin(), ids_a.end(), ids_b.begin(), ids_b.end(),
                        std::back_inserter(shared));
  EXPECT_TRUE(shared.empty()) << "two traces can be merged without colliding ids";
  EXPECT_EQ(ids_a.count(0), 0u);
}

TEST(PerfettoSink, RetainedStateStaysFlatOverManyTimelines) {
  CountingBuffer bytes;
  std::ostream out(&bytes);
  PerfettoSink sink(out, {}, read_clocks());
  std::size_t retained_early = 0;
  constexpr int kItems = 200'000;
  for (int i = 0; i < kItems; ++i) {
    const Nanos t = 1'000'000 + static_cast<Nanos>(i) * 10'000;
    RequestTimeline r = data_request(static_cast<std::uint64_t>(i) * 16, t + 2'000, t + 6'000);
    r.nvme = NvmeCommand{.qid = static_cast<std::uint16_t>(i % 2),
                         .cid = static_cast<std::uint16_t>(i % 64),
                         .opcode = 1,
                         .nsid = 1,
                         .fua = false,
                         .submit_ns = t + 2'100,
                         .complete_ns = t + 5'900,
                         .status = 0};
    if (i % 40 == 39) {
      SyncTimeline sync;
      sync.call = call(Syscall::Fdatasync, t, t + 9'000);
      sync.call.tid = kTid + static_cast<std::uint32_t>(i % 4);
      RequestTimeline flush = flush_request(kVda, t + 7'000, t + 8'000);
      r.durable_ns = flush.complete_ns;
      sync.requests = {r};
      sync.flushes = {flush};
      JournalCommit commit;
      commit.dev = kVda1;
      commit.transaction = static_cast<std::uint32_t>(i);
      commit.start_ns = t + 6'500;
      commit.end_ns = t + 7'000;
      sync.commits = {commit};
      sync.segments = {{SyncPhase::DataIo, t + 2'000, t + 6'000},
                       {SyncPhase::Flush, t + 7'000, t + 8'000}};
      sink.timeline(sync);
    } else {
      WriteTimeline w = write(t, t + 1'000, static_cast<std::uint64_t>(i) * 4096, r);
      w.call.tid = kTid + static_cast<std::uint32_t>(i % 4);
      w.call.count = w.call.ret = 4096 + i % 3;  // a few distinct names
      sink.timeline(w);
    }
    if (i == kItems / 2) retained_early = sink.retained();
  }
  sink.summary(TraceSummary{});
  // The recent-request and recent-commit windows are full by half way (5000 commits, 100000
  // requests); nothing else grows with the items.
  EXPECT_GT(retained_early, 4096u);
  EXPECT_EQ(sink.retained(), retained_early);
  EXPECT_LT(sink.retained(), 20'000u);
  EXPECT_GT(bytes.bytes, 200u * static_cast<std::uint64_t>(kItems)) << "all of it written";
}

TEST(PerfettoSink, AnEmptyTraceIsJustTheClockSnapshot) {
  ParsedTrace parsed = parse(render({}));
  ASSERT_EQ(parsed.trace.packet_size(), 1);
  EXPECT_TRUE(parsed.trace.packet(0).has_clock_snapshot());
}

TEST(PerfettoSink, UnnamedDevicesAreNamedByNumber) {
  std::ostringstream out;
  auto sink = make_sink(OutputFormat::Perfetto, out, SinkOptions{});
  for (const auto& t : Scenario().timelines) sink->timeline(t);
  sink->summary(TraceSummary{});
  ParsedTrace parsed = parse(out.str());
  EXPECT_NE(parsed.track_named("254:0"), nullptr);
  EXPECT_NE(parsed.track_named("254:0 q1"), nullptr);
}

// A slow fsync whose named waits (from slow_waits.h: journal commit 5 on loop0 with a flush,
// the inode lock, an unnamed sleep) are not drawn elsewhere yet.
SyncTimeline slow_fsync_with_waits() {
  SyncTimeline sync;
  sync.call = call(Syscall::Fsync, 1'000'000'000, 1'296'300'000);
  sync.causes = slow_fsync_causes(1'000'000'000);
  return sync;
}

TEST(PerfettoSink, SlowCallsSliceCarriesItsNamedWaitsAndStacks) {
  ParsedTrace parsed = parse(render({slow_fsync_with_waits()}));
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  const ParsedSlice& fsync = *parsed.named("fsync").at(0);
  EXPECT_EQ(fsync.args.at("why.journal-commit.ns"), "280100000");
  EXPECT_EQ(fsync.args.at("why.journal-commit.sleeps"), "2");
  EXPECT_EQ(fsync.args.at("why.journal-commit.evidence"), "jbd2_log_wait_commit");
  EXPECT_EQ(fsync.args.at("why.journal-commit.frames"),
            "at jbd2_log_wait_commit [jbd2] < jbd2_complete_transaction [jbd2] < ext4_fc_commit "
            "[ext4] < ext4_sync_file [ext4] < do_fsync < __x64_sys_fsync < …");
  EXPECT_EQ(fsync.args.at("why.journal-commit.waker"), "jbd2/loop0-8 (pid 123, kernel thread)");
  EXPECT_EQ(fsync.args.at("why.journal-commit.commit"), "5 on 7:0");
  EXPECT_EQ(fsync.args.at("why.inode-lock.ns"), "12000000");
  EXPECT_EQ(fsync.args.at("why.inode-lock.holder"), "wp_workload (pid 456/457)");
  EXPECT_EQ(fsync.args.at("why.other.ns"), "3000000");
  EXPECT_EQ(fsync.args.at("why.other.frames"), "at msleep < ext4_sync_file [ext4]");
  EXPECT_EQ(fsync.args.count("why.inode-lock.waker"), 0u) << "no waker, no annotation";
  // Each sleep stack, and its waker, annotated apart.
  EXPECT_EQ(fsync.args.at("stack.0"),
            "280.10ms (2 sleeps, none) at __schedule < schedule < jbd2_log_wait_commit [jbd2] < "
            "jbd2_complete_transaction [jbd2] < ext4_fc_commit [ext4] < ext4_sync_file [ext4] < …");
  EXPECT_EQ(fsync.args.at("stack.0.waker"),
            "jbd2/loop0-8 (pid 123, kernel thread) at __wake_up_common < __wake_up < "
            "jbd2_journal_commit_transaction [jbd2]");
  EXPECT_TRUE(fsync.args.at("stack.1").starts_with("12.00ms (1 sleep, none) at __schedule"));
  EXPECT_EQ(fsync.args.count("stack.1.waker"), 0u);
  EXPECT_EQ(fsync.args.at("unslotted_ns"), "3000000");
}

TEST(PerfettoSink, AFlowLeadsFromTheSlowCallToTheCommitItWaitedOn) {
  ParsedTrace parsed = parse(render({slow_fsync_with_waits()}));
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  const ParsedSlice& fsync = *parsed.named("fsync").at(0);
  const auto commits = parsed.named("commit 5");
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_EQ(commits[0]->begin, 1'010'000'000u);
  EXPECT_EQ(commits[0]->end, 1'290'000'000u);
  ASSERT_EQ(commits[0]->begin_event.terminating_flow_ids_size(), 1);
  EXPECT_TRUE(
      contains(fsync.begin_event.flow_ids(), commits[0]->begin_event.terminating_flow_ids(0)));
  // The chain's flush is drawn on the disk.
  const auto flushes = parsed.named("FF");
  ASSERT_EQ(flushes.size(), 1u);
  EXPECT_EQ(flushes[0]->begin, 1'100'000'000u);
}

TEST(PerfettoSink, ACommitRunningBeforeTheCallLeadsIntoIt) {
  SyncTimeline sync = slow_fsync_with_waits();
  sync.causes->waits[0].chain.commit->start_ns = 990'000'000;  // before the call began
  ParsedTrace parsed = parse(render({sync}));
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  const ParsedSlice& fsync = *parsed.named("fsync").at(0);
  const ParsedSlice& commit = *parsed.named("commit 5").at(0);
  EXPECT_EQ(commit.begin_event.terminating_flow_ids_size(), 0);
  ASSERT_EQ(commit.begin_event.flow_ids_size(), 1);
  EXPECT_TRUE(contains(fsync.begin_event.terminating_flow_ids(), commit.begin_event.flow_ids(0)));
  EXPECT_EQ(fsync.begin_event.flow_ids_size(), 0);
}

TEST(PerfettoSink, ACommitDrawnBeforeGetsNoSecondSliceNorAFlow) {
  SyncTimeline first = slow_fsync_with_waits();
  SyncTimeline second = slow_fsync_with_waits();
  second.call.tid = kTid + 1;
  ParsedTrace parsed = parse(render({first, second}));
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  EXPECT_EQ(parsed.named("commit 5").size(), 1u);
  const auto fsyncs = parsed.named("fsync");
  ASSERT_EQ(fsyncs.size(), 2u);
  int flows = 0;
  for (const ParsedSlice* f : fsyncs) flows += f->begin_event.flow_ids_size();
  EXPECT_EQ(flows, 1) << "the commit can end one flow: the first call's";
  for (const ParsedSlice* f : fsyncs)
    EXPECT_EQ(f->args.at("why.journal-commit.commit"), "5 on 7:0");
}

}  // namespace
}  // namespace wp
