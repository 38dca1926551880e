// SPDX-License-Identifier: Apache-2.0
// The text sink: hand-built items in, what a person reads out (relative times, units,
// verdicts, the legend, names of cgroups and containers).
#include <gtest/gtest.h>

#include <cerrno>
#include <memory>
#include <sstream>
#include <string>

#include "common/container.h"
#include "sinks/sink.h"
#include "sinks/text_notes.h"
#include "sinks/text_sink.h"

#include "sink_fixture.h"

namespace wp {
namespace {

using namespace sink_test;

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

}  // namespace
}  // namespace wp
