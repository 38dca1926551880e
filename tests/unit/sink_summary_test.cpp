// SPDX-License-Identifier: Apache-2.0
// The summary at the end of a trace, as the JSON Lines and text sinks write it: counts,
// losses, the calls not stitched, the programs' cost and the hint.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "sinks/json_sink.h"
#include "sinks/sink.h"
#include "sinks/text_sink.h"

#include "sink_fixture.h"

namespace wp {
namespace {

using namespace sink_test;

TEST(JsonSink, SummaryLine) {
  TraceSummary totals;
  totals.events = 12'345;
  totals.lost = 3;
  totals.lost_by_hook = {{"block_rq_issue", 2}, {"block_bio_queue", 1}};
  totals.writes = 100;
  totals.fsyncs = 10;
  totals.incomplete = 2;
  totals.aged_out = 1;
  totals.evicted = 1;
  totals.discarded = 4;
  totals.lost_share = 3.0 / 12'348;
  totals.lost_advice = "raise --buffer-size";
  totals.duration_ns = 5'000'000'000;
  totals.untraced_calls = {{"fallocate", 3}, {"io_uring_enter", 0}};
  std::ostringstream out;
  JsonSink sink(out);
  sink.summary(totals);
  const json object = parse_one_line(out.str());
  EXPECT_EQ(object["aged_out"], 1);
  EXPECT_EQ(object["evicted"], 1);
  EXPECT_EQ(object["discarded"], 4);
  EXPECT_DOUBLE_EQ(object["lost_share"].get<double>(), 0.0002);  // four decimals
  EXPECT_EQ(object["lost_advice"], "raise --buffer-size");
  EXPECT_EQ(object["type"], "summary");
  EXPECT_EQ(object["events"], 12'345);
  EXPECT_EQ(object["lost"], 3);
  EXPECT_EQ(object["lost_by_hook"], json({{"block_rq_issue", 2}, {"block_bio_queue", 1}}));
  EXPECT_EQ(object["writes"], 100);
  EXPECT_EQ(object["fsyncs"], 10);
  EXPECT_EQ(object["incomplete"], 2);
  EXPECT_EQ(object["duration_ns"], 5'000'000'000u);
  EXPECT_TRUE(object["lost_by_hook"].is_object());
  EXPECT_TRUE(object["hint"].is_null());
  EXPECT_EQ(object["untraced_calls"], json({{"fallocate", 3}, {"io_uring_enter", 0}}));
}

// What the kernel counted for the programs: in all, as a share of the CPUs over the trace, per
// item, and per program; null when the kernel did not count.
TEST(JsonSink, SummaryBpfCostIsTheKernelsCountPerProgram) {
  TraceSummary totals;
  totals.writes = 90;
  totals.fsyncs = 10;
  totals.duration_ns = 1'000'000'000;
  totals.bpf_cost =
      BpfCost{{{"wp_exit_pwrite64", 100, 40'000}, {"wp_enter_pwrite64", 100, 20'000}}, 2};
  std::ostringstream out;
  JsonSink(out).summary(totals);
  const json cost = parse_one_line(out.str())["bpf_cost"];
  EXPECT_EQ(cost["ns"], 60'000);
  EXPECT_EQ(cost["cpus"], 2);
  EXPECT_DOUBLE_EQ(cost["cpu_share"].get<double>(), 0.0);  // 3e-5, four decimals
  EXPECT_EQ(cost["ns_per_item"], 600);
  EXPECT_EQ(cost["window_ns"], 1'000'000'000);  // not known: the trace's duration
  ASSERT_EQ(cost["programs"].size(), 2u);
  EXPECT_EQ(
      cost["programs"][0],
      json({{"name", "wp_exit_pwrite64"}, {"runs", 100}, {"ns", 40'000}, {"ns_per_run", 400}}));
  // Over the time the programs were attached, which holds the trace: 60 us in 20 ms on 2 CPUs.
  totals.bpf_cost->window_ns = 20'000'000;
  std::ostringstream attached;
  JsonSink(attached).summary(totals);
  const json over_attach = parse_one_line(attached.str())["bpf_cost"];
  EXPECT_EQ(over_attach["window_ns"], 20'000'000);
  EXPECT_DOUBLE_EQ(over_attach["cpu_share"].get<double>(), 0.0015);
  std::ostringstream none;
  JsonSink(none).summary(TraceSummary{});
  EXPECT_TRUE(parse_one_line(none.str())["bpf_cost"].is_null());
}

TEST(JsonSink, SummaryHintIsAStringWhenThereIsOne) {
  TraceSummary totals;
  totals.hint = "add --children";
  std::ostringstream out;
  JsonSink sink(out);
  sink.summary(totals);
  EXPECT_EQ(parse_one_line(out.str())["hint"], "add --children");
}

TEST(JsonSink, SummaryWithoutCountedCallsHasAnEmptyUntracedCallsObject) {
  std::ostringstream out;
  JsonSink(out).summary(TraceSummary{});
  const json object = parse_one_line(out.str());
  EXPECT_TRUE(object["untraced_calls"].is_object());
  EXPECT_TRUE(object["untraced_calls"].empty());
}

TEST(TextSink, SummarySaysWhatTheProgramsCostWhenTheKernelCounted) {
  TraceSummary totals;
  totals.writes = 100;
  totals.duration_ns = 10'000'000;
  totals.bpf_cost =
      BpfCost{{{"wp_exit_pwrite64", 100, 40'000}, {"wp_enter_pwrite64", 100, 20'000}}, 2};
  const std::string text = format_summary(totals, SinkOptions{});
  EXPECT_NE(text.find("bpf cost 60.0us in 200 runs (0.30 % of 2 CPUs), 600ns per item; most: "
                      "wp_exit_pwrite64 400ns/run, wp_enter_pwrite64 200ns/run"),
            std::string::npos)
      << text;
  EXPECT_EQ(format_summary(TraceSummary{}, SinkOptions{}).find("bpf cost"), std::string::npos);
}

TEST(TextSink, SummaryCountsDiscardedWritesWhenThereAreAny) {
  TraceSummary totals;
  totals.writes = 9;
  totals.discarded = 3;
  EXPECT_TRUE(contains(format_summary(totals, SinkOptions{}), "incomplete 0  discarded 3  "));
  totals.discarded = 0;
  EXPECT_FALSE(contains(format_summary(totals, SinkOptions{}), "discarded"));
}

TEST(TextSink, Summary) {
  TraceSummary totals;
  totals.events = 12'345;
  totals.lost = 3;
  totals.lost_by_hook = {{"block_rq_issue", 2}, {"block_bio_queue", 1}, {"nvme_setup_cmd", 0}};
  totals.writes = 100;
  totals.fsyncs = 10;
  totals.incomplete = 2;
  totals.duration_ns = 5'000'000'000;
  std::ostringstream out;
  auto sink = make_sink(OutputFormat::Text, out, SinkOptions{});
  sink->summary(totals);
  EXPECT_EQ(out.str(),
            "summary  writes 100  fsyncs 10  incomplete 2  duration 5.00s\n"
            "         kernel records 12345  lost 3 (block_bio_queue 1, block_rq_issue 2)\n");
}

TEST(TextSink, SummaryHintIsItsLastLine) {
  TraceSummary totals;
  EXPECT_FALSE(contains(format_summary(totals, SinkOptions{}), "hint"));
  totals.hint = "add --children";
  const std::string text = format_summary(totals, SinkOptions{});
  EXPECT_TRUE(text.ends_with("\nhint: add --children\n")) << text;
}

TEST(TextSink, SummarySaysWhichCallsWereNotStitched) {
  TraceSummary totals;
  totals.untraced_calls = {{"msync", 5}, {"copy_file_range", 2}, {"io_uring_enter", 0}};
  const std::string text = format_summary(totals, SinkOptions{});
  EXPECT_TRUE(contains(text,
                       "not stitched: copy_file_range 2, msync 5 (calls that write by ways the "
                       "trace does not follow; writepath doctor: coverage)\n"))
      << text;
  totals.untraced_calls = {{"msync", 0}};
  EXPECT_FALSE(contains(format_summary(totals, SinkOptions{}), "not stitched")) << text;
}

TEST(TextSink, SummaryWithoutLossesHasNoHookList) {
  TraceSummary totals;
  totals.events = 7;
  const std::string text = format_summary(totals, SinkOptions{});
  EXPECT_TRUE(contains(text, "kernel records 7  lost 0\n")) << text;
}

}  // namespace
}  // namespace wp
