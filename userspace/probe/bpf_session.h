// SPDX-License-Identifier: Apache-2.0
// RAII ownership of the loaded BPF programs: skeleton, links and ring buffer. Destruction
// detaches first, then frees the maps and programs: one cleanup path.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/program_cost.h"
#include "decode/decoder.h"
#include "decode/events.h"
#include "decode/syscalls.h"
#include "probe/hook_plan.h"
#include "probe/kernel_caps.h"
#include "writepath.h"

struct writepath_bpf;
struct bpf_link;
struct ring_buffer;

namespace wp {

// In-kernel filters, set in rodata before load.
struct KernelFilter {
  std::uint32_t self_tgid = 0;
  bool filter_tgid = false;
  bool follow_children = false;
  // --comm names the roots of the followed trees (--children without -p or a command).
  bool comm_roots = false;
  std::vector<std::uint32_t> tgids;
  std::optional<std::string> comm;
  // --cgroup, --container, --pod, --namespace: open cgroup2 directories (the caller keeps them
  // open until start() returns), at most WP_MAX_FILTER_CGROUPS; threads in one of them or below
  // it pass. Empty: any cgroup.
  std::vector<int> cgroup_fds;
  DevT disk = 0;
  // With disk: superblock devices of file systems on it that have no block device of their
  // own (btrfs); at most WP_MAX_DISK_FS_DEVS are used.
  std::vector<DevT> disk_fs_devs;
  DevT file_dev = 0;
  std::uint64_t file_ino = 0;
  Nanos causes_min_ns = 0;   // off-CPU causes for calls at least this slow (0: off)
  Nanos min_latency_ns = 0;  // calls faster than this are dropped in the kernel (0: keep all)
  // With causes_min_ns: the kernel stacks those calls slept with, their wakers and the
  // call-wide waits (a wp_offcpu_record per slow call; --no-stacks turns them off).
  bool offcpu_stacks = false;
  // blk-throttle's throtl_pending_timer_fn, from kallsyms (0: unknown, its hook planned out).
  std::uint64_t throtl_timer_fn = 0;
  // writepath serve: aggregate in the kernel (bpf/metrics.bpf.c); plain writes are emitted only
  // when at least metrics_slow_ns slow (0: not for that) or kept 1 in metrics_sample (0: none).
  bool metrics = false;
  std::uint32_t metrics_sample = 0;
  Nanos metrics_slow_ns = 0;
  bool metrics_comm = false;  // key write and sync metrics by the caller's name too
  // Size of the ring buffer, set before load: rounded up to a power of two of at least a
  // page, as the kernel requires (0: the size compiled into the BPF object).
  std::uint64_t ring_bytes = 0;
};

// The ring buffer size the kernel accepts for a requested one: a power of two, at least one
// page, at most 1 GiB.
std::uint64_t ring_buffer_size(std::uint64_t requested);

class BpfSession {
 public:
  using RecordHandler = std::function<void(std::span<const std::byte>)>;

  // Opens, configures, loads and attaches the programs of `plan`. On failure returns null
  // with `error` set and the programs that failed in `failed` (so the caller can re-plan).
  static std::unique_ptr<BpfSession> start(const HookPlan& plan, const KernelFilter& filter,
                                           RecordHandler handler, std::string& error,
                                           std::set<std::string>& failed);
  ~BpfSession();
  BpfSession(const BpfSession&) = delete;
  BpfSession& operator=(const BpfSession&) = delete;

  int ring_fd() const;
  // Hands the records waiting in the ring buffer to the handler, at most `max_records` of
  // them (so a caller under a flood still gets control back); returns how many.
  int consume(int max_records = std::numeric_limits<int>::max());
  // Detaches every program; records already in the ring buffer stay readable.
  void detach();
  LostCounts lost() const;
  // writepath serve: every label set of the kernel's metrics, its per-CPU values summed; and
  // the observations that found no slot free. Safe from any thread.
  std::vector<std::pair<wp_metric_key, wp_metric_value>> metric_entries() const;
  std::uint64_t metrics_overflow() const;
  // The untraced calls of traced processes counted so far (0 where no counter is attached).
  UntracedCounts untraced_calls() const;
  // Each loaded program's runs and run time as the kernel counted them (only while
  // kernel.bpf_stats_enabled is 1; zeros otherwise).
  std::vector<ProgramCost> program_costs() const;
  // When the programs' attach began (CLOCK_MONOTONIC): their counts run from there.
  Nanos attached_at() const { return attached_at_; }
  // What each disk did for the write requests the kernel kept out of a filtered trace
  // (bpf/block.bpf.c): requests and bytes, per disk.
  std::map<DevT, wp_filtered_totals> filtered_requests() const;
  // The data bios the kernel kept out of traced disks (a bystander's), by owner
  // (bpf/block.bpf.c filtered_io).
  std::vector<FilteredIo> filtered_io() const;
  bool add_tgid(std::uint32_t tgid);
  // Stops matching a process (its children forked from now on are not followed either).
  bool remove_tgid(std::uint32_t tgid);
  // The WP_TGID_* flags of a tgid the filter lets through, 0 when it is not in the map.
  std::uint8_t tgid_flags(std::uint32_t tgid) const;

 private:
  BpfSession() = default;
  static int on_record(void* self, void* data, std::size_t size);

  writepath_bpf* skel_ = nullptr;
  std::vector<bpf_link*> links_;
  ring_buffer* ring_ = nullptr;
  RecordHandler handler_;
  int batch_left_ = 0;  // records this consume() may still hand over
  Nanos attached_at_ = 0;
  // The kernel's traced_tgid_bytes, mapped: one byte per tgid (task_filter.bpf.h).
  std::span<std::uint8_t> tgid_bytes_;
};

// Whether the kernel counts BPF programs' runs and time now (kernel.bpf_stats_enabled = 1).
bool kernel_counts_bpf_time();

// A session started from a plan, or why none could be.
struct PlannedSession {
  std::unique_ptr<BpfSession> session;
  HookPlan plan;
  std::string error;
  // in_flight_outlasts_completion_event() of this kernel: a disk with no write in flight once
  // the hooks are detached has no write request whose completion is still to come.
  bool idle_disks_completed_all = false;
};

// Plans the hooks for this kernel, loads and attaches them; a variant that fails to load or
// attach is dropped and the next one tried (a real attach probe).
// The user's say in the plan.
struct HookPrefs {
  bool fentry = true;         // fentry/fexit where they attach (--no-fentry: false)
  bool raw_syscalls = false;  // --raw-syscalls: the raw sys_enter/sys_exit pair first
  bool reads = false;         // the read path's hooks (trace)
  // Planned as if they had failed to attach (disabled_programs_from_env).
  std::set<std::string> disabled_programs = {};
};

// Testing knob: WRITEPATH_DISABLE_PROGRAMS=a,b plans as if those programs had failed to
// attach, so the tests can drive every fallback on a kernel that has the preferred hooks.
std::set<std::string> disabled_programs_from_env();

PlannedSession start_planned_session(const KernelCaps& caps, const HookPrefs& prefs,
                                     const KernelFilter& filter,
                                     const BpfSession::RecordHandler& handler);

}  // namespace wp
