// SPDX-License-Identifier: Apache-2.0
// The small facts computed once on the timelines (stitch/timeline.h) and the phase table
// (stitch/sync_phase.h): their edge cases, where a copy of them used to go wrong.
#include "stitch/timeline.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>

namespace wp {
namespace {

SyscallEvent call_between(Nanos start, Nanos end) {
  SyscallEvent call;
  call.start_ns = start;
  call.end_ns = end;
  return call;
}

TEST(Elapsed, IsTheDifferenceWhenTheEndIsLater) {
  EXPECT_EQ(elapsed_ns(Nanos{100}, Nanos{350}), 250u);
  EXPECT_EQ(elapsed_ns(Nanos{100}, Nanos{100}), 0u);
}

TEST(Elapsed, EndBeforeStartIsZeroNotAWrappedDifference) {
  EXPECT_EQ(elapsed_ns(Nanos{350}, Nanos{100}), 0u);
  EXPECT_EQ(elapsed_ns(~Nanos{0}, Nanos{0}), 0u);
}

TEST(Elapsed, BetweenOptionalTimesNeedsBothInOrder) {
  EXPECT_EQ(elapsed_ns(std::optional<Nanos>{100}, std::optional<Nanos>{350}), Nanos{250});
  EXPECT_EQ(elapsed_ns(std::optional<Nanos>{350}, std::optional<Nanos>{100}), std::nullopt);
  EXPECT_EQ(elapsed_ns(std::nullopt, std::optional<Nanos>{100}), std::nullopt);
  EXPECT_EQ(elapsed_ns(std::optional<Nanos>{100}, std::nullopt), std::nullopt);
  EXPECT_EQ(elapsed_ns(std::optional<Nanos>{7}, std::optional<Nanos>{7}), Nanos{0});
}

TEST(CallLatency, IsEndMinusStart) {
  EXPECT_EQ(latency_ns(call_between(1'000, 6'200)), 5'200u);
  EXPECT_EQ(call_end(call_between(1'000, 6'200)), 6'200u);
}

TEST(CallLatency, EndRecordedBeforeStartIsZeroAndTheCallEndsWhereItStarted) {
  EXPECT_EQ(latency_ns(call_between(6'200, 1'000)), 0u);
  EXPECT_EQ(call_end(call_between(6'200, 1'000)), 6'200u);
}

TEST(BytesWritten, IsTheReturnValueOrZeroForAnError) {
  SyscallEvent call;
  call.count = 4096;
  call.ret = 1024;
  EXPECT_EQ(bytes_written(call), 1024u);
  call.ret = -28;  // ENOSPC
  EXPECT_EQ(bytes_written(call), 0u);
  call.ret = 0;
  EXPECT_EQ(bytes_written(call), 0u);
}

using Seen = std::optional<Nanos>;

RequestTimeline request_seen(Seen queue, Seen insert, Seen issue, Seen complete) {
  RequestTimeline r;
  std::tie(r.queue_ns, r.insert_ns, r.issue_ns, r.complete_ns) =
      std::tie(queue, insert, issue, complete);
  return r;
}

TEST(RequestStart, IsIssueThenInsertThenQueue) {
  EXPECT_EQ(request_start(request_seen(10, 20, 30, 40)), Nanos{30});
  EXPECT_EQ(request_start(request_seen(10, 20, {}, 40)), Nanos{20});
  EXPECT_EQ(request_start(request_seen(10, {}, {}, 40)), Nanos{10});
  // Seen only completing: it never started that we know of.
  EXPECT_EQ(request_start(request_seen({}, {}, {}, 40)), std::nullopt);
}

TEST(RequestFirstKnown, IsTheEarliestStageSeen) {
  EXPECT_EQ(request_first_known(request_seen(10, 20, 30, 40)), Nanos{10});
  EXPECT_EQ(request_first_known(request_seen({}, {}, 30, 40)), Nanos{30});
  EXPECT_EQ(request_first_known(request_seen({}, {}, {}, 40)), Nanos{40});
  EXPECT_EQ(request_first_known(request_seen({}, {}, {}, {})), std::nullopt);
}

JournalCommit commit_seen(Seen start, Seen locking, Seen flushing, Seen logging, Seen end) {
  return {.start_ns = start,
          .locking_ns = locking,
          .flushing_ns = flushing,
          .logging_ns = logging,
          .end_ns = end};
}

TEST(CommitFirstKnown, IsItsStartElseTheEarliestLaterPhase) {
  EXPECT_EQ(first_known(commit_seen(100, 300, 500, 700, 900)), Nanos{100});
  EXPECT_EQ(first_known(commit_seen({}, 300, 500, 700, 900)), Nanos{300});
  EXPECT_EQ(first_known(commit_seen({}, {}, {}, 700, 900)), Nanos{700});
  EXPECT_EQ(first_known(commit_seen({}, {}, {}, {}, 900)), Nanos{900});
  // Nothing known: no time at all, rather than time 0.
  EXPECT_EQ(first_known(commit_seen({}, {}, {}, {}, {})), std::nullopt);
}

TEST(SyncPhaseTable, NamesEveryPhaseInEveryOutput) {
  const SyncPhaseInfo& data_io = sync_phase_info(SyncPhase::DataIo);
  EXPECT_STREQ(data_io.name, "data_io");
  EXPECT_STREQ(data_io.json_key, "data_io_ns");
  EXPECT_STREQ(data_io.text_name, "data-io");
  EXPECT_STREQ(data_io.label, "data I/O");
  EXPECT_STREQ(data_io.title, "Data I/O");
  for (const SyncPhaseInfo& p : kSyncPhases)
    EXPECT_EQ(std::string(p.json_key), std::string(p.name) + "_ns") << p.name;
}

TEST(SyncPhaseTable, ReportOrderIsTheWritePathsWithOtherLast) {
  std::string order;
  for (const SyncPhaseInfo& p : kSyncPhases) order += std::string(p.text_name) + " ";
  EXPECT_EQ(order, "writeback data-io journal flush other ");
}

TEST(SyncPhaseTable, PrecedenceRanksEveryPhaseButOtherOnce) {
  EXPECT_EQ(kSyncPhasePrecedence.front(), SyncPhase::Flush);
  EXPECT_EQ(kSyncPhasePrecedence.back(), SyncPhase::Writeback);
  std::set<SyncPhase> ranked(kSyncPhasePrecedence.begin(), kSyncPhasePrecedence.end());
  EXPECT_EQ(ranked.size(), kSyncPhaseCount - 1);
  EXPECT_EQ(ranked.count(SyncPhase::Other), 0u);
}

TEST(SyncPhaseTable, EachPhaseHasItsOwnTotal) {
  SyncPhases phases;
  Nanos value = 1;
  for (const SyncPhaseInfo& p : kSyncPhases) phase_total(phases, p.phase) = value++;
  EXPECT_EQ(phases.writeback_ns, 1u);
  EXPECT_EQ(phases.data_io_ns, 2u);
  EXPECT_EQ(phases.journal_ns, 3u);
  EXPECT_EQ(phases.flush_ns, 4u);
  EXPECT_EQ(phases.other_ns, 5u);
}

}  // namespace
}  // namespace wp
