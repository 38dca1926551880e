// SPDX-License-Identifier: Apache-2.0
// The hazard rules on synthetic items, each beside its near misses: the same item one fact
// away from the hazard reports none.
#include "analyze/hazards.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "builders.h"

namespace wp {
namespace {

using builders::Call;
using builders::durable_write;
using builders::syscall_event;
using builders::write_request;

// An O_DIRECT pwrite whose bio completed at 9 µs and that nothing made durable.
WriteTimeline direct_written() {
  WriteTimeline w =
      durable_write(syscall_event(Call{.start_ns = 1'000, .end_ns = 10'000}),
                    write_request(builders::kLoop0, 8, 4096, 2'000, 9'000), std::nullopt);
  w.direct = true;
  w.state = WriteState::Written;
  w.durable_via = DurableVia::None;
  w.id = 7;
  return w;
}

std::vector<Hazard> hazards_of(Timeline item) {
  add_hazards(item);
  return std::visit([](const auto& t) { return t.hazards; }, item);
}

TEST(Hazards, ADirectWriteNoFlushOrFuaCoveredIsNotDurable) {
  const auto found = hazards_of(direct_written());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rule, "direct-not-durable");
  EXPECT_NE(found[0].detail.find("O_DIRECT 4 KiB written to the device at +8.0us"),
            std::string::npos)
      << found[0].detail;
  EXPECT_TRUE(found[0].related.empty());
}

TEST(Hazards, DirectWriteNearMisses) {
  WriteTimeline flushed = direct_written();  // a later flush or FUA made it durable
  flushed.state = WriteState::Durable;
  flushed.durable_ns = 20'000;
  flushed.durable_via = DurableVia::Flush;
  EXPECT_TRUE(hazards_of(flushed).empty());

  WriteTimeline no_cache = direct_written();  // a device without a volatile cache
  no_cache.state = WriteState::Durable;
  no_cache.durable_via = DurableVia::NoWriteCache;
  EXPECT_TRUE(hazards_of(no_cache).empty());

  WriteTimeline buffered = direct_written();  // written back, not synced: the app did not ask
  buffered.direct = false;
  EXPECT_TRUE(hazards_of(buffered).empty());

  WriteTimeline unknown = direct_written();  // records lost: nothing is known
  unknown.incomplete = true;
  EXPECT_TRUE(hazards_of(unknown).empty());

  WriteTimeline failed = direct_written();  // the call failed: nothing was written
  failed.state = WriteState::Failed;
  EXPECT_TRUE(hazards_of(failed).empty());
}

// An fsync of the file that returned 0 while writes 3 and 4 of it had been lost.
SyncTimeline fsync_after_loss() {
  SyncTimeline s = builders::sync_timeline(
      syscall_event(Call{.syscall = Syscall::Fsync, .start_ns = 50'000, .end_ns = 60'000}), {});
  s.call.ret = 0;
  s.id = 9;
  s.lost_writes = {3, 4};
  s.loss_unreported = true;
  return s;
}

TEST(Hazards, ASyncReturningZeroAfterLostWritesAcknowledgesTheLoss) {
  const auto found = hazards_of(fsync_after_loss());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rule, "lost-but-acknowledged");
  EXPECT_EQ(found[0].related, (std::vector<std::uint64_t>{3, 4}));
  EXPECT_NE(found[0].detail.find("fsync returned 0 after 2 writes of this file were lost"),
            std::string::npos)
      << found[0].detail;
}

TEST(Hazards, LostButAcknowledgedNearMisses) {
  SyncTimeline reported = fsync_after_loss();  // it failed: the application was told
  reported.call.ret = -5;
  reported.loss_unreported = false;
  EXPECT_TRUE(hazards_of(reported).empty());

  SyncTimeline nothing_lost = fsync_after_loss();
  nothing_lost.lost_writes.clear();
  nothing_lost.loss_unreported = false;
  EXPECT_TRUE(hazards_of(nothing_lost).empty());
}

// An item's hazards are its own: emitting it again (a re-render) does not add them twice.
TEST(Hazards, AddingTwiceGivesTheSameHazards) {
  Timeline item = direct_written();
  add_hazards(item);
  add_hazards(item);
  EXPECT_EQ(std::get<WriteTimeline>(item).hazards.size(), 1u);
}

TEST(HazardSummary, CountsByRule) {
  HazardSummary summary;
  for (int i = 0; i < 3; ++i) {
    Timeline w = direct_written();
    add_hazards(w);
    summary.add(w);
  }
  Timeline s = fsync_after_loss();
  add_hazards(s);
  summary.add(s);
  Timeline clean = builders::dirty_write(syscall_event(Call{}));
  add_hazards(clean);
  summary.add(clean);
  EXPECT_EQ(summary.by_rule(), (std::map<std::string, std::uint64_t>{
                                   {"direct-not-durable", 3}, {"lost-but-acknowledged", 1}}));
}

TEST(HazardSummary, CountsByFileAndProcessNamingARenameByItsNewName) {
  HazardSummary summary;
  WriteTimeline w = direct_written();
  w.call.path = "/data/direct";
  w.call.comm = "dd";
  w.call.pid = 7;
  Timeline write = w;
  add_hazards(write);
  summary.add(write);
  NameChangeTimeline rename;
  rename.op = NameChangeOp::Rename;
  rename.call.comm = "mv";
  rename.call.pid = 9;
  rename.paths = {"/data/f.tmp", "/data/f"};
  rename.hazards = {Hazard{.rule = "rename-of-unsynced-data", .detail = "", .related = {}},
                    Hazard{.rule = "name-not-durable", .detail = "", .related = {}}};
  summary.add(rename);
  EXPECT_EQ(summary.by_file(),
            (std::map<std::string, std::uint64_t>{{"/data/direct", 1}, {"/data/f", 2}}));
  EXPECT_EQ(summary.by_process(), (std::map<std::string, std::uint64_t>{{"dd 7", 1}, {"mv 9", 2}}));
  EXPECT_EQ(summary.by_rule().size(), 3u);
}

// Every rule says why, where, where from and what to do; names are unique.
TEST(HazardRules, EachIsDocumented) {
  std::set<std::string> names;
  for (const HazardRuleInfo& rule : hazard_rules()) {
    EXPECT_TRUE(names.insert(rule.name).second) << rule.name;
    for (const char* text : {rule.why, rule.file_systems, rule.reference, rule.fix})
      EXPECT_GT(std::string(text).size(), 10u) << rule.name;
  }
  EXPECT_EQ(names,
            (std::set<std::string>{"direct-not-durable", "lost-but-acknowledged",
                                   "rename-of-unsynced-data", "write-after-fsync-before-rename",
                                   "name-not-durable", "sync-of-the-wrong-thing"}));
}

}  // namespace
}  // namespace wp
