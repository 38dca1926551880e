// SPDX-License-Identifier: Apache-2.0
// What the VM tests read: the guest's console log split into its runs (guest-tests.sh prints
// each between markers), the guest's WP-INFO facts, the JSON lines of a run, the NVMe
// requests' checks, and VmLog, the fixture every test of the log derives from.
//   WRITEPATH_VM_LOG           the console log (required; the tests skip without it)
//   WRITEPATH_VM_GUEST_BINARY  the writepath file packed into the guest's initramfs
//   WRITEPATH_BUILD            the host build directory (writepath, bpf/writepath.bpf.o)
#pragma once

#include <gtest/gtest.h>
#include <stdio.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "oracle.h"

namespace wp::vm_test {

namespace fs = std::filesystem;
using nlohmann::json;

// The emulated NVMe namespace: the first dynamic block major, minor 0.
constexpr const char* kNvmeDev = "259:0";
// NVMe I/O command set opcodes.
constexpr int kNvmeFlush = 0;
constexpr int kNvmeWrite = 1;

inline std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string command_output(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

inline bool starts_with(const std::string& s, const std::string& prefix) {
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

inline Console parse_console(const std::string& text) {
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

// Parsed once for every test file.
inline const Console& console() {
  static const Console parsed = parse_console(slurp(env("WRITEPATH_VM_LOG")));
  return parsed;
}

// The guest kernel's release, from "WP-GUEST-BEGIN kernel=6.1.0-57-amd64 uptime=…".
inline std::string guest_kernel() {
  const std::string key = "WP-GUEST-BEGIN kernel=";
  const auto at = console().text.find(key);
  if (at == std::string::npos) return "";
  const auto from = at + key.size();
  return console().text.substr(from, console().text.find_first_of(" \r\n", from) - from);
}

// The value after "WP-INFO <key> ", e.g. info("sha256 writepath").
inline std::string info(const std::string& key) {
  for (const auto& line : console().info)
    if (starts_with(line, key + " ")) return line.substr(key.size() + 1);
  return "";
}

inline std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
}

inline std::vector<json> json_lines(const GuestRun& run) {
  std::vector<json> items;
  for (const auto& line : run.out)
    if (!line.empty() && line[0] == '{') items.push_back(json::parse(line));
  return items;
}

inline std::vector<json> of_type(const std::vector<json>& items, const std::string& type,
                                 const std::string& comm = "wp_workload") {
  std::vector<json> out;
  for (const auto& item : items)
    if (item["type"] == type && (type == "summary" || item["comm"] == comm)) out.push_back(item);
  return out;
}

inline std::uint64_t u64(const json& v) {
  return v.get<std::uint64_t>();
}

inline bool is_nvme_write(const json& rq) {
  return rq["dev"] == kNvmeDev && rq["rwbs"].get<std::string>().find('W') != std::string::npos &&
         u64(rq["bytes"]) > 0;
}

inline bool is_nvme_flush(const json& rq) {
  return rq["dev"] == kNvmeDev && starts_with(rq["rwbs"].get<std::string>(), "FF");
}

// The earliest time the block layer knew the request: its bio's queue, its insert, its issue.
inline std::uint64_t request_start_ns(const json& rq) {
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
inline void expect_nvme_write_command(const json& rq) {
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
inline int expect_nvme_write_commands(const std::vector<json>& timelines) {
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

namespace oracle = wp::testing::oracle;

// The workload's log of its calls, as the guest printed it.
inline oracle::Truth truth_of(const GuestRun& printed) {
  return oracle::read_truth_text(joined(printed.out));
}

}  // namespace wp::vm_test
