// SPDX-License-Identifier: Apache-2.0
// Perfetto sink: the slices of writes, syncs and their phases on thread tracks, requests on
// device lanes, the flows from a write to its request, NVMe command and flush, and a slow
// call's named waits with the flows to the commits it waited on (perfetto_fixture.h).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "sinks/perfetto_sink.h"

#include "perfetto_fixture.h"
#include "slow_waits.h"

namespace wp {
namespace {

using namespace perfetto_test;

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
