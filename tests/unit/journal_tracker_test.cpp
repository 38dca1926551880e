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

}  // namespace
}  // namespace wp::stitch_test
