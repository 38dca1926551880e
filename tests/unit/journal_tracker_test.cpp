// SPDX-License-Identifier: Apache-2.0
// Journal tracker rules: commits from their phase events, and which overlap a call.
#include "stitch/journal_tracker.h"

#include <gtest/gtest.h>

#include "stitch_fixture.h"

namespace wp::stitch_test {
namespace {

using stitch::JournalTracker;

class JournalTrackerTest : public ::testing::Test {
 protected:
  StitchLimits limits_;
  JournalTracker tracker_{limits_};
};

TEST_F(JournalTrackerTest, PhasesOfOneTransactionFormOneCommit) {
  tracker_.on_journal(journal(100, 7, JournalPhase::Start));
  tracker_.on_journal(journal(110, 7, JournalPhase::Locking));
  tracker_.on_journal(journal(120, 7, JournalPhase::Flushing));
  tracker_.on_journal(journal(130, 7, JournalPhase::Logging));
  tracker_.on_journal(journal(190, 7, JournalPhase::End));
  auto commits = tracker_.overlapping(kPart, 0, 1000);
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_EQ(commits[0].transaction, 7u);
  EXPECT_EQ(commits[0].start_ns, Nanos{100});
  EXPECT_EQ(commits[0].locking_ns, Nanos{110});
  EXPECT_EQ(commits[0].flushing_ns, Nanos{120});
  EXPECT_EQ(commits[0].logging_ns, Nanos{130});
  EXPECT_EQ(commits[0].end_ns, Nanos{190});
}

TEST_F(JournalTrackerTest, OnlyCommitsOverlappingTheWindowAndOfTheDevice) {
  tracker_.on_journal(journal(100, 1, JournalPhase::Start));
  tracker_.on_journal(journal(150, 1, JournalPhase::End));  // before the window
  tracker_.on_journal(journal(200, 2, JournalPhase::Start));
  tracker_.on_journal(journal(400, 2, JournalPhase::End));
  JournalEvent other = journal(300, 9, JournalPhase::Start);
  other.dev = make_dev(8, 1);
  tracker_.on_journal(other);
  tracker_.on_journal(journal(900, 3, JournalPhase::Start));  // after the window
  auto commits = tracker_.overlapping(kPart, 300, 500);
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_EQ(commits[0].transaction, 2u);
  EXPECT_EQ(tracker_.overlapping(0, 300, 500).size(), 2u);  // dev 0: every device's
}

TEST_F(JournalTrackerTest, CommitSeenFromAMidPhaseStartsThere) {
  tracker_.on_journal(journal(500, 4, JournalPhase::Logging));  // its start was not seen
  auto commits = tracker_.overlapping(kPart, 0, 1000);
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_FALSE(commits[0].start_ns);
  EXPECT_EQ(first_known(commits[0]), Nanos{500});
  EXPECT_FALSE(commits[0].end_ns);  // open: runs until the caller's end
}

TEST_F(JournalTrackerTest, SweepForgetsOldCommits) {
  tracker_.on_journal(journal(100, 1, JournalPhase::Start));
  tracker_.on_journal(journal(150, 1, JournalPhase::End));
  tracker_.on_journal(journal(300, 2, JournalPhase::Start));
  tracker_.sweep(200);
  auto commits = tracker_.overlapping(kPart, 0, 1000);
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_EQ(commits[0].transaction, 2u);
}

// xfs: a sync's log force lasts from its thread's first force in the call to the last log
// write completing on the device after it, inside the call.
TEST_F(JournalTrackerTest, XfsLogForceRunsFromTheForceToTheLastLogWriteDone) {
  tracker_.on_fs_log(fs_log(900, FsLogKind::XfsIclogDone, 5));  // before the force: not its
  tracker_.on_fs_log(fs_log(1100, FsLogKind::XfsForce, 300));
  tracker_.on_fs_log(fs_log(1150, FsLogKind::XfsForce, 300));  // a nested force: the first counts
  tracker_.on_fs_log(fs_log(1200, FsLogKind::XfsIclogSync, 300));
  tracker_.on_fs_log(fs_log(1600, FsLogKind::XfsIclogDone, 5));
  tracker_.on_fs_log(fs_log(1700, FsLogKind::XfsIclogDone, 5));
  tracker_.on_fs_log(fs_log(2500, FsLogKind::XfsIclogDone, 5));  // after the call
  auto span = tracker_.log_force_span(300, kPart, 1000, 2000);
  ASSERT_TRUE(span.has_value());
  EXPECT_EQ(span->first, Nanos{1100});
  EXPECT_EQ(span->second, Nanos{1700});
}

TEST_F(JournalTrackerTest, XfsLogForceOfAnotherThreadOrDeviceIsNotTheSyncs) {
  tracker_.on_fs_log(fs_log(1100, FsLogKind::XfsForce, 301));
  FsLogEvent other_fs = fs_log(1150, FsLogKind::XfsForce, 300);
  other_fs.dev = make_dev(8, 1);
  tracker_.on_fs_log(other_fs);
  tracker_.on_fs_log(fs_log(1600, FsLogKind::XfsIclogDone, 5));
  EXPECT_FALSE(tracker_.log_force_span(300, kPart, 1000, 2000).has_value());
  EXPECT_TRUE(tracker_.log_force_span(301, kPart, 1000, 2000).has_value());
}

// A force that finds the log already on disk writes nothing: no journal time.
TEST_F(JournalTrackerTest, XfsLogForceWithNoLogWriteDoneIsNoJournalTime) {
  tracker_.on_fs_log(fs_log(1100, FsLogKind::XfsForce, 300));
  EXPECT_FALSE(tracker_.log_force_span(300, kPart, 1000, 2000).has_value());
  tracker_.sweep(1200);
  tracker_.on_fs_log(fs_log(1600, FsLogKind::XfsIclogDone, 5));
  EXPECT_FALSE(tracker_.log_force_span(300, kPart, 1000, 2000).has_value());  // swept
}

}  // namespace
}  // namespace wp::stitch_test
