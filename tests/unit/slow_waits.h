// SPDX-License-Identifier: Apache-2.0
// A slow fsync's causes as the stitcher names them with stacks on, built by hand for the sinks'
// tests: 280 ms waiting on journal commit 5 (woken by jbd2, a flush in its chain), 12 ms on
// the file's i_rwsem held by another writer, 3 ms unnamed.
#pragma once

#include "builders.h"
#include "stitch/timeline.h"

namespace wp::builders {

inline KernelStack kernel_stack(std::vector<std::string> frames) {
  KernelStack stack;
  for (std::size_t i = 0; i < frames.size(); ++i) stack.addrs.push_back(0xffffffff81000000 + i);
  stack.frames = std::move(frames);
  return stack;
}

inline Waker waker(std::uint32_t pid, std::uint32_t tid, std::string comm, bool kernel_thread,
                   std::vector<std::string> frames = {}) {
  Waker w;
  w.pid = pid;
  w.tid = tid;
  w.comm = std::move(comm);
  w.kernel_thread = kernel_thread;
  w.stack = kernel_stack(std::move(frames));
  return w;
}

inline Waker jbd2_waker() {
  return waker(
      123, 123, "jbd2/loop0-8", true,
      {"__wake_up_common+0x7a", "__wake_up+0x36", "jbd2_journal_commit_transaction+0x1234 [jbd2]"});
}

inline NamedWait named_wait(WaitCause cause, Nanos ns, std::uint32_t sleeps, std::string evidence,
                            std::vector<std::string> frames = {}) {
  NamedWait w;
  w.cause = cause;
  w.ns = ns;
  w.sleeps = sleeps;
  w.evidence = std::move(evidence);
  w.frames = std::move(frames);
  return w;
}

inline OffCpuSleep off_cpu_sleep(Nanos ns, Nanos longest_ns, std::uint32_t sleeps,
                                 std::vector<std::string> frames) {
  OffCpuSleep s;
  s.ns = ns;
  s.longest_ns = longest_ns;
  s.sleeps = sleeps;
  s.stack = kernel_stack(std::move(frames));
  return s;
}

inline JournalCommit journal_commit(DevT dev, std::uint32_t transaction, Nanos start, Nanos end) {
  JournalCommit c;
  c.dev = dev;
  c.transaction = transaction;
  c.start_ns = start;
  c.end_ns = end;
  return c;
}

inline std::vector<std::string> commit_wait_frames() {
  return {"jbd2_log_wait_commit+0x9c [jbd2]",
          "jbd2_complete_transaction+0x5e [jbd2]",
          "ext4_fc_commit+0x1ea [ext4]",
          "ext4_sync_file+0x18a [ext4]",
          "do_fsync+0x38",
          "__x64_sys_fsync+0x10",
          "do_syscall_64+0x5d"};
}

// `start`: the call's start; the commit and its flush fall inside the call.
inline SlowCauses slow_fsync_causes(Nanos start) {
  SlowCauses causes{.on_cpu_ns = 1'000'000, .blocked_ns = 295'100'000, .runnable_ns = 200'000};
  OffCpuSleep commit_sleep =
      off_cpu_sleep(280'100'000, 200'000'000, 2,
                    {"__schedule+0x2f0", "schedule+0x5e", "jbd2_log_wait_commit+0x9c [jbd2]",
                     "jbd2_complete_transaction+0x5e [jbd2]", "ext4_fc_commit+0x1ea [ext4]",
                     "ext4_sync_file+0x18a [ext4]"});
  commit_sleep.waker = jbd2_waker();
  commit_sleep.stack.frames.push_back("");  // an address the symbolizer could not name
  commit_sleep.stack.addrs.push_back(0xffffffffc0de0000);
  OffCpuSleep lock_sleep =
      off_cpu_sleep(12'000'000, 12'000'000, 1,
                    {"__schedule+0x2f0", "schedule+0x5e", "rwsem_down_write_slowpath+0x2a1",
                     "down_write+0x45", "ext4_sync_file+0x4c [ext4]"});
  causes.sleeps = {commit_sleep, lock_sleep};
  causes.unslotted_ns = 3'000'000;

  NamedWait commit = named_wait(WaitCause::JournalCommit, 280'100'000, 2, "jbd2_log_wait_commit",
                                commit_wait_frames());
  commit.waker = jbd2_waker();
  commit.chain.commit = journal_commit(kLoop0, 5, start + 10'000'000, start + 290'000'000);
  commit.chain.flushes.push_back(flush_request(kLoop0, start + 100'000'000, start + 101'700'000));
  NamedWait lock = named_wait(
      WaitCause::InodeLock, 12'000'000, 1, "lock:contention_begin on the file's i_rwsem",
      {"rwsem_down_write_slowpath+0x2a1", "down_write+0x45", "ext4_sync_file+0x4c [ext4]"});
  LockHolder holder;
  holder.pid = 456;
  holder.tid = 457;
  holder.comm = "wp_workload";
  lock.holder = holder;
  NamedWait other =
      named_wait(WaitCause::Other, 3'000'000, 1, "", {"msleep+0x2d", "ext4_sync_file+0x99 [ext4]"});
  causes.waits = {commit, lock, other};
  return causes;
}

}  // namespace wp::builders
