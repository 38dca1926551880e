// SPDX-License-Identifier: Apache-2.0
// Sinks: hand-built timelines in, concrete text and JSON out. The JSON tests check the
// JSON contract of docs/reference/json-lines.md key by key; the text tests check what a person
// reads (relative times, units, verdicts).
#include <gtest/gtest.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>

#include "common/container.h"
#include "common/units.h"
#include "sinks/json_sink.h"
#include "sinks/sink.h"
#include "sinks/text_notes.h"
#include "sinks/text_sink.h"

#include "builders.h"

namespace wp {
namespace {

using nlohmann::json;
using namespace builders;

constexpr Nanos kStart = 1'000'000'000;  // syscall start: every relative time is from here

SyscallEvent write_call() {
  SyscallEvent call = syscall_event({.start_ns = kStart, .end_ns = kStart + 14'200, .pos = 8192});
  call.dirty_folios = 1;
  return call;
}

RequestTimeline data_request() {
  RequestTimeline request =
      write_request(kLoop0, 2048, 4096, kStart + 1'220'000, kStart + 2'800'000);
  request.queue_ns = kStart + 1'200'000;
  request.insert_ns = kStart + 1'210'000;
  return request;
}

// A buffered pwrite made durable by a later cache flush.
WriteTimeline durable_write() {
  return builders::durable_write(write_call(), data_request(), kStart + 3'100'000);
}

// A buffered write that never reached the disk before the trace ended.
WriteTimeline dirty_write() {
  return builders::dirty_write(write_call());
}

SyncTimeline fsync_timeline() {
  SyncTimeline sync = sync_timeline(
      syscall_event(
          {.syscall = Syscall::Fdatasync, .start_ns = kStart, .end_ns = kStart + 5'200'000}),
      {400'000, 1'100'000, 2'000'000, 1'500'000, 200'000});
  RequestTimeline data = data_request();
  data.flags = req_flag::kSync;
  data.queue_ns = kStart + 400'000;
  data.insert_ns.reset();
  data.issue_ns = kStart + 410'000;
  data.complete_ns = kStart + 1'500'000;
  sync.requests.push_back(data);
  RequestTimeline flush = flush_request(kLoop0, kStart + 3'100'000, kStart + 4'600'000);
  flush.nvme = NvmeCommand{.qid = 2,
                           .cid = 17,
                           .opcode = 0x00,
                           .nsid = 1,
                           .fua = false,
                           .submit_ns = kStart + 3'110'000,
                           .complete_ns = kStart + 4'590'000,
                           .status = 0};
  sync.flushes.push_back(flush);
  JournalCommit commit;
  commit.dev = make_dev(253, 0);
  commit.transaction = 23;
  commit.start_ns = kStart + 1'500'000;
  commit.end_ns = kStart + 4'900'000;
  sync.commits.push_back(commit);
  return sync;
}

json parse_one_line(const std::string& text) {
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "exactly one line: " << text;
  return json::parse(text);
}

json json_of(const Timeline& item) {
  std::ostringstream out;
  JsonSink sink(out);
  sink.timeline(item);
  return parse_one_line(out.str());
}

std::string text_of(const Timeline& item) {
  return format_timeline(item, SinkOptions{});
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// ---- units ------------------------------------------------------------------------------------

TEST(HumanDuration, NanosecondsBelowOneMicrosecond) {
  EXPECT_EQ(human_duration(0), "0ns");
  EXPECT_EQ(human_duration(812), "812ns");
  EXPECT_EQ(human_duration(999), "999ns");
}

TEST(HumanDuration, MicrosecondsWithOneDecimal) {
  EXPECT_EQ(human_duration(1'000), "1.0us");
  EXPECT_EQ(human_duration(1'049), "1.0us");
  EXPECT_EQ(human_duration(1'050), "1.1us");  // half rounds up
  EXPECT_EQ(human_duration(14'200), "14.2us");
  EXPECT_EQ(human_duration(999'949), "999.9us");
}

TEST(HumanDuration, RoundingUpToAThousandMovesToTheNextUnit) {
  EXPECT_EQ(human_duration(999'950), "1.00ms");
  EXPECT_EQ(human_duration(999'994'999), "999.99ms");
  EXPECT_EQ(human_duration(999'995'000), "1.00s");
}

TEST(HumanDuration, MillisecondsAndSecondsWithTwoDecimals) {
  EXPECT_EQ(human_duration(1'000'000), "1.00ms");
  EXPECT_EQ(human_duration(3'100'000), "3.10ms");
  EXPECT_EQ(human_duration(1'000'000'000), "1.00s");
  EXPECT_EQ(human_duration(1'250'000'000), "1.25s");
  EXPECT_EQ(human_duration(125'500'000'000), "125.50s");
}

TEST(HumanDuration, LargestValueDoesNotOverflow) {
  EXPECT_EQ(human_duration(UINT64_MAX), "18446744073.71s");
}

TEST(HumanOffset, SignedAndZero) {
  EXPECT_EQ(human_offset(0), "+0");
  EXPECT_EQ(human_offset(3'100'000), "+3.10ms");
  EXPECT_EQ(human_offset(-1'200'000), "-1.20ms");
  EXPECT_EQ(human_offset(INT64_MIN), "-9223372036.85s");
  EXPECT_EQ(relative_ns(kStart - 500, kStart), -500);
  EXPECT_EQ(relative_ns(kStart + 500, kStart), 500);
}

TEST(HumanBytes, BytesBelowOneKibibyte) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(1023), "1023 B");
}

TEST(HumanBytes, ExactMultiplesAreIntegers) {
  EXPECT_EQ(human_bytes(1024), "1 KiB");
  EXPECT_EQ(human_bytes(4096), "4 KiB");
  EXPECT_EQ(human_bytes(1u << 20), "1 MiB");
  EXPECT_EQ(human_bytes(std::uint64_t{3} << 30), "3 GiB");
}

TEST(HumanBytes, OthersHaveOneDecimalAndRoundUpIntoTheNextUnit) {
  EXPECT_EQ(human_bytes(1536), "1.5 KiB");
  EXPECT_EQ(human_bytes(1025), "1.0 KiB");
  EXPECT_EQ(human_bytes((1u << 20) + (1u << 19)), "1.5 MiB");
  EXPECT_EQ(human_bytes((1u << 20) - 1), "1.0 MiB");  // 1023.999 KiB
  EXPECT_EQ(human_bytes(UINT64_MAX), "16.0 EiB");
}

TEST(ErrnoName, NamesBothSignsAndFallsBack) {
  EXPECT_EQ(errno_name(EINVAL), "EINVAL");
  EXPECT_EQ(errno_name(-EIO), "EIO");
  EXPECT_EQ(errno_name(4000), "errno 4000");
  EXPECT_EQ(errno_name(INT_MIN), "errno 2147483648");
}

// ---- JSON -------------------------------------------------------------------------------------

TEST(JsonSink, WriteHasEveryContractKeyWithValues) {
  const json object = json_of(durable_write());
  EXPECT_EQ(object["type"], "write");
  EXPECT_EQ(object["pid"], 1234);
  EXPECT_EQ(object["tid"], 1235);
  EXPECT_EQ(object["comm"], "dd");
  EXPECT_EQ(object["syscall"], "pwrite64");
  EXPECT_EQ(object["fd"], 3);
  EXPECT_EQ(object["dev"], "7:0");
  EXPECT_EQ(object["ino"], 12);
  EXPECT_EQ(object["offset"], 8192);
  EXPECT_EQ(object["bytes"], 4096);
  EXPECT_EQ(object["requested"], 4096);
  EXPECT_TRUE(object["error"].is_null());
  EXPECT_EQ(object["direct"], false);
  EXPECT_EQ(object["sync"], false);
  EXPECT_EQ(object["start_ns"], kStart);
  EXPECT_EQ(object["end_ns"], kStart + 14'200);
  EXPECT_EQ(object["latency_ns"], 14'200);
  EXPECT_EQ(object["pages_dirtied"], 1);
  EXPECT_EQ(object["throttled_ns"], 0);
  EXPECT_EQ(object["state"], "durable");
  EXPECT_EQ(object["pages"], 1);
  EXPECT_EQ(object["pages_pending"], 0);
  EXPECT_EQ(object["written_ns"], kStart + 2'800'000);
  EXPECT_EQ(object["durable_ns"], kStart + 3'100'000);
  EXPECT_EQ(object["durable_via"], "flush");
  EXPECT_EQ(object["incomplete"], false);
  EXPECT_EQ(object["writeback_waits"], 0);
  EXPECT_EQ(object["throttle_events"], 0);

  ASSERT_TRUE(object["requests"].is_array());
  ASSERT_EQ(object["requests"].size(), 1u);
  const json& request = object["requests"][0];
  EXPECT_EQ(request["dev"], "7:0");
  EXPECT_EQ(request["sector"], 2048);
  EXPECT_EQ(request["bytes"], 4096);
  EXPECT_EQ(request["rwbs"], "W");
  EXPECT_EQ(request["queue_ns"], kStart + 1'200'000);
  EXPECT_EQ(request["insert_ns"], kStart + 1'210'000);
  EXPECT_EQ(request["issue_ns"], kStart + 1'220'000);
  EXPECT_EQ(request["complete_ns"], kStart + 2'800'000);
  EXPECT_TRUE(request["durable_ns"].is_null());
  EXPECT_TRUE(request["error"].is_null());
  EXPECT_TRUE(request.contains("nvme"));
  EXPECT_TRUE(request["nvme"].is_null());
}

TEST(JsonSink, ItemsCarryTheirCgroupPathOrNull) {
  WriteTimeline write = durable_write();
  EXPECT_TRUE(json_of(write)["cgroup"].is_null());
  EXPECT_TRUE(json_of(write).contains("cgroup"));
  write.call.cgroup = "/system.slice/x.service";
  EXPECT_EQ(json_of(write)["cgroup"], "/system.slice/x.service");
}

TEST(JsonSink, ItemsOfAContainerCarryItsIdRuntimeAndPodOrNull) {
  WriteTimeline write = durable_write();
  EXPECT_TRUE(json_of(write).contains("container"));
  EXPECT_TRUE(json_of(write)["container"].is_null());
  const std::string id(64, 'c');
  write.call.cgroup = "/kubepods/besteffort/pod8c1d0f2e-1b2a-4c3d-9e8f-0a1b2c3d4e5f/" + id;
  write.call.container =
      std::make_shared<const Container>(container_of_cgroup(write.call.cgroup).value());
  const auto container = json_of(write)["container"];
  EXPECT_EQ(container["id"], id);
  EXPECT_EQ(container["runtime"], "containerd");
  EXPECT_EQ(container["pod_uid"], "8c1d0f2e-1b2a-4c3d-9e8f-0a1b2c3d4e5f");
  EXPECT_EQ(container["qos"], "besteffort");
  write.call.cgroup = "/system.slice/docker-" + id + ".scope";
  write.call.container =
      std::make_shared<const Container>(container_of_cgroup(write.call.cgroup).value());
  EXPECT_EQ(json_of(write)["container"]["runtime"], "docker");
  EXPECT_TRUE(json_of(write)["container"]["pod_uid"].is_null());
  EXPECT_TRUE(json_of(write)["container"]["qos"].is_null());
}

// An overlay file: dev and ino as stat() shows them to the application, the upper file (whose
// pages and requests the item's are) under "backing"; null for a file that is its own.
TEST(JsonSink, AnOverlayFileShowsItsOwnDevAndItsBackingFile) {
  WriteTimeline write = durable_write();
  EXPECT_TRUE(json_of(write).contains("backing"));
  EXPECT_TRUE(json_of(write)["backing"].is_null());
  write.call.view_dev = make_dev(0, 39);
  write.call.view_ino = 16;
  const json object = json_of(write);
  EXPECT_EQ(object["dev"], "0:39");
  EXPECT_EQ(object["ino"], 16);
  EXPECT_EQ(object["backing"], json({{"dev", "7:0"}, {"ino", 12}}));
  EXPECT_EQ(object["requests"][0]["dev"], "7:0");
}

TEST(JsonSink, AHandedWriteNamesItsFuseDaemon) {
  WriteTimeline write = durable_write();
  EXPECT_TRUE(json_of(write)["fuse_daemon"].is_null());
  write.state = WriteState::Handed;
  write.fuse = FuseDaemon{812, 813, "bindfs", -EIO};
  const json object = json_of(write);
  EXPECT_EQ(object["state"], "handed");
  EXPECT_EQ(object["fuse_daemon"],
            json({{"pid", 812}, {"tid", 813}, {"comm", "bindfs"}, {"error", "EIO"}}));
}

TEST(JsonSink, RequestListsTheOtherThreadsWhoseBiosItCarried) {
  EXPECT_EQ(json_of(durable_write())["requests"][0]["other_submitters"], json::array());
  RequestTimeline request = data_request();
  request.submit_tid = 300;
  request.submit_comm = "fio";
  request.submit_why = SubmitWhy::SyncSyscall;
  request.other_submitters.push_back(RequestSubmitter{301, "fio", SubmitWhy::SyncSyscall});
  const json object = json_of(builders::durable_write(write_call(), request, kStart + 3'100'000));
  const json& r = object["requests"][0];
  EXPECT_EQ(r["submitter"], json({{"tid", 300}, {"comm", "fio"}, {"why", "fsync"}}));
  EXPECT_EQ(r["other_submitters"],
            json::array({{{"tid", 301}, {"comm", "fio"}, {"why", "fsync"}}}));
}

TEST(JsonSink, NumbersAreUnsignedIntegersAndFlagsAreBooleans) {
  const json object = json_of(durable_write());
  for (const char* key : {"pid", "tid", "ino", "offset", "bytes", "start_ns", "end_ns",
                          "latency_ns", "pages_dirtied", "throttled_ns", "durable_ns"}) {
    EXPECT_TRUE(object[key].is_number_unsigned()) << key;
  }
  EXPECT_TRUE(object["fd"].is_number_integer());
  EXPECT_TRUE(object["direct"].is_boolean());
  EXPECT_TRUE(object["sync"].is_boolean());
  EXPECT_TRUE(object["comm"].is_string());
  EXPECT_TRUE(object["dev"].is_string());
}

TEST(JsonSink, CallFlagsAreNamedAndMmapStoresAreNamedMmap) {
  WriteTimeline write = durable_write();
  EXPECT_EQ(json_of(write)["call_flags"], json::array());
  write.call.syscall = Syscall::Pwritev2;
  write.call.call_flags = call_flag::kRwfDsync | call_flag::kRwfNowait;
  EXPECT_EQ(json_of(write)["call_flags"], (json::array({"RWF_DSYNC", "RWF_NOWAIT"})));
  EXPECT_EQ(json_of(write)["syscall"], "pwritev2");
  write.call.call_flags = call_flag::kMmapStore;
  write.call.fd = -1;
  const json stores = json_of(write);
  EXPECT_EQ(stores["syscall"], "mmap");
  EXPECT_TRUE(stores["fd"].is_null());
  EXPECT_EQ(stores["call_flags"], json::array());  // the marker is not a flag of a call
  SyncTimeline sync = fsync_timeline();
  sync.call.syscall = Syscall::Msync;
  sync.call.call_flags = call_flag::kMsAsync;
  EXPECT_EQ(json_of(sync)["syscall"], "msync");
  EXPECT_EQ(json_of(sync)["call_flags"], json::array({"MS_ASYNC"}));
}

TEST(JsonSink, AbsentStagesAreNullNotMissing) {
  WriteTimeline write = dirty_write();
  RequestTimeline request = data_request();
  request.insert_ns.reset();
  request.complete_ns.reset();
  write.requests.push_back(request);
  const json object = json_of(write);
  EXPECT_EQ(object["state"], "dirty");
  EXPECT_EQ(object["incomplete"], true);
  EXPECT_EQ(object["pages_pending"], 1);
  for (const char* key : {"written_ns", "durable_ns", "durable_via", "discarded_ns"}) {
    ASSERT_TRUE(object.contains(key)) << key;
    EXPECT_TRUE(object[key].is_null()) << key;
  }
  const json& req = object["requests"][0];
  EXPECT_TRUE(req["insert_ns"].is_null());
  EXPECT_TRUE(req["complete_ns"].is_null());
  EXPECT_EQ(req["issue_ns"], kStart + 1'220'000);
}

// An io_uring op is named by its syscall key and says how it was issued; a syscall says null.
TEST(JsonSink, IoUringOpNamesItsOpAndHowItWasIssued) {
  WriteTimeline write = dirty_write();
  EXPECT_TRUE(json_of(write)["io_uring"].is_null());
  write.call.syscall = Syscall::IoUringWrite;
  for (const auto& [via, name] : std::vector<std::pair<std::uint8_t, std::string>>{
           {WP_VIA_IO_URING, "inline"},
           {WP_VIA_IO_URING | WP_VIA_IO_WQ, "io-wq"},
           {WP_VIA_IO_URING | WP_VIA_SQPOLL, "sqpoll"},
           {WP_VIA_IO_URING | WP_VIA_SQPOLL | WP_VIA_IO_WQ, "sqpoll+io-wq"}}) {
    write.call.via = via;
    const json object = json_of(write);
    EXPECT_EQ(object["syscall"], "io_uring_write");
    EXPECT_EQ(object["io_uring"], name);
  }
}

TEST(JsonSink, DiscardedWriteHasItsStateAndTime) {
  WriteTimeline write = dirty_write();
  write.state = WriteState::Discarded;
  write.pages_pending = 0;
  write.discarded_ns = kStart + 900'000;
  const json object = json_of(write);
  EXPECT_EQ(object["state"], "discarded");
  EXPECT_EQ(object["discarded_ns"], kStart + 900'000);
  EXPECT_TRUE(object["durable_ns"].is_null());
  EXPECT_EQ(object["pages_pending"], 0);
}

TEST(JsonSink, FailedWriteReportsErrnoNameAndZeroBytes) {
  WriteTimeline write = dirty_write();
  write.state = WriteState::Failed;
  write.call.ret = -EINVAL;
  write.call.file_flags |= file_flag::kDirect;
  write.direct = true;
  const json object = json_of(write);
  EXPECT_EQ(object["bytes"], 0);
  EXPECT_EQ(object["requested"], 4096);
  EXPECT_EQ(object["error"], "EINVAL");
  EXPECT_EQ(object["ret"], -EINVAL);
  EXPECT_EQ(object["direct"], true);
  EXPECT_EQ(object["state"], "failed");
}

TEST(JsonSink, NvmeCommandAndRequestError) {
  WriteTimeline write = durable_write();
  write.durable_via = DurableVia::Fua;
  RequestTimeline& request = write.requests[0];
  request.flags = req_flag::kFua | req_flag::kSync;
  request.durable_ns = request.complete_ns;
  request.error = -EIO;
  request.nvme = NvmeCommand{.qid = 3,
                             .cid = 9,
                             .opcode = 0x01,
                             .nsid = 1,
                             .fua = true,
                             .submit_ns = kStart + 1'230'000,
                             .complete_ns = std::nullopt,
                             .status = std::nullopt};
  const json object = json_of(write);
  EXPECT_EQ(object["durable_via"], "fua");
  const json& req = object["requests"][0];
  EXPECT_EQ(req["rwbs"], "WFS");
  EXPECT_EQ(req["fua"], true);
  EXPECT_EQ(req["durable_ns"], kStart + 2'800'000);
  EXPECT_EQ(req["error"], "EIO");
  const json& nvme = req["nvme"];
  ASSERT_TRUE(nvme.is_object());
  EXPECT_EQ(nvme["qid"], 3);
  EXPECT_EQ(nvme["cid"], 9);
  EXPECT_EQ(nvme["opcode"], 1);
  EXPECT_EQ(nvme["submit_ns"], kStart + 1'230'000);
  EXPECT_TRUE(nvme["complete_ns"].is_null());
  EXPECT_TRUE(nvme["status"].is_null());
}

TEST(JsonSink, ItemsCarryTheirFilesPathOrNull) {
  EXPECT_TRUE(json_of(durable_write())["path"].is_null()) << "no path record: null";
  WriteTimeline write = durable_write();
  write.call.path = "/mnt/data/wal/000042.log";
  EXPECT_EQ(json_of(write)["path"], "/mnt/data/wal/000042.log");
  EXPECT_EQ(json_of(write)["ino"], 12) << "dev and ino stay";
  SyncTimeline sync = fsync_timeline();
  sync.call.path = "/tmp/gone (deleted)";
  EXPECT_EQ(json_of(sync)["path"], "/tmp/gone (deleted)");
}

TEST(JsonSink, FsyncHasContractKeysPhasesFlushesAndCommits) {
  const json object = json_of(fsync_timeline());
  EXPECT_EQ(object["type"], "fsync");
  EXPECT_EQ(object["syscall"], "fdatasync");
  EXPECT_EQ(object["pid"], 1234);
  EXPECT_EQ(object["tid"], 1235);
  EXPECT_EQ(object["comm"], "dd");
  EXPECT_EQ(object["dev"], "7:0");
  EXPECT_EQ(object["ino"], 12);
  EXPECT_EQ(object["start_ns"], kStart);
  EXPECT_EQ(object["end_ns"], kStart + 5'200'000);
  EXPECT_EQ(object["latency_ns"], 5'200'000);
  EXPECT_EQ(object["ret"], 0);
  EXPECT_TRUE(object["error"].is_null());
  EXPECT_EQ(object["incomplete"], false);
  const json& phases = object["phases"];
  EXPECT_EQ(phases["writeback_ns"], 400'000);
  EXPECT_EQ(phases["data_io_ns"], 1'100'000);
  EXPECT_EQ(phases["journal_ns"], 2'000'000);
  EXPECT_EQ(phases["flush_ns"], 1'500'000);
  EXPECT_EQ(phases["other_ns"], 200'000);

  ASSERT_EQ(object["requests"].size(), 1u);
  EXPECT_EQ(object["requests"][0]["rwbs"], "WS");
  EXPECT_TRUE(object["requests"][0]["insert_ns"].is_null());
  ASSERT_EQ(object["flushes"].size(), 1u);
  const json& flush = object["flushes"][0];
  EXPECT_EQ(flush["rwbs"], "FF");
  EXPECT_EQ(flush["issue_ns"], kStart + 3'100'000);
  EXPECT_EQ(flush["nvme"]["status"], 0);
  ASSERT_EQ(object["journal_commits"].size(), 1u);
  const json& commit = object["journal_commits"][0];
  EXPECT_EQ(commit["dev"], "253:0");
  EXPECT_EQ(commit["transaction"], 23);
  EXPECT_EQ(commit["start_ns"], kStart + 1'500'000);
  EXPECT_EQ(commit["end_ns"], kStart + 4'900'000);
  EXPECT_TRUE(commit["locking_ns"].is_null());
  ASSERT_TRUE(object["journal_requests"].is_array());
  EXPECT_TRUE(object["journal_requests"].empty());
}

// The sync's own metadata writes (an xfs log write) are listed apart from its data requests.
TEST(JsonSink, FsyncListsItsJournalRequests) {
  SyncTimeline sync = fsync_timeline();
  RequestTimeline log_write = sync.requests.front();
  log_write.sector = 307256;
  log_write.bytes = 1536;
  log_write.flags = req_flag::kSync | req_flag::kMeta | req_flag::kPreflush | req_flag::kFua;
  sync.journal_requests.push_back(log_write);
  const json object = json_of(sync);
  ASSERT_EQ(object["journal_requests"].size(), 1u);
  EXPECT_EQ(object["journal_requests"][0]["sector"], 307256);
  EXPECT_EQ(object["journal_requests"][0]["bytes"], 1536);
  EXPECT_EQ(object["journal_requests"][0]["fua"], true);
  ASSERT_EQ(object["requests"].size(), 1u);
}

TEST(JsonSink, SyncWithoutFileHasNullDevAndFd) {
  SyncTimeline sync = fsync_timeline();
  sync.call.syscall = Syscall::Sync;
  sync.call.fd = -1;
  sync.call.dev = 0;
  sync.call.ino = 0;
  const json object = json_of(sync);
  EXPECT_EQ(object["type"], "fsync");
  EXPECT_EQ(object["syscall"], "sync");
  EXPECT_TRUE(object["dev"].is_null());
  EXPECT_TRUE(object["fd"].is_null());
}

TEST(JsonSink, CommEscapingRoundTrips) {
  WriteTimeline write = durable_write();
  write.call.comm = std::string("a\"b\\c\n\t\x01\x1b[31m", 13);
  std::ostringstream out;
  JsonSink sink(out);
  sink.timeline(write);
  const std::string line = out.str();
  EXPECT_FALSE(contains(line.substr(0, line.size() - 1), "\n")) << "raw newline leaked";
  EXPECT_FALSE(contains(line, "\x1b")) << "raw ESC leaked";
  EXPECT_EQ(parse_one_line(line)["comm"], write.call.comm);
}

TEST(JsonSink, InvalidUtf8CommIsReplacedNotFatal) {
  WriteTimeline write = durable_write();
  write.call.comm = "caf\xc3";  // cut mid-character, as TASK_COMM_LEN truncation does
  const json object = json_of(write);
  EXPECT_EQ(object["comm"], "caf\xef\xbf\xbd");  // U+FFFD
}

TEST(JsonSink, SummaryLine) {
  TraceSummary totals;
  totals.events = 12'345;
  totals.lost = 3;
  totals.lost_by_hook = {{"block_rq_issue", 2}, {"block_bio_queue", 1}};
  totals.writes = 100;
  totals.fsyncs = 10;
  totals.incomplete = 2;
  totals.aged_out = 1;
  totals.evicted = 1;
  totals.discarded = 4;
  totals.lost_share = 3.0 / 12'348;
  totals.lost_advice = "raise --buffer-size";
  totals.duration_ns = 5'000'000'000;
  totals.untraced_calls = {{"fallocate", 3}, {"io_uring_enter", 0}};
  std::ostringstream out;
  JsonSink sink(out);
  sink.summary(totals);
  const json object = parse_one_line(out.str());
  EXPECT_EQ(object["aged_out"], 1);
  EXPECT_EQ(object["evicted"], 1);
  EXPECT_EQ(object["discarded"], 4);
  EXPECT_DOUBLE_EQ(object["lost_share"].get<double>(), 0.0002);  // four decimals
  EXPECT_EQ(object["lost_advice"], "raise --buffer-size");
  EXPECT_EQ(object["type"], "summary");
  EXPECT_EQ(object["events"], 12'345);
  EXPECT_EQ(object["lost"], 3);
  EXPECT_EQ(object["lost_by_hook"], json({{"block_rq_issue", 2}, {"block_bio_queue", 1}}));
  EXPECT_EQ(object["writes"], 100);
  EXPECT_EQ(object["fsyncs"], 10);
  EXPECT_EQ(object["incomplete"], 2);
  EXPECT_EQ(object["duration_ns"], 5'000'000'000u);
  EXPECT_TRUE(object["lost_by_hook"].is_object());
  EXPECT_TRUE(object["hint"].is_null());
  EXPECT_EQ(object["untraced_calls"], json({{"fallocate", 3}, {"io_uring_enter", 0}}));
}

// What the kernel counted for the programs: in all, as a share of the CPUs over the trace, per
// item, and per program; null when the kernel did not count.
TEST(JsonSink, SummaryBpfCostIsTheKernelsCountPerProgram) {
  TraceSummary totals;
  totals.writes = 90;
  totals.fsyncs = 10;
  totals.duration_ns = 1'000'000'000;
  totals.bpf_cost =
      BpfCost{{{"wp_exit_pwrite64", 100, 40'000}, {"wp_enter_pwrite64", 100, 20'000}}, 2};
  std::ostringstream out;
  JsonSink(out).summary(totals);
  const json cost = parse_one_line(out.str())["bpf_cost"];
  EXPECT_EQ(cost["ns"], 60'000);
  EXPECT_EQ(cost["cpus"], 2);
  EXPECT_DOUBLE_EQ(cost["cpu_share"].get<double>(), 0.0);  // 3e-5, four decimals
  EXPECT_EQ(cost["ns_per_item"], 600);
  ASSERT_EQ(cost["programs"].size(), 2u);
  EXPECT_EQ(
      cost["programs"][0],
      json({{"name", "wp_exit_pwrite64"}, {"runs", 100}, {"ns", 40'000}, {"ns_per_run", 400}}));
  std::ostringstream none;
  JsonSink(none).summary(TraceSummary{});
  EXPECT_TRUE(parse_one_line(none.str())["bpf_cost"].is_null());
}

TEST(TextSink, SummarySaysWhatTheProgramsCostWhenTheKernelCounted) {
  TraceSummary totals;
  totals.writes = 100;
  totals.duration_ns = 10'000'000;
  totals.bpf_cost =
      BpfCost{{{"wp_exit_pwrite64", 100, 40'000}, {"wp_enter_pwrite64", 100, 20'000}}, 2};
  const std::string text = format_summary(totals, SinkOptions{});
  EXPECT_NE(text.find("bpf cost 60.0us in 200 runs (0.30 % of 2 CPUs), 600ns per item; most: "
                      "wp_exit_pwrite64 400ns/run, wp_enter_pwrite64 200ns/run"),
            std::string::npos)
      << text;
  EXPECT_EQ(format_summary(TraceSummary{}, SinkOptions{}).find("bpf cost"), std::string::npos);
}

TEST(JsonSink, SummaryHintIsAStringWhenThereIsOne) {
  TraceSummary totals;
  totals.hint = "add --children";
  std::ostringstream out;
  JsonSink sink(out);
  sink.summary(totals);
  EXPECT_EQ(parse_one_line(out.str())["hint"], "add --children");
}

TEST(JsonSink, SummaryWithoutCountedCallsHasAnEmptyUntracedCallsObject) {
  std::ostringstream out;
  JsonSink(out).summary(TraceSummary{});
  const json object = parse_one_line(out.str());
  EXPECT_TRUE(object["untraced_calls"].is_object());
  EXPECT_TRUE(object["untraced_calls"].empty());
}

TEST(JsonSink, TypeIsTheFirstKey) {
  std::ostringstream out;
  JsonSink sink(out);
  sink.timeline(fsync_timeline());
  EXPECT_EQ(out.str().rfind("{\"type\":\"fsync\",\"pid\":1234,", 0), 0u) << out.str();
}

TEST(JsonSink, OneObjectPerLine) {
  std::ostringstream out;
  auto sink = make_sink(OutputFormat::Json, out, SinkOptions{});
  sink->timeline(durable_write());
  sink->timeline(fsync_timeline());
  sink->summary(TraceSummary{});
  sink->flush();
  std::istringstream lines(out.str());
  std::string line;
  std::vector<std::string> types;
  while (std::getline(lines, line)) types.push_back(json::parse(line)["type"]);
  EXPECT_EQ(types, (std::vector<std::string>{"write", "fsync", "summary"}));
}

TEST(JsonSink, FsyncSegmentsFollowPhasesInTimeOrder) {
  SyncTimeline sync = fsync_timeline();
  sync.segments = {{SyncPhase::Writeback, kStart, kStart + 400'000},
                   {SyncPhase::DataIo, kStart + 400'000, kStart + 1'500'000},
                   {SyncPhase::Flush, kStart + 1'500'000, kStart + 5'200'000}};
  std::ostringstream out;
  JsonSink sink(out);
  sink.timeline(sync);
  const std::string line = out.str();
  EXPECT_NE(line.find("},\"segments\":[{\"phase\":\"writeback\",\"start_ns\":1000000000,"
                      "\"end_ns\":1000400000},"),
            std::string::npos)
      << "segments come right after phases: " << line;
  const json object = parse_one_line(line);
  const json& segments = object["segments"];
  ASSERT_EQ(segments.size(), 3u);
  EXPECT_EQ(segments[1]["phase"], "data_io");
  EXPECT_EQ(segments[1]["start_ns"], kStart + 400'000);
  EXPECT_EQ(segments[1]["end_ns"], kStart + 1'500'000);
  EXPECT_EQ(segments[2]["phase"], "flush");
  EXPECT_EQ(segments[2]["end_ns"], kStart + 5'200'000);
  EXPECT_TRUE(json_of(fsync_timeline())["segments"].is_array());
  EXPECT_TRUE(json_of(fsync_timeline())["segments"].empty());
}

// The streamed lines must read exactly as nlohmann::json's dump() with the replace handler
// wrote them: same escapes, same U+FFFD repairs of broken UTF-8.
std::string nlohmann_escaped(const std::string& text) {
  const std::string quoted =
      json(text).dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
  return quoted.substr(1, quoted.size() - 2);
}

std::string streamed_escaped(const std::string& text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

TEST(JsonString, EscapesAndRepairsLikeNlohmann) {
  const std::vector<std::string> cases = {
      "",
      "plain",
      std::string("nul\0byte", 8),
      "\"\\/\b\f\n\r\t\x01\x1f\x7f",
      "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x92\xbe",  // 2, 3 and 4-byte characters
      "caf\xc3",                                    // cut at the end
      "\xe2\x82x",                                  // cut mid-character, then ASCII
      "\xc0\x80",                                   // overlong NUL
      "\xe0\x80\xaf",                               // overlong '/'
      "\xed\xa0\x80",                               // a surrogate
      "\xf4\x90\x80\x80",                           // past U+10FFFF
      "\xf5\xff\x80\xbf",                           // bytes that never start a character
      "\xf0\x9f\x92",                               // 4-byte cut at the end
  };
  for (const std::string& text : cases)
    EXPECT_EQ(streamed_escaped(text), nlohmann_escaped(text))
        << json(text).dump(-1, ' ', true, json::error_handler_t::replace);
}

TEST(JsonString, RandomBytesEscapeLikeNlohmann) {
  std::mt19937 random(20240611);  // fixed seed: a failure reproduces
  const std::string alphabet = std::string("a\"\\\n\x01\x7f", 6) + "\x80\xbf\xc2\xc3\xe0\xe2\xed" +
                               "\xef\xf0\xf4\xf5\xff\xa0\x9f\x8f\x90";
  for (int round = 0; round < 20'000; ++round) {
    std::string text(random() % 12, ' ');
    for (char& c : text) c = alphabet[random() % alphabet.size()];
    ASSERT_EQ(streamed_escaped(text), nlohmann_escaped(text))
        << json(text).dump(-1, ' ', true, json::error_handler_t::replace);
  }
}

TEST(JsonSink, TreeViewsMatchTheStreamedLines) {
  JsonLineFormatter formatter;
  WriteTimeline write = durable_write();
  write.call.comm = "caf\xc3";
  EXPECT_EQ(json_line(write_json(write)), formatter.write(write));
  EXPECT_EQ(json_line(sync_json(fsync_timeline())), formatter.sync(fsync_timeline()));
  TraceSummary totals;
  totals.lost_by_hook = {{"block_rq_issue", 2}};
  totals.sync_phases.add(fsync_timeline());
  EXPECT_EQ(json_line(summary_json(totals)), formatter.summary(totals));
}

// ---- text -------------------------------------------------------------------------------------

TEST(TextSink, DurableWriteShowsRelativeStagesAndVerdict) {
  const std::string text = text_of(durable_write());
  const std::string header = text.substr(0, text.find('\n'));
  EXPECT_EQ(header,
            "pwrite64 pid 1234/1235 (dd) fd 3 dev 7:0 ino 12 off 8192 4 KiB  latency 14.2us  "
            "DURABLE +3.10ms via flush");
  EXPECT_TRUE(contains(text, "         +0  dirtied 1 page\n")) << text;
  EXPECT_TRUE(contains(text,
                       "    +1.20ms  request W 7:0 sector 2048 4 KiB  queue +1.20ms  "
                       "insert +1.21ms  issue +1.22ms  complete +2.80ms\n"))
      << text;
  EXPECT_TRUE(contains(text, "    +2.80ms  written 1 page\n")) << text;
  EXPECT_TRUE(contains(text, "    +3.10ms  durable (flush)\n")) << text;
  // Time order: the durable line comes last.
  EXPECT_LT(text.find("written"), text.find("durable (flush)"));
  EXPECT_LT(text.find("dirtied"), text.find("request"));
  EXPECT_FALSE(contains(text, "\x1b")) << "no color unless asked";
}

TEST(TextSink, FilesPathTakesThePlaceOfDevAndIno) {
  WriteTimeline write = durable_write();
  write.call.path = "/mnt/data/app.log";
  std::string text = text_of(write);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "pwrite64 pid 1234/1235 (dd) fd 3 /mnt/data/app.log off 8192 4 KiB  latency 14.2us  "
            "DURABLE +3.10ms via flush");
  SyncTimeline sync = fsync_timeline();
  sync.call.path = "/mnt/data/old.log (deleted)";
  text = text_of(sync);
  EXPECT_TRUE(
      contains(text, "fdatasync pid 1234/1235 (dd) fd 3 /mnt/data/old.log (deleted)  latency"))
      << text;
  // A control character in a file name cannot forge a line.
  write.call.path = "/mnt/a\nb";
  EXPECT_TRUE(contains(text_of(write), "fd 3 /mnt/a\\x0ab off")) << text_of(write);
}

TEST(TextSink, RequestNamesTheOtherThreadsWhoseBiosItCarried) {
  RequestTimeline request = data_request();
  request.submit_tid = 300;
  request.submit_comm = "fio";
  request.submit_why = SubmitWhy::SyncSyscall;
  request.other_submitters.push_back(RequestSubmitter{301, "fio", SubmitWhy::SyncSyscall});
  const std::string text =
      text_of(builders::durable_write(write_call(), request, kStart + 3'100'000));
  EXPECT_TRUE(contains(text, "sector 2048 4 KiB by fio (fsync) + fio [301] (fsync)  queue"))
      << text;
}

TEST(TextSink, FailedDirectWriteShowsErrorAndDirect) {
  WriteTimeline write = dirty_write();
  write.state = WriteState::Failed;
  write.incomplete = false;
  write.direct = true;
  write.call.file_flags |= file_flag::kDirect;
  write.call.ret = -EINVAL;
  write.call.pages_dirtied = 0;
  write.call.end_ns = kStart + 812;
  const std::string text = text_of(write);
  EXPECT_EQ(text,
            "pwrite64 pid 1234/1235 (dd) fd 3 dev 7:0 ino 12 off 8192 4 KiB direct  "
            "latency 812ns  FAILED EINVAL\n");
}

TEST(TextSink, IncompleteDirtyWriteSaysSo) {
  WriteTimeline write = dirty_write();
  write.call.ret = 2048;  // short write
  write.call.throttle_ns = 1'250'000'000;
  write.call.throttle_events = 2;
  const std::string text = text_of(write);
  EXPECT_TRUE(contains(text, "off 8192 2 KiB of 4 KiB")) << text;
  EXPECT_TRUE(contains(text, "DIRTY 1/1 pages pending (incomplete)")) << text;
  EXPECT_TRUE(contains(text, "dirtied 1 page  throttled 1.25s (2 pauses)")) << text;
}

TEST(TextSink, DiscardedWriteSaysWhenAndThatItWasNeverWritten) {
  WriteTimeline write = dirty_write();
  write.state = WriteState::Discarded;
  write.incomplete = false;
  write.discarded_ns = write.call.start_ns + 2'500'000;
  const std::string text = text_of(write);
  EXPECT_TRUE(contains(text, "DISCARDED +2.50ms, never written")) << text;
}

TEST(TextSink, SummaryCountsDiscardedWritesWhenThereAreAny) {
  TraceSummary totals;
  totals.writes = 9;
  totals.discarded = 3;
  EXPECT_TRUE(contains(format_summary(totals, SinkOptions{}), "incomplete 0  discarded 3  "));
  totals.discarded = 0;
  EXPECT_FALSE(contains(format_summary(totals, SinkOptions{}), "discarded"));
}

TEST(TextSink, RequestErrorAndMissingCompletion) {
  WriteTimeline write = durable_write();
  write.state = WriteState::Written;
  write.durable_ns.reset();
  write.durable_via = DurableVia::None;
  write.requests[0].error = -EIO;
  RequestTimeline stuck = data_request();
  stuck.sector = 4096;
  stuck.complete_ns.reset();
  write.requests.push_back(stuck);
  const std::string text = text_of(write);
  EXPECT_TRUE(contains(text, "WRITTEN +2.80ms, not durable")) << text;
  EXPECT_TRUE(contains(text, "complete +2.80ms  error EIO")) << text;
  EXPECT_TRUE(contains(text,
                       "sector 4096 4 KiB  queue +1.20ms  insert +1.21ms  issue +1.22ms  "
                       "not completed"))
      << text;
}

TEST(TextSink, FsyncShowsPhasesFlushNvmeAndJournalInTimeOrder) {
  const std::string text = text_of(fsync_timeline());
  EXPECT_TRUE(contains(text, "fdatasync pid 1234/1235 (dd) fd 3 dev 7:0 ino 12  latency 5.20ms\n"))
      << text;
  EXPECT_TRUE(contains(text,
                       "phases  writeback 400.0us  data-io 1.10ms  journal 2.00ms (overlaps "
                       "flush)  flush 1.50ms (overlaps journal)  other 200.0us\n"))
      << text;
  EXPECT_TRUE(contains(text,
                       "  +400.0us  request WS 7:0 sector 2048 4 KiB  queue +400.0us  "
                       "issue +410.0us  complete +1.50ms\n"))
      << text;
  EXPECT_TRUE(contains(text, "    +3.10ms  flush FF 7:0  issue +3.10ms  complete +4.60ms\n"))
      << text;
  EXPECT_TRUE(contains(text,
                       "nvme qid 2 cid 17 opcode 0x00  submit +3.11ms  complete +4.59ms  "
                       "status 0x0\n"))
      << text;
  EXPECT_TRUE(contains(text,
                       "    +1.50ms  journal commit 23 dev 253:0  +1.50ms..+4.90ms  "
                       "ran 3.40ms\n"))
      << text;
  EXPECT_LT(text.find("phases"), text.find("request WS"));
  EXPECT_LT(text.find("request WS"), text.find("journal commit"));
  EXPECT_LT(text.find("journal commit"), text.find("flush FF"));
  EXPECT_LT(text.find("flush FF"), text.find("nvme"));
}

// The data request ends as the commit starts, the flush runs inside the commit: only journal
// and flush ran together.
TEST(TextSink, PhaseLineSaysWhichPhasesRanTogether) {
  SyncTimeline sync = fsync_timeline();
  std::string text = text_of(sync);
  EXPECT_TRUE(contains(text, "data-io 1.10ms  journal")) << text;
  // The data request still in flight when the commit starts.
  sync.requests[0].complete_ns = kStart + 2'000'000;
  text = text_of(sync);
  EXPECT_TRUE(contains(text,
                       "data-io 1.10ms (overlaps journal)  journal 2.00ms (overlaps data-io, "
                       "flush)  flush 1.50ms (overlaps journal)  other"))
      << text;
  // One after another: no phase says it overlaps.
  sync = fsync_timeline();
  sync.commits[0].end_ns = kStart + 3'000'000;
  text = text_of(sync);
  EXPECT_FALSE(contains(text, "overlaps")) << text;
  // A phase hidden entirely under another is not on the line, but the other names it.
  sync = fsync_timeline();
  sync.phases.flush_ns = 0;
  text = text_of(sync);
  EXPECT_TRUE(contains(text, "journal 2.00ms (overlaps flush)  other")) << text;
}

TEST(TextSink, LegendOnceBeforeTheFirstRequestLine) {
  std::ostringstream out;
  TextSink sink(out, SinkOptions{});
  WriteTimeline cached = durable_write();
  cached.requests.clear();
  sink.timeline(cached);  // nothing for the legend to explain yet
  EXPECT_FALSE(contains(out.str(), "legend")) << out.str();
  sink.timeline(durable_write());
  sink.timeline(fsync_timeline());
  sink.timeline(durable_write());
  const std::string text = out.str();
  const auto legend = text.find("legend:");
  ASSERT_NE(legend, std::string::npos) << text;
  EXPECT_EQ(text.find("legend:", legend + 1), std::string::npos) << "printed twice: " << text;
  EXPECT_LT(text.find("pwrite64"), legend);  // after the first item, which had no request
  EXPECT_LT(legend, text.find("request WS"));
}

TEST(TextSink, LegendExplainsTheCodesItPrints) {
  const std::string legend = format_legend(SinkOptions{});
  for (const char* code : {"W write", "S sync", "M metadata", "F = FUA", "PREFLUSH", "FF is a pure",
                           "sector: 512-byte units", "(overlaps X)"})
    EXPECT_TRUE(contains(legend, code)) << code << " in " << legend;
  EXPECT_TRUE(needs_legend(fsync_timeline()));
  WriteTimeline cached = durable_write();
  cached.requests.clear();
  EXPECT_FALSE(needs_legend(cached));
}

TEST(TextSink, CommitStartedBeforeTheCallHasNegativeOffset) {
  SyncTimeline sync = fsync_timeline();
  sync.commits[0].start_ns = kStart - 1'200'000;
  sync.commits[0].end_ns.reset();
  sync.incomplete = true;
  const std::string text = text_of(sync);
  EXPECT_TRUE(contains(text, "    -1.20ms  journal commit 23 dev 253:0  -1.20ms..(not ended)\n"))
      << text;
  EXPECT_TRUE(contains(text, "latency 5.20ms (incomplete)\n")) << text;
}

TEST(TextSink, HostileCommIsEscaped) {
  WriteTimeline write = durable_write();
  write.call.comm = std::string("ev\x1b[2Jil\\\n\xc2\x9b", 12);
  const std::string text = text_of(write);
  EXPECT_FALSE(contains(text, "\x1b")) << text;
  EXPECT_TRUE(contains(text, "(ev\\x1b[2Jil\\\\\\x0a\\xc2\\x9b)")) << text;
  EXPECT_EQ(printable_comm("kworker/u8:2"), "kworker/u8:2");
  EXPECT_EQ(printable_comm("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 passes through
}

TEST(TextSink, ColorOnlyWhenAsked) {
  const std::string colored =
      format_timeline(durable_write(), SinkOptions{.color = true, .devices = {}});
  EXPECT_TRUE(contains(colored, "\x1b[32mDURABLE +3.10ms via flush\x1b[0m")) << colored;
}

TEST(TextSink, Summary) {
  TraceSummary totals;
  totals.events = 12'345;
  totals.lost = 3;
  totals.lost_by_hook = {{"block_rq_issue", 2}, {"block_bio_queue", 1}, {"nvme_setup_cmd", 0}};
  totals.writes = 100;
  totals.fsyncs = 10;
  totals.incomplete = 2;
  totals.duration_ns = 5'000'000'000;
  std::ostringstream out;
  auto sink = make_sink(OutputFormat::Text, out, SinkOptions{});
  sink->summary(totals);
  EXPECT_EQ(out.str(),
            "summary  writes 100  fsyncs 10  incomplete 2  duration 5.00s\n"
            "         kernel records 12345  lost 3 (block_bio_queue 1, block_rq_issue 2)\n");
}

TEST(TextSink, ItemsNameTheirCgroupWhenAskedOrOnceASecondOneIsSeen) {
  WriteTimeline in_a = durable_write(), in_b = durable_write();
  in_a.call.cgroup = "/a.slice";
  in_b.call.cgroup = "/b.slice";
  const std::string first_line = text_of(in_a).substr(0, text_of(in_a).find('\n'));
  EXPECT_FALSE(contains(first_line, "cgroup")) << first_line;
  EXPECT_TRUE(
      contains(format_timeline(in_a, SinkOptions{.color = false, .devices = {}, .cgroups = true}),
               "(dd) cgroup /a.slice fd 3"));
  std::ostringstream out;
  auto sink = make_sink(OutputFormat::Text, out, SinkOptions{});
  sink->timeline(in_a);
  EXPECT_FALSE(contains(out.str(), "cgroup")) << out.str();  // one cgroup so far
  sink->timeline(in_b);
  sink->timeline(in_a);
  EXPECT_TRUE(contains(out.str(), "(dd) cgroup /b.slice fd 3")) << out.str();
  EXPECT_TRUE(contains(out.str(), "(dd) cgroup /a.slice fd 3")) << out.str();
}

// A container's items name it as `docker ps` does, once the trace spans a second cgroup; a
// host process beside it keeps its cgroup path.
TEST(TextSink, ItemsOfAContainerNameItsShortIdAndRuntime) {
  const std::string id = "3f9c1d2e4b5a" + std::string(52, '0');
  WriteTimeline in_container = durable_write(), on_host = durable_write();
  in_container.call.cgroup = "/system.slice/docker-" + id + ".scope";
  in_container.call.container =
      std::make_shared<const Container>(container_of_cgroup(in_container.call.cgroup).value());
  on_host.call.cgroup = "/system.slice/cron.service";
  std::ostringstream out;
  auto sink = make_sink(OutputFormat::Text, out, SinkOptions{});
  sink->timeline(in_container);
  EXPECT_FALSE(contains(out.str(), "container")) << out.str();  // one cgroup so far
  sink->timeline(on_host);
  sink->timeline(in_container);
  EXPECT_TRUE(contains(out.str(), "(dd) container 3f9c1d2e4b5a (docker) fd 3")) << out.str();
  EXPECT_TRUE(contains(out.str(), "(dd) cgroup /system.slice/cron.service fd 3")) << out.str();
  EXPECT_FALSE(contains(out.str(), "docker-3f9c")) << out.str();
  // Named by its runtime: the name, as `docker ps` shows it.
  Container named = *in_container.call.container;
  named.name = "web";
  in_container.call.container = std::make_shared<const Container>(named);
  EXPECT_TRUE(contains(
      format_timeline(in_container, SinkOptions{.color = false, .devices = {}, .cgroups = true}),
      "(dd) container web (docker) fd 3"));
  EXPECT_EQ(json_of(in_container)["container"]["name"], "web");
  EXPECT_TRUE(json_of(in_container)["container"]["pod"].is_null());
  EXPECT_TRUE(json_of(in_container)["container"]["namespace"].is_null());
  EXPECT_TRUE(json_of(in_container)["container"]["hostname"].is_null());
  named.hostname = "web-1";  // its UTS namespace's
  in_container.call.container = std::make_shared<const Container>(named);
  EXPECT_EQ(json_of(in_container)["container"]["hostname"], "web-1");
}

// A writer in another mount namespace: its own path first, the host's beside it.
TEST(Sinks, AFileTheHostNamesOtherwiseShowsBothPaths) {
  WriteTimeline write = durable_write();
  EXPECT_TRUE(json_of(write)["host_path"].is_null());
  EXPECT_FALSE(contains(text_of(write), "(host ")) << text_of(write);
  write.call.path = "/data/x";
  write.call.host_path = "/var/lib/docker/overlay2/4f1e/merged/data/x";
  EXPECT_EQ(json_of(write)["path"], "/data/x");
  EXPECT_EQ(json_of(write)["host_path"], "/var/lib/docker/overlay2/4f1e/merged/data/x");
  EXPECT_TRUE(
      contains(text_of(write), " /data/x (host /var/lib/docker/overlay2/4f1e/merged/data/x)"))
      << text_of(write);
}

TEST(TextSink, SummaryHintIsItsLastLine) {
  TraceSummary totals;
  EXPECT_FALSE(contains(format_summary(totals, SinkOptions{}), "hint"));
  totals.hint = "add --children";
  const std::string text = format_summary(totals, SinkOptions{});
  EXPECT_TRUE(text.ends_with("\nhint: add --children\n")) << text;
}

TEST(TextSink, SummarySaysWhichCallsWereNotStitched) {
  TraceSummary totals;
  totals.untraced_calls = {{"msync", 5}, {"copy_file_range", 2}, {"io_uring_enter", 0}};
  const std::string text = format_summary(totals, SinkOptions{});
  EXPECT_TRUE(contains(text,
                       "not stitched: copy_file_range 2, msync 5 (calls that write by ways the "
                       "trace does not follow; writepath doctor: coverage)\n"))
      << text;
  totals.untraced_calls = {{"msync", 0}};
  EXPECT_FALSE(contains(format_summary(totals, SinkOptions{}), "not stitched")) << text;
}

TEST(TextSink, SummaryWithoutLossesHasNoHookList) {
  TraceSummary totals;
  totals.events = 7;
  const std::string text = format_summary(totals, SinkOptions{});
  EXPECT_TRUE(contains(text, "kernel records 7  lost 0\n")) << text;
}

}  // namespace
}  // namespace wp
