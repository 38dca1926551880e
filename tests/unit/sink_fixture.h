// SPDX-License-Identifier: Apache-2.0
// The items the sinks' unit tests write, and the helpers that read their output back: a
// buffered pwrite of 4 KiB made durable by a later cache flush, a dirty one, an fdatasync with
// its request, flush (and its NVMe command) and journal commit; every time relative to kStart.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "sinks/json_sink.h"
#include "sinks/sink.h"
#include "sinks/text_sink.h"

#include "builders.h"

namespace wp::sink_test {

using nlohmann::json;
using namespace builders;

constexpr Nanos kStart = 1'000'000'000;  // syscall start: every relative time is from here

inline SyscallEvent write_call() {
  SyscallEvent call = syscall_event({.start_ns = kStart, .end_ns = kStart + 14'200, .pos = 8192});
  call.dirty_folios = 1;
  return call;
}

inline RequestTimeline data_request() {
  RequestTimeline request =
      write_request(kLoop0, 2048, 4096, kStart + 1'220'000, kStart + 2'800'000);
  request.queue_ns = kStart + 1'200'000;
  request.insert_ns = kStart + 1'210'000;
  return request;
}

// A buffered pwrite made durable by a later cache flush.
inline WriteTimeline durable_write() {
  return builders::durable_write(write_call(), data_request(), kStart + 3'100'000);
}

// A buffered write that never reached the disk before the trace ended.
inline WriteTimeline dirty_write() {
  return builders::dirty_write(write_call());
}

inline SyncTimeline fsync_timeline() {
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

inline json parse_one_line(const std::string& text) {
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "exactly one line: " << text;
  return json::parse(text);
}

inline json json_of(const Timeline& item) {
  std::ostringstream out;
  JsonSink sink(out);
  sink.timeline(item);
  return parse_one_line(out.str());
}

inline std::string text_of(const Timeline& item) {
  return format_timeline(item, SinkOptions{});
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace wp::sink_test
