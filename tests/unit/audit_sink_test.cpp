// SPDX-License-Identifier: Apache-2.0
// writepath audit's JSON: a hazard with its evidence, each item's state its last, and a write
// that became durable saying when.
#include "sinks/audit_sink.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "sink_fixture.h"

namespace wp {
namespace {

using nlohmann::json;
using namespace sink_test;

std::vector<json> lines_of(const std::string& out) {
  std::vector<json> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  return lines;
}

NameChangeTimeline rename_over(std::vector<std::uint64_t> related, Nanos start) {
  NameChangeTimeline rename;
  rename.id = 9;
  rename.call =
      syscall_event({.syscall = Syscall::Renameat, .start_ns = start, .end_ns = start + 40'000});
  rename.names = {"tmp", "f"};
  rename.hazards.push_back(
      Hazard{.rule = "rename-of-unsynced-data", .detail = "d", .related = std::move(related)});
  return rename;
}

TEST(AuditSink, AWriteThatTurnedDurableAfterTheHazardSaysWhen) {
  WriteTimeline later = durable_write();  // durable at kStart + 3.1 ms, after the rename
  later.id = 4;
  WriteTimeline dirty = dirty_write();
  dirty.id = 5;
  std::ostringstream out;
  AuditSink sink(out, true);
  sink.timeline(later);
  sink.timeline(dirty);
  sink.timeline(rename_over({4, 5}, kStart + 100'000));
  sink.summary(TraceSummary{});
  const std::vector<json> lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 2u) << out.str();
  const json& hazard = lines[0];
  EXPECT_EQ(hazard["type"], "hazard");
  ASSERT_EQ(hazard["related"].size(), 2u);
  EXPECT_EQ(hazard["related"][0]["state"], "durable");
  EXPECT_EQ(hazard["related"][0]["durable_ns"], *later.durable_ns);
  EXPECT_GT(hazard["related"][0]["durable_ns"].get<Nanos>(), hazard["item"]["end_ns"].get<Nanos>());
  EXPECT_EQ(hazard["related"][1]["state"], "dirty");
  EXPECT_FALSE(hazard["related"][1].contains("durable_ns"));
  EXPECT_FALSE(hazard["item"].contains("durable_ns"));  // not a write
  EXPECT_EQ(lines[1]["type"], "audit_summary");
}

}  // namespace
}  // namespace wp
