// SPDX-License-Identifier: Apache-2.0
// The JSON Lines sink: hand-built items in, one object per line out, checked against the
// contract of docs/reference/json-lines.md key by key.
#include <gtest/gtest.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/container.h"
#include "sinks/json_sink.h"
#include "sinks/sink.h"

#include "sink_fixture.h"

namespace wp {
namespace {

using namespace sink_test;

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

}  // namespace
}  // namespace wp
