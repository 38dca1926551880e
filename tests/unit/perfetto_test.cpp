// SPDX-License-Identifier: Apache-2.0
// Perfetto sink: hand-built timelines in, a protobuf trace out, parsed back with the generated
// classes (perfetto_fixture.h): every timestamp on CLOCK_MONOTONIC, the clock snapshot, process
// and thread tracks and what they carry, interned names, streaming, and state that stays flat.
#include <gtest/gtest.h>

#include <cerrno>
#include <iterator>
#include <memory>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "common/container.h"
#include "sinks/perfetto_sink.h"
#include "sinks/sink.h"

#include "perfetto_fixture.h"

namespace wp {
namespace {

using namespace perfetto_test;

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

}  // namespace
}  // namespace wp
