// SPDX-License-Identifier: Apache-2.0
// Integration tests of the load generator's wal, group-commit, cold-warm and atomic-save
// scenarios: each run small on its own scratch ext4 (with a journal) and its figures checked
// against what the physics allows. Needs root (loop device, mount, BPF for the demo).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using namespace wp::testing;
namespace fs = std::filesystem;
using nlohmann::json;

// The scenarios make their own scratch filesystem: only root can.
class LoadTest : public ::testing::Test {
 protected:
  void SetUp() override { WP_REQUIRE_ROOT(); }
};

class LoadWal : public LoadTest {};
class LoadGroupCommit : public LoadTest {};
class LoadColdWarm : public LoadTest {};
class LoadAtomicSave : public LoadTest {};

TEST_F(LoadWal, EveryRecordPaysAnFsyncAndTheLatenciesAreOrdered) {
  json f = load_figures("wal", {"--count", "30", "--record", "4k"});
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(u64(f["count"]), 30u);
  EXPECT_EQ(u64(f["record_bytes"]), 4096u);
  EXPECT_GT(u64(f["op_p50_ns"]), 0u);
  EXPECT_GE(u64(f["op_p99_ns"]), u64(f["op_p50_ns"]));
  EXPECT_GE(u64(f["op_max_ns"]), u64(f["op_p99_ns"]));
  EXPECT_GT(f["ops_per_s"].get<double>(), 0.0);
  // An op is a write plus an fsync: it takes longer than its fsync alone.
  EXPECT_GE(u64(f["op_p50_ns"]), u64(f["fsync_p50_ns"]));
  // 30 ops in total_ns: the rate agrees with the time taken.
  EXPECT_NEAR(f["ops_per_s"].get<double>(), 30.0 / (u64(f["total_ns"]) / 1e9),
              f["ops_per_s"].get<double>() * 0.01);
}

TEST_F(LoadWal, DemoExplainsEachFsyncsPhases) {
  RunResult r = run({writepath(), "demo", "wal", "--count", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("what the tracer saw"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("20 fsyncs traced (the log made 20)"), std::string::npos) << r.out;
  for (const char* phase : {"writeback", "data-io", "journal", "flush", "other"})
    EXPECT_NE(r.out.find(phase), std::string::npos) << phase << " missing from:\n" << r.out;
  EXPECT_NE(r.out.find("journal + flush:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("20 of 20 writes durable"), std::string::npos) << r.out;
}

TEST_F(LoadWal, NonsenseOptionsAreRejectedWithOneLine) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--count", "0"}, {"--record", "banana"}, {"--record", "0"}, {"--count", "x"}}) {
    std::vector<std::string> argv = {writepath(), "load", "wal"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult r = run(argv);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("--" + args[0].substr(2)), std::string::npos) << r.err;
  }
}

TEST_F(LoadWal, NonEmptyDirIsRefusedAndLeftAlone) {
  fs::path dir = fs::temp_directory_path() / ("wp_load_a_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  { std::ofstream(dir / "precious") << "keep me"; }
  RunResult r = run({writepath(), "load", "wal", "--count", "3", "--dir", dir.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("not empty"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(dir / "precious"), "keep me");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

TEST_F(LoadGroupCommit, GroupingMakesFewerFsyncsThanRecords) {
  json f = load_figures("group-commit", {"--threads", "4", "--records", "25", "--record", "512B"});
  ASSERT_FALSE(f.empty());
  const std::uint64_t records = 4 * 25;
  const json& single = f["per_record"];
  const json& group = f["group"];
  EXPECT_EQ(u64(single["records"]), records);
  EXPECT_EQ(u64(group["records"]), records);
  EXPECT_EQ(u64(single["fsyncs"]), records) << "one fsync per record";
  EXPECT_DOUBLE_EQ(single["fsyncs_per_record"].get<double>(), 1.0);
  EXPECT_LT(u64(group["fsyncs"]), records) << "waiting records share a leader's fsync";
  EXPECT_GE(u64(group["fsyncs"]), 1u);
  for (const json* mode : {&single, &group}) {
    EXPECT_GT((*mode)["records_per_s"].get<double>(), 0.0);
    EXPECT_GT(u64((*mode)["commit_p50_ns"]), 0u);
    EXPECT_GE(u64((*mode)["commit_p99_ns"]), u64((*mode)["commit_p50_ns"]));
  }
}

TEST_F(LoadGroupCommit, OneThreadHasNobodyToShareWith) {
  json f = load_figures("group-commit", {"--threads", "1", "--records", "10"});
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(u64(f["per_record"]["fsyncs"]), 10u);
  EXPECT_EQ(u64(f["group"]["fsyncs"]), 10u);
}

TEST_F(LoadColdWarm, TheSecondReadComesFromThePageCache) {
  json f = load_figures("cold-warm", {"--size", "32M"});
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(u64(f["size_bytes"]), 32u << 20);
  EXPECT_LT(f["cold_resident_before_pct"].get<double>(), 10.0);
  EXPECT_GT(f["warm_resident_before_pct"].get<double>(), 90.0);
  // How much faster the warm read is depends on the machine: bench/run.sh scenarios reports it.
  EXPECT_GT(f["warm_mib_s"].get<double>(), 0.0);
  EXPECT_GT(f["cold_mib_s"].get<double>(), 0.0);
  // The cold read fetched (about) the file from storage, the warm one (about) nothing.
  EXPECT_GE(u64(f["cold_storage_read_bytes"]), (32u << 20) * 9 / 10);
  EXPECT_LT(u64(f["warm_storage_read_bytes"]), (32u << 20) / 10);
}

// `demo cold-warm` says, per pass, how many pages the reads brought in from the device, beside
// the load's own count of what it read from storage (its /proc/self/io read_bytes): the two
// agree, and the cold pass brought in the whole file.
TEST_F(LoadColdWarm, TheDemoCountsWhatEachPassReadFromTheDevice) {
  RunResult r = run({writepath(), "demo", "cold-warm", "--size", "16M"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::pair<std::uint64_t, double>> passes;  // pages, load's MiB
  const std::regex line(
      "(cold|warm) read: .*; ([0-9]+) pages? brought in from the device .*own count: "
      "([0-9.]+) MiB from storage");
  std::istringstream out(r.out);
  for (std::string text; std::getline(out, text);) {
    std::smatch m;
    if (std::regex_search(text, m, line)) passes[m[1]] = {std::stoull(m[2]), std::stod(m[3])};
  }
  ASSERT_EQ(passes.size(), 2u) << r.out;
  for (const auto& [pass, figures] : passes)
    EXPECT_NEAR(static_cast<double>(figures.first) * 4096 / 1048576.0, figures.second, 0.05)
        << pass << " read\n"
        << r.out;
  EXPECT_EQ(passes["cold"].first, (16u << 20) / 4096) << r.out;
}

TEST_F(LoadAtomicSave, SafeSavesMakeTwoFsyncsNaiveOnesNone) {
  json f = load_figures("atomic-save", {"--size", "1M", "--rounds", "3"});
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(u64(f["rounds"]), 3u);
  EXPECT_EQ(u64(f["safe_fsyncs"]), 6u);
  EXPECT_EQ(u64(f["safe_fsyncs_per_round"]), 2u);
  EXPECT_EQ(u64(f["naive_fsyncs"]), 0u);
  EXPECT_EQ(u64(f["naive_fsyncs_per_round"]), 0u);
  EXPECT_GT(u64(f["naive_median_ns"]), 0u);
  // Each safe save contains both its fsyncs (so its median is above each of theirs).
  EXPECT_GE(u64(f["safe_median_ns"]), u64(f["safe_file_fsync_median_ns"]));
  EXPECT_GE(u64(f["safe_median_ns"]), u64(f["safe_dir_fsync_median_ns"]));
}

}  // namespace
