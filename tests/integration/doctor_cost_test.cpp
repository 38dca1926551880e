// SPDX-License-Identifier: Apache-2.0
// doctor's cost section: what the trace's programs cost a traced process's pwrite and another
// process's write(2), timed by helpers doctor forks, and the programs' runs per call as the
// kernel counted them. The run counts are held to the helpers' own number of calls: each call
// runs the write syscall's entry and exit programs at least once (per-syscall tracepoints, the
// raw pair or fentry/fexit alike), whatever else the machine runs meanwhile.
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "harness.h"

namespace wp::testing {
namespace {

struct CostRow {
  std::string untraced, traced;
  double runs = 0;
};

std::optional<CostRow> cost_row(const std::string& out, const std::string& what) {
  const std::regex row(what + R"(\s+(\S+) alone, (\S+) under the trace \([+-]\S+, x[0-9.]+\); )" +
                       R"(programs \S+ in ([0-9.]+) runs \(\S+\))");
  std::smatch m;
  if (!std::regex_search(out, m, row)) return std::nullopt;
  return CostRow{m[1], m[2], std::stod(m[3])};
}

void expect_cost_section(const std::vector<std::string>& argv) {
  auto r = run(argv);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_NE(r.out.find("cost (measured now: 20000 calls a round, 3 rounds"), std::string::npos)
      << r.out;
  for (const char* what :
       {"traced process: cached 4 KiB pwrite", "another process: 64 B write\\(2\\) to /dev/null"}) {
    const auto row = cost_row(r.out, what);
    ASSERT_TRUE(row) << what << "\n" << r.out;
    EXPECT_GE(row->runs, 2.0) << what << "\n" << r.out;
    EXPECT_NE(row->untraced, "0ns") << r.out;
    EXPECT_NE(row->traced, "0ns") << r.out;
  }
}

TEST(Doctor, MeasuresWhatTheTraceCostsACallWithTheKernelsCountOfProgramRuns) {
  WP_REQUIRE_ROOT();
  expect_cost_section({(build_dir() / "writepath").string(), "doctor"});
}

TEST(Doctor, MeasuresTheCostOfTheRawSyscallPairToo) {
  WP_REQUIRE_ROOT();
  expect_cost_section({(build_dir() / "writepath").string(), "doctor", "--raw-syscalls"});
}

}  // namespace
}  // namespace wp::testing
