// SPDX-License-Identifier: Apache-2.0
// VM tests, host side: the checks on what writepath printed inside a Debian guest (bookworm's
// 6.1 or its 6.12; tests/vm/vm-test.sh boots each) with an
// emulated NVMe disk and working fentry (tests/vm/run.sh boots it, tests/vm/guest-tests.sh
// runs there). The guest only prints; every fact is asserted here, on its console log.
//   WRITEPATH_VM_LOG           the console log (required; the tests skip without it)
//   WRITEPATH_VM_GUEST_BINARY  the writepath file packed into the guest's initramfs
//   WRITEPATH_BUILD            the host build directory (writepath, bpf/writepath.bpf.o)
#include <gtest/gtest.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "oracle.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The emulated NVMe namespace: the first dynamic block major, minor 0.
constexpr const char* kNvmeDev = "259:0";
// NVMe I/O command set opcodes.
constexpr int kNvmeFlush = 0;
constexpr int kNvmeWrite = 1;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string command_output(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// One command the guest ran: its stdout lines, stderr lines and exit code.
struct GuestRun {
  std::vector<std::string> out;
  std::vector<std::string> err;
  int rc = -1;
};

// The console log, split by the guest's markers (see guest-tests.sh).
struct Console {
  std::map<std::string, GuestRun> runs;
  std::vector<std::string> info;  // WP-INFO lines, without the marker
  bool finished = false;          // WP-GUEST-END rc=0
  std::string text;
};

Console parse_console(const std::string& text) {
  Console console;
  console.text = text;
  std::istringstream in(text);
  std::string line;
  std::string inside;  // the run whose stdout is being read
  while (std::getline(in, line)) {
    // The serial console ends lines with \r\n.
    while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.pop_back();
    if (!inside.empty()) {
      if (line == "WP-END " + inside)
        inside.clear();
      else
        console.runs[inside].out.push_back(line);
      continue;
    }
    std::istringstream words(line);
    std::string marker, name;
    words >> marker >> name;
    if (marker == "WP-OUT") {
      inside = name;
      console.runs[name];
    } else if (marker == "WP-ERR") {
      console.runs[name].err.push_back(line.size() > marker.size() + name.size() + 2
                                           ? line.substr(marker.size() + name.size() + 2)
                                           : "");
    } else if (marker == "WP-RC") {
      words >> console.runs[name].rc;
    } else if (marker == "WP-INFO") {
      console.info.push_back(line.substr(marker.size() + 1));
    } else if (line == "WP-GUEST-END rc=0" || starts_with(line, "WP-GUEST-END rc=0 ")) {
      console.finished = true;
    }
  }
  return console;
}

const Console& console() {
  static const Console parsed = parse_console(slurp(env("WRITEPATH_VM_LOG")));
  return parsed;
}

// The guest kernel's release, from "WP-GUEST-BEGIN kernel=6.1.0-57-amd64 uptime=…".
std::string guest_kernel() {
  const std::string key = "WP-GUEST-BEGIN kernel=";
  const auto at = console().text.find(key);
  if (at == std::string::npos) return "";
  const auto from = at + key.size();
  return console().text.substr(from, console().text.find_first_of(" \r\n", from) - from);
}

// The value after "WP-INFO <key> ", e.g. info("sha256 writepath").
std::string info(const std::string& key) {
  for (const auto& line : console().info)
    if (starts_with(line, key + " ")) return line.substr(key.size() + 1);
  return "";
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
}

std::vector<json> json_lines(const GuestRun& run) {
  std::vector<json> items;
  for (const auto& line : run.out)
    if (!line.empty() && line[0] == '{') items.push_back(json::parse(line));
  return items;
}

std::vector<json> of_type(const std::vector<json>& items, const std::string& type,
                          const std::string& comm = "wp_workload") {
  std::vector<json> out;
  for (const auto& item : items)
    if (item["type"] == type && (type == "summary" || item["comm"] == comm)) out.push_back(item);
  return out;
}

std::uint64_t u64(const json& v) {
  return v.get<std::uint64_t>();
}

bool is_nvme_write(const json& rq) {
  return rq["dev"] == kNvmeDev && rq["rwbs"].get<std::string>().find('W') != std::string::npos &&
         u64(rq["bytes"]) > 0;
}

bool is_nvme_flush(const json& rq) {
  return rq["dev"] == kNvmeDev && starts_with(rq["rwbs"].get<std::string>(), "FF");
}

// The earliest time the block layer knew the request: its bio's queue, its insert, its issue.
std::uint64_t request_start_ns(const json& rq) {
  for (const char* key : {"queue_ns", "insert_ns", "issue_ns"})
    if (!rq[key].is_null()) return u64(rq[key]);
  return 0;
}

// A write request on the NVMe disk carries its command: an I/O queue (qid 0 is the admin
// queue), a command id, success, and submit/complete inside the request's lifetime.
// Not [issue_ns, complete_ns]: nvme_queue_rq() builds the command (nvme_setup_cmd fires)
// before it starts the request (blk_mq_start_request fires block_rq_issue), so the submit is
// a few microseconds before the issue. It is after the request was queued, and the command
// completes (nvme_complete_rq) before the block layer completes the request.
void expect_nvme_write_command(const json& rq) {
  SCOPED_TRACE(rq.dump());
  const json& nvme = rq["nvme"];
  ASSERT_TRUE(nvme.is_object()) << "write request without its NVMe command";
  EXPECT_GT(u64(nvme["qid"]), 0u);
  EXPECT_TRUE(nvme["cid"].is_number_unsigned());
  EXPECT_EQ(nvme["opcode"], kNvmeWrite);
  EXPECT_EQ(nvme["status"], 0);
  ASSERT_FALSE(rq["issue_ns"].is_null());
  ASSERT_FALSE(rq["complete_ns"].is_null());
  ASSERT_FALSE(nvme["submit_ns"].is_null()) << "NVMe command without its submit";
  ASSERT_FALSE(nvme["complete_ns"].is_null()) << "NVMe command without its completion";
  EXPECT_GE(u64(nvme["submit_ns"]), request_start_ns(rq));
  EXPECT_LE(u64(nvme["submit_ns"]), u64(nvme["complete_ns"]));
  EXPECT_GE(u64(nvme["complete_ns"]), u64(rq["issue_ns"]));
  EXPECT_LE(u64(nvme["complete_ns"]), u64(rq["complete_ns"]));
}

// Checks every NVMe write request of these timelines; returns how many there were.
int expect_nvme_write_commands(const std::vector<json>& timelines) {
  int checked = 0;
  for (const auto& item : timelines)
    for (const auto& rq : item["requests"])
      if (is_nvme_write(rq)) {
        expect_nvme_write_command(rq);
        ++checked;
      }
  return checked;
}

class VmLog : public ::testing::Test {
 protected:
  void SetUp() override {
    if (env("WRITEPATH_VM_LOG").empty()) GTEST_SKIP() << "WRITEPATH_VM_LOG is not set";
    ASSERT_TRUE(fs::exists(env("WRITEPATH_VM_LOG"))) << env("WRITEPATH_VM_LOG");
  }

  // The run NAME, which must have happened.
  static const GuestRun& run(const std::string& name) {
    static const GuestRun missing;
    auto it = console().runs.find(name);
    if (it == console().runs.end()) {
      ADD_FAILURE() << "the guest did not run " << name;
      return missing;
    }
    return it->second;
  }
};

TEST_F(VmLog, GuestRanEveryStepToTheEnd) {
  EXPECT_TRUE(console().finished) << console().text;
  for (const char* name : {"version", "doctor", "buffered-fsync", "buffered-fsync-no-fentry",
                           "direct", "fua", "dm-fsync", "dm-direct", "dm-dev-dm", "dm-dev-nvme"})
    EXPECT_EQ(console().runs.count(name), 1u) << name;
}

// QEMU's nvme with write-cache=on: a volatile write cache (so FLUSH is real) and FUA.
TEST_F(VmLog, NvmeNamespaceHasAVolatileWriteCacheAndFua) {
  EXPECT_EQ(info("dev"), "259:0 write_cache write back fua 1");
  EXPECT_NE(info("mount").find("/dev/nvme0n1 /mnt ext4"), std::string::npos) << info("mount");
  EXPECT_NE(info("btf").find("nvme_core"), std::string::npos) << info("btf");
}

// CO-RE: the BPF object the host built against its own kernel's BTF ran on the guest's unchanged.
TEST_F(VmLog, GuestRanTheHostBuildWithTheSameBpfObject) {
  fs::path guest_binary = env("WRITEPATH_VM_GUEST_BINARY");
  fs::path build = env("WRITEPATH_BUILD");
  if (guest_binary.empty() || build.empty())
    GTEST_SKIP() << "WRITEPATH_VM_GUEST_BINARY or WRITEPATH_BUILD is not set";

  std::string sha = command_output("sha256sum '" + guest_binary.string() + "'");
  EXPECT_EQ(info("sha256 writepath"), sha.substr(0, sha.find(' ')))
      << "the guest ran another binary than " << guest_binary;

  EXPECT_EQ(run("version").rc, 0);
  std::string host_version = command_output("'" + (build / "writepath").string() + "' --version");
  EXPECT_EQ(joined(run("version").out), host_version);

  std::string bpf_object = slurp(build / "bpf" / "writepath.bpf.o");
  ASSERT_GT(bpf_object.size(), 1000u);
  EXPECT_NE(slurp(guest_binary).find(bpf_object), std::string::npos)
      << "the guest's writepath does not embed " << build / "bpf" / "writepath.bpf.o";
  EXPECT_NE(slurp(build / "writepath").find(bpf_object), std::string::npos)
      << "the host's writepath does not embed " << build / "bpf" / "writepath.bpf.o";
}

// The same static binary, run on the host kernel before the checks, plans and attaches there.
TEST_F(VmLog, TheGuestsBinaryAlsoTracesOnTheHostKernel) {
  fs::path host_doctor = env("WRITEPATH_VM_HOST_DOCTOR");
  if (host_doctor.empty()) GTEST_SKIP() << "WRITEPATH_VM_HOST_DOCTOR is not set";
  std::string text = slurp(host_doctor);
  EXPECT_NE(text.find("tracing can run here"), std::string::npos) << text;
  const std::string guest = guest_kernel();
  ASSERT_FALSE(guest.empty()) << "no WP-GUEST-BEGIN line";
  EXPECT_EQ(text.find("kernel " + guest), std::string::npos) << "not run on the host: " << text;
}

TEST_F(VmLog, DoctorSaysFentryWorksAndTheWritePathUsesIt) {
  const GuestRun& doctor = run("doctor");
  std::string text = joined(doctor.out);
  EXPECT_EQ(doctor.rc, 0) << text << joined(doctor.err);
  EXPECT_NE(text.find("tracing can run here"), std::string::npos) << text;
  bool fentry_ok = false, syscalls_on_fentry = false, nvme_submit = false, nvme_complete = false;
  for (const auto& line : doctor.out) {
    if (starts_with(line, "  ok   fentry")) fentry_ok = true;
    if (line.find("write/sync syscalls") != std::string::npos &&
        line.find("fentry") != std::string::npos)
      syscalls_on_fentry = true;
    if (starts_with(line, "  ok   nvme submit")) nvme_submit = true;
    if (starts_with(line, "  ok   nvme complete")) nvme_complete = true;
  }
  EXPECT_TRUE(fentry_ok) << text;
  EXPECT_TRUE(syscalls_on_fentry) << text;
  EXPECT_TRUE(nvme_submit) << text;
  EXPECT_TRUE(nvme_complete) << text;
}

// ---- buffered writes + fsync, on fentry and on the tracepoint fallback ----------------------

class BufferedFsyncOnNvme : public VmLog, public ::testing::WithParamInterface<const char*> {};

TEST_P(BufferedFsyncOnNvme, TracesAllWritesAndOneFsync) {
  const GuestRun& r = run(GetParam());
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  auto items = json_lines(r);
  EXPECT_EQ(of_type(items, "write").size(), 16u);
  EXPECT_EQ(of_type(items, "fsync").size(), 1u);
  auto summary = of_type(items, "summary");
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(u64(summary[0]["lost"]), 0u);
}

TEST_P(BufferedFsyncOnNvme, EveryWriteRequestCarriesItsNvmeCommand) {
  const GuestRun& r = run(GetParam());
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  auto items = json_lines(r);
  auto timelines = of_type(items, "write");
  for (const auto& fsync : of_type(items, "fsync")) timelines.push_back(fsync);
  EXPECT_GT(expect_nvme_write_commands(timelines), 0) << "no write request on " << kNvmeDev;
}

TEST_P(BufferedFsyncOnNvme, EveryFlushCarriesAnNvmeFlushCommand) {
  const GuestRun& r = run(GetParam());
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  int flushes = 0;
  for (const auto& fsync : of_type(json_lines(r), "fsync"))
    for (const auto& rq : fsync["flushes"])
      if (is_nvme_flush(rq)) {
        SCOPED_TRACE(rq.dump());
        ++flushes;
        ASSERT_TRUE(rq["nvme"].is_object()) << "flush request without its NVMe command";
        EXPECT_EQ(rq["nvme"]["opcode"], kNvmeFlush);
        EXPECT_EQ(rq["nvme"]["status"], 0);
      }
  EXPECT_GT(flushes, 0) << "no flush on " << kNvmeDev;
}

// The fsync wrote the data with NVMe writes and flushed the cache with an NVMe flush, both
// done before it returned.
TEST_P(BufferedFsyncOnNvme, FsyncHasAnNvmeWriteAndAnNvmeFlushBeforeItReturns) {
  const GuestRun& r = run(GetParam());
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  auto fsyncs = of_type(json_lines(r), "fsync");
  ASSERT_EQ(fsyncs.size(), 1u);
  const json& fsync = fsyncs[0];
  auto done_in_time = [&](const json& rq, int opcode) {
    return rq["nvme"].is_object() && rq["nvme"]["opcode"] == opcode &&
           !rq["nvme"]["complete_ns"].is_null() &&
           u64(rq["nvme"]["complete_ns"]) <= u64(fsync["end_ns"]);
  };
  bool write = false, flush = false;
  for (const auto& rq : fsync["requests"]) write = write || done_in_time(rq, kNvmeWrite);
  for (const auto& rq : fsync["flushes"]) flush = flush || done_in_time(rq, kNvmeFlush);
  EXPECT_TRUE(write) << fsync.dump();
  EXPECT_TRUE(flush) << fsync.dump();
}

TEST_P(BufferedFsyncOnNvme, WritesAreDurableByTheFsync) {
  const GuestRun& r = run(GetParam());
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  auto items = json_lines(r);
  auto fsyncs = of_type(items, "fsync");
  ASSERT_EQ(fsyncs.size(), 1u);
  for (const auto& w : of_type(items, "write")) {
    EXPECT_EQ(w["dev"], kNvmeDev);
    EXPECT_EQ(w["state"], "durable") << w.dump();
    ASSERT_FALSE(w["durable_ns"].is_null()) << w.dump();
    EXPECT_LE(u64(w["durable_ns"]), u64(fsyncs[0]["end_ns"]));
  }
}

INSTANTIATE_TEST_SUITE_P(VmLog, BufferedFsyncOnNvme,
                         ::testing::Values("buffered-fsync", "buffered-fsync-no-fentry"),
                         [](const auto& info) {
                           return std::string(info.param) == "buffered-fsync" ? "Fentry"
                                                                              : "NoFentry";
                         });

// ---- O_DIRECT and FUA -----------------------------------------------------------------------

// --min-latency with stacks on (the default): the off-CPU programs pass the guest kernel's
// verifier and the slow fsyncs are traced.
TEST_F(VmLog, SlowCallStacksLoadAndTraceOnTheGuestKernel) {
  const GuestRun& r = run("slow-fsync-stacks");
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  EXPECT_EQ(of_type(json_lines(r), "fsync").size(), 8u) << joined(r.out);
}

TEST_F(VmLog, DirectWritesAreOneNvmeWriteEachDoneInsideTheSyscall) {
  const GuestRun& r = run("direct");
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  auto writes = of_type(json_lines(r), "write");
  ASSERT_EQ(writes.size(), 16u);
  EXPECT_EQ(expect_nvme_write_commands(writes), 16);
  for (const auto& w : writes) {
    SCOPED_TRACE(w.dump());
    EXPECT_EQ(w["direct"], true);
    EXPECT_EQ(u64(w["pages_dirtied"]), 0u);
    ASSERT_EQ(w["requests"].size(), 1u);
    const json& nvme = w["requests"][0]["nvme"];
    ASSERT_TRUE(nvme.is_object());
    EXPECT_GE(u64(nvme["submit_ns"]), u64(w["start_ns"]));
    EXPECT_LE(u64(nvme["complete_ns"]), u64(w["end_ns"]));
  }
}

// O_DIRECT overwrites on a sync mount (guest-tests.sh): FUA requests and FUA NVMe writes,
// durable without a flush.
TEST_F(VmLog, DsyncDirectOverwritesAreFuaWrites) {
  const GuestRun& r = run("fua");
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  std::vector<json> writes;
  for (const auto& w : of_type(json_lines(r), "write", "dd"))
    if (w["direct"] == true) writes.push_back(w);
  ASSERT_EQ(writes.size(), 4u);
  EXPECT_EQ(expect_nvme_write_commands(writes), 4);
  for (const auto& w : writes) {
    SCOPED_TRACE(w.dump());
    ASSERT_EQ(w["requests"].size(), 1u);
    const json& rq = w["requests"][0];
    EXPECT_EQ(rq["fua"], true);
    EXPECT_NE(rq["rwbs"].get<std::string>().find('F'), std::string::npos);
    ASSERT_TRUE(rq["nvme"].is_object());
    EXPECT_EQ(rq["nvme"]["fua"], true);
    EXPECT_EQ(w["state"], "durable");
    EXPECT_EQ(w["durable_via"], "fua");
  }
}

// ---- ext4 on dm-linear over the namespace's second half (guest-tests.sh) --------------------

// The dm device guest-tests.sh made ("254:0"), built on the NVMe namespace.
std::string dm_dev() {
  const std::string line = info("dm");
  return line.substr(0, line.find(' '));
}

// Where the dm-linear table maps the device: from this sector of nvme0n1 on.
constexpr std::uint64_t kDmLinearStart = 524288;

TEST_F(VmLog, DmLinearDeviceIsStackedOnTheNvmeNamespace) {
  // device-mapper's major is dynamic (253 or 254, as modules registered).
  EXPECT_FALSE(dm_dev().empty()) << info("dm");
  EXPECT_NE(dm_dev(), kNvmeDev);
  EXPECT_NE(info("dm").find("slaves nvme0n1"), std::string::npos) << info("dm");
  EXPECT_NE(info("dm-mount").find("/dev/dm-0 /mnt ext4"), std::string::npos) << info("dm-mount");
}

// Each pwrite's item is on the device stat() reports (the dm device); its data requests and
// its fsync's flushes are the ones that reached the NVMe disk through the remap, each once.
TEST_F(VmLog, FsyncOnDmLinearHasTheNvmeRequestsAndFlushes) {
  const GuestRun& r = run("dm-fsync");
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  auto items = json_lines(r);
  auto writes = of_type(items, "write");
  auto fsyncs = of_type(items, "fsync");
  ASSERT_EQ(writes.size(), 8u);
  ASSERT_EQ(fsyncs.size(), 8u);
  auto summary = of_type(items, "summary");
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(u64(summary[0]["lost"]), 0u);
  for (std::size_t i = 0; i < writes.size(); ++i) {
    const json& w = writes[i];
    SCOPED_TRACE(w.dump());
    EXPECT_EQ(w["dev"], dm_dev());
    EXPECT_EQ(w["state"], "durable");
    ASSERT_FALSE(w["durable_ns"].is_null());
    EXPECT_LE(u64(w["durable_ns"]), u64(fsyncs[i]["end_ns"]));
    ASSERT_FALSE(w["requests"].empty());
    for (const auto& rq : w["requests"]) {
      EXPECT_EQ(rq["dev"], kNvmeDev) << "a request not on the leaf disk";
      EXPECT_GE(u64(rq["sector"]), kDmLinearStart) << "not remapped into the dm table's range";
    }
  }
  for (const auto& fsync : fsyncs) {
    SCOPED_TRACE(fsync.dump());
    EXPECT_EQ(fsync["dev"], dm_dev());
    EXPECT_GT(expect_nvme_write_commands({fsync}), 0);
    bool nvme_flush = false;
    for (const auto& rq : fsync["flushes"]) {
      EXPECT_EQ(rq["dev"], kNvmeDev);
      nvme_flush = nvme_flush || (is_nvme_flush(rq) && rq["nvme"].is_object() &&
                                  rq["nvme"]["opcode"] == kNvmeFlush);
    }
    EXPECT_TRUE(nvme_flush) << "no NVMe flush command";
  }
}

// O_DIRECT on dm-linear: the bio queued on the dm device and its clone on the namespace are
// one write; the item has the namespace's request only, once.
TEST_F(VmLog, DirectWritesOnDmLinearHaveTheirNvmeRequestOnce) {
  const GuestRun& r = run("dm-direct");
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  auto writes = of_type(json_lines(r), "write");
  ASSERT_EQ(writes.size(), 8u);
  EXPECT_EQ(expect_nvme_write_commands(writes), 8);
  for (const auto& w : writes) {
    SCOPED_TRACE(w.dump());
    EXPECT_EQ(w["dev"], dm_dev());
    ASSERT_EQ(w["requests"].size(), 1u);
    EXPECT_EQ(w["requests"][0]["dev"], kNvmeDev);
    EXPECT_EQ(u64(w["requests"][0]["bytes"]), 4096u);
    EXPECT_GE(u64(w["requests"][0]["sector"]), kDmLinearStart);
  }
}

// The traced flush requests against the disk's own count of completed flushes over the run.
// Tolerance: the disk may also see a flush the run's items do not own (a periodic jbd2 commit
// landing in the window, 5 s apart), so at most one more; never fewer.
TEST_F(VmLog, DmFsyncFlushesMatchTheNvmeDiskstatsFlushCount) {
  const GuestRun& r = run("dm-fsync");
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  const std::string before = info("dm-flushes-before"), after = info("dm-flushes-after");
  ASSERT_FALSE(before.empty());
  ASSERT_FALSE(after.empty());
  const long delta = std::stol(after) - std::stol(before);
  std::set<std::pair<std::uint64_t, std::uint64_t>> flushes;  // (issue, complete): once each
  for (const auto& fsync : of_type(json_lines(r), "fsync"))
    for (const auto& rq : fsync["flushes"])
      if (is_nvme_flush(rq) && !rq["issue_ns"].is_null() && !rq["complete_ns"].is_null())
        flushes.emplace(u64(rq["issue_ns"]), u64(rq["complete_ns"]));
  const long traced = static_cast<long>(flushes.size());
  std::printf("dm-fsync: %ld flush requests traced, nvme0n1 diskstats flush delta %ld\n", traced,
              delta);
  EXPECT_GE(delta, traced);
  EXPECT_LE(delta, traced + 1);
}

// --dev takes the dm device (what stat() reports) or the disk under it: both select the
// writes, their requests and flushes.
class DmDevFilter : public VmLog, public ::testing::WithParamInterface<const char*> {};

TEST_P(DmDevFilter, SelectsTheWritesWithTheirRequests) {
  const GuestRun& r = run(GetParam());
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  auto items = json_lines(r);
  auto writes = of_type(items, "write");
  auto fsyncs = of_type(items, "fsync");
  ASSERT_EQ(writes.size(), 4u);
  ASSERT_EQ(fsyncs.size(), 4u);
  for (const auto& w : writes) {
    SCOPED_TRACE(w.dump());
    EXPECT_EQ(w["dev"], dm_dev());
    EXPECT_EQ(w["state"], "durable");
    EXPECT_FALSE(w["requests"].empty());
  }
  for (const auto& fsync : fsyncs) {
    SCOPED_TRACE(fsync.dump());
    EXPECT_FALSE(fsync["flushes"].empty());
    EXPECT_FALSE(fsync["journal_commits"].empty()) << "the dm-keyed jbd2 commit was filtered out";
  }
}

INSTANTIATE_TEST_SUITE_P(VmLog, DmDevFilter, ::testing::Values("dm-dev-dm", "dm-dev-nvme"),
                         [](const auto& info) {
                           return std::string(info.param) == "dm-dev-dm" ? "DmDevice" : "NvmeDisk";
                         });

// The oracle's rounds in the guest (guest-tests.sh `oracle`): Debian's kernel, the NVMe
// disk with its volatile cache and FUA, fentry. Each holds the trace's items of the file to the
// workload's own log of its calls and return codes, to the disk's diskstats while it ran, and
// where the kernel has cachestat(2) (6.5+: on 6.12, not on 6.1) to the page cache's state.
class OracleRoundOnNvme : public VmLog, public ::testing::WithParamInterface<const char*> {};

namespace oracle = wp::testing::oracle;

// The workload's log of its calls, as the guest printed it.
oracle::Truth truth_of(const GuestRun& printed) {
  return oracle::read_truth_text(joined(printed.out));
}

TEST_P(OracleRoundOnNvme, EveryVerdictHoldsAgainstTheWorkloadsOwnTruth) {
  const std::string name = std::string("oracle-") + GetParam();
  const GuestRun& traced = run(name);
  ASSERT_EQ(traced.rc, 0) << joined(traced.err);
  const oracle::Truth truth = truth_of(run(name + "-truth"));
  ASSERT_FALSE(truth.writes.empty() && truth.stores.empty()) << joined(run(name + "-truth").out);
  const std::vector<json> items = json_lines(traced);
  ASSERT_FALSE(items.empty());
  const json& summary = items.back();
  ASSERT_EQ(summary["type"], "summary");
  ASSERT_EQ(summary["lost"], 0) << summary.dump();
  const oracle::FileItems f = oracle::items_of(items, "/mnt/o-" + std::string(GetParam()));
  std::vector<std::string> v;
  auto add = [&v](const char* check, const std::vector<std::string>& found) {
    for (const auto& line : found) v.push_back(std::string(check) + ": " + line);
  };
  if (truth.stores.empty())
    add("calls", oracle::check_calls(truth, f));
  else if (f.writes.empty())
    v.push_back("calls: no mmap item");
  add("pages", oracle::check_pages(f));
  add("times", oracle::check_times(f));
  add("sync contract", oracle::check_sync_contract(f));
  add("page cache", oracle::check_page_cache(truth, f));  // 6.5+ only: cachestat(2)
  add("incomplete", oracle::check_incomplete(items, summary));
  // The disk did at least this while the workload ran; the trace ran longer (no upper bound).
  ASSERT_TRUE(truth.disk_start && truth.disk_end);
  const wp::testing::DiskCounters inner{
      truth.disk_end->writes - truth.disk_start->writes,
      truth.disk_end->write_sectors - truth.disk_start->write_sectors,
      truth.disk_end->flushes - truth.disk_start->flushes};
  const wp::testing::DiskCounters unbounded{~0ull, ~0ull, ~0ull};
  add("diskstats", oracle::check_disk_totals(summary, kNvmeDev, inner, unbounded));
  std::string report;
  for (const auto& line : v) report += "\n  " + line;
  EXPECT_TRUE(v.empty()) << name << ": " << f.writes.size() << " writes, " << f.syncs.size()
                         << " syncs" << report;
  EXPECT_FALSE(f.syncs.empty());
}

INSTANTIATE_TEST_SUITE_P(VmLog, OracleRoundOnNvme,
                         ::testing::Values("pwrite-4k", "pwrite-64k-random", "write-8k",
                                           "direct-16k", "mmap-4k"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// Lost writes (guest-tests.sh `lost_round`): ext4 on a dm device whose table was switched,
// after the file was made and committed, to one that fails every write with EIO (dm-flakey's
// error_writes; the error target). The workload's 16 buffered 64 KiB writes succeed and its
// fsync returns EIO: every write is lost with EIO and the request that failed, the fsync lists
// exactly those, the summary counts them, and the kernel log reports failed writeback of the
// very inode the workload wrote.
class LostWritesOnDm : public VmLog, public ::testing::WithParamInterface<const char*> {};

TEST_P(LostWritesOnDm, EveryWriteOfTheFailedWritebackIsLostAndListedByTheFsync) {
  const std::string round = GetParam();
  const GuestRun& traced = run("lost-" + round);
  ASSERT_EQ(traced.rc, 0) << joined(traced.err);
  const oracle::Truth truth = truth_of(run("lost-" + round + "-truth"));
  ASSERT_EQ(truth.writes.size(), 16u) << joined(run("lost-" + round + "-truth").out);
  for (const oracle::Call& w : truth.writes) ASSERT_EQ(w.ret, 65536);
  ASSERT_EQ(truth.syncs.size(), 1u);
  ASSERT_EQ(truth.syncs[0].ret, -5) << "the fsync did not fail with EIO";

  const std::vector<json> items = json_lines(traced);
  ASSERT_FALSE(items.empty());
  const json& summary = items.back();
  ASSERT_EQ(summary["type"], "summary");
  ASSERT_EQ(summary["lost"], 0) << summary.dump();
  const oracle::FileItems f = oracle::items_of(items, "/mnt/lost");
  const std::vector<std::string> calls = oracle::check_calls(truth, f);
  EXPECT_TRUE(calls.empty()) << joined(calls);
  std::set<std::uint64_t> lost;
  for (const json& w : f.writes) {
    SCOPED_TRACE(w.dump());
    EXPECT_EQ(w["state"], "lost");
    EXPECT_EQ(w["lost_error"], "EIO");
    EXPECT_FALSE(w["requests"].empty());
    lost.insert(u64(w["id"]));
  }
  ASSERT_EQ(f.syncs.size(), 1u);
  EXPECT_EQ(f.syncs[0]["error"], "EIO");
  std::set<std::uint64_t> listed;
  for (const json& id : f.syncs[0]["lost_writes"]) listed.insert(u64(id));
  EXPECT_EQ(listed, lost);
  EXPECT_EQ(u64(summary["lost_writes"]), 16u);
  EXPECT_EQ(u64(summary["lost_bytes"]), 16u * 65536);

  // The kernel's own word: ext4's end_io names the inode whose writeback failed.
  const std::string ino = info("lost-ino " + round);
  ASSERT_FALSE(ino.empty());
  const std::string log = joined(run("lost-" + round + "-kernel-log").out);
  EXPECT_NE(log.find("writing to inode " + ino + " "), std::string::npos) << log;
}

INSTANTIATE_TEST_SUITE_P(VmLog, LostWritesOnDm, ::testing::Values("flakey", "error"),
                         [](const auto& info) {
                           return std::string(info.param) == "flakey" ? "FlakeyErrorWrites"
                                                                      : "ErrorTarget";
                         });

}  // namespace
