// Perfetto sink: hand-built timelines in, a protobuf trace out, parsed back with the generated
// classes and checked as the importer would read it: tracks, slices from BEGIN/END pairs,
// flows from flow ids, every timestamp on CLOCK_MONOTONIC.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sinks/perfetto.pb.h"
#include "sinks/perfetto_sink.h"
#include "sinks/sink.h"

namespace wp {
namespace {

namespace pb = ::wp::perfetto;

constexpr DevT kVda = make_dev(254, 0);
constexpr DevT kVda1 = make_dev(254, 1);
constexpr std::uint32_t kPid = 100;
constexpr std::uint32_t kTid = 101;

SyscallEvent call(Syscall syscall, Nanos start, Nanos end) {
  SyscallEvent c;
  c.start_ns = start;
  c.end_ns = end;
  c.pid = kPid;
  c.tid = kTid;
  c.comm = "db";
  c.syscall = syscall;
  c.fd = 3;
  c.dev = kVda1;
  c.ino = 12;
  return c;
}

RequestTimeline data_request(std::uint64_t sector, Nanos issue, Nanos complete) {
  RequestTimeline r;
  r.disk = kVda;
  r.sector = sector;
  r.bytes = 8192;
  r.op = ReqOp::Write;
  r.queue_ns = issue - 500;
  r.issue_ns = issue;
  r.complete_ns = complete;
  r.bios = 2;
  r.submit_tid = kTid;
  r.submit_comm = "db";
  r.submit_why = SubmitWhy::SyncSyscall;
  return r;
}

WriteTimeline write(Nanos start, Nanos end, std::uint64_t offset, const RequestTimeline& request) {
  WriteTimeline w;
  w.call = call(Syscall::Pwrite64, start, end);
  w.call.ret = 4096;
  w.call.count = 4096;
  w.call.pos = offset;
  w.call.pages_dirtied = 1;
  w.state = WriteState::Durable;
  w.pages = 1;
  w.requests = {request};
  w.written_ns = request.complete_ns;
  w.durable_ns = request.durable_ns;
  w.durable_via = DurableVia::Flush;
  return w;
}

// Two writes whose pages went out in one request (with an NVMe command), then an fsync that
// wrote that request and an overlapping one, committed the journal and flushed the cache.
struct Scenario {
  RequestTimeline shared = data_request(2048, 10'000, 12'000);
  RequestTimeline overlapping = data_request(4096, 11'000, 13'000);
  RequestTimeline flush;
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
    flush.disk = kVda;
    flush.op = ReqOp::Flush;
    flush.flags = req_flag::kPreflush;
    flush.issue_ns = 18'000;
    flush.complete_ns = 20'000;
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
    sync.phases = {.writeback_ns = 1'000,
                   .data_io_ns = 4'000,
                   .journal_ns = 3'000,
                   .flush_ns = 2'000,
                   .other_ns = 2'000};
    timelines.push_back(sync);
  }
};

// The trace as the importer sees it: tracks by uuid, slices rebuilt from BEGIN/END pairs.
struct ParsedSlice {
  std::uint64_t track = 0;
  std::string name;
  Nanos begin = 0;
  Nanos end = 0;
  int depth = 0;
  pb::TrackEvent begin_event;
};

struct ParsedTrace {
  pb::Trace trace;
  std::map<std::uint64_t, pb::TrackDescriptor> tracks;
  std::vector<ParsedSlice> slices;
  std::vector<std::string> errors;  // unbalanced BEGIN/END, events out of time order

  const pb::TrackDescriptor* track_named(const std::string& name) const {
    for (const auto& [uuid, d] : tracks)
      if (d.name() == name) return &d;
    return nullptr;
  }
  std::vector<const ParsedSlice*> named(const std::string& name) const {
    std::vector<const ParsedSlice*> out;
    for (const auto& s : slices)
      if (s.name == name) out.push_back(&s);
    return out;
  }
};

ParsedTrace parse(const std::string& bytes) {
  ParsedTrace parsed;
  EXPECT_TRUE(parsed.trace.ParseFromString(bytes));
  std::map<std::uint64_t, std::vector<ParsedSlice>> open;
  Nanos last_ts = 0;
  for (const auto& packet : parsed.trace.packet()) {
    if (packet.has_track_descriptor())
      parsed.tracks[packet.track_descriptor().uuid()] = packet.track_descriptor();
    if (!packet.has_track_event()) continue;
    const pb::TrackEvent& e = packet.track_event();
    if (packet.timestamp() < last_ts) parsed.errors.push_back("events out of time order");
    last_ts = packet.timestamp();
    auto& stack = open[e.track_uuid()];
    if (e.type() == pb::TrackEvent::TYPE_SLICE_BEGIN) {
      ParsedSlice s;
      s.track = e.track_uuid();
      s.name = e.name();
      s.begin = packet.timestamp();
      s.depth = static_cast<int>(stack.size());
      s.begin_event = e;
      stack.push_back(std::move(s));
    } else if (e.type() == pb::TrackEvent::TYPE_SLICE_END) {
      if (stack.empty()) {
        parsed.errors.push_back("END without BEGIN on track " + std::to_string(e.track_uuid()));
        continue;
      }
      stack.back().end = packet.timestamp();
      parsed.slices.push_back(std::move(stack.back()));
      stack.pop_back();
    }
  }
  for (const auto& [uuid, stack] : open)
    if (!stack.empty())
      parsed.errors.push_back("BEGIN without END on track " + std::to_string(uuid));
  return parsed;
}

std::string render(const std::vector<Timeline>& timelines) {
  std::ostringstream out;
  SinkOptions options;
  options.devices = {DeviceInfo{.dev = kVda, .disk = kVda, .name = "vda"},
                     DeviceInfo{.dev = kVda1, .disk = kVda, .name = "vda1"}};
  auto sink = make_sink(OutputFormat::Perfetto, out, options);
  for (const auto& t : timelines) sink->timeline(t);
  sink->summary(TraceSummary{});
  sink->flush();
  return out.str();
}

bool contains(const google::protobuf::RepeatedField<std::uint64_t>& ids, std::uint64_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

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

TEST(PerfettoSink, ThreadAndProcessTracksCarryTheIds) {
  ParsedTrace parsed = parse(render(Scenario().timelines));
  const pb::TrackDescriptor* process = nullptr;
  const pb::TrackDescriptor* thread = nullptr;
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

TEST(PerfettoSink, WriteAndFsyncAreSlicesOnTheThreadTrack) {
  ParsedTrace parsed = parse(render(Scenario().timelines));
  EXPECT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  auto writes = parsed.named("pwrite64 4 KiB");
  ASSERT_EQ(writes.size(), 2u);
  const ParsedSlice& w = *writes[0];
  EXPECT_EQ(w.begin, 1'000u);
  EXPECT_EQ(w.end, 2'000u);
  EXPECT_TRUE(parsed.tracks.at(w.track).has_thread());
  std::map<std::string, std::string> args;
  for (const auto& a : w.begin_event.debug_annotations())
    args[a.name()] = a.has_string_value() ? a.string_value() : std::to_string(a.uint_value());
  EXPECT_EQ(args["dev"], "254:1");
  EXPECT_EQ(args["ino"], "12");
  EXPECT_EQ(args["offset"], "0");
  EXPECT_EQ(args["bytes"], "4096");
  EXPECT_EQ(args["state"], "durable");
  EXPECT_EQ(args["durable_via"], "flush");
  EXPECT_EQ(args["pages_dirtied"], "1");

  auto fsyncs = parsed.named("fsync");
  ASSERT_EQ(fsyncs.size(), 1u);
  EXPECT_EQ(fsyncs[0]->track, w.track);
  EXPECT_EQ(fsyncs[0]->begin, 9'000u);
  EXPECT_EQ(fsyncs[0]->end, 21'000u);
  // Its phases nest under it: the flush ran 18000..20000, the journal commit 14000..17000.
  auto flush_phase = parsed.named("flush");
  ASSERT_EQ(flush_phase.size(), 1u);
  EXPECT_EQ(flush_phase[0]->track, w.track);
  EXPECT_EQ(flush_phase[0]->depth, 1);
  EXPECT_EQ(flush_phase[0]->begin, 18'000u);
  EXPECT_EQ(flush_phase[0]->end, 20'000u);
  auto journal_phase = parsed.named("journal");
  ASSERT_EQ(journal_phase.size(), 1u);
  EXPECT_EQ(journal_phase[0]->begin, 14'000u);
  EXPECT_EQ(journal_phase[0]->end, 17'000u);
}

TEST(PerfettoSink, RequestsGoOnDeviceLanesOnceEachWithoutOverlap) {
  ParsedTrace parsed = parse(render(Scenario().timelines));
  const pb::TrackDescriptor* device = parsed.track_named("vda 254:0");
  ASSERT_NE(device, nullptr);
  auto shared = parsed.named("W 8 KiB");
  ASSERT_EQ(shared.size(), 2u);  // the shared request once (two writes, one fsync), the other
  for (const ParsedSlice* s : shared)
    EXPECT_EQ(parsed.tracks.at(s->track).parent_uuid(), device->uuid());
  EXPECT_EQ(shared[0]->begin, 10'000u);
  EXPECT_EQ(shared[0]->end, 12'000u);
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

  // Lanes hold no nested or overlapping slices; thread tracks only properly nested ones.
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

TEST(PerfettoSink, FlowsLeadFromWriteToRequestToNvmeToFlush) {
  ParsedTrace parsed = parse(render(Scenario().timelines));
  const ParsedSlice& write = *parsed.named("pwrite64 4 KiB")[0];
  ASSERT_EQ(write.begin_event.flow_ids_size(), 1);
  const std::uint64_t write_flow = write.begin_event.flow_ids(0);

  const ParsedSlice* request = nullptr;
  for (const ParsedSlice* s : parsed.named("W 8 KiB"))
    if (s->begin == 10'000) request = s;
  ASSERT_NE(request, nullptr);
  EXPECT_TRUE(contains(request->begin_event.terminating_flow_ids(), write_flow));
  // Both writes and the fsync lead into the shared request.
  EXPECT_EQ(request->begin_event.terminating_flow_ids_size(), 3);
  ASSERT_EQ(request->begin_event.flow_ids_size(), 1);
  const std::uint64_t chain = request->begin_event.flow_ids(0);

  const ParsedSlice& command = *parsed.named("write 8 KiB")[0];
  EXPECT_TRUE(contains(command.begin_event.flow_ids(), chain));
  const ParsedSlice& flush = *parsed.named("FF")[0];
  EXPECT_TRUE(contains(flush.begin_event.terminating_flow_ids(), chain));
  // The other request, made durable by the same flush, has its own chain into it.
  EXPECT_EQ(flush.begin_event.terminating_flow_ids_size(), 2);
}

TEST(PerfettoSink, WritesNothingBeforeTheSummaryAndAnEmptyTraceStillParses) {
  std::ostringstream out;
  auto sink = make_sink(OutputFormat::Perfetto, out, SinkOptions{});
  for (const auto& t : Scenario().timelines) sink->timeline(t);
  sink->flush();
  EXPECT_TRUE(out.str().empty());

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

}  // namespace
}  // namespace wp
