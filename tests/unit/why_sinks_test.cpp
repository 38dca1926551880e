// SPDX-License-Identifier: Apache-2.0
// The named causes of a slow call in the JSON and text sinks: the contract's keys inside
// "causes" (stacks, unslotted_ns, waits with their chain), and the text's why lines, one
// synthetic wait of each cause against the line a person reads.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "sinks/json_sink.h"
#include "sinks/sink.h"
#include "sinks/text_live.h"
#include "sinks/text_sink.h"
#include "sinks/text_why.h"
#include "sinks/wait_text.h"

#include "builders.h"
#include "slow_waits.h"

namespace wp {
namespace {

using nlohmann::json;
using namespace builders;

constexpr Nanos kStart = 1'000'000'000;

SyncTimeline slow_fsync() {
  SyncTimeline sync = sync_timeline(
      syscall_event(
          {.syscall = Syscall::Fsync, .start_ns = kStart, .end_ns = kStart + 296'300'000}),
      {0, 0, 290'000'000, 1'700'000, 4'600'000});
  sync.causes = slow_fsync_causes(kStart);
  return sync;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// ---- frames -----------------------------------------------------------------------------------

TEST(WaitText, ShortFrameDropsTheOffsetAndKeepsTheModule) {
  EXPECT_EQ(short_frame("jbd2_log_wait_commit+0x9c [jbd2]"), "jbd2_log_wait_commit [jbd2]");
  EXPECT_EQ(short_frame("schedule+0x5e"), "schedule");
  EXPECT_EQ(short_frame("0xffffffffc0de0000"), "0xffffffffc0de0000");
  EXPECT_EQ(short_frame("io_schedule"), "io_schedule");
}

TEST(WaitText, UnnamedAddressesAreFramesInHex) {
  KernelStack stack = kernel_stack({"a+0x1", ""});
  EXPECT_EQ(frame_names(stack), (std::vector<std::string>{"a+0x1", "0xffffffff81000001"}));
}

// ---- JSON -------------------------------------------------------------------------------------

TEST(JsonSink, CausesCarryStacksUnslottedTimeAndNamedWaits) {
  const json causes = sync_json(slow_fsync())["causes"];
  // The keys from before stay.
  EXPECT_EQ(causes["on_cpu_ns"], 1'000'000);
  EXPECT_EQ(causes["blocked_ns"], 295'100'000);
  EXPECT_EQ(causes["runnable_ns"], 200'000);
  EXPECT_EQ(causes["unslotted_ns"], 3'000'000);

  ASSERT_EQ(causes["stacks"].size(), 2u);
  const json& stack = causes["stacks"][0];
  EXPECT_EQ(stack["ns"], 280'100'000);
  EXPECT_EQ(stack["longest_ns"], 200'000'000);
  EXPECT_EQ(stack["sleeps"], 2);
  EXPECT_EQ(stack["flag"], "none");
  ASSERT_EQ(stack["frames"].size(), 7u);
  EXPECT_EQ(stack["frames"][2], "jbd2_log_wait_commit+0x9c [jbd2]");
  EXPECT_EQ(stack["frames"][6], "0xffffffffc0de0000");
  EXPECT_EQ(stack["waker"]["pid"], 123);
  EXPECT_EQ(stack["waker"]["tid"], 123);
  EXPECT_EQ(stack["waker"]["comm"], "jbd2/loop0-8");
  EXPECT_EQ(stack["waker"]["kernel_thread"], true);
  EXPECT_EQ(stack["waker"]["context"], "task");
  EXPECT_EQ(stack["waker"]["frames"][2], "jbd2_journal_commit_transaction+0x1234 [jbd2]");
  EXPECT_TRUE(causes["stacks"][1]["waker"].is_null());

  ASSERT_EQ(causes["waits"].size(), 3u);
  const json& commit = causes["waits"][0];
  EXPECT_EQ(commit["cause"], "journal-commit");
  EXPECT_EQ(commit["ns"], 280'100'000);
  EXPECT_EQ(commit["sleeps"], 2);
  EXPECT_EQ(commit["evidence"], "jbd2_log_wait_commit");
  EXPECT_EQ(commit["frames"][0], "jbd2_log_wait_commit+0x9c [jbd2]");
  EXPECT_EQ(commit["waker"]["comm"], "jbd2/loop0-8");
  EXPECT_TRUE(commit["holder"].is_null());
  EXPECT_EQ(commit["chain"]["commit"]["dev"], "7:0");
  EXPECT_EQ(commit["chain"]["commit"]["transaction"], 5);
  EXPECT_EQ(commit["chain"]["commit"]["start_ns"], kStart + 10'000'000);
  EXPECT_EQ(commit["chain"]["commit"]["end_ns"], kStart + 290'000'000);
  ASSERT_EQ(commit["chain"]["flushes"].size(), 1u);
  EXPECT_EQ(commit["chain"]["flushes"][0]["rwbs"], "FF");
  EXPECT_EQ(commit["chain"]["flushes"][0]["issue_ns"], kStart + 100'000'000);
  EXPECT_EQ(commit["chain"]["flushes"][0]["complete_ns"], kStart + 101'700'000);

  const json& lock = causes["waits"][1];
  EXPECT_EQ(lock["cause"], "inode-lock");
  EXPECT_EQ(lock["holder"], json({{"pid", 456}, {"tid", 457}, {"comm", "wp_workload"}}));
  EXPECT_TRUE(lock["waker"].is_null());
  EXPECT_TRUE(lock["chain"]["commit"].is_null());
  EXPECT_EQ(lock["chain"]["flushes"], json::array());
  EXPECT_EQ(causes["waits"][2]["cause"], "other");
}

TEST(JsonSink, CausesWithoutStacksHaveEmptyStacksAndWaits) {
  SyncTimeline sync = slow_fsync();
  sync.causes = SlowCauses{.on_cpu_ns = 5, .blocked_ns = 7};
  const json causes = sync_json(sync)["causes"];
  EXPECT_EQ(causes["stacks"], json::array());
  EXPECT_EQ(causes["waits"], json::array());
  EXPECT_EQ(causes["unslotted_ns"], 0);
}

TEST(JsonSink, EveryCauseHasItsContractName) {
  const std::vector<std::pair<WaitCause, const char*>> names = {
      {WaitCause::JournalCommit, "journal-commit"},
      {WaitCause::JournalSpace, "journal-space"},
      {WaitCause::InodeLock, "inode-lock"},
      {WaitCause::PageLock, "page-lock"},
      {WaitCause::WritebackWait, "writeback-wait"},
      {WaitCause::DirtyThrottle, "dirty-throttle"},
      {WaitCause::DirectReclaim, "direct-reclaim"},
      {WaitCause::MemcgReclaim, "memcg-reclaim"},
      {WaitCause::Compaction, "compaction"},
      {WaitCause::BlockThrottle, "block-throttle"},
      {WaitCause::IoCost, "iocost"},
      {WaitCause::Wbt, "wbt"},
      {WaitCause::RequestTag, "request-tag"},
      {WaitCause::DeviceIo, "device-io"},
      {WaitCause::Other, "other"}};
  for (const auto& [cause, name] : names) {
    SyncTimeline sync = slow_fsync();
    sync.causes->waits = {named_wait(cause, 1, 1, "")};
    EXPECT_EQ(sync_json(sync)["causes"]["waits"][0]["cause"], name);
  }
}

// ---- text -------------------------------------------------------------------------------------

TEST(TextSink, WhyLinesFollowTheCausesLine) {
  const std::vector<std::string> lines = lines_of(format_timeline(slow_fsync(), SinkOptions{}));
  std::size_t causes = 0;
  while (causes < lines.size() && !contains(lines[causes], "  causes  ")) ++causes;
  ASSERT_LE(causes + 11, lines.size());
  const std::string indent(13, ' ');
  // As README.md shows it. Too long for one line of 110 columns: the waker goes on a
  // continuation line, and the frames are as many as fit.
  const std::vector<std::string> expected = {
      "causes  on-CPU 1.00ms  blocked 295.10ms  runnable 200.0us",
      "why  journal-commit 280.10ms (2 sleeps) in jbd2_log_wait_commit",
      "     woken by jbd2/loop0-8 (pid 123, kernel thread)",
      "     at jbd2_log_wait_commit [jbd2] < jbd2_complete_transaction [jbd2] < …",
      "     waited on journal commit 5 dev 7:0 +10.00ms..+290.00ms (ran 280.00ms)",
      "     its flushes FF 7:0 1.70ms",
      "why  inode-lock 12.00ms (1 sleep) by lock:contention_begin on the file's i_rwsem",
      "     held by wp_workload pid 456/457",
      "     at rwsem_down_write_slowpath < down_write < ext4_sync_file [ext4]",
      "why  blocked (other) 3.00ms (1 sleep)",
      "     at msleep < ext4_sync_file [ext4]",
  };
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(lines[causes + i], indent + expected[i]);
}

TEST(TextSink, WhyLinesNameFramesHolderAndChain) {
  const std::vector<std::string> lines = why_lines(*slow_fsync().causes, kStart, /*width=*/200);
  const std::vector<std::string> expected = {
      "why  journal-commit 280.10ms (2 sleeps) in jbd2_log_wait_commit; woken by jbd2/loop0-8 "
      "(pid 123, kernel thread)",
      "     at jbd2_log_wait_commit [jbd2] < jbd2_complete_transaction [jbd2] < ext4_fc_commit "
      "[ext4] < ext4_sync_file [ext4] < do_fsync < …",
      "     waited on journal commit 5 dev 7:0 +10.00ms..+290.00ms (ran 280.00ms); its flushes "
      "FF 7:0 1.70ms",
      "why  inode-lock 12.00ms (1 sleep) by lock:contention_begin on the file's i_rwsem; held by "
      "wp_workload pid 456/457",
      "     at rwsem_down_write_slowpath < down_write < ext4_sync_file [ext4]",
      "why  blocked (other) 3.00ms (1 sleep)",
      "     at msleep < ext4_sync_file [ext4]",
  };
  EXPECT_EQ(lines, expected);
}

TEST(TextSink, WhyLinesStayWithinTheWidth) {
  for (const std::string& line : why_lines(*slow_fsync().causes, kStart, 97))
    EXPECT_LE(line.size(), 97u + 2) << line;  // "…" is three bytes, one column
  const std::string block = format_timeline(slow_fsync(), SinkOptions{});
  for (const std::string& line : lines_of(block)) {
    if (contains(line, "why  ") || contains(line, "     at ") || contains(line, "waited on")) {
      EXPECT_LE(line.size(), 112u) << line;
    }
  }
}

// One wait of each cause, alone in a call: the line it prints.
struct WhyCase {
  NamedWait wait;
  std::string line;
};

TEST(TextSink, EachCauseHasItsWhyLine) {
  NamedWait commit = named_wait(WaitCause::JournalCommit, 280'100'000, 2, "jbd2_log_wait_commit");
  commit.waker = jbd2_waker();
  NamedWait lock = named_wait(WaitCause::InodeLock, 12'000'000, 3,
                              "lock:contention_begin on the file's i_rwsem");
  lock.holder = slow_fsync_causes(kStart).waits[1].holder;
  NamedWait page = named_wait(WaitCause::PageLock, 800'000, 1, "folio_wait_bit_common");
  page.waker = waker(77, 78, "fio", false);
  NamedWait writeback = named_wait(WaitCause::WritebackWait, 9'000'000, 4, "folio_wait_writeback");
  writeback.waker = waker(0, 0, "swapper/1", true);
  const std::vector<WhyCase> cases = {
      {commit,
       "why  journal-commit 280.10ms (2 sleeps) in jbd2_log_wait_commit; woken by jbd2/loop0-8 "
       "(pid 123, kernel thread)"},
      {named_wait(WaitCause::JournalSpace, 5'000'000, 1, "add_transaction_credits"),
       "why  journal-space 5.00ms (1 sleep) in add_transaction_credits"},
      {lock,
       "why  inode-lock 12.00ms (3 sleeps) by lock:contention_begin on the file's i_rwsem; held "
       "by wp_workload pid 456/457"},
      {page, "why  page-lock 800.0us (1 sleep) in folio_wait_bit_common; woken by fio (pid 77/78)"},
      {writeback,
       "why  writeback-wait 9.00ms (4 sleeps) in folio_wait_writeback; woken by swapper/1 (pid 0, "
       "kernel thread)"},
      {named_wait(WaitCause::DirtyThrottle, 310'000'000, 2, "balance_dirty_pages"),
       "why  dirty-throttle 310.00ms (2 sleeps) in balance_dirty_pages"},
      {named_wait(WaitCause::DirectReclaim, 4'500'000, 0, "vmscan:mm_vmscan_direct_reclaim_begin"),
       "why  direct-reclaim 4.50ms by vmscan:mm_vmscan_direct_reclaim_begin"},
      {named_wait(WaitCause::MemcgReclaim, 40'000'000, 0, "vmscan:mm_vmscan_memcg_reclaim_begin"),
       "why  memcg-reclaim 40.00ms by vmscan:mm_vmscan_memcg_reclaim_begin"},
      {named_wait(WaitCause::Compaction, 2'000'000, 0, "compaction:mm_compaction_begin"),
       "why  compaction 2.00ms by compaction:mm_compaction_begin"},
      {named_wait(WaitCause::BlockThrottle, 950'000'000, 12, "blk_throtl_dispatch_work_fn"),
       "why  block-throttle 950.00ms (12 sleeps) in blk_throtl_dispatch_work_fn"},
      {named_wait(WaitCause::IoCost, 30'000'000, 1, "ioc_rqos_throttle"),
       "why  iocost 30.00ms (1 sleep) in ioc_rqos_throttle"},
      {named_wait(WaitCause::Wbt, 6'000'000, 1, "wbt_wait"),
       "why  wbt 6.00ms (1 sleep) in wbt_wait"},
      {named_wait(WaitCause::RequestTag, 1'500'000, 1, "blk_mq_get_tag"),
       "why  request-tag 1.50ms (1 sleep) in blk_mq_get_tag"},
      {named_wait(WaitCause::DeviceIo, 20'000'000, 1, "submit_bio_wait"),
       "why  device-io 20.00ms (1 sleep) in submit_bio_wait"},
      {named_wait(WaitCause::Other, 3'000'000, 1, "",
                  {"msleep+0x2d", "ext4_sync_file+0x99 [ext4]"}),
       "why  blocked (other) 3.00ms (1 sleep)"},
  };
  for (const WhyCase& c : cases) {
    SlowCauses causes;
    causes.waits = {c.wait};
    const std::vector<std::string> lines = why_lines(causes, kStart, 200);
    ASSERT_FALSE(lines.empty()) << c.line;
    EXPECT_EQ(lines.front(), c.line);
    // Each shows its stack when it has one, and only then.
    EXPECT_EQ(lines.size(), c.wait.frames.empty() ? 1u : 2u) << c.line;
  }
}

TEST(TextSink, WhyLegendOnceAndOnlyWhenAWhyLineWasPrinted) {
  std::ostringstream out;
  TextSink sink(out, SinkOptions{});
  SyncTimeline plain = slow_fsync();
  plain.causes->waits.clear();
  sink.timeline(plain);
  EXPECT_FALSE(contains(out.str(), "why:")) << "no why line, no legend for it";
  sink.timeline(slow_fsync());
  sink.timeline(slow_fsync());
  const std::string text = out.str();
  const std::size_t legend = text.find("why:    what a slow call waited on");
  ASSERT_NE(legend, std::string::npos);
  EXPECT_EQ(text.find("why:    what", legend + 1), std::string::npos) << "once";
  EXPECT_LT(legend, text.find("why  journal-commit")) << "before the first why line";
}

SinkOptions live_options() {
  SinkOptions options;
  options.live = true;
  return options;
}

WriteTimeline slow_write(bool announced) {
  WriteTimeline write =
      dirty_write(syscall_event({.start_ns = kStart, .end_ns = kStart + 296'300'000, .pos = 0}));
  write.id = 9;
  write.announced = announced;
  write.causes = slow_fsync_causes(kStart);
  return write;
}

TEST(WhyText, AWakeFromAnInterruptOrATimerSaysWhereItLanded) {
  Waker waker;
  waker.pid = 6017;
  waker.tid = 6017;
  waker.comm = "cc1plus";
  EXPECT_EQ(waker_text(waker), "cc1plus (pid 6017/6017)");
  waker.context = WakeContext::Interrupt;
  EXPECT_EQ(waker_text(waker), "an interrupt on cc1plus (pid 6017/6017)");
  waker.comm = "swapper/1";
  waker.pid = waker.tid = 0;
  waker.kernel_thread = true;
  waker.context = WakeContext::Timer;
  EXPECT_EQ(waker_text(waker), "a timer on swapper/1 (pid 0, kernel thread)");
}

TEST(LiveOutput, WhyLinesComeWhenTheCallReturns) {
  std::ostringstream out;
  TextSink sink(out, live_options());
  sink.progress(ItemProgress::Returned, slow_write(false));
  const std::string at_return = out.str();
  const std::vector<std::string> lines = lines_of(at_return);
  ASSERT_GE(lines.size(), 3u) << at_return;
  EXPECT_TRUE(contains(at_return, "causes  on-CPU")) << at_return;
  const auto legend = at_return.find("why:    ");
  const auto block = at_return.find("#9 ");
  ASSERT_NE(legend, std::string::npos) << "their legend, once, before them: " << at_return;
  EXPECT_LT(legend, block) << at_return;
  EXPECT_TRUE(contains(at_return, "why  journal-commit 280.10ms")) << at_return;
  EXPECT_TRUE(contains(at_return, "why  inode-lock 12.00ms")) << at_return;

  // The complete item is its update line only: the why lines are not printed twice.
  sink.timeline(slow_write(true));
  const std::string after = out.str().substr(at_return.size());
  EXPECT_TRUE(after.starts_with("#9 ")) << after;
  EXPECT_FALSE(contains(after, "why")) << after;
}

TEST(LiveOutput, AnItemNotAnnouncedPrintsItsWhyLinesInItsBlock) {
  const std::string text = format_live_complete(slow_write(false), live_options(), {});
  EXPECT_TRUE(text.starts_with("#9 ")) << text;
  EXPECT_TRUE(contains(text, "why  journal-commit 280.10ms")) << text;
}

}  // namespace
}  // namespace wp
