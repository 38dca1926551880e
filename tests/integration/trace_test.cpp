// SPDX-License-Identifier: Apache-2.0
// Integration tests: the real tracer, real BPF on the running kernel, real I/O on an ext4
// filesystem with a journal that the suite builds on a loop device. Needs root.
#include "harness.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <chrono>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace wp::testing;
namespace fs = std::filesystem;
using nlohmann::json;

TEST_F(ScratchExt4, BufferedWritesThenFsyncAreDurableAndFsyncIsBrokenDown) {
  auto r = trace_workload("buffered-fsync", file("buffered"), 64);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto items = json_lines(r.out);
  auto writes = of_type(items, "write");
  auto fsyncs = of_type(items, "fsync");
  ASSERT_EQ(writes.size(), 64u);
  ASSERT_EQ(fsyncs.size(), 1u);
  const json& fsync = fsyncs[0];

  std::set<std::uint64_t> offsets;
  for (const auto& w : writes) {
    EXPECT_EQ(w["syscall"], "pwrite64");
    EXPECT_EQ(u64(w["bytes"]), 4096u);
    EXPECT_EQ(w["direct"], false);
    EXPECT_EQ(w["state"], "durable") << w.dump();
    EXPECT_FALSE(w["requests"].empty());
    ASSERT_FALSE(w["durable_ns"].is_null()) << w.dump();
    // Durable after the data reached the device, and no later than the fsync's return.
    EXPECT_GE(u64(w["durable_ns"]), u64(w["written_ns"]));
    EXPECT_LE(u64(w["durable_ns"]), u64(fsync["end_ns"]));
    EXPECT_TRUE(w["durable_via"] == "flush" || w["durable_via"] == "fua") << w.dump();
    offsets.insert(u64(w["offset"]));
  }
  EXPECT_EQ(offsets.size(), 64u);
  EXPECT_EQ(*offsets.rbegin(), 63u * 4096);

  // The fsync wrote the data itself, committed the journal and flushed the cache in time.
  std::size_t data_requests = 0;
  for (const auto& rq : fsync["requests"])
    if (rq["rwbs"].get<std::string>().find('W') != std::string::npos) ++data_requests;
  EXPECT_GE(data_requests, 1u);
  EXPECT_GT(u64(fsync["phases"]["journal_ns"]), 0u);
  EXPECT_FALSE(fsync["journal_commits"].empty());
  ASSERT_FALSE(fsync["flushes"].empty());
  bool flush_before_return = false;
  for (const auto& f : fsync["flushes"])
    if (!f["complete_ns"].is_null() && u64(f["complete_ns"]) <= u64(fsync["end_ns"]))
      flush_before_return = true;
  EXPECT_TRUE(flush_before_return);
  EXPECT_GT(u64(fsync["phases"]["flush_ns"]), 0u);

  std::uint64_t sum = 0;
  for (const char* phase : {"writeback_ns", "data_io_ns", "journal_ns", "flush_ns", "other_ns"})
    sum += u64(fsync["phases"][phase]);
  std::uint64_t latency = u64(fsync["latency_ns"]);
  EXPECT_EQ(latency, u64(fsync["end_ns"]) - u64(fsync["start_ns"]));
  EXPECT_NEAR(static_cast<double>(sum), static_cast<double>(latency), latency * 0.01);

  auto summary = of_type(items, "summary");
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(u64(summary[0]["lost"]), 0u);
  EXPECT_GE(u64(summary[0]["writes"]), 64u);
  // The end-of-trace phase table: the one fsync is every percentile.
  const json& phases = summary[0]["fsync_phases"];
  ASSERT_FALSE(phases.is_null());
  EXPECT_EQ(u64(phases["latency_ns"]["p50"]), latency);
  EXPECT_EQ(u64(phases["journal_ns"]["max"]), u64(fsync["phases"]["journal_ns"]));
  EXPECT_EQ(phases["flush_ns"]["log2_histogram"].size(), 1u);
}

TEST_F(ScratchExt4, DirectWritesDirtyNoPagesAndIssueTheirOwnRequests) {
  auto r = trace_workload("direct", file("direct"), 64);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto writes = of_type(json_lines(r.out), "write");
  ASSERT_EQ(writes.size(), 64u);
  std::set<std::uint64_t> sectors;
  for (const auto& w : writes) {
    EXPECT_EQ(w["direct"], true);
    EXPECT_EQ(u64(w["pages_dirtied"]), 0u);
    EXPECT_EQ(u64(w["bytes"]), 4096u);
    EXPECT_NE(w["state"], "dirty") << w.dump();
    ASSERT_EQ(w["requests"].size(), 1u) << w.dump();
    const json& rq = w["requests"][0];
    // Submitted by the writer inside its own syscall, and done before it returned.
    ASSERT_FALSE(rq["queue_ns"].is_null());
    EXPECT_GE(u64(rq["queue_ns"]), u64(w["start_ns"]));
    EXPECT_LE(u64(rq["queue_ns"]), u64(w["end_ns"]));
    ASSERT_FALSE(rq["complete_ns"].is_null());
    EXPECT_LE(u64(rq["complete_ns"]), u64(w["end_ns"]));
    EXPECT_EQ(u64(rq["bytes"]), 4096u);
    sectors.insert(u64(rq["sector"]));
  }
  EXPECT_EQ(sectors.size(), 64u) << "each write has a request of its own";
}

TEST_F(ScratchExt4, AppendVectoredAndRangeSyncsAreTracedWhereTheBytesWent) {
  auto r = run({tool("writepath"), "trace", "--format", "json", "--", tool("wp_workload"),
                "append-mix", file("append")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto items = json_lines(r.out);
  auto writes = of_type(items, "write");
  ASSERT_EQ(writes.size(), 3u);
  EXPECT_EQ(writes[0]["syscall"], "write");
  EXPECT_EQ(writes[1]["syscall"], "writev");
  EXPECT_EQ(u64(writes[0]["offset"]), 0u);
  EXPECT_EQ(u64(writes[1]["offset"]), 5000u);
  EXPECT_EQ(u64(writes[1]["bytes"]), 6000u);
  EXPECT_EQ(u64(writes[2]["offset"]), 11000u);  // appended, not at 65536
  for (const auto& w : writes) {
    EXPECT_EQ(w["append"], true);
    EXPECT_EQ(w["state"], "durable") << w.dump();
  }
  auto syncs = of_type(items, "fsync");
  ASSERT_EQ(syncs.size(), 2u);
  // sync_file_range's item comes last: the hazard rules hold it to the end of the trace.
  std::sort(syncs.begin(), syncs.end(),
            [](const json& a, const json& b) { return u64(a["start_ns"]) < u64(b["start_ns"]); });
  EXPECT_EQ(syncs[0]["syscall"], "sync_file_range");
  EXPECT_FALSE(syncs[0]["requests"].empty());  // it wrote the data itself
  EXPECT_EQ(syncs[1]["syscall"], "fdatasync");
  EXPECT_FALSE(syncs[1]["flushes"].empty());
}

TEST_F(ScratchExt4, UnalignedDirectWriteFailsWithEinval) {
  auto r = trace_workload("direct-unaligned", file("unaligned"), 2);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<json> writes;
  // (its stderr report of the failures is a write too: keep the pwrite64s)
  for (const auto& w : of_type(json_lines(r.out), "write"))
    if (w["syscall"] == "pwrite64") writes.push_back(w);
  ASSERT_EQ(writes.size(), 2u);
  for (const auto& w : writes) {
    EXPECT_EQ(w["state"], "failed");
    EXPECT_EQ(w["error"], "EINVAL");
    EXPECT_EQ(u64(w["pages_dirtied"]), 0u);
    EXPECT_TRUE(w["requests"].empty());
  }
}

TEST_F(ScratchExt4, BufferedWriteWithoutFsyncIsNeverDurable) {
  auto r = trace_workload("buffered", file("nosync"), 8);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto writes = of_type(json_lines(r.out), "write");
  ASSERT_EQ(writes.size(), 8u);
  for (const auto& w : writes) {
    EXPECT_TRUE(w["state"] == "dirty" || w["state"] == "written") << w.dump();
    EXPECT_TRUE(w["durable_ns"].is_null());
    EXPECT_TRUE(w["durable_via"].is_null());
    EXPECT_GE(u64(w["pages_dirtied"]), 1u);
  }
}

TEST_F(ScratchExt4, TextOutputShowsTheTimelines) {
  auto r = run(
      {tool("writepath"), "trace", "--", tool("wp_workload"), "buffered-fsync", file("text"), "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("pwrite64"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fsync"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("durable"), std::string::npos) << r.out;
  // The legend once, before the first request line; the one fsync's figures on one line, no
  // histogram of a single sample.
  const auto legend = r.out.find("legend: request codes");
  ASSERT_NE(legend, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("legend:", legend + 1), std::string::npos) << r.out;
  EXPECT_LT(legend, r.out.find("request "));
  EXPECT_NE(r.out.find("fsync phases (1 call)  latency "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("histogram"), std::string::npos) << r.out;
}

TEST_F(ScratchExt4, CommandExitStatusIsPassedThrough) {
  auto r = run({tool("writepath"), "trace", "--format", "json", "--", "sh", "-c", "exit 7"});
  EXPECT_EQ(r.exit_code, 7) << r.err;
  auto missing = run({tool("writepath"), "trace", "--", "/nonexistent/cmd"});
  EXPECT_EQ(missing.exit_code, 127);
  // Said before anything is traced, in one line: no trace of the error message itself.
  EXPECT_EQ(missing.err, "writepath: /nonexistent/cmd: No such file or directory\n");
  EXPECT_EQ(missing.out, "");
}

TEST_F(ScratchExt4, FileFilterKeepsOnlyThatFile) {
  std::string wanted = file("wanted");
  { std::ofstream(wanted) << "x"; }
  auto r = run({tool("writepath"), "trace", "--format", "json", "--file", wanted, "--", "sh", "-c",
                "dd if=/dev/zero of=" + wanted +
                    " bs=4k count=3 conv=notrunc status=none && "
                    "dd if=/dev/zero of=" +
                    file("other") + " bs=4k count=5 status=none"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto writes = of_type(json_lines(r.out), "write", "dd");
  ASSERT_EQ(writes.size(), 3u);
  struct stat st {};
  ASSERT_EQ(::stat(wanted.c_str(), &st), 0);
  for (const auto& w : writes) {
    EXPECT_EQ(u64(w["ino"]), st.st_ino);
    EXPECT_EQ(u64(w["bytes"]), 4096u);
  }
}

// The other variants: the raw syscall pair (--raw-syscalls) instead of per-syscall
// tracepoints, raw_tp instead of tp_btf for the block layer. The same facts must hold.
TEST_F(ScratchExt4, FallbackHooksStitchTheSameTimelines) {
  std::string disabled =
      "wp_bio_queue_btf,wp_bio_split_btf,wp_rq_insert_btf,wp_rq_issue_btf,wp_rq_complete_btf";
  ASSERT_EQ(::setenv("WRITEPATH_DISABLE_PROGRAMS", disabled.c_str(), 1), 0);
  auto doctor = run({tool("writepath"), "doctor", "--raw-syscalls"});
  auto r = run({tool("writepath"), "trace", "--raw-syscalls", "--format", "json", "--",
                tool("wp_workload"), "buffered-fsync", file("fallback"), "16"});
  ::unsetenv("WRITEPATH_DISABLE_PROGRAMS");
  EXPECT_NE(doctor.out.find("tp_btf raw_syscalls:sys_enter"), std::string::npos) << doctor.out;
  EXPECT_NE(doctor.out.find("passed over (--raw-syscalls)"), std::string::npos) << doctor.out;
  EXPECT_NE(doctor.out.find("raw_tp block:block_rq_issue"), std::string::npos) << doctor.out;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto items = json_lines(r.out);
  auto writes = of_type(items, "write");
  auto fsyncs = of_type(items, "fsync");
  ASSERT_EQ(writes.size(), 16u);
  ASSERT_EQ(fsyncs.size(), 1u);
  for (const auto& w : writes) {
    EXPECT_EQ(w["state"], "durable") << w.dump();
    EXPECT_FALSE(w["requests"].empty());
  }
  EXPECT_FALSE(fsyncs[0]["flushes"].empty());
  EXPECT_GT(u64(fsyncs[0]["phases"]["journal_ns"]), 0u);
}

// trace --save records the raw trace while printing live; report on that file must print
// exactly what trace printed (the duration of the summary aside: wall time vs record span).
TEST_F(ScratchExt4, RecordThenReportEqualsTheLiveOutput) {
  fs::path live = root_ / "live.jsonl";
  fs::path saved = root_ / "saved.wpt";
  auto r =
      run({tool("writepath"), "trace", "--format", "json", "-o", live.string(), "--save",
           saved.string(), "--", tool("wp_workload"), "buffered-fsync", file("roundtrip"), "16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::stat(saved.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "trace files are private";
  auto reported = run({tool("writepath"), "report", "--format", "json", saved.string()});
  ASSERT_EQ(reported.exit_code, 0) << reported.err;
  auto a = json_lines(slurp(live));
  auto b = json_lines(reported.out);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_GT(a.size(), 17u);  // 16 writes, the fsync, the summary, and the workload's neighbours
  for (std::size_t i = 0; i + 1 < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "line " << i;
  a.back().erase("duration_ns");
  b.back().erase("duration_ns");
  // What the programs cost is the live run's (the kernel's counters, when
  // kernel.bpf_stats_enabled is on): a recording's report never has it.
  a.back().erase("bpf_cost");
  EXPECT_TRUE(b.back()["bpf_cost"].is_null()) << b.back().dump();
  b.back().erase("bpf_cost");
  // So is what its syscall tracepoints cost the machine (a fallback plan's): the report of a
  // recording attached nothing.
  a.back().erase("slow_syscall_path");
  EXPECT_TRUE(b.back()["slow_syscall_path"].is_null()) << b.back().dump();
  b.back().erase("slow_syscall_path");
  EXPECT_EQ(a.back(), b.back());

  // The text report too, and a report of a cut-short file: partial, with a warning.
  auto text = run({tool("writepath"), "report", saved.string()});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("fsync"), std::string::npos);
  fs::path cut = root_ / "cut.wpt";
  {
    std::string bytes = slurp(saved);
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() - 7);
  }
  auto partial = run({tool("writepath"), "report", "--format", "json", cut.string()});
  EXPECT_EQ(partial.exit_code, 0);
  EXPECT_NE(partial.err.find("warning"), std::string::npos) << partial.err;
  EXPECT_FALSE(json_lines(partial.out).empty());
}

TEST(BadInput, ReportOfAForeignFileIsOneClearLine) {
  fs::path foreign = fs::temp_directory_path() / ("wp_foreign_" + std::to_string(::getpid()));
  { std::ofstream(foreign) << "{\"type\":\"write\"}\n"; }
  auto r = run({(build_dir() / "writepath").string(), "report", foreign.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("not a writepath trace file"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  auto missing = run({(build_dir() / "writepath").string(), "report", "/nonexistent.wpt"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(line_count(missing.err), 1) << missing.err;
  fs::remove(foreign);
}

// --min-latency: each slow call comes with the causes of its time, adding up to its latency.
// Under lowered dirty limits (the dirty-throttle scenario) the flood writer's slow writes
// must show time asleep in balance_dirty_pages, with the dirty state of each pause.
// -d: the start line says how long (and that Ctrl-C ends it early, not that it is the way to
// stop), and the summary's duration is the span asked for, measured by this test's own clock
// around the run: not the time detaching the hooks took afterwards.
TEST(Duration, TracesForTheSpanAskedAndSaysSo) {
  WP_REQUIRE_ROOT();
  const auto before = std::chrono::steady_clock::now();
  const RunResult r = run({writepath(), "trace", "-p", "1", "-d", "1s", "--format", "json"});
  const auto wall = std::chrono::steady_clock::now() - before;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("tracing writes and syncs for 1.00s; Ctrl-C stops it early"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("Ctrl-C to stop"), std::string::npos) << r.err;
  const auto items = json_lines(r.out);
  ASSERT_FALSE(items.empty());
  const double seconds = items.back()["duration_ns"].get<double>() / 1e9;
  EXPECT_GE(seconds, 1.0);
  EXPECT_LT(seconds, 1.2) << "the timer fires at 1 s; detaching is not traced time";
  EXPECT_LE(seconds, std::chrono::duration<double>(wall).count());
}

TEST(SlowCalls, CausesAddUpAndShowDirtyThrottling) {
  WP_REQUIRE_ROOT();
  fs::path out = fs::temp_directory_path() / ("wp_slow_" + std::to_string(::getpid()));
  auto r = run({writepath(),  "trace",          "--format",      "json",       "-o",
                out.string(), "--min-latency",  "2ms",           "--",         writepath(),
                "load",       "dirty-throttle", "--dirty-limit", "16M",        "--background",
                "8M",         "--flood",        "256M",          "--duration", "2s"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto items = json_lines(slurp(out));
  fs::remove(out);
  std::size_t slow = 0, throttled = 0;
  for (const auto& item : items) {
    // (Name-change calls of the load, its mkdirs and opens, are not followed off-CPU.)
    if (item["type"] != "write" && item["type"] != "fsync") continue;
    ++slow;
    ASSERT_FALSE(item["causes"].is_null()) << item.dump();
    const json& c = item["causes"];
    std::uint64_t sum = u64(c["on_cpu_ns"]) + u64(c["throttled_ns"]) + u64(c["writeback_wait_ns"]) +
                        u64(c["blocked_ns"]) + u64(c["runnable_ns"]);
    EXPECT_GE(u64(item["latency_ns"]), 2'000'000u);
    EXPECT_NEAR(static_cast<double>(sum), static_cast<double>(u64(item["latency_ns"])),
                u64(item["latency_ns"]) * 0.01)
        << item.dump();
    if (item["type"] == "write" && u64(c["throttled_ns"]) > 0) {
      ++throttled;
      ASSERT_FALSE(item["throttle_pauses"].empty()) << item.dump();
      EXPECT_GT(u64(item["throttle_pauses"][0]["limit_pages"]), 0u);
    }
  }
  EXPECT_GT(slow, 0u);
  EXPECT_GT(throttled, 0u) << "no write was seen asleep in balance_dirty_pages";
}

// record writes the raw records and nothing else; report prints the items from them, and a
// recording made with --min-latency holds only the calls at least that slow.
TEST_F(ScratchExt4, RecordWritesRawRecordsThatReportStitches) {
  fs::path saved = root_ / "recorded.wpt";
  auto r = run({tool("writepath"), "record", "-o", saved.string(), "--", tool("wp_workload"),
                "buffered-fsync", file("recorded"), "32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("recorded "), std::string::npos) << r.err;
  auto reported = run({tool("writepath"), "report", "--format", "json", saved.string()});
  ASSERT_EQ(reported.exit_code, 0) << reported.err;
  auto items = json_lines(reported.out);
  EXPECT_EQ(of_type(items, "write").size(), 32u);
  EXPECT_EQ(of_type(items, "fsync").size(), 1u);

  fs::path slow = root_ / "slow-only.wpt";
  auto s = run({tool("writepath"), "record", "--min-latency", "10s", "-o", slow.string(), "--",
                tool("wp_workload"), "buffered", file("recorded"), "8"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  auto slow_report = run({tool("writepath"), "report", "--format", "json", slow.string()});
  ASSERT_EQ(slow_report.exit_code, 0) << slow_report.err;
  auto slow_items = json_lines(slow_report.out);
  EXPECT_TRUE(of_type(slow_items, "write").empty()) << "no 4 KiB write takes 10 s";
  // The fast calls were left out of the recording itself, not only out of its report.
  auto any =
      run({tool("writepath"), "report", "--min-latency", "1ns", "--format", "json", slow.string()});
  ASSERT_EQ(any.exit_code, 0) << any.err;
  EXPECT_TRUE(of_type(json_lines(any.out), "write").empty()) << any.out;
}

// A ring buffer too small for the load: the losses are counted, the items they touched are
// marked incomplete, and one stderr line says what share was lost and what to do.
TEST_F(ScratchExt4, LostRecordsAreReportedWithTheirShareAndAdvice) {
  { std::ofstream(file("lossy")) << ""; }
  auto r = run({tool("writepath"), "trace", "--format", "json", "--buffer-size", "4K", "--file",
                file("lossy"), "--", tool("wp_workload"), "buffered", file("lossy"), "20000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto items = json_lines(r.out);
  ASSERT_FALSE(items.empty());
  const json& summary = items.back();
  ASSERT_EQ(summary["type"], "summary");
  ASSERT_GT(u64(summary["lost"]), 0u) << "a 4 KiB ring cannot hold 20000 writes";
  EXPECT_GT(u64(summary["incomplete"]), 0u) << summary.dump();
  std::size_t incomplete = 0;
  for (const auto& w : of_type(items, "write")) incomplete += w.value("incomplete", false);
  EXPECT_GT(incomplete, 0u);
  const auto warning = r.err.find("warning: lost ");
  ASSERT_NE(warning, std::string::npos) << r.err;
  const std::string line = r.err.substr(warning, r.err.find('\n', warning) - warning);
  EXPECT_NE(line.find(std::to_string(u64(summary["lost"]))), std::string::npos) << line;
  EXPECT_NE(line.find("%)"), std::string::npos) << line;
  EXPECT_NE(line.find("--buffer-size"), std::string::npos) << line;
}

// The output's file system fills up: the trace stops, says why in one line, exits 1. The same
// for the trace file of record.
TEST_F(ScratchExt4, FullOutputFileSystemEndsTheTraceWithTheReason) {
  const fs::path full = root_ / "full";
  fs::create_directories(full);
  ASSERT_TRUE(sh("mount -t tmpfs -o size=1m wp_full " + full.string()));
  struct Unmount {
    fs::path at;
    ~Unmount() { sh("umount " + at.string()); }
  } unmount{full};

  auto t = run({tool("writepath"), "trace", "--format", "json", "-o", (full / "t.jsonl").string(),
                "--", tool("wp_workload"), "buffered", file("filling"), "20000"});
  EXPECT_EQ(t.exit_code, 1) << t.err;
  EXPECT_NE(
      t.err.find("writepath: writing " + (full / "t.jsonl").string() + ": No space left on device"),
      std::string::npos)
      << t.err;
  EXPECT_EQ(t.err.find("warning"), std::string::npos) << t.err;
  fs::remove(full / "t.jsonl");

  auto r = run({tool("writepath"), "record", "-o", (full / "t.wpt").string(), "--",
                tool("wp_workload"), "buffered", file("filling"), "60000"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(
      r.err.find("writepath: writing " + (full / "t.wpt").string() + ": No space left on device"),
      std::string::npos)
      << r.err;
}

// `writepath trace | head -1`: the closed pipe ends the trace promptly with EPIPE's reason and
// a non-zero exit, not a SIGPIPE death or a hang.
TEST_F(ScratchExt4, ClosedPipeEndsTheTrace) {
  const fs::path status = root_ / "pipe.status";
  const fs::path err = root_ / "pipe.err";
  const std::string command = "timeout 120 " + tool("writepath") + " trace --format json -- " +
                              tool("wp_workload") + " buffered " + file("piped") + " 20000 2>" +
                              err.string() + " | head -1 >/dev/null; echo " + "${PIPESTATUS[0]} >" +
                              status.string();
  ASSERT_TRUE(sh("bash -c '" + command + "'"));
  const int code = std::stoi(slurp(status));
  EXPECT_EQ(code, 1) << slurp(err) << " (124: timed out, 141: killed by SIGPIPE)";
  EXPECT_NE(slurp(err).find("writing standard output: Broken pipe"), std::string::npos)
      << slurp(err);
}

TEST_F(ScratchExt4, InterruptDetachesFlushesAndSummarises) {
  // A system-wide trace stopped by SIGINT while a writer runs: exit 0, a summary, and the
  // writes seen before the signal.
  fs::path out = root_ / "interrupted.jsonl";
  { std::ofstream(file("interrupted")) << ""; }
  Background tracer({tool("writepath"), "trace", "--format", "json", "--file", file("interrupted"),
                     "-o", out.string()});
  ASSERT_TRUE(tracer.wait_attached()) << tracer.err();
  auto w = run({tool("wp_workload"), "buffered", file("interrupted"), "4"});
  ASSERT_EQ(w.exit_code, 0);
  // The writes' records are in the ring buffer before the workload returns, and the tracer
  // drains it after detaching: nothing to wait for before the signal.
  EXPECT_EQ(tracer.stop(SIGINT), 0) << tracer.err();
  auto items = json_lines(slurp(out));
  ASSERT_FALSE(items.empty());
  EXPECT_EQ(items.back()["type"], "summary");
  EXPECT_EQ(of_type(items, "write").size(), 4u);
}

TEST(Doctor, ReportsHooksAndSaysTracingCanRun) {
  auto r = run({(build_dir() / "writepath").string(), "doctor"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("tracing can run here"), std::string::npos) << r.out;
  // Per-syscall tracepoints by default: they tax other processes' syscalls least.
  EXPECT_NE(r.out.find("tracepoint syscalls:sys_enter_write"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("block:block_rq_issue"), std::string::npos) << r.out;
  // This machine restricts fentry: doctor must say so rather than claim it, and that the
  // fallback's syscall tracepoints put every syscall on the slow path.
  if (r.out.find("ok   fentry") == std::string::npos) {
    EXPECT_NE(r.out.find("fentry/fexit ("), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("syscall plan: syscall tracepoints for write/sync syscalls, other "
                         "write/sync calls"),
              std::string::npos)
        << r.out;
  }
}

// What the summary says of the plan's syscall tracepoints is what the kernel says the tracer is
// attached to: wp_attached_hooks, run as the traced command once the hooks are in, asks it
// (BPF_TASK_FD_QUERY on each of the tracer's fds).
TEST(Doctor, TheSummaryNamesTheSyscallTracepointsTheKernelHasAttached) {
  WP_REQUIRE_ROOT();
  const fs::path out =
      fs::temp_directory_path() / ("wp_attached_" + std::to_string(::getpid()) + ".jsonl");
  auto r = run({(build_dir() / "writepath").string(), "trace", "--format", "json", "-o",
                out.string(), "--", (build_dir() / "wp_attached_hooks").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> syscall_tracepoints;
  bool listed = false;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("attachments ", 0) == 0) listed = true;
    if ((line.rfind("tracepoint sys_e", 0) == 0 || line.rfind("raw_tracepoint sys_e", 0) == 0))
      syscall_tracepoints.push_back(line);
  }
  ASSERT_TRUE(listed) << r.out << r.err;
  auto summary = of_type(json_lines(slurp(out)), "summary");
  fs::remove(out);
  ASSERT_EQ(summary.size(), 1u);
  const json& slow = summary[0]["slow_syscall_path"];
  if (syscall_tracepoints.empty()) {
    EXPECT_TRUE(slow.is_null()) << slow.dump() << "\n" << r.out;
    return;
  }
  ASSERT_TRUE(slow.is_string()) << r.out;
  EXPECT_NE(slow.get<std::string>().find("write/sync syscalls"), std::string::npos) << slow;
  // write(2)'s own tracepoint, or the raw pair where tracefs is missing.
  const auto has = [&](const char* line) {
    return std::find(syscall_tracepoints.begin(), syscall_tracepoints.end(), line) !=
           syscall_tracepoints.end();
  };
  EXPECT_TRUE(has("tracepoint sys_enter_write") || has("raw_tracepoint sys_enter")) << r.out;
}

// ---- bad input: one clear line, the contract's exit code -----------------------------------

TEST(BadInput, UnknownFlagIsUsageError) {
  auto r = run({(build_dir() / "writepath").string(), "trace", "--no-such-flag"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--no-such-flag"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(BadInput, BadDurationIsUsageError) {
  auto r = run({(build_dir() / "writepath").string(), "trace", "--min-latency", "fast"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(line_count(r.err), 1) << r.err;
}

TEST(BadInput, MissingProcessAndDeviceAreUsageErrors) {
  auto pid = run({(build_dir() / "writepath").string(), "trace", "-p", "999999999"});
  EXPECT_EQ(pid.exit_code, 2);
  EXPECT_EQ(line_count(pid.err), 1) << pid.err;
  auto dev = run({(build_dir() / "writepath").string(), "trace", "--dev", "nosuchdisk"});
  EXPECT_EQ(dev.exit_code, 2);
  EXPECT_NE(dev.err.find("nosuchdisk"), std::string::npos) << dev.err;
}

TEST(BadInput, NonRootIsRuntimeFailure) {
  WP_REQUIRE_ROOT();  // to drop to another user
  auto r = run({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                (build_dir() / "writepath").string(), "trace", "-d", "1s"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("root"), std::string::npos) << r.err;
}

}  // namespace
