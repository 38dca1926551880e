// SPDX-License-Identifier: Apache-2.0
#include "stitch/wait_rules.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <optional>

#include <fmt/format.h>

namespace wp {

const char* wait_cause_name(WaitCause c) {
  switch (c) {
    case WaitCause::JournalCommit: return "journal-commit";
    case WaitCause::JournalSpace: return "journal-space";
    case WaitCause::InodeLock: return "inode-lock";
    case WaitCause::PageLock: return "page-lock";
    case WaitCause::WritebackWait: return "writeback-wait";
    case WaitCause::DirtyThrottle: return "dirty-throttle";
    case WaitCause::DirectReclaim: return "direct-reclaim";
    case WaitCause::MemcgReclaim: return "memcg-reclaim";
    case WaitCause::Compaction: return "compaction";
    case WaitCause::BlockThrottle: return "block-throttle";
    case WaitCause::IoCost: return "iocost";
    case WaitCause::Wbt: return "wbt";
    case WaitCause::RequestTag: return "request-tag";
    case WaitCause::DeviceIo: return "device-io";
    case WaitCause::Other: return "other";
  }
  return "";
}

}  // namespace wp

namespace wp::stitch {

std::string_view frame_function(std::string_view frame) {
  const std::size_t end = frame.find_first_of("+ .");
  return end == std::string_view::npos ? frame : frame.substr(0, end);
}

bool is_scheduler_frame(std::string_view fn) {
  static constexpr std::array<std::string_view, 14> kExact = {
      "schedule",           "__schedule",          "schedule_timeout",
      "io_schedule",        "io_schedule_timeout", "schedule_preempt_disabled",
      "schedule_hrtimeout", "blk_io_schedule",     "bit_wait_io",
      "bit_wait",           "__cond_resched",      "preempt_schedule_common",
      "schedule_idle",      "finish_task_switch"};
  if (std::find(kExact.begin(), kExact.end(), fn) != kExact.end()) return true;
  // The generic wait-on-a-bit and completion helpers (folio_wait_bit_common,
  // out_of_line_wait_on_bit, wait_for_completion_io, submit_bio_wait's blk_wait_io) and the
  // tracing glue of the sched_switch hook itself.
  return fn.find("wait_bit") != std::string_view::npos || fn.starts_with("wait_for_completion") ||
         fn.ends_with("wait_for_common") || fn == "blk_wait_io" ||
         fn.find("wait_on_bit") != std::string_view::npos || fn.starts_with("schedule_hrtimeout") ||
         fn.starts_with("__traceiter_") || fn.starts_with("__bpf_trace_") ||
         fn.starts_with("bpf_trace_run") || fn.starts_with("bpf_prog_");
}

std::vector<std::string> frames_below_scheduler(const KernelStack& stack) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < stack.addrs.size() || i < stack.frames.size(); ++i) {
    const std::string name = i < stack.frames.size() ? stack.frames[i] : std::string();
    if (out.empty() && (name.empty() || is_scheduler_frame(frame_function(name)))) continue;
    if (!name.empty()) {
      out.push_back(name);
    } else {
      out.push_back(fmt::format("{:#x}", i < stack.addrs.size() ? stack.addrs[i] : 0));
    }
  }
  return out;
}

namespace {

// The functions of one sleep's stack, innermost first.
class Functions {
 public:
  explicit Functions(const KernelStack& stack) {
    for (const std::string& f : stack.frames) fns_.push_back(frame_function(f));
  }
  // The innermost frame among `names`.
  std::optional<std::string_view> find(std::initializer_list<std::string_view> names) const {
    for (std::string_view fn : fns_)
      if (std::find(names.begin(), names.end(), fn) != names.end()) return fn;
    return std::nullopt;
  }
  bool any_starts_with(std::string_view prefix) const {
    return std::any_of(fns_.begin(), fns_.end(),
                       [&](std::string_view fn) { return fn.starts_with(prefix); });
  }
  // The caller of the innermost frame among `names` that is not itself one of them: who took
  // the lock when `names` are a lock's slow paths.
  std::optional<std::string_view> caller_of(std::initializer_list<std::string_view> names) const {
    bool inside = false;
    for (std::string_view fn : fns_) {
      const bool is_lock = std::find(names.begin(), names.end(), fn) != names.end();
      if (inside && !is_lock) return fn;
      inside = inside || is_lock;
    }
    return std::nullopt;
  }
  std::optional<std::string_view> first_non_scheduler() const {
    for (std::string_view fn : fns_)
      if (!fn.empty() && !is_scheduler_frame(fn)) return fn;
    return std::nullopt;
  }

 private:
  std::vector<std::string_view> fns_;
};

// A function that takes the file's i_rwsem: inode_lock() and inode_lock_shared() are inline,
// so the frame above down_write() is the write_iter or fsync that called them; xfs and btrfs
// take it through their own helpers.
bool takes_inode_lock(std::string_view fn) {
  return fn.ends_with("_write_iter") || fn.find("inode_lock") != std::string_view::npos ||
         fn == "xfs_ilock" || fn == "xfs_ilock_iocb" || fn.ends_with("_sync_file") ||
         fn.ends_with("_fallocate");
}

// A flagged sleep's evidence: the tracepoint whose hook flagged it just before it slept
// (bpf/pagecache.bpf.c), named as the why lines show a tracepoint.
constexpr std::string_view kDirtyThrottleFlag = "writeback:balance_dirty_pages";
constexpr std::string_view kWritebackWaitFlag = "writeback:folio_wait_writeback";
// A block-throttle wait's: the I/O wait alone is any device I/O's; what names it is the call
// arming blk-throttle's dispatch timer for the bios it held back (bpf/sched.bpf.c).
constexpr std::string_view kBlkThrottleTimer = "timer:timer_start of throtl_pending_timer_fn";

SleepVerdict verdict(WaitCause cause, std::string_view evidence) {
  return SleepVerdict{cause, std::string(evidence)};
}

}  // namespace

WakeContext wake_context(const KernelStack& waker_stack) {
  const Functions f(waker_stack);
  // A timer first: its expiry runs from the timer interrupt or softirq, whose frames are
  // under it too.
  if (f.find({"hrtimer_wakeup", "process_timeout", "call_timer_fn", "__run_hrtimer"}))
    return WakeContext::Timer;
  // Hard interrupt entry (x86-64's asm_common_interrupt/asm_sysvec_*, the generic irq exit
  // that runs softirqs) or softirq processing (handle_softirqs since 6.8, __do_softirq
  // before; ksoftirqd runs the same functions).
  if (f.find({"asm_common_interrupt", "common_interrupt", "__irq_exit_rcu", "irq_exit_rcu",
              "handle_softirqs", "__do_softirq", "do_softirq", "run_ksoftirqd"}) ||
      f.any_starts_with("asm_sysvec_") || f.any_starts_with("sysvec_"))
    return WakeContext::Interrupt;
  return WakeContext::Task;
}

void set_wake_contexts(OffCpuEvent& ev) {
  for (OffCpuSleep& sleep : ev.sleeps)
    if (sleep.waker) sleep.waker->context = wake_context(sleep.waker->stack);
}

// The rules, most specific first: the first that matches names the sleep. The functions are
// checked against 6.18's symbols, with the older names of renamed ones beside them; a frame a
// kernel inlines away (6.18 inlines wait_transaction_switching, shrink_inactive_list,
// __alloc_pages_direct_reclaim) leaves its callers, which the lists include.
SleepVerdict classify_sleep(const OffCpuSleep& sleep, bool blk_throttled) {
  const Functions f(sleep.stack);
  // memcg-reclaim: reclaim a memory cgroup's charge forced (try_charge_memcg →
  // try_to_free_mem_cgroup_pages; memory.high's reclaim_high on return to user, from
  // mem_cgroup_handle_over_high, __mem_cgroup_handle_over_high in 6.18). Before
  // writeback and direct reclaim: its shrink_* frames and writeback waits serve the cgroup's
  // limit.
  if (auto fn = f.find({"try_to_free_mem_cgroup_pages", "mem_cgroup_handle_over_high",
                        "__mem_cgroup_handle_over_high", "reclaim_high"}))
    return verdict(WaitCause::MemcgReclaim, *fn);
  // direct-reclaim: an allocation freeing memory itself (__alloc_pages_slowpath →
  // __alloc_pages_direct_reclaim → try_to_free_pages → shrink_*; reclaim_throttle waits there
  // for writeback progress since 5.16).
  if (auto fn = f.find({"try_to_free_pages", "__alloc_pages_direct_reclaim", "__perform_reclaim",
                        "shrink_node", "shrink_lruvec", "shrink_folio_list", "shrink_page_list",
                        "shrink_inactive_list", "shrink_slab", "reclaim_throttle"}))
    return verdict(WaitCause::DirectReclaim, *fn);
  // compaction: a high-order allocation compacting memory (__alloc_pages_direct_compact →
  // try_to_compact_pages → compact_zone_order → compact_zone, __compact_zone in 6.18;
  // migration waits on the pages it moves).
  if (auto fn = f.find({"__alloc_pages_direct_compact", "try_to_compact_pages",
                        "compact_zone_order", "compact_zone", "__compact_zone"}))
    return verdict(WaitCause::Compaction, *fn);
  // dirty-throttle: the page-cache hook flagged the sleep as balance_dirty_pages' pause, or the
  // stack is in it (io_schedule_timeout from balance_dirty_pages).
  if (sleep.flag == SleepFlag::DirtyThrottle)
    return verdict(WaitCause::DirtyThrottle, kDirtyThrottleFlag);
  if (auto fn = f.find({"balance_dirty_pages"})) return verdict(WaitCause::DirtyThrottle, *fn);
  // iocost: blk-iocost's rq_qos throttle waits for the cgroup's vtime budget (5.4+).
  if (auto fn = f.find({"ioc_rqos_throttle"})) return verdict(WaitCause::IoCost, *fn);
  // wbt: writeback throttling's rq_qos_wait under wbt_wait, at bio submission (4.10+).
  if (auto fn = f.find({"wbt_wait"})) return verdict(WaitCause::Wbt, *fn);
  // request-tag: blk_mq_get_tag sleeps when every tag of the hardware queue is in use.
  if (auto fn = f.find({"blk_mq_get_tag"})) return verdict(WaitCause::RequestTag, *fn);
  // block-throttle: blk-throttle queues an over-limit bio without sleeping in submission, so
  // the time shows up as the wait for that I/O: the call's bios were throttled and it waits
  // for its I/O (submit_bio_wait, a direct I/O, a page under writeback).
  if (blk_throttled) {
    if (f.find({"submit_bio_wait", "__iomap_dio_rw", "iomap_dio_rw", "__blockdev_direct_IO",
                "blk_io_schedule", "folio_wait_writeback"}) ||
        sleep.flag == SleepFlag::WritebackWait)
      return verdict(WaitCause::BlockThrottle, kBlkThrottleTimer);
  }
  // journal-space: a jbd2 handle starting (start_this_handle) waits for log space
  // (add_transaction_credits → __jbd2_log_wait_for_space, checkpointing) or for the running
  // transaction to be locked and handed to the commit (wait_transaction_locked/_switching).
  // Before journal-commit: __jbd2_log_wait_for_space may wait for a commit to free space.
  if (auto fn =
          f.find({"wait_transaction_locked", "wait_transaction_switching",
                  "__jbd2_log_wait_for_space", "add_transaction_credits", "start_this_handle"}))
    return verdict(WaitCause::JournalSpace, *fn);
  // journal-commit: waiting for a transaction to commit: fsync (ext4_sync_file →
  // jbd2_complete_transaction / ext4_fc_commit → jbd2_log_wait_commit), an O_SYNC handle's
  // jbd2_journal_stop, a forced commit; fast-commit buffers (jbd2_fc_wait_bufs); xfs's log
  // force waiting for its iclog (xlog_wait_on_iclog). Before device-io and writeback-wait:
  // the commit's own I/O is behind it.
  if (auto fn = f.find({"jbd2_log_wait_commit", "jbd2_complete_transaction",
                        "jbd2_journal_force_commit", "jbd2_fc_wait_bufs", "xlog_wait_on_iclog",
                        "xlog_wait", "xfs_log_force_seq", "xfs_log_force"}))
    return verdict(WaitCause::JournalCommit, *fn);
  // inode-lock: the rwsem slow path entered from whoever takes the file's i_rwsem (the frame
  // above the rwsem frames: a *_write_iter, inode_lock*, xfs_ilock, a *_sync_file). An rwsem
  // taken elsewhere (mmap_lock in a page fault inside the copy) is not the inode's.
  if (f.find({"rwsem_down_write_slowpath", "rwsem_down_read_slowpath"}))
    if (auto caller =
            f.caller_of({"rwsem_down_write_slowpath", "rwsem_down_read_slowpath", "down_write",
                         "down_write_killable", "down_read", "down_read_killable"});
        caller && takes_inode_lock(*caller))
      return verdict(WaitCause::InodeLock, *caller);
  // writeback-wait: flagged by the page-cache hook, or folio_wait_writeback / folio_wait_stable
  // in the stack (waiting for PG_writeback to clear: its page being written).
  if (sleep.flag == SleepFlag::WritebackWait)
    return verdict(WaitCause::WritebackWait, kWritebackWaitFlag);
  if (auto fn = f.find({"folio_wait_writeback", "folio_wait_stable", "wait_on_page_writeback",
                        "__filemap_fdatawait_range"}))
    return verdict(WaitCause::WritebackWait, *fn);
  // page-lock: waiting for PG_locked (__folio_lock, a fault's folio_wait_bit_common), the
  // writeback case being decided above.
  if (auto fn = f.find({"__folio_lock", "__folio_lock_killable", "__folio_lock_or_retry",
                        "folio_wait_locked", "__lock_page", "lock_page", "folio_wait_bit_common",
                        "folio_wait_bit", "wait_on_page_bit_common"}))
    return verdict(WaitCause::PageLock, *fn);
  // device-io: waiting for its own bios (submit_bio_wait: a flush, a zeroout; a direct I/O's
  // __iomap_dio_rw → blk_io_schedule) with no journal frame in the way (a jbd2 stack waiting
  // for I/O is the journal's, named above or left other).
  if (!f.any_starts_with("jbd2") && !f.any_starts_with("xlog")) {
    if (auto fn = f.find({"submit_bio_wait", "blkdev_issue_flush", "__iomap_dio_rw", "iomap_dio_rw",
                          "__blockdev_direct_IO", "blk_io_schedule"}))
      return verdict(WaitCause::DeviceIo, *fn);
  }
  // other: no rule names it; its stack is shown.
  return verdict(WaitCause::Other, f.first_non_scheduler().value_or("no stack"));
}

namespace {

// One tracepoint-timed wait of the call, merged into its cause: the tracepoints time the whole
// wait, on CPU (spinning on the rwsem, scanning in reclaim) and off, so the cause is the longer
// of its sleeps and its tracepoint span, and waits need not add up to the latency.
void merge_timed(std::vector<NamedWait>& waits, WaitCause cause, Nanos ns, std::uint32_t count,
                 std::string_view tracepoint) {
  if (ns == 0) return;
  auto it = std::find_if(waits.begin(), waits.end(),
                         [&](const NamedWait& w) { return w.cause == cause; });
  if (it == waits.end()) {
    NamedWait w;
    w.cause = cause;
    w.sleeps = count;
    waits.push_back(std::move(w));
    it = std::prev(waits.end());
  }
  if (ns >= it->ns) {
    it->ns = ns;
    it->evidence = std::string(tracepoint);
  }
}

}  // namespace

std::vector<NamedWait> name_waits(const OffCpuEvent& ev) {
  std::vector<NamedWait> waits;
  for (const OffCpuSleep& sleep : ev.sleeps) {
    SleepVerdict v = classify_sleep(sleep, ev.blk_throttled > 0);
    auto it = std::find_if(waits.begin(), waits.end(),
                           [&](const NamedWait& w) { return w.cause == v.cause; });
    const bool first = it == waits.end();
    if (first) {
      NamedWait w;
      w.cause = v.cause;
      waits.push_back(std::move(w));
      it = std::prev(waits.end());
    }
    it->ns += sleep.ns;
    it->sleeps += sleep.sleeps;
    if (first || sleep.longest_ns > it->longest_ns) {
      it->longest_ns = sleep.longest_ns;
      it->evidence = std::move(v.evidence);
      it->frames = frames_below_scheduler(sleep.stack);
      it->waker = sleep.waker;
    }
  }
  merge_timed(waits, WaitCause::InodeLock, ev.inode_lock_ns, ev.inode_lock_waits,
              "lock:contention_begin on the file's i_rwsem");
  merge_timed(waits, WaitCause::DirectReclaim, ev.direct_reclaim_ns, 0,
              "vmscan:mm_vmscan_direct_reclaim");
  merge_timed(waits, WaitCause::MemcgReclaim, ev.memcg_reclaim_ns, 0,
              "vmscan:mm_vmscan_memcg_reclaim");
  merge_timed(waits, WaitCause::Compaction, ev.compaction_ns, 0, "compaction:mm_compaction");
  for (NamedWait& w : waits)
    if (w.cause == WaitCause::InodeLock) w.holder = ev.inode_lock_holder;
  std::stable_sort(waits.begin(), waits.end(), [](const NamedWait& a, const NamedWait& b) {
    return a.ns != b.ns ? a.ns > b.ns : a.cause < b.cause;
  });
  return waits;
}

}  // namespace wp::stitch
