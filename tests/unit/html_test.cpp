// SPDX-License-Identifier: Apache-2.0
// HTML report sink: hand-built timelines in, one page out. The page's drawing is tested in node
// with a stub DOM (report_page_test.js) and in a real browser by the integration suite; here: the
// embedded data round-trips, nothing in it can break out of its script element, the page fetches
// nothing, durations and sizes come labelled, and the slowest-N cap keeps what it says.
#include <gtest/gtest.h>

#include <cerrno>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "common/container.h"
#include "sinks/html_sink.h"
#include "sinks/sink.h"

#include "builders.h"
#include "slow_waits.h"

namespace wp {
namespace {

using nlohmann::json;
using namespace builders;

constexpr Nanos kStart = 1'000'000'000;
constexpr const char* kHostileComm = "</script><script>alert(1)</script>";

WriteTimeline write_at(Nanos start, Nanos latency, std::string comm = "dd") {
  return durable_write(
      syscall_event({.start_ns = start, .end_ns = start + latency, .comm = std::move(comm)}),
      write_request(kLoop0, 0, 4096, start + 1'000'000, start + 2'000'000), start + 3'000'000);
}

// A write slowed by one 36 ms dirty-throttling pause, its time split as `causes` says.
WriteTimeline throttled_write(Nanos latency, SlowCauses causes) {
  WriteTimeline write = write_at(kStart, latency);
  write.causes = causes;
  write.throttles.push_back(
      {.ts = kStart + 1'000, .pause_ms = 36, .dirty_pages = 51'000, .limit_pages = 50'000});
  return write;
}

// An O_DIRECT write: it dirtied no page.
WriteTimeline direct_write_at(Nanos start, Nanos latency, std::string comm = "dd") {
  WriteTimeline write = write_at(start, latency, std::move(comm));
  write.direct = true;
  write.call.pages_dirtied = 0;
  return write;
}

SyncTimeline fsync_at(Nanos start) {
  SyncTimeline sync = sync_timeline(
      syscall_event({.syscall = Syscall::Fsync, .start_ns = start, .end_ns = start + 5'200'000}),
      {400'000, 1'100'000, 2'000'000, 1'500'000, 200'000});
  sync.flushes.push_back(flush_request(kLoop0, start + 3'000'000, start + 4'500'000));
  return sync;
}

TraceSummary totals_of(const std::vector<Timeline>& items) {
  TraceSummary totals;
  for (const Timeline& item : items) {
    if (const auto* sync = std::get_if<SyncTimeline>(&item)) {
      totals.sync_phases.add(*sync);
      ++totals.fsyncs;
    } else if (const auto* read = std::get_if<ReadTimeline>(&item)) {
      totals.read_files.add(*read);
      ++totals.reads;
    } else {
      totals.direct_io.add(std::get<WriteTimeline>(item));
      ++totals.writes;
    }
  }
  totals.duration_ns = 10'000'000;
  return totals;
}

std::string page_of(const std::vector<Timeline>& items, HtmlOptions options = {}) {
  std::ostringstream out;
  HtmlSink sink(out, std::move(options));
  for (const Timeline& item : items) sink.timeline(item);
  sink.summary(totals_of(items));
  return out.str();
}

constexpr std::string_view kDataOpen = R"(<script type="application/json" id="data">)";

// The text between the data element's tags, exactly as the browser's parser would cut it.
std::string embedded_text(const std::string& page) {
  std::size_t open = page.find(kDataOpen);
  EXPECT_NE(open, std::string::npos);
  std::size_t begin = open + kDataOpen.size();
  std::size_t end = page.find("</script", begin);
  EXPECT_NE(end, std::string::npos);
  return page.substr(begin, end - begin);
}

json embedded_data(const std::string& page) {
  return json::parse(embedded_text(page));
}

std::size_t occurrences(const std::string& text, std::string_view what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++count;
  return count;
}

TEST(HtmlSink, EmbedsTheItemsAndTheSummaryAsParseableJson) {
  std::vector<Timeline> items = {write_at(kStart, 14'200), write_at(kStart + 50'000, 9'000),
                                 fsync_at(kStart + 100'000)};
  json data = embedded_data(page_of(items, HtmlOptions{.generated_at = "2025-01-31 14:02:11"}));

  EXPECT_EQ(data["generated_at"], "2025-01-31 14:02:11");
  ASSERT_EQ(data["writes"].size(), 2u);
  ASSERT_EQ(data["syncs"].size(), 1u);
  EXPECT_EQ(data["writes_seen"], 2);
  EXPECT_EQ(data["syncs_seen"], 1);
  EXPECT_EQ(data["writes_by_state"]["durable"], 2);
  EXPECT_EQ(data["first_start_ns"], kStart);

  const json& write = data["writes"][0];
  EXPECT_EQ(write["syscall"], "pwrite64");
  EXPECT_EQ(write["dev"], "7:0");
  EXPECT_EQ(write["latency_ns"], 14'200);
  EXPECT_EQ(write["state"], "durable");
  EXPECT_EQ(write["durable_via"], "flush");
  // Requests are counted, not carried: a write can have hundreds.
  EXPECT_FALSE(write.contains("requests"));
  EXPECT_EQ(write["requests_count"], 1);

  const json& sync = data["syncs"][0];
  EXPECT_EQ(sync["phases"]["journal_ns"], 2'000'000);
  EXPECT_EQ(sync["flushes_count"], 1);
  EXPECT_FALSE(sync.contains("flushes"));

  EXPECT_EQ(data["summary"]["type"], "summary");
  EXPECT_EQ(data["summary"]["fsync_phases"]["latency_ns"]["p50"], 5'200'000);
  ASSERT_EQ(data["processes"].size(), 1u);
  EXPECT_EQ(data["processes"][0]["comm"], "dd");
  EXPECT_EQ(data["processes"][0]["items"], 3);
  ASSERT_EQ(data["files"].size(), 1u);
  EXPECT_EQ(data["files"][0]["writes"], 2);
  EXPECT_EQ(data["files"][0]["syncs"], 1);
}

TEST(HtmlSink, AProcessNameCannotCloseOrOpenAScriptElement) {
  std::vector<Timeline> items = {write_at(kStart, 10'000, kHostileComm),
                                 write_at(kStart + 1, 10'000, "<!--<script>")};
  std::string page = page_of(items);
  std::string embedded = embedded_text(page);

  EXPECT_EQ(embedded.find("</"), std::string::npos);
  EXPECT_EQ(embedded.find('<'), std::string::npos) << "no '<' at all, so no <!-- either";
  // The page's own five script elements (error hook, data, parts, tables, report), and no
  // others.
  EXPECT_EQ(occurrences(page, "</script>"), 5u);
  EXPECT_EQ(occurrences(page, "<script"), 5u);
  json data = json::parse(embedded);
  EXPECT_EQ(data["writes"][0]["comm"], kHostileComm);
  EXPECT_EQ(data["writes"][1]["comm"], "<!--<script>");
}

TEST(HtmlSink, ACommCutMidCharacterDoesNotStopThePage) {
  std::vector<Timeline> items = {write_at(kStart, 10'000, "caf\xC3")};
  json data = embedded_data(page_of(items));
  EXPECT_EQ(data["writes"][0]["comm"], "caf\xEF\xBF\xBD");  // U+FFFD
}

TEST(HtmlSink, ThePageHasItsPartsAndFetchesNothing) {
  std::string page = page_of({write_at(kStart, 10'000), fsync_at(kStart + 20'000)});
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* id :
       {"errors", "header", "subject", "totals", "cap-note", "how-to-read", "timeline-chart",
        "timeline-legend", "phases", "phase-chart", "phase-summary", "causes", "cause-chart",
        "throttle", "throttle-chart", "direct-io", "read-files", "tooltip", "data"})
    EXPECT_NE(page.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  EXPECT_NE(page.find(R"(<div id="errors" hidden></div>)"), std::string::npos);
  // Offline: no external script, stylesheet, image or font; the only URL is SVG's namespace.
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("@import"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_EQ(occurrences(page, "http://"), 1u);
  EXPECT_NE(page.find("http://www.w3.org/2000/svg"), std::string::npos);
  EXPECT_EQ(page.find("innerHTML"), std::string::npos) << "data must never be parsed as markup";
}

TEST(HtmlSink, KeepsTheSlowestWritesInArrivalOrderAndCountsThemAll) {
  std::vector<Timeline> items;
  // Latencies 1..10 µs, out of order: the three slowest are 10, 9 and 8 µs.
  for (Nanos us : {3, 10, 1, 8, 2, 9, 4, 5, 7, 6})
    items.push_back(write_at(kStart + us * 1'000'000, us * 1'000));
  for (int i = 0; i < 4; ++i) items.push_back(fsync_at(kStart + 100'000'000 + i));
  HtmlOptions small;
  small.max_writes = 3;
  small.max_syncs = 2;
  json data = embedded_data(page_of(items, small));

  ASSERT_EQ(data["writes"].size(), 3u);
  EXPECT_EQ(data["writes"][0]["latency_ns"], 10'000);  // arrived second
  EXPECT_EQ(data["writes"][1]["latency_ns"], 8'000);
  EXPECT_EQ(data["writes"][2]["latency_ns"], 9'000);
  EXPECT_EQ(data["writes_seen"], 10);
  EXPECT_EQ(data["writes_by_state"]["durable"], 10);
  EXPECT_EQ(data["syncs"].size(), 2u);
  EXPECT_EQ(data["syncs_seen"], 4);
  EXPECT_EQ(data["summary"]["writes"], 10);
  EXPECT_EQ(data["limits"]["writes"], 3);
}

TEST(HtmlSink, CarriesSlowCausesThrottlePausesAndDirectIoVerdicts) {
  WriteTimeline throttled = throttled_write(40'000'000, {.on_cpu_ns = 1'000'000,
                                                         .throttle_ns = 36'000'000,
                                                         .writeback_wait_ns = 0,
                                                         .blocked_ns = 2'000'000,
                                                         .runnable_ns = 1'000'000});
  json data = embedded_data(page_of({throttled, direct_write_at(kStart + 50'000'000, 20'000)}));

  EXPECT_EQ(data["writes"][0]["causes"]["throttled_ns"], 36'000'000);
  ASSERT_EQ(data["throttle_pauses"].size(), 1u);
  EXPECT_EQ(data["throttle_pauses"][0]["dirty_pages"], 51'000);
  EXPECT_EQ(data["throttle_pauses"][0]["limit_pages"], 50'000);
  EXPECT_EQ(data["throttle_pauses"][0]["comm"], "dd");
  EXPECT_EQ(data["throttle_pauses_seen"], 1);
  ASSERT_EQ(data["summary"]["direct_io"].size(), 1u);
  EXPECT_EQ(data["summary"]["direct_io"][0]["bypassed_page_cache"], true);
}

// Every duration and size the page shows comes formatted, as the text output formats it, so the
// page's script has no formatter of its own. The page written here is also the one the script's
// test (report_page_test.js, run by ctest in node) draws: ctest names the file.
TEST(HtmlSink, LabelsDurationsAndSizesAsTheTextOutputDoes) {
  WriteTimeline throttled = throttled_write(14'200, {.on_cpu_ns = 1'000,
                                                     .throttle_ns = 12'000,
                                                     .writeback_wait_ns = 0,
                                                     .blocked_ns = 1'000,
                                                     .runnable_ns = 200});
  throttled.call.path = "/mnt/data/app.log";
  // Its named causes: the throttling, and a short wait on a journal commit and its flush.
  NamedWait throttle_wait = named_wait(WaitCause::DirtyThrottle, 12'000, 1, "balance_dirty_pages",
                                       {"balance_dirty_pages+0x3c4", "generic_perform_write+0x125",
                                        "ext4_buffered_write_iter+0x70 [ext4]"});
  NamedWait commit_wait =
      named_wait(WaitCause::JournalCommit, 1'000, 1, "jbd2_log_wait_commit", commit_wait_frames());
  commit_wait.waker = jbd2_waker();
  commit_wait.chain.commit = journal_commit(kLoop0, 5, kStart + 2'000, kStart + 13'000);
  commit_wait.chain.flushes.push_back(flush_request(kLoop0, kStart + 9'000, kStart + 12'500));
  throttled.causes->waits = {throttle_wait, commit_wait};
  WriteTimeline direct = direct_write_at(kStart + 50'000, 9'000, "db");
  direct.call.count = 6144;
  direct.call.ret = 1536;
  // The direct writer and the sync run in a container named by its runtime.
  Container db =
      container_of_cgroup("/system.slice/docker-" + std::string(64, 'd') + ".scope").value();
  db.name = "db-1";
  direct.call.container = std::make_shared<const Container>(db);
  Timeline container_sync = fsync_at(kStart + 100'000);
  std::get<SyncTimeline>(container_sync).call.container = direct.call.container;
  // It waited behind a bulk writer in a cgroup of its own: 3 MiB, 75 % of the disk's bytes.
  Neighbour bulk;
  bulk.owner = IoOwner{
      .pid = 4211, .comm = "bulk", .cgroup_id = 9, .cgroup = "/batch", .container = nullptr};
  bulk.disk = make_dev(253, 0);
  bulk.bytes = 3u << 20;
  bulk.requests = 3;
  bulk.share = 0.75;
  bulk.delay_ns = 1'500'000;
  std::get<SyncTimeline>(container_sync).neighbours = {bulk};
  // A cold read of a model's weights: 6 pages brought in, 2 found cached, 24 read ahead.
  ReadTimeline read;
  read.call = syscall_event({.syscall = Syscall::Pread64,
                             .start_ns = kStart + 60'000,
                             .end_ns = kStart + 1'260'000,
                             .pid = 4321,
                             .tid = 4321,
                             .comm = "loader",
                             .ino = 40});
  read.call.path = "/models/w.safetensors";
  read.call.ret = 8 * 4096;
  read.call.count = 8 * 4096;
  read.pages = 8;
  read.pages_from_device = 6;
  read.pages_cached = 2;
  read.readahead_pages = 24;
  std::vector<Timeline> items = {throttled, direct, container_sync, read};
  const std::string page = page_of(items, HtmlOptions{.generated_at = "2025-01-31 14:02:11"});
  json data = embedded_data(page);
  const json& read_file = data["summary"]["read_files"][0];
  EXPECT_EQ(read_file["path"], "/models/w.safetensors");
  EXPECT_EQ(read_file["labels"]["bytes"], "32 KiB");
  EXPECT_EQ(read_file["labels"]["latency"], "1.20ms");
  EXPECT_EQ(read_file["labels"]["hit_ratio"], "0.0 %");  // 6 + 24 brought in for 8 read
  // The read on the timeline, labelled as the writes are.
  ASSERT_EQ(data["reads"].size(), 1u);
  EXPECT_EQ(data["reads_seen"], 1u);
  EXPECT_EQ(data["reads"][0]["pages_from_device"], 6u);
  EXPECT_EQ(data["reads"][0]["labels"]["bytes"], "32 KiB");
  EXPECT_EQ(data["reads"][0]["labels"]["latency"], "1.20ms");
  EXPECT_EQ(data["reads"][0]["labels"]["start"], "+60.0us");
  EXPECT_FALSE(data["reads"][0]["labels"].contains("throttled"));

  const json& write = data["writes"][0]["labels"];
  EXPECT_EQ(write["latency"], "14.2us");
  EXPECT_EQ(write["start"], "+0");
  EXPECT_EQ(write["bytes"], "4 KiB");
  EXPECT_EQ(write["durable"], "+3.00ms");
  EXPECT_EQ(write["durable_after"], "2.99ms");  // 3 ms after the start, 14.2 µs after the end
  EXPECT_EQ(write["causes"]["throttled"], "12.0us");
  EXPECT_EQ(write["causes"]["runnable"], "200ns");
  EXPECT_EQ(data["writes"][1]["labels"]["bytes"], "1.5 KiB");
  EXPECT_EQ(data["writes"][1]["labels"]["requested"], "6 KiB");
  EXPECT_EQ(data["writes"][1]["labels"]["start"], "+50.0us");
  EXPECT_EQ(data["writes"][0]["path"], "/mnt/data/app.log");
  EXPECT_TRUE(data["writes"][1]["path"].is_null());

  const json& sync = data["syncs"][0]["labels"];
  ASSERT_EQ(sync["neighbours"].size(), 1u);
  EXPECT_EQ(sync["neighbours"][0]["bytes"], "3 MiB");
  EXPECT_EQ(sync["neighbours"][0]["share"], "75 %");
  EXPECT_EQ(sync["neighbours"][0]["delay"], "1.50ms");
  EXPECT_EQ(sync["latency"], "5.20ms");
  EXPECT_EQ(sync["start"], "+100.0us");
  EXPECT_EQ(sync["phases"]["writeback"], "400.0us");
  EXPECT_EQ(sync["phases"]["journal"], "2.00ms");
  EXPECT_EQ(sync["phases"].size(), 5u);
  EXPECT_FALSE(sync.contains("causes")) << "no causes asked for, none labelled";

  EXPECT_EQ(data["throttle_pauses"][0]["labels"]["pause"], "36.00ms");
  EXPECT_EQ(data["throttle_pauses"][0]["labels"]["at"], "+1.0us");
  EXPECT_EQ(data["labels"]["throttle_asleep"], "36.00ms");
  EXPECT_EQ(data["labels"]["duration"], "10.00ms");
  EXPECT_EQ(data["summary"]["fsync_phases"]["latency_ns"]["labels"]["p50"], "5.20ms");
  EXPECT_EQ(data["summary"]["fsync_phases"]["flush_ns"]["labels"]["total"], "1.50ms");
  ASSERT_EQ(data["summary"]["direct_io"].size(), 1u);
  EXPECT_EQ(data["summary"]["direct_io"][0]["labels"]["bytes"], "1.5 KiB");
  EXPECT_EQ(data["summary"]["direct_io"][0]["labels"]["buffered_bytes"], "0 B");
  // One container row (the host's write has none): its write, its sync and their latencies.
  ASSERT_EQ(data["containers"].size(), 1u);
  const json& container = data["containers"][0];
  EXPECT_EQ(container["name"], "db-1");
  EXPECT_EQ(container["runtime"], "docker");
  EXPECT_EQ(container["writes"], 1);
  EXPECT_EQ(container["syncs"], 1);
  EXPECT_EQ(container["labels"]["durable"],
            std::string(direct.state == WriteState::Durable ? "1" : "0") + " of 1");
  EXPECT_EQ(container["labels"]["sync_p99"], "5.20ms");
  EXPECT_EQ(container["labels"]["slowest"], "5.20ms");
  EXPECT_EQ(container["slowest_call"],
            "fsync by " + std::get<SyncTimeline>(container_sync).call.comm + " (pid " +
                std::to_string(std::get<SyncTimeline>(container_sync).call.pid) + ")");

  ASSERT_EQ(data["why"].size(), 1u) << "the one call with named causes";
  const json& why = data["why"][0];
  EXPECT_EQ(why["labels"]["latency"], "14.2us");
  ASSERT_EQ(why["waits"].size(), 2u);
  EXPECT_EQ(why["waits"][0]["labels"]["ns"], "12.0us");
  EXPECT_EQ(why["waits"][0]["labels"]["share"], "85%");
  const json& commit = why["waits"][1];
  EXPECT_EQ(commit["commit"]["labels"]["ran"], "11.0us");
  EXPECT_EQ(commit["commit"]["labels"]["start"], "+2.0us");
  EXPECT_EQ(commit["flushes"][0]["labels"]["device"], "3.5us");
  EXPECT_EQ(commit["flushes"][0]["labels"]["issue"], "+9.0us");

  if (const char* sample = std::getenv("WRITEPATH_REPORT_SAMPLE")) {
    std::ofstream out(sample, std::ios::binary | std::ios::trunc);
    out << page;
    ASSERT_TRUE(out.flush()) << sample;
  }
}

WriteTimeline slow_write(Nanos start, Nanos latency) {
  WriteTimeline write = write_at(start, latency);
  write.causes = slow_fsync_causes(start);
  return write;
}

// A lost write: its state counted by state, when its writeback failed labelled like the other
// times, and its error beside it; the summary's lost writes go to the page for its card.
TEST(HtmlSink, ALostWriteIsCountedLabelledAndSummed) {
  WriteTimeline lost = write_at(kStart, 10'000);
  lost.state = WriteState::Lost;
  lost.durable_ns.reset();
  lost.durable_via = DurableVia::None;
  lost.lost_ns = kStart + 2'000'000;
  lost.lost_error = -ENOSPC;
  lost.call.view_dev = make_dev(0, 39);
  lost.call.view_ino = 16;
  std::ostringstream out;
  HtmlSink sink(out, HtmlOptions{});
  sink.timeline(lost);
  TraceSummary totals = totals_of({lost});
  totals.lost_writes = 1;
  totals.lost_bytes = 4096;
  sink.summary(totals);
  const json data = embedded_data(out.str());
  EXPECT_EQ(data["writes_by_state"]["lost"], 1);
  const json& write = data["writes"][0];
  EXPECT_EQ(write["state"], "lost");
  EXPECT_EQ(write["lost_error"], "ENOSPC");
  EXPECT_EQ(write["labels"]["lost"], "+2.00ms");
  EXPECT_EQ(write["backing"]["dev"], "7:0");
  EXPECT_EQ(write["dev"], "0:39");
  EXPECT_EQ(data["summary"]["lost_writes"], 1);
}

TEST(HtmlSink, WhyListsTheTenSlowestCallsWithNamedCausesSlowestFirst) {
  std::vector<Timeline> items;
  for (int i = 0; i < 12; ++i)
    items.push_back(slow_write(kStart + i * 1'000'000'000ull, (300 + 10 * i) * 1'000'000ull));
  WriteTimeline unnamed = slow_write(kStart, 900'000'000);  // the slowest, but no named cause
  unnamed.causes->waits.clear();
  items.push_back(unnamed);
  items.push_back(fsync_at(kStart + 50'000));
  const json data = embedded_data(page_of(items));
  ASSERT_EQ(data["why"].size(), 10u);
  EXPECT_EQ(data["why"][0]["latency_ns"], 410'000'000);
  EXPECT_EQ(data["why"][9]["latency_ns"], 320'000'000);
  for (std::size_t i = 1; i < 10; ++i)
    EXPECT_GT(data["why"][i - 1]["latency_ns"], data["why"][i]["latency_ns"]);

  const json& slowest = data["why"][0];
  EXPECT_EQ(slowest["kind"], "write");
  EXPECT_EQ(slowest["comm"], "dd");
  EXPECT_EQ(slowest["labels"]["start"], "+11.00s");
  EXPECT_EQ(slowest["labels"]["unslotted"], "3.00ms");
  const json& commit = slowest["waits"][0];
  EXPECT_EQ(commit["cause"], "journal-commit");
  EXPECT_EQ(commit["labels"]["ns"], "280.10ms");
  EXPECT_EQ(commit["labels"]["share"], "68%");
  EXPECT_EQ(commit["evidence"], "jbd2_log_wait_commit");
  EXPECT_EQ(commit["frames"],
            json({"jbd2_log_wait_commit [jbd2]", "jbd2_complete_transaction [jbd2]",
                  "ext4_fc_commit [ext4]", "ext4_sync_file [ext4]", "do_fsync"}));
  EXPECT_EQ(commit["waker"]["comm"], "jbd2/loop0-8");
  EXPECT_EQ(commit["waker"]["kernel_thread"], true);
  EXPECT_EQ(commit["waker"]["frames"][2], "jbd2_journal_commit_transaction [jbd2]");
  EXPECT_EQ(commit["commit"]["transaction"], 5);
  EXPECT_EQ(commit["commit"]["dev"], "7:0");
  EXPECT_EQ(commit["commit"]["labels"]["ran"], "280.00ms");
  EXPECT_EQ(commit["flushes"][0]["rwbs"], "FF");
  EXPECT_EQ(commit["flushes"][0]["device_ns"], 1'700'000);
  EXPECT_EQ(slowest["waits"][1]["holder"]["comm"], "wp_workload");
  EXPECT_EQ(slowest["waits"][2]["cause"], "other");

  // The items keep their time split; their stacks and waits are only in the list.
  const json& causes = data["writes"][0]["causes"];
  EXPECT_EQ(causes["blocked_ns"], 295'100'000);
  EXPECT_FALSE(causes.contains("stacks"));
  EXPECT_FALSE(causes.contains("waits"));
}

TEST(HtmlSink, MakeSinkStampsWhenThePageWasWritten) {
  std::ostringstream out;
  auto sink = make_sink(OutputFormat::Html, out, SinkOptions{});
  sink->summary(TraceSummary{});
  json data = embedded_data(out.str());
  EXPECT_FALSE(data["generated_at"].get<std::string>().empty());
  EXPECT_TRUE(data["writes"].empty());
}

}  // namespace
}  // namespace wp
