// SPDX-License-Identifier: Apache-2.0
// The HTML report end to end: a real trace written with --format html, then opened in headless
// Chromium (Debian's `chromium`, which scripts/install-deps.sh installs) to check that the page
// draws what the trace holds and raises no script error. Needs root (the trace) and chromium.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using namespace wp::testing;
namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kDataOpen = R"(<script type="application/json" id="data">)";

// Chromium as a command: headless, no sandbox (we are root), nothing fetched or synced, a fresh
// profile, then the extra arguments and the page.
std::vector<std::string> chromium(const fs::path& profile, std::vector<std::string> extra,
                                  const fs::path& page) {
  std::vector<std::string> argv = {"timeout",
                                   "120",
                                   "chromium",
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-quic",
                                   "--no-first-run",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--user-data-dir=" + profile.string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back("file://" + page.string());
  return argv;
}

std::size_t occurrences(const std::string& text, std::string_view what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++count;
  return count;
}

fs::path temp_dir(const std::string& prefix) {
  std::string pattern = (fs::temp_directory_path() / (prefix + "XXXXXX")).string();
  const char* made = ::mkdtemp(pattern.data());
  return made ? fs::path(made) : fs::path();
}

// The JSON the page embeds for its script (null when it has none).
json embedded_data(const std::string& html) {
  const std::size_t open = html.find(kDataOpen);
  if (open == std::string::npos) return nullptr;
  const std::size_t begin = open + kDataOpen.size();
  return json::parse(html.substr(begin, html.find("</script", begin) - begin));
}

// The page's DOM once its script ran in chromium; the script must raise no error, and write
// none into #errors (which must stay empty and hidden).
RunResult drawn_dom(const fs::path& page, const fs::path& profile) {
  RunResult dom = run(chromium(profile, {"--enable-logging=stderr", "--v=0", "--dump-dom"}, page));
  EXPECT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_EQ(dom.err.find("Uncaught"), std::string::npos) << dom.err;
  std::smatch errors;
  if (!std::regex_search(dom.out, errors, std::regex(R"(<div id="errors"[^>]*>(.*?)</div>)"))) {
    ADD_FAILURE() << "no #errors in the page: " << dom.out.substr(0, 2000);
    return dom;
  }
  EXPECT_TRUE(errors[1].str().empty()) << errors[1];
  EXPECT_NE(errors[0].str().find("hidden"), std::string::npos) << errors[0];
  return dom;
}

class HtmlReport : public ScratchExt4 {};

TEST_F(HtmlReport, ATracedProgramsReportDrawsInABrowserWithoutErrors) {
  if (!sh("command -v chromium >/dev/null 2>&1"))
    GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";

  const fs::path page = root_ / "report.html";
  auto r = run({tool("writepath"), "trace", "--format", "html", "-o", page.string(), "--",
                tool("wp_workload"), "buffered-fsync", file("html"), "8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << "the page goes to -o, nothing to stdout: " << r.out;
  const std::string html = slurp(page);
  ASSERT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u) << html.substr(0, 200);

  // The data the page draws: the workload's 8 writes and its fsync.
  const json data = embedded_data(html);
  ASSERT_TRUE(data.is_object());
  std::size_t workload_writes = 0, workload_syncs = 0;
  for (const auto& w : data["writes"]) workload_writes += w["comm"] == "wp_workload";
  for (const auto& s : data["syncs"]) workload_syncs += s["comm"] == "wp_workload";
  EXPECT_EQ(workload_writes, 8u);
  EXPECT_EQ(workload_syncs, 1u);
  EXPECT_EQ(data["summary"]["lost"], 0);

  // The DOM after the page's script ran.
  const fs::path profile = temp_dir("wp_chromium_");
  ASSERT_FALSE(profile.empty());
  auto dom = drawn_dom(page, profile);

  EXPECT_NE(dom.out.find(R"(id="timeline-svg")"), std::string::npos);
  EXPECT_GE(occurrences(dom.out, R"(class="bar write state-)"), 8u);
  EXPECT_GE(occurrences(dom.out, R"(class="bar sync)"), 1u);
  EXPECT_NE(dom.out.find(R"(id="phase-svg")"), std::string::npos);
  // The fsync's phases: at least the journal and the cache flush took time on a journaled ext4.
  EXPECT_GE(occurrences(dom.out, R"(class="phase-seg phase-)"), 2u);
  EXPECT_NE(dom.out.find(R"(id="phase-table")"), std::string::npos);
  EXPECT_NE(dom.out.find("wp_workload"), std::string::npos) << "the header names the process";

  // A screenshot, kept in the build directory for a person to look at.
  const fs::path screenshot = build_dir() / "html_report.png";
  fs::remove(screenshot);
  auto shot = run(
      chromium(profile, {"--screenshot=" + screenshot.string(), "--window-size=1400,1000"}, page));
  EXPECT_EQ(shot.exit_code, 0) << shot.err;
  ASSERT_TRUE(fs::exists(screenshot)) << shot.err;
  EXPECT_GT(fs::file_size(screenshot), 10'000u);
  fs::remove_all(profile);
}

// With --reads the page draws each read of a cold file on the timeline, colored by where its
// pages came from. Truths: the file's size (what cat got, byte for byte) and a cold cache (its
// pages dropped after a sync, so the first read had to go to the device).
TEST_F(HtmlReport, AReadersReportDrawsItsReadsByWhereTheirPagesCameFrom) {
  if (!sh("command -v chromium >/dev/null 2>&1"))
    GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";
  const std::string path = file("weights.bin");
  constexpr std::uint64_t kBytes = 256 * 1024;
  ASSERT_TRUE(sh("head -c " + std::to_string(kBytes) + " /dev/urandom > " + path + " && sync " +
                 path + " && dd if=" + path + " iflag=nocache count=0 status=none"));
  const fs::path page = root_ / "reads.html";
  auto r = run({tool("writepath"), "trace", "--reads", "--format", "html", "-o", page.string(),
                "--", "sh", "-c", "cat \"$1\" > /dev/null", "sh", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json data = embedded_data(slurp(page));
  ASSERT_TRUE(data.is_object());
  std::uint64_t bytes = 0, brought_in = 0;
  for (const json& read : data["reads"]) {
    if (read["path"] != path) continue;
    bytes += read["bytes"].get<std::uint64_t>();
    brought_in += read["pages_from_device"].get<std::uint64_t>();
  }
  EXPECT_EQ(bytes, kBytes) << data["reads"].dump();
  EXPECT_GE(brought_in, 1u) << "a cold file: its first read went to the device";

  const fs::path profile = temp_dir("wp_chromium_");
  ASSERT_FALSE(profile.empty());
  auto dom = drawn_dom(page, profile);
  EXPECT_GE(occurrences(dom.out, R"(class="bar read device)"), 2u) << "the legend's and a read's";
  fs::remove_all(profile);
}

TEST(HtmlCli, HtmlWithoutAnOutputFileIsAUsageError) {
  auto r = run({writepath(), "trace", "--format", "html", "--", "true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--format html needs -o FILE"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

}  // namespace
