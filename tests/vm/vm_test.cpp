// SPDX-License-Identifier: Apache-2.0
// VM tests, host side: the checks on what writepath printed inside a Debian guest (bookworm's
// 6.1 or its 6.12; tests/vm/vm-test.sh boots each) with an
// emulated NVMe disk and working fentry (tests/vm/run.sh boots it, tests/vm/guest-tests.sh
// runs there). The guest only prints; every fact is asserted here, on its console log.
// Here: the guest, the NVMe disk, buffered writes with fsync on fentry and on the tracepoint
// fallback, O_DIRECT and FUA, and the oracle's rounds; ext4 on dm: vm_dm_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "vm_console.h"

namespace {

using namespace wp::vm_test;

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

// ---- the trampoline plan: no syscall tracepoint, every call still traced -------------------

// What the kernel says a run's tracer is attached to (wp_attached_hooks' lines).
struct Attachments {
  std::vector<std::string> syscall_tracepoints;  // syscalls:* and raw_syscalls:* attachments
  int tracing_links = 0;                         // fentry/fexit (link_type tracing)
  int total = -1;                                // its "attachments N" line
};

Attachments attachments_of(const GuestRun& r) {
  Attachments a;
  for (const auto& line : r.out) {
    if ((starts_with(line, "tracepoint ") || starts_with(line, "raw_tracepoint ")) &&
        line.find(" sys_e") != std::string::npos)
      a.syscall_tracepoints.push_back(line);
    if (line == "link tracing") ++a.tracing_links;
    if (starts_with(line, "attachments ")) a.total = std::stoi(line.substr(12));
  }
  return a;
}

// Where trampolines attach (both guests), the plan puts no program on a syscall tracepoint:
// writes, syncs, reads (--reads), opens, the namespace calls and the counted calls are all on
// fentry/fexit, so no thread of the machine takes the slow syscall path. The same check finds
// the fallback's syscall tracepoints under --no-fentry: it can fail.
TEST_F(VmLog, TheTrampolinePlanAttachesNoSyscallTracepoint) {
  const GuestRun& trampolines = run("hooks-trampolines");
  ASSERT_EQ(trampolines.rc, 0) << joined(trampolines.err);
  const Attachments a = attachments_of(trampolines);
  EXPECT_GT(a.total, 0) << joined(trampolines.out);
  EXPECT_TRUE(a.syscall_tracepoints.empty()) << joined(trampolines.out);
  // write/sync (4) + other write/sync calls (22) + reads (10) + namespace + counters, as
  // fentry and fexit links.
  EXPECT_GT(a.tracing_links, 40) << joined(trampolines.out);

  const GuestRun& fallback = run("hooks-tracepoints");
  ASSERT_EQ(fallback.rc, 0) << joined(fallback.err);
  const Attachments b = attachments_of(fallback);
  EXPECT_GT(b.syscall_tracepoints.size(), 20u) << joined(fallback.out);
  EXPECT_EQ(b.tracing_links, 0) << joined(fallback.out);
}

TEST_F(VmLog, DoctorNamesTheTrampolinePlan) {
  const std::string text = joined(run("doctor").out);
  EXPECT_NE(text.find("syscall plan: trampolines, no syscall tracepoint"), std::string::npos)
      << text;
}

// writev, pwritev (appended: O_APPEND), sync_file_range and fdatasync at their entry functions,
// with the offsets and sizes the workload wrote (tests/integration/workload_calls.c).
TEST_F(VmLog, EntryFunctionsTraceVectoredWritesAndRangeSyncs) {
  const GuestRun& r = run("entry-append-mix");
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  const auto items = json_lines(r);
  const auto writes = of_type(items, "write");
  ASSERT_EQ(writes.size(), 3u) << joined(r.out);
  EXPECT_EQ(writes[0]["syscall"], "write");
  EXPECT_EQ(writes[1]["syscall"], "writev");
  EXPECT_EQ(u64(writes[1]["offset"]), 5000u);
  EXPECT_EQ(u64(writes[1]["bytes"]), 6000u);
  EXPECT_EQ(writes[2]["syscall"], "pwritev");
  EXPECT_EQ(u64(writes[2]["offset"]), 11000u);
  EXPECT_EQ(u64(writes[2]["bytes"]), 4096u);
  std::set<std::string> syncs;
  for (const auto& s : of_type(items, "fsync")) {
    syncs.insert(s["syscall"].get<std::string>());
    if (s["syscall"] == "fdatasync") {
      EXPECT_FALSE(s["flushes"].empty()) << s.dump();
    }
    if (s["syscall"] == "sync_file_range") {
      EXPECT_FALSE(s["requests"].empty()) << s.dump();
    }
  }
  EXPECT_EQ(syncs, (std::set<std::string>{"fdatasync", "sync_file_range"}));
}

// rename(2) at its entry function: one namespace item per round, from the temporary name to the
// target's.
TEST_F(VmLog, EntryFunctionsTraceRenames) {
  const GuestRun& r = run("entry-rename");
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  int renames = 0;
  for (const auto& item : of_type(json_lines(r), "namespace")) {
    if (item["op"] != "rename") continue;
    ++renames;
    EXPECT_EQ(item["ret"], 0) << item.dump();
    EXPECT_EQ(item["new_path"], "/mnt/rn") << item.dump();
  }
  EXPECT_EQ(renames, 3) << joined(r.out);
}

// The counted calls at their entry functions: what the workload made (3 fallocate, 2
// copy_file_range, no splice into a file), and its 5 msyncs as sync items.
TEST_F(VmLog, EntryFunctionsCountTheCallsNotStitched) {
  const GuestRun& r = run("entry-untraced");
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  const auto items = json_lines(r);
  const auto summary = of_type(items, "summary", "");
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(summary[0]["untraced_calls"]["fallocate"], 3) << summary[0].dump();
  EXPECT_EQ(summary[0]["untraced_calls"]["copy_file_range"], 2) << summary[0].dump();
  EXPECT_EQ(summary[0]["untraced_calls"]["splice"], 0) << summary[0].dump();
  int msyncs = 0;
  for (const auto& s : of_type(items, "fsync")) msyncs += s["syscall"] == "msync";
  EXPECT_EQ(msyncs, 5);
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

// A cold read with --reads (guest-tests.sh `read-cold`): busybox dd's 64 reads of 64 KiB are
// read items with their bytes; the file's pages came from the device; each read request its
// items list is on the NVMe disk with an NVMe Read command (opcode 0x02) that ran inside it; and
// together they carried the file, no more than the disk read while the trace ran.
TEST_F(VmLog, AColdReadListsItsNvmeReadRequests) {
  const GuestRun& r = run("read-cold");
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  std::uint64_t bytes = 0, from_device = 0, request_bytes = 0, reads = 0;
  for (const json& item : of_type(json_lines(r), "read", "dd")) {
    if (item["path"] != "/mnt/r") continue;
    ++reads;
    bytes += u64(item["bytes"]);
    from_device += u64(item["pages_from_device"]) + u64(item["readahead_pages"]);
    for (const json& rq : item["requests"]) {
      SCOPED_TRACE(rq.dump());
      request_bytes += u64(rq["bytes"]);
      EXPECT_EQ(rq["dev"], kNvmeDev);
      EXPECT_EQ(rq["rwbs"].get<std::string>().substr(0, 1), "R");
      const json& nvme = rq["nvme"];
      ASSERT_TRUE(nvme.is_object());
      EXPECT_EQ(u64(nvme["opcode"]), 2u);
      EXPECT_GE(u64(nvme["submit_ns"]), u64(rq["queue_ns"]));
      EXPECT_LE(u64(nvme["complete_ns"]), u64(rq["complete_ns"]));
    }
  }
  EXPECT_EQ(bytes, 4u << 20);
  EXPECT_GE(reads, 64u);
  EXPECT_GE(from_device, 1024u) << "a cold file: every page came in";
  EXPECT_GE(request_bytes, 4u << 20);
  const std::string sectors = info("read-cold sectors");
  std::uint64_t before = 0, after = 0;
  std::istringstream(sectors) >> before >> after;
  ASSERT_GT(after, before) << sectors;
  EXPECT_LE(request_bytes, (after - before) * 512);
}

// A bystander's O_DIRECT overwrites on the NVMe disk beside a traced command writing a file
// there (guest-tests.sh): its bios, requests and NVMe commands stay in the kernel. Each write
// request of the bystander would be two NVMe records at least; the records decoded stay under
// half the disk's completed writes inside the trace, which the traced command read itself.
TEST_F(VmLog, ABystandersNvmeCommandsStayInTheKernel) {
  const GuestRun& r = run("bystander-kept-out");
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  std::uint64_t before = 0, after = 0;
  for (const auto& line : r.err)
    if (starts_with(line, "WRITES ")) std::istringstream(line.substr(7)) >> before >> after;
  ASSERT_GE(after, before + 256) << "the bystander wrote too little to tell: " << joined(r.err);
  const auto summary = of_type(json_lines(r), "summary");
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(u64(summary[0]["lost"]), 0u);
  EXPECT_LT(u64(summary[0]["events"]), (after - before) / 2) << summary[0].dump();
}

// The sum of the Prometheus series of `family` in `lines` whose labels include every one of
// `labels` (name="value").
double served_sum(const std::vector<std::string>& lines, const std::string& family,
                  const std::vector<std::string>& labels) {
  double total = 0;
  for (const auto& line : lines) {
    if (!starts_with(line, family + "{")) continue;
    const auto close = line.find("} ");
    if (close == std::string::npos) continue;
    const std::string set = "," + line.substr(family.size() + 1, close - family.size() - 1) + ",";
    if (std::all_of(labels.begin(), labels.end(), [&](const std::string& label) {
          return set.find("," + label + ",") != std::string::npos;
        }))
      total += std::stod(line.substr(close + 2));
  }
  return total;
}

// writepath serve in the guest (guest-tests.sh `serve-dd`, the dynamic build): it loads on
// Debian's kernel with its trampolines, and counts dd's 4 KiB writes of a file on the NVMe
// disk and its one fsync as dd itself reports them.
TEST_F(VmLog, ServeCountsDdsWritesOnTheNvmeDiskAsDdReportsThem) {
  const GuestRun& r = run("serve-dd");
  ASSERT_EQ(r.rc, 0) << joined(r.err);
  std::uint64_t records_out = 0;
  bool serving = false;
  for (const auto& line : r.err) {
    if (line.find("serving write-path metrics") != std::string::npos) serving = true;
    if (const auto plus = line.find("+0 records out"); plus != std::string::npos)
      records_out = std::stoull(line.substr(0, plus));
  }
  ASSERT_TRUE(serving) << joined(r.err);
  ASSERT_EQ(records_out, 300u) << joined(r.err);
  const std::vector<std::string> dd = {"device=\"nvme0n1\"", "comm=\"dd\""};
  EXPECT_EQ(served_sum(r.out, "writepath_write_latency_seconds_count", dd), 300.0);
  EXPECT_EQ(served_sum(r.out, "writepath_written_bytes_total", dd), 300.0 * 4096);
  auto fsync = dd;
  fsync.push_back("call=\"fsync\"");
  EXPECT_EQ(served_sum(r.out, "writepath_sync_latency_seconds_count", fsync), 1.0);
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

// The oracle's rounds in the guest (guest-tests.sh `oracle`): Debian's kernel, the NVMe
// disk with its volatile cache and FUA, fentry. Each holds the trace's items of the file to the
// workload's own log of its calls and return codes, to the disk's diskstats while it ran, and
// where the kernel has cachestat(2) (6.5+: on 6.12, not on 6.1) to the page cache's state.
class OracleRoundOnNvme : public VmLog, public ::testing::WithParamInterface<const char*> {};

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

}  // namespace
