// SPDX-License-Identifier: Apache-2.0
// The pipeline from raw records to the sink: items carry the path of the cgroup the kernel
// named for their thread, as the agent (live) or a trace file (report) names the id.
#include "agent/pipeline.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "builders.h"
#include "writepath.h"

namespace wp {
namespace {

using builders::bytes_of;

std::vector<std::byte> cgroup_record(std::uint32_t tid, std::uint64_t id, Nanos ts) {
  wp_cgroup_record r{};
  r.h = {WP_REC_CGROUP, sizeof(r), WP_RECORD_VERSION, 0, ts};
  r.cgroup_id = id;
  r.pid = tid;
  r.tid = tid;
  return bytes_of(r);
}

std::vector<std::byte> fsync_record(std::uint32_t tid, Nanos start, Nanos end) {
  wp_syscall_record r{};
  r.h = {WP_REC_SYSCALL, sizeof(r), WP_RECORD_VERSION, 0, end};
  r.start_ns = start;
  r.pid = tid;
  r.tid = tid;
  r.syscall = WP_SYS_FSYNC;
  r.fd = 3;
  r.dev = (7u << 20) | 1;
  r.ino = 12;
  r.file_flags = WP_FILE_REGULAR;
  return bytes_of(r);
}

std::vector<nlohmann::json> items_of(const std::string& jsonl) {
  std::vector<nlohmann::json> items;
  std::istringstream lines(jsonl);
  for (std::string line; std::getline(lines, line);) {
    auto object = nlohmann::json::parse(line);
    if (object["type"] != "summary") items.push_back(object);
  }
  return items;
}

TEST(Pipeline, ItemsCarryThePathOfTheirThreadsCgroup) {
  std::ostringstream out;
  auto sink = make_sink(OutputFormat::Json, out, SinkOptions{});
  Pipeline pipeline(PipelineOptions{}, {}, *sink);
  pipeline.name_cgroup(0xa1, "/kubepods.slice/pod1/ctr");
  pipeline.on_record(cgroup_record(100, 0xa1, 10));
  pipeline.on_record(fsync_record(100, 20, 30));
  pipeline.on_record(cgroup_record(200, 0xb2, 40));  // an id with no known path
  pipeline.on_record(fsync_record(200, 50, 60));
  pipeline.on_record(fsync_record(300, 70, 80));  // a thread never named
  pipeline.finish(100);
  const auto items = items_of(out.str());
  ASSERT_EQ(items.size(), 3u) << out.str();
  EXPECT_EQ(items[0]["tid"], 100);
  EXPECT_EQ(items[0]["cgroup"], "/kubepods.slice/pod1/ctr");
  EXPECT_TRUE(items[1]["cgroup"].is_null());
  EXPECT_TRUE(items[2]["cgroup"].is_null());
}

// The stitcher gets off-CPU stacks named as the pipeline was told (kallsyms live, a trace
// file's KernelSymbol frames in report); an address never named stays "".
TEST(Pipeline, OffCpuFramesAreNamedAsToldAndUnknownOnesStayEmpty) {
  std::ostringstream out;
  auto sink = make_sink(OutputFormat::Json, out, SinkOptions{});
  Pipeline pipeline(PipelineOptions{}, {}, *sink);
  pipeline.name_kernel_address(0x1000, "jbd2_log_wait_commit+0xee");
  pipeline.name_kernel_address(0x3000, "kjournald2+0x1b0");
  OffCpuEvent event;
  OffCpuSleep sleep;
  sleep.stack.addrs = {0x1000, 0x2000};
  sleep.stack.frames = {"", ""};
  sleep.waker = Waker{1, 2, "jbd2/loop0-8", true, KernelStack{{0x3000}, {""}}};
  event.sleeps.push_back(sleep);
  const OffCpuEvent named = pipeline.named_frames(event);
  ASSERT_EQ(named.sleeps.size(), 1u);
  EXPECT_EQ(named.sleeps[0].stack.frames,
            (std::vector<std::string>{"jbd2_log_wait_commit+0xee", ""}));
  ASSERT_TRUE(named.sleeps[0].waker);
  EXPECT_EQ(named.sleeps[0].waker->stack.frames, (std::vector<std::string>{"kjournald2+0x1b0"}));
  // A stack decoded without names yet (frames shorter than addrs) gets one name per address.
  event.sleeps[0].stack.frames.clear();
  EXPECT_EQ(pipeline.named_frames(event).sleeps[0].stack.frames.size(), 2u);
}

// bpf_get_stack() starts in the tracer: the BPF program (in no symbol kallsyms had when read)
// and the bpf_trace_run<N> that ran it are dropped, so a stack starts at the tracepoint's caller.
TEST(Pipeline, OffCpuStacksStartBelowTheTracersOwnFrames) {
  std::ostringstream out;
  auto sink = make_sink(OutputFormat::Json, out, SinkOptions{});
  Pipeline pipeline(PipelineOptions{}, {}, *sink);
  pipeline.name_kernel_address(0xc0001000, "0xc0001000");
  pipeline.name_kernel_address(0x2000, "bpf_trace_run4+0x10d");
  pipeline.name_kernel_address(0x3000, "__schedule+0x628");
  pipeline.name_kernel_address(0x4000, "schedule+0x23");
  OffCpuEvent event;
  OffCpuSleep sleep;
  sleep.stack.addrs = {0xc0001000, 0x2000, 0x3000, 0x4000};
  event.sleeps.push_back(sleep);
  const OffCpuEvent named = pipeline.named_frames(event);
  EXPECT_EQ(named.sleeps[0].stack.addrs, (std::vector<std::uint64_t>{0x3000, 0x4000}));
  EXPECT_EQ(named.sleeps[0].stack.frames,
            (std::vector<std::string>{"__schedule+0x628", "schedule+0x23"}));
}

}  // namespace
}  // namespace wp
