// SPDX-License-Identifier: Apache-2.0
// The Perfetto output of a real trace: `writepath trace --format perfetto -o FILE` on a
// buffered-then-fsync workload, parsed back with the generated classes (names through the
// sequence's interning tables, as the importer resolves them). Needs root.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <ctime>
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
  const pb::ClockSnapshot& clocks = trace.packet(0).clock_snapshot();
  EXPECT_EQ(clocks.primary_trace_clock(), pb::BUILTIN_CLOCK_MONOTONIC);
  std::map<std::uint32_t, std::uint64_t> clock_at;
  for (const auto& c : clocks.clocks()) clock_at[c.clock_id()] = c.timestamp();
  ASSERT_EQ(clock_at.size(), 3u) << "MONOTONIC, REALTIME and BOOTTIME";
  EXPECT_GE(clock_at[6], clock_at[3]) << "BOOTTIME counts suspend on top of MONOTONIC";
  EXPECT_GT(clock_at[1], clock_at[6]) << "REALTIME counts from 1970";
  {
    // The snapshot's REALTIME − MONOTONIC is the wall clock's offset now (nothing set it since).
    timespec mono{}, real{};
    ::clock_gettime(CLOCK_MONOTONIC, &mono);
    ::clock_gettime(CLOCK_REALTIME, &real);
    const std::int64_t offset_now =
        (real.tv_sec - mono.tv_sec) * 1'000'000'000ll + (real.tv_nsec - mono.tv_nsec);
    const auto snapshot_offset = static_cast<std::int64_t>(clock_at[1] - clock_at[3]);
    EXPECT_LT(std::llabs(snapshot_offset - offset_now), 1'000'000'000ll);
    // BOOTTIME − MONOTONIC is the time spent suspended: the same as the kernel's now.
    timespec boot{};
    ::clock_gettime(CLOCK_BOOTTIME, &boot);
    ::clock_gettime(CLOCK_MONOTONIC, &mono);
    const std::int64_t boot_now =
        (boot.tv_sec - mono.tv_sec) * 1'000'000'000ll + (boot.tv_nsec - mono.tv_nsec);
    EXPECT_LT(std::llabs(static_cast<std::int64_t>(clock_at[6] - clock_at[3]) - boot_now),
              1'000'000'000ll);
  }

  std::map<std::uint64_t, pb::TrackDescriptor> tracks;
  std::map<std::uint64_t, int> open_slices;          // per track: BEGINs not yet ENDed
  std::map<std::uint64_t, int> flow_events;          // flow id → events carrying it
  std::map<std::uint64_t, std::string> event_names;  // the sequence's interning table
  int writes = 0, fsyncs = 0, sync_phases = 0;
  std::uint64_t first_event_ts = ~std::uint64_t{0};
  for (const auto& packet : trace.packet()) {
    EXPECT_EQ(packet.trusted_packet_sequence_id(), 1u);
    for (const auto& n : packet.interned_data().event_names()) {
      auto [it, added] = event_names.try_emplace(n.iid(), n.name());
      EXPECT_TRUE(added || it->second == n.name()) << "iid " << n.iid() << " redefined";
    }
    if (packet.has_timestamp()) {
      EXPECT_EQ(packet.timestamp_clock_id(), 3u);
    }
    if (packet.has_track_descriptor())
      tracks[packet.track_descriptor().uuid()] = packet.track_descriptor();
    if (!packet.has_track_event()) continue;
    const pb::TrackEvent& e = packet.track_event();
    ASSERT_TRUE(tracks.count(e.track_uuid())) << "an event before its track's descriptor";
    first_event_ts = std::min<std::uint64_t>(first_event_ts, packet.timestamp());
    std::string name = e.name();
    if (e.has_name_iid()) {
      EXPECT_TRUE(packet.sequence_flags() & pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
      auto it = event_names.find(e.name_iid());
      ASSERT_NE(it, event_names.end()) << "unresolved name iid " << e.name_iid();
      name = it->second;
    }
    if (e.type() == pb::TrackEvent::TYPE_SLICE_BEGIN) {
      const pb::TrackDescriptor& track = tracks.at(e.track_uuid());
      if (track.has_thread() && track.thread().thread_name() == "wp_workload") {
        if (name == "pwrite64 4 KiB") ++writes;
        if (name == "fsync") ++fsyncs;
        // Nested under the fsync (something open on the thread's track): its phases.
        if (open_slices[e.track_uuid()] > 0) {
          ++sync_phases;
          EXPECT_TRUE(name == "flush" || name == "journal" || name == "data I/O" ||
                      name == "writeback")
              << name;
        }
      }
      ++open_slices[e.track_uuid()];
    } else if (e.type() == pb::TrackEvent::TYPE_SLICE_END) {
      EXPECT_GT(open_slices[e.track_uuid()]--, 0) << "END without BEGIN";
    }
    for (auto id : e.flow_ids()) ++flow_events[id];
    for (auto id : e.terminating_flow_ids()) ++flow_events[id];
  }
  for (const auto& [uuid, open] : open_slices) EXPECT_EQ(open, 0) << tracks[uuid].name();
  EXPECT_GE(writes, 8);
  EXPECT_GE(fsyncs, 1);
  EXPECT_GE(sync_phases, 1) << "the fsync's time is split into phases";
  // The snapshot was read when the trace began: before every traced event, on the same clock.
  EXPECT_LE(clock_at[3], first_event_ts);
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
