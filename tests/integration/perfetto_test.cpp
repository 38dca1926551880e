// The Perfetto output of a real trace: `writepath trace --format perfetto -o FILE` on a
// buffered-then-fsync workload, parsed back with the generated classes. Needs root.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "harness.h"
#include "sinks/perfetto.pb.h"

namespace {

using namespace wp::testing;
namespace pb = ::wp::perfetto;

class PerfettoTrace : public ScratchExt4 {};

TEST_F(PerfettoTrace, BufferedWritesFsyncAndTheirFlowsAreInTheFile) {
  const std::string out = file("trace.perfetto");
  auto r = run({tool("writepath"), "trace", "--format", "perfetto", "-o", out, "--",
                tool("wp_workload"), "buffered-fsync", file("buffered"), "8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << "the trace goes to the file";

  pb::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(slurp(out)));
  ASSERT_GT(trace.packet_size(), 0);
  EXPECT_EQ(trace.packet(0).clock_snapshot().primary_trace_clock(), pb::BUILTIN_CLOCK_MONOTONIC);

  std::map<std::uint64_t, pb::TrackDescriptor> tracks;
  std::map<std::uint64_t, int> open_slices;  // per track: BEGINs not yet ENDed
  std::map<std::uint64_t, int> flow_events;  // flow id → events carrying it
  int writes = 0, fsyncs = 0;
  for (const auto& packet : trace.packet()) {
    if (packet.has_timestamp()) {
      EXPECT_EQ(packet.timestamp_clock_id(), 3u);
    }
    if (packet.has_track_descriptor())
      tracks[packet.track_descriptor().uuid()] = packet.track_descriptor();
    if (!packet.has_track_event()) continue;
    const pb::TrackEvent& e = packet.track_event();
    ASSERT_TRUE(tracks.count(e.track_uuid())) << "an event before its track's descriptor";
    if (e.type() == pb::TrackEvent::TYPE_SLICE_BEGIN) {
      ++open_slices[e.track_uuid()];
      const pb::TrackDescriptor& track = tracks.at(e.track_uuid());
      if (track.has_thread() && track.thread().thread_name() == "wp_workload") {
        if (e.name() == "pwrite64 4 KiB") ++writes;
        if (e.name() == "fsync") ++fsyncs;
      }
    } else if (e.type() == pb::TrackEvent::TYPE_SLICE_END) {
      EXPECT_GT(open_slices[e.track_uuid()]--, 0) << "END without BEGIN";
    }
    for (auto id : e.flow_ids()) ++flow_events[id];
    for (auto id : e.terminating_flow_ids()) ++flow_events[id];
  }
  for (const auto& [uuid, open] : open_slices) EXPECT_EQ(open, 0) << tracks[uuid].name();
  EXPECT_GE(writes, 8);
  EXPECT_GE(fsyncs, 1);
  int flows = 0;  // a flow joins at least two events
  for (const auto& [id, events] : flow_events) flows += events >= 2;
  EXPECT_GE(flows, 1);
}

TEST(PerfettoCli, PerfettoWithoutOutputFileIsAUsageError) {
  auto r = run({writepath(), "trace", "--format", "perfetto", "--", "true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "writepath: --format perfetto needs -o FILE\n");
  EXPECT_TRUE(r.out.empty());
}

}  // namespace
