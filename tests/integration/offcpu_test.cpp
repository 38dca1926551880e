// SPDX-License-Identifier: Apache-2.0
// Where slow fsyncs slept: `record --min-latency` keeps, per slow call, the kernel stacks it
// slept with and who woke it, and names their frames in the trace file. On ext4 with a journal
// an fsync waits for jbd2's commit (jbd2_log_wait_commit, as /proc/PID/stack of a thread
// blocked in fsync shows on 6.18), and the journal thread wakes it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "decode/decoder.h"
#include "harness.h"
#include "record/trace_file.h"

namespace {

using namespace wp::testing;
namespace fs = std::filesystem;

struct Recorded {
  std::vector<wp::OffCpuEvent> offcpu;  // frames named from the file's KernelSymbol frames
  std::vector<wp::CausesEvent> causes;
  std::vector<wp::SyscallEvent> fsyncs;
  int unnamed_before_use = 0;  // addresses a record held before any frame named them
  std::uint64_t malformed = 0;
};

void name_stack(wp::KernelStack& stack, const std::map<std::uint64_t, std::string>& names,
                int& unnamed) {
  stack.frames.assign(stack.addrs.size(), "");
  for (std::size_t i = 0; i < stack.addrs.size(); ++i) {
    auto it = names.find(stack.addrs[i]);
    if (it == names.end())
      ++unnamed;
    else
      stack.frames[i] = it->second;
  }
}

Recorded read_trace(const fs::path& trace) {
  Recorded out;
  auto reader = wp::TraceFileReader::open(trace.string());
  EXPECT_EQ(reader.error(), "");
  std::map<std::uint64_t, std::string> names;
  wp::Decoder decoder;
  while (auto frame = reader.next()) {
    if (auto symbol = wp::kernel_symbol_of(*frame)) names[symbol->address] = symbol->name;
    if (frame->kind != wp::FrameKind::Record) continue;
    auto event = decoder.decode(frame->payload);
    if (!event) continue;
    if (auto* o = std::get_if<wp::OffCpuEvent>(&*event)) {
      for (auto& sleep : o->sleeps) {
        name_stack(sleep.stack, names, out.unnamed_before_use);
        if (sleep.waker) name_stack(sleep.waker->stack, names, out.unnamed_before_use);
      }
      out.offcpu.push_back(*o);
    } else if (auto* c = std::get_if<wp::CausesEvent>(&*event)) {
      out.causes.push_back(*c);
    } else if (auto* s = std::get_if<wp::SyscallEvent>(&*event)) {
      if (s->syscall == wp::Syscall::Fsync) out.fsyncs.push_back(*s);
    }
  }
  EXPECT_EQ(reader.warning(), "");
  out.malformed = decoder.stats().malformed;
  return out;
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

TEST_F(ScratchExt4, SlowFsyncsSleepInTheJournalCommitAndJbd2WakesThem) {
  constexpr int kFsyncs = 20;  // a 4 KiB write, then an fsync, 20 times
  const fs::path trace = root_ / "offcpu.wpt";
  // 100 µs: an fsync that waits for a journal commit and its cache flush takes longer, while
  // the loop device's flush (an fsync of its image on the host) can be quick enough that no
  // fsync of the 20 takes 1 ms (the soak saw that once).
  RunResult r =
      run({tool("writepath"), "record", "--min-latency", "100us", "-o", trace.string(), "--",
           tool("wp_workload"), "fsync-each", file("offcpu.dat"), std::to_string(kFsyncs)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Recorded rec = read_trace(trace);
  EXPECT_EQ(rec.malformed, 0u);
  EXPECT_EQ(rec.unnamed_before_use, 0) << "a KernelSymbol frame comes before its first record";
  ASSERT_FALSE(rec.fsyncs.empty()) << "no fsync took 100 us or more";
  EXPECT_LE(rec.fsyncs.size(), static_cast<std::size_t>(kFsyncs));
  // One off-CPU record and one causes record per slow call, the same calls.
  ASSERT_EQ(rec.offcpu.size(), rec.causes.size());

  int in_commit_woken_by_jbd2 = 0;
  for (const wp::SyscallEvent& fsync : rec.fsyncs) {
    const wp::OffCpuEvent* offcpu = nullptr;
    const wp::CausesEvent* causes = nullptr;
    for (const auto& o : rec.offcpu)
      if (o.tid == fsync.tid && o.start_ns == fsync.start_ns) offcpu = &o;
    for (const auto& c : rec.causes)
      if (c.tid == fsync.tid && c.start_ns == fsync.start_ns) causes = &c;
    ASSERT_NE(offcpu, nullptr) << "fsync at " << fsync.start_ns << " has no off-CPU record";
    ASSERT_NE(causes, nullptr);
    // The stacks share out exactly the sleeps the causes split counted (not preemptions).
    wp::Nanos slept = offcpu->unslotted_ns;
    for (const auto& sleep : offcpu->sleeps) {
      slept += sleep.ns;
      EXPECT_LE(sleep.longest_ns, sleep.ns);
      EXPECT_GE(sleep.sleeps, 1u);
      ASSERT_FALSE(sleep.stack.frames.empty());
      for (const auto& frame : sleep.stack.frames) EXPECT_FALSE(frame.empty());
    }
    EXPECT_EQ(slept, causes->blocked_ns + causes->throttle_ns + causes->writeback_wait_ns);
    EXPECT_LE(slept, fsync.end_ns - fsync.start_ns);
    for (std::size_t i = 1; i < offcpu->sleeps.size(); ++i)
      EXPECT_GE(offcpu->sleeps[i - 1].ns, offcpu->sleeps[i].ns) << "longest first";
    for (const auto& sleep : offcpu->sleeps) {
      bool in_commit = false;
      for (const auto& frame : sleep.stack.frames)
        in_commit |= starts_with(frame, "jbd2_log_wait_commit+");
      if (in_commit && sleep.waker && starts_with(sleep.waker->comm, "jbd2/") &&
          sleep.waker->kernel_thread && !sleep.waker->stack.frames.empty())
        ++in_commit_woken_by_jbd2;
    }
  }
  EXPECT_GE(in_commit_woken_by_jbd2, 1)
      << "no slow fsync slept in jbd2_log_wait_commit and was woken by a jbd2/ thread";
}

// blk-throttle (cgroup v1 blkio.throttle.write_bps_device on the loop device): each O_DIRECT
// write of a process in the throttled cgroup is held back, and the kernel arms the throttle's
// dispatch timer in the writing thread; the cgroup's own blkio.throttle.io_serviced says how
// many of its bios the throttle passed.
TEST_F(ScratchExt4, ODirectWritesOverABlkioLimitAreSeenHeldBackByTheThrottle) {
  const fs::path blkio = "/sys/fs/cgroup/blkio";
  if (!fs::exists(blkio / "blkio.throttle.write_bps_device"))
    GTEST_SKIP() << "no cgroup v1 blkio hierarchy at " << blkio;
  const fs::path group = blkio / ("wp_offcpu_" + std::to_string(::getpid()));
  fs::create_directory(group);
  struct stat loop {};
  ASSERT_EQ(::stat(loop_.c_str(), &loop), 0);
  constexpr int kWrites = 8, kBytes = 64 << 10, kBps = 1 << 20;  // 512 KiB at 1 MiB/s
  const std::string limit = std::to_string(major(loop.st_rdev)) + ":" +
                            std::to_string(minor(loop.st_rdev)) + " " + std::to_string(kBps);
  ASSERT_TRUE(sh("echo '" + limit + "' > " + (group / "blkio.throttle.write_bps_device").string()));
  const fs::path trace = root_ / "throttled.wpt";
  const std::string workload = tool("wp_workload") + " direct " + file("throttled.dat") + " " +
                               std::to_string(kWrites) + " " + std::to_string(kBytes);
  RunResult r =
      run({tool("writepath"), "record", "--min-latency", "10ms", "-o", trace.string(), "--", "sh",
           "-c", "echo $$ > " + (group / "cgroup.procs").string() + " && exec " + workload});
  const std::string serviced = slurp(group / "blkio.throttle.io_serviced");
  sh("rmdir " + group.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Recorded rec = read_trace(trace);
  int throttled_calls = 0;
  std::uint32_t armed = 0;
  for (const auto& o : rec.offcpu) {
    if (o.blk_throttled) ++throttled_calls;
    armed += o.blk_throttled;
  }
  std::cerr << "blkio.throttle.io_serviced:\n"
            << serviced << "slow calls " << rec.offcpu.size() << ", held back " << throttled_calls
            << " (timer armed " << armed << " times)\n";
  // The cgroup's own count: every write of the program went through the throttle.
  const std::string dev =
      std::to_string(major(loop.st_rdev)) + ":" + std::to_string(minor(loop.st_rdev));
  EXPECT_NE(serviced.find(dev + " Write " + std::to_string(kWrites) + "\n"), std::string::npos)
      << serviced;
  // At 1 MiB/s a 64 KiB write waits ~64 ms; the first ones may pass within the limit's first
  // slice (and be faster than 10 ms, unrecorded). Most are held back, each seen so.
  EXPECT_GE(throttled_calls, kWrites / 2);
  EXPECT_LE(throttled_calls, static_cast<int>(rec.offcpu.size()));
}

TEST_F(ScratchExt4, NoStacksRecordsNoOffCpuRecordsButKeepsTheCauses) {
  const fs::path trace = root_ / "no-stacks.wpt";
  RunResult r =
      // 100us: every fsync of a journaled loop ext4 is slower, on a fast box too (1ms was not).
      run({tool("writepath"), "record", "--min-latency", "100us", "--no-stacks", "-o",
           trace.string(), "--", tool("wp_workload"), "fsync-each", file("no-stacks.dat"), "10"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Recorded rec = read_trace(trace);
  ASSERT_FALSE(rec.fsyncs.empty());
  EXPECT_FALSE(rec.causes.empty());
  EXPECT_TRUE(rec.offcpu.empty());
}

TEST(NoStacks, WithoutMinLatencyIsOneUsageError) {
  RunResult r = run({writepath(), "record", "--no-stacks", "-o", "/dev/null", "--", "true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "writepath: --no-stacks: only with --min-latency (the slow calls' stacks it "
            "turns off)\n");
}

}  // namespace
