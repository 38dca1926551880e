// SPDX-License-Identifier: Apache-2.0
// Kernels described by their facts, for the planner's and the coverage rules' tests: what
// tracefs lists, the btf_trace_* prototypes, the functions in BTF, whether fentry attaches.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>

#include "decode/syscalls.h"
#include "probe/kernel_facts.h"

namespace wp::testing {

// A kernel described by its facts: what tracefs lists, the btf_trace_* prototypes in vmlinux
// and module BTF, the functions in BTF, and whether an fentry attach is allowed.
class FakeKernel final : public KernelFacts {
 public:
  FakeKernel& tracepoint(const std::string& category, const std::string& event) {
    tracepoints_.emplace(category, event);
    return *this;
  }
  FakeKernel& no_tracepoint(const std::string& category, const std::string& event) {
    tracepoints_.erase({category, event});
    return *this;
  }
  FakeKernel& no_tracepoints(const std::string& category) {
    std::erase_if(tracepoints_, [&](const auto& tp) { return tp.first == category; });
    return *this;
  }
  FakeKernel& raw_tracepoint(const std::string& event, int args, const std::string& module = {}) {
    raw_args_[{module, event}] = args;
    return *this;
  }
  FakeKernel& no_raw_tracepoint(const std::string& event, const std::string& module = {}) {
    raw_args_.erase({module, event});
    return *this;
  }
  // tracefs not mounted (or not readable): no classic tracepoint can attach.
  FakeKernel& no_tracefs() {
    tracefs_ = false;
    return *this;
  }
  FakeKernel& function(const std::string& name) {
    functions_.insert(name);
    return *this;
  }
  FakeKernel& no_function(const std::string& name) {
    functions_.erase(name);
    return *this;
  }
  FakeKernel& enumerator(const std::string& name) {
    enumerators_.insert(name);
    return *this;
  }
  FakeKernel& fentry(bool attaches, const std::string& error = {}) {
    fentry_ = attaches;
    fentry_error_ = error;
    return *this;
  }

  bool tracefs_available() const override { return tracefs_; }
  bool tracepoint_exists(const std::string& category, const std::string& event) const override {
    return tracefs_ && tracepoints_.count({category, event}) > 0;
  }
  // As the running kernel's: vmlinux first (the module built in), then the module's BTF.
  int tracepoint_args(const std::string& event, const std::string& module) const override {
    auto it = raw_args_.find({"", event});
    if (it == raw_args_.end()) it = raw_args_.find({module, event});
    return it == raw_args_.end() ? -1 : it->second;
  }
  bool has_function(const std::string& name) const override { return functions_.count(name) > 0; }
  bool has_enumerator(const std::string& name) const override {
    return enumerators_.count(name) > 0;
  }
  bool fentry_attaches() const override { return fentry_; }
  std::string fentry_error() const override { return fentry_error_; }

 private:
  std::set<std::pair<std::string, std::string>> tracepoints_;    // (category, event)
  std::map<std::pair<std::string, std::string>, int> raw_args_;  // (module, event) -> arity
  std::set<std::string> functions_;
  std::set<std::string> enumerators_;
  bool fentry_ = false;
  std::string fentry_error_;
  bool tracefs_ = true;
};

// The classic tracepoints every kernel here has: per-syscall, sched, writeback, jbd2.
inline FakeKernel with_classic_tracepoints() {
  FakeKernel k;
  for (const char* sc : {"write", "pwrite64", "writev", "pwritev", "pwritev2", "fsync", "fdatasync",
                         "sync_file_range", "syncfs", "sync", "io_submit", "msync", "openat",
                         "openat2", "read", "pread64", "readv", "preadv", "preadv2"}) {
    k.tracepoint("syscalls", std::string("sys_enter_") + sc);
    k.tracepoint("syscalls", std::string("sys_exit_") + sc);
  }
  // The name-change calls (WP_NAME_CHANGE_TABLE): x86-64 has every one.
#define WP_FAKE_NAME_CHANGE_(name, Name, value, op, d1, n1, d2, n2, flags, fd) \
  k.tracepoint("syscalls", "sys_enter_" #name).tracepoint("syscalls", "sys_exit_" #name);
  WP_NAME_CHANGE_TABLE(WP_FAKE_NAME_CHANGE_)
#undef WP_FAKE_NAME_CHANGE_
  // The calls counted but not stitched (WP_UNTRACED_TABLE): their entry tracepoints.
  for (const UntracedCall& call : kUntracedCalls)
    if (call.event) k.tracepoint("syscalls", std::string("sys_enter_") + call.event);
  k.tracepoint("sched", "sched_process_exit")
      .tracepoint("writeback", "balance_dirty_pages")
      .tracepoint("writeback", "writeback_start")
      .tracepoint("writeback", "writeback_written");
  for (const char* ev : {"jbd2_start_commit", "jbd2_commit_locking", "jbd2_commit_flushing",
                         "jbd2_commit_logging", "jbd2_end_commit"})
    k.tracepoint("jbd2", ev);
  return k;
}

// xfs's log tracepoints (the iclog ones since 5.14), built in or loaded with xfs: in tracefs
// and, as btf_trace_*, in `module`'s BTF ("" = vmlinux, xfs built in).
inline FakeKernel& with_xfs_log_tracepoints(FakeKernel& k, const std::string& module = "xfs") {
  for (const char* ev : {"xfs_log_force", "xlog_iclog_sync", "xlog_iclog_sync_done"})
    k.tracepoint("xfs", ev).raw_tracepoint(ev, ev == std::string("xfs_log_force") ? 3 : 2, module);
  return k;
}

// jbd2's commit tracepoints as btf_trace_* in `module`'s BTF ("" = vmlinux, jbd2 built in).
inline FakeKernel& with_jbd2_btf(FakeKernel& k, const std::string& module) {
  for (const char* ev : {"jbd2_start_commit", "jbd2_commit_locking", "jbd2_commit_flushing",
                         "jbd2_commit_logging", "jbd2_end_commit"})
    k.raw_tracepoint(ev, 2, module);
  return k;
}

// The syscalls' entry functions in BTF (x86-64's __x64_sys_NAME since 4.17, arm64's
// __arm64_sys_NAME since 4.19): every call the trace follows or counts.
// x86-64's wrapper of a syscall without arguments is an alias, which BTF lacks: its body
// (__do_sys_sync) is there instead.
inline FakeKernel& with_syscall_entries(FakeKernel& k, const std::string& prefix) {
  for (const auto& slot : kSyscallSlots)
    k.function(prefix == "__x64_sys_" && slot.name == std::string("sync") ? "__do_sys_sync"
                                                                          : prefix + slot.name);
#define WP_FAKE_NAME_CHANGE_ENTRY_(name, Name, value, op, d1, n1, d2, n2, flags, fd) \
  k.function(prefix + #name);
  WP_NAME_CHANGE_TABLE(WP_FAKE_NAME_CHANGE_ENTRY_)
#undef WP_FAKE_NAME_CHANGE_ENTRY_
  for (const UntracedCall& call : kUntracedCalls)
    if (call.event) k.function(prefix + call.event);
  return k;
}

// The prototypes of 5.18 and later: folios, block tracepoints without the request_queue,
// sched_switch with prev_state.
inline FakeKernel with_current_prototypes() {
  FakeKernel k = with_classic_tracepoints();
  k.raw_tracepoint("sys_enter", 2)
      .raw_tracepoint("sys_exit", 2)
      .raw_tracepoint("sched_process_fork", 2)
      .raw_tracepoint("sched_process_exit", 1)
      .raw_tracepoint("writeback_start", 2)
      .raw_tracepoint("writeback_written", 2)
      .raw_tracepoint("writeback_dirty_folio", 2)
      .raw_tracepoint("page_fault_user", 3)  // x86 only
      .raw_tracepoint("page_fault_kernel", 3)
      .raw_tracepoint("folio_wait_writeback", 2)
      .raw_tracepoint("mm_filemap_delete_from_page_cache", 1)
      .raw_tracepoint("mm_filemap_add_to_page_cache", 1)
      .raw_tracepoint("block_bio_queue", 1)
      .raw_tracepoint("block_split", 2)
      .raw_tracepoint("block_bio_complete", 2)
      .raw_tracepoint("block_rq_insert", 1)
      .raw_tracepoint("block_rq_issue", 1)
      .raw_tracepoint("block_rq_requeue", 1)
      .raw_tracepoint("block_rq_complete", 3)
      .raw_tracepoint("sched_switch", 4)
      .raw_tracepoint("sched_waking", 1)
      .raw_tracepoint("contention_begin", 2)
      .raw_tracepoint("contention_end", 2)
      .raw_tracepoint("mm_vmscan_direct_reclaim_begin", 2)
      .raw_tracepoint("mm_vmscan_direct_reclaim_end", 1)
      .raw_tracepoint("mm_vmscan_memcg_reclaim_begin", 2)
      .raw_tracepoint("mm_vmscan_memcg_reclaim_end", 1)
      .raw_tracepoint("mm_compaction_begin", 4)
      .raw_tracepoint("mm_compaction_end", 5)
      .raw_tracepoint("timer_start", 2)
      .function("vfs_write")
      .function("vfs_fsync_range");
  return with_syscall_entries(k, "__x64_sys_");
}

// The development machine: 6.18 in a VM whose kernel lists vfs_write in BTF but refuses to
// load an fentry program (what kernel_caps' attach probe reports), no NVMe driver, xfs and
// fuse built in, the bpf_rdonly_cast kfunc (v6.2).
inline FakeKernel kernel_6_18() {
  FakeKernel k = with_current_prototypes()
                     .fentry(false, "load: Operation not permitted")
                     .function("bpf_rdonly_cast")
                     .raw_tracepoint("io_uring_submit_req", 1)
                     .raw_tracepoint("io_uring_queue_async_work", 2)
                     .raw_tracepoint("io_uring_complete", 3)
                     .raw_tracepoint("sched_process_exit", 2)
                     .raw_tracepoint("fuse_request_send", 1)
                     .raw_tracepoint("fuse_request_end", 1)
                     .raw_tracepoint("btrfs_clear_extent_bit", 4)
                     .raw_tracepoint("btrfs_transaction_commit", 1)
                     .raw_tracepoint("page_cache_sync_ra", 4)
                     .raw_tracepoint("mm_filemap_fault", 2)
                     .raw_tracepoint("mm_filemap_map_pages", 3)
                     .raw_tracepoint("page_cache_async_ra", 4);
  for (const char* name : kBtrfsInlineEnumerators) k.enumerator(name);
  return with_xfs_log_tracepoints(with_jbd2_btf(k, ""), "");
}

// The development machine's kernel built without io_uring (CONFIG_IO_URING=n): no io_uring
// tracepoints.
inline FakeKernel kernel_without_io_uring() {
  FakeKernel k = with_current_prototypes()
                     .fentry(false, "load: Operation not permitted")
                     .function("bpf_rdonly_cast");
  return with_xfs_log_tracepoints(with_jbd2_btf(k, ""), "");
}

// Debian's 6.1 as the VM suite boots it: fentry attaches, nvme_core has its own BTF.
inline FakeKernel kernel_6_1() {
  FakeKernel k = with_current_prototypes();
  return with_jbd2_btf(k, "jbd2")
      .fentry(true)
      .raw_tracepoint("io_uring_submit_sqe", 2)
      .raw_tracepoint("io_uring_queue_async_work", 2)
      .raw_tracepoint("io_uring_complete", 7)
      .raw_tracepoint("timer_start", 3)
      .raw_tracepoint("nvme_setup_cmd", 2, "nvme_core")
      .raw_tracepoint("nvme_complete_rq", 1, "nvme_core");
}

// 5.10: block tracepoints still take the request_queue first, pages rather than folios,
// sched_switch without prev_state, no module BTF (5.11 added it).
inline FakeKernel kernel_5_10() {
  return with_current_prototypes()
      .no_raw_tracepoint("writeback_dirty_folio")
      .raw_tracepoint("writeback_dirty_page", 2)
      .no_raw_tracepoint("folio_wait_writeback")
      .raw_tracepoint("wait_on_page_writeback", 2)
      .raw_tracepoint("block_bio_queue", 2)
      .raw_tracepoint("block_split", 3)
      .raw_tracepoint("block_rq_insert", 2)
      .raw_tracepoint("block_rq_issue", 2)
      .raw_tracepoint("block_rq_requeue", 2)
      .raw_tracepoint("sched_switch", 3)
      .no_raw_tracepoint("contention_begin")  // lock:contention_* came in 5.19
      .no_raw_tracepoint("contention_end")
      .fentry(true);
}

}  // namespace wp::testing
