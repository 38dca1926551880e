// SPDX-License-Identifier: Apache-2.0
// Writes whose pages the page cache drops before writeback (unlink, truncate) end "discarded";
// the counts are compared with what the workload did to each file.
#include <map>

#include "harness.h"

namespace wp::testing {
namespace {

constexpr int kPages = 64;  // one-page writes per file

// "wp_workload: ino NAME INO" lines: which inode each of the workload's files had.
std::map<std::uint64_t, std::string> workload_inodes(const std::string& err) {
  std::map<std::uint64_t, std::string> out;
  std::istringstream in(err);
  std::string line;
  const std::string prefix = "wp_workload: ino ";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::istringstream fields(line.substr(prefix.size()));
    std::string name;
    std::uint64_t ino = 0;
    fields >> name >> ino;
    out[ino] = name;
  }
  return out;
}

TEST_F(ScratchExt4, UnlinkedAndTruncatedWritesAreDiscardedAndFsyncedOnesDurable) {
  const fs::path out = root_ / "discard.jsonl";
  auto r = run({tool("writepath"), "trace", "--format", "json", "-o", out.string(), "--",
                tool("wp_workload"), "discard-mix", file("discard"), std::to_string(kPages)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto inodes = workload_inodes(r.err);
  ASSERT_EQ(inodes.size(), 4u) << r.err;
  const auto items = json_lines(slurp(out));

  // file name -> state -> writes; and the pages of the half-truncated file by state.
  std::map<std::string, std::map<std::string, int>> states;
  std::map<std::string, std::uint64_t> half_last_offset;
  int pwrites = 0;
  for (const auto& w : of_type(items, "write")) {
    if (w["syscall"] != "pwrite64") continue;  // its messages on stderr are writes too
    ++pwrites;
    auto name = inodes.find(u64(w["ino"]));
    ASSERT_NE(name, inodes.end()) << w.dump();
    const std::string state = w["state"];
    ++states[name->second][state];
    if (state == "discarded") {
      EXPECT_TRUE(w["discarded_ns"].is_number()) << w.dump();
      EXPECT_GE(u64(w["discarded_ns"]), u64(w["end_ns"])) << w.dump();
      EXPECT_EQ(u64(w["pages_pending"]), 0u) << w.dump();
      EXPECT_TRUE(w["durable_ns"].is_null()) << w.dump();
    } else {
      EXPECT_TRUE(w["discarded_ns"].is_null()) << w.dump();
    }
    if (name->second == "half") {
      auto& last = half_last_offset[state];
      last = std::max(last, u64(w["offset"]));
    }
  }
  using States = std::map<std::string, int>;
  EXPECT_EQ(states["unlinked"], (States{{"discarded", kPages}}));
  EXPECT_EQ(states["truncated"], (States{{"discarded", kPages}}));
  EXPECT_EQ(states["half"], (States{{"discarded", kPages / 2}, {"durable", kPages / 2}}));
  EXPECT_EQ(states["kept"], (States{{"durable", kPages}}));
  // The pages kept by the truncation are the ones below the new size.
  EXPECT_EQ(half_last_offset["durable"], (kPages / 2 - 1) * 4096u);

  const auto summary = of_type(items, "summary");
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(u64(summary[0]["discarded"]), 2u * kPages + kPages / 2);
  EXPECT_EQ(pwrites, 4 * kPages);
  EXPECT_EQ(u64(summary[0]["lost"]), 0u);
}

TEST_F(ScratchExt4, TextOutputSaysDiscardedAndCountsThem) {
  auto r = run({tool("writepath"), "trace", "--", tool("wp_workload"), "discard-mix",
                file("discard-text"), "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int verdicts = 0;
  for (std::size_t at = r.out.find("DISCARDED"); at != std::string::npos;
       at = r.out.find("DISCARDED", at + 1))
    ++verdicts;
  EXPECT_EQ(verdicts, 4 + 4 + 2) << r.out;
  EXPECT_NE(r.out.find("discarded 10"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace wp::testing
