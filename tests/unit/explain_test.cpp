// What `writepath demo kv-tier` says of a trace: for the io_uring engine, only what the trace's
// io_uring items show.
#include "agent/explain/explain.h"

#include <gtest/gtest.h>

#include "builders.h"

namespace wp {
namespace {

using namespace builders;

loadgen::ScenarioResult kv_tier_result(const std::string& engine) {
  loadgen::ScenarioResult result;
  result.figures["engine"] = engine;
  return result;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
}

WriteTimeline direct_write(Syscall syscall, std::uint32_t tid, std::uint32_t submitter) {
  WriteTimeline w = durable_write(
      syscall_event({.syscall = syscall, .tid = tid, .ret = 262144, .pages_dirtied = 0}),
      write_request(kLoop0, 2048, 262144, 10, 20), 30);
  w.direct = true;
  w.requests.front().submit_tid = submitter;
  return w;
}

TEST(ExplainKvTier, IoUringOpsAreTheItemsNamedIoUring) {
  EXPECT_TRUE(explain::is_io_uring_op("io_uring_write"));
  EXPECT_TRUE(explain::is_io_uring_op("io_uring_write_fixed"));
  EXPECT_FALSE(explain::is_io_uring_op("pwrite64"));
  EXPECT_FALSE(explain::is_io_uring_op("write"));
  EXPECT_FALSE(explain::is_io_uring_op("io_uring"));
}

TEST(ExplainKvTier, IoUringEngineWithoutIoUringItemsSaysTheTracerSawNone) {
  // Direct pwrites in the trace are not the ring's: no bypass is claimed from them.
  const std::vector<Timeline> timelines = {direct_write(Syscall::Pwrite64, 7, 7)};
  const std::string text = joined(explain::explain_kv_tier(kv_tier_result("io_uring"), timelines));
  EXPECT_NE(text.find("the tracer saw no io_uring writes"), std::string::npos) << text;
  EXPECT_NE(text.find("1 writes by other calls"), std::string::npos) << text;
  EXPECT_EQ(text.find("bypassed"), std::string::npos) << text;
}

TEST(ExplainKvTier, IoUringDirectOpsWithNoPagesDirtiedBypassThePageCache) {
  const Syscall op = Syscall::IoUringWriteFixed;
  const std::vector<Timeline> timelines = {direct_write(op, 7, 7), direct_write(op, 7, 99)};
  const std::string text = joined(explain::explain_kv_tier(kv_tier_result("io_uring"), timelines));
  EXPECT_NE(text.find("io_uring O_DIRECT: 2 writes, 0 pages dirtied, 2 requests"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("bypassed the page cache"), std::string::npos) << text;
  EXPECT_NE(text.find("1 of their 2 data requests were issued by the thread"), std::string::npos)
      << text;
}

TEST(ExplainKvTier, IoUringDirectOpsAllIssuedBySubmitterSayAll) {
  const Syscall op = Syscall::IoUringWrite;
  const std::vector<Timeline> timelines = {direct_write(op, 7, 7), direct_write(op, 7, 7)};
  const std::string text = joined(explain::explain_kv_tier(kv_tier_result("io_uring"), timelines));
  EXPECT_NE(text.find("all 2 of their data requests were issued by the thread that submitted"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("the rest by another thread"), std::string::npos) << text;
}

TEST(ExplainKvTier, PwriteEngineTalliesBothModes) {
  const std::vector<Timeline> timelines = {
      direct_write(Syscall::Pwrite64, 7, 7),
      dirty_write(syscall_event({.syscall = Syscall::Pwrite64, .pages_dirtied = 64}))};
  const std::string text = joined(explain::explain_kv_tier(kv_tier_result("pwrite"), timelines));
  EXPECT_NE(text.find("O_DIRECT: 1 writes, 0 pages dirtied, 1 requests"), std::string::npos)
      << text;
  EXPECT_NE(text.find("buffered: 1 writes, 64 pages dirtied, 0 requests"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("io_uring"), std::string::npos) << text;
}

}  // namespace
}  // namespace wp
