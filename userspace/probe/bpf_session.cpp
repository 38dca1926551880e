// SPDX-License-Identifier: Apache-2.0
#include "probe/bpf_session.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include "common/units.h"
#include "common/wall_clock.h"
#include "probe/kernel_caps.h"
#include "writepath.skel.h"

namespace wp {

namespace {

// libbpf's own messages (verifier logs, CO-RE notes) only with WRITEPATH_DEBUG=1: the user
// gets one line from us instead.
int libbpf_print(enum libbpf_print_level level, const char* format, va_list args) {
  const char* debug = std::getenv("WRITEPATH_DEBUG");
  if (!debug || *debug != '1') return 0;
  if (level == LIBBPF_DEBUG && debug[1] != '1') return 0;
  return std::vfprintf(stderr, format, args);
}

}  // namespace

namespace {
// The highest pid plus one (kernel.pid_max); the 64-bit limit when it cannot be read.
std::uint32_t pid_max() {
  std::ifstream in("/proc/sys/kernel/pid_max");
  std::uint32_t max = 0;
  return (in >> max) && max > 0 && max <= 4194304 ? max : 4194304;
}

// serve's metric values (bpf/metrics.bpf.c, metric_values): a per-CPU array takes its whole size
// on every possible CPU at load, so its slots are held to kMetricValuesBudget bytes in all, but
// never fewer than kMinMetricValueSlots label sets. 4096 slots up to 18 CPUs, 1213 on 64.
constexpr std::size_t kMetricValuesBudget = 16u << 20;
constexpr std::uint32_t kMinMetricValueSlots = 256;

std::uint32_t metric_value_slots(int cpus) {
  const std::size_t per_slot =
      sizeof(wp_metric_value) * static_cast<std::size_t>(std::max(cpus, 1));
  return static_cast<std::uint32_t>(std::clamp<std::size_t>(
      kMetricValuesBudget / per_slot, kMinMetricValueSlots, WP_MAX_METRIC_KEYS));
}
}  // namespace

namespace {
// btrfs's io-tree and extent-bit enumerators (kBtrfsInlineEnumerators, bpf/inline.bpf.c), from
// this kernel's BTF: left 0, the inline-extent hook does nothing (the plan leaves it out then).
void set_btrfs_inline_bits(writepath_bpf& skel) {
  const KernelBtf btf;
  std::int64_t values[std::size(kBtrfsInlineEnumerators)] = {};
  for (std::size_t i = 0; i < std::size(values); ++i) {
    values[i] = btf.enumerator(kBtrfsInlineEnumerators[i]).value_or(0);
    if (values[i] <= 0 || values[i] > UINT32_MAX) return;
  }
  std::uint32_t bits = 0;
  for (std::size_t i = 1; i < std::size(values); ++i) bits |= static_cast<std::uint32_t>(values[i]);
  skel.rodata->cfg_btrfs_inode_io_tree = static_cast<std::uint32_t>(values[0]);
  skel.rodata->cfg_btrfs_inline_clear_bits = bits;
}
}  // namespace

std::uint64_t ring_buffer_size(std::uint64_t requested) {
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  constexpr std::uint64_t kMax = 1ull << 30;
  std::uint64_t size = page;
  while (size < requested && size < kMax) size <<= 1;
  return size;
}

std::unique_ptr<BpfSession> BpfSession::start(const HookPlan& plan, const KernelFilter& filter,
                                              RecordHandler handler, std::string& error,
                                              std::set<std::string>& failed) {
  libbpf_set_print(libbpf_print);
  std::unique_ptr<BpfSession> session(new BpfSession());
  session->handler_ = std::move(handler);

  session->skel_ = writepath_bpf__open();
  if (!session->skel_) {
    error = fmt::format("cannot open the BPF object: {}", std::strerror(errno));
    return nullptr;
  }
  auto* ro = session->skel_->rodata;
  ro->cfg_self_tgid = filter.self_tgid;
  ro->cfg_page_shift = running_page_shift();
  ro->cfg_filter_tgid = filter.filter_tgid;
  ro->cfg_follow_children = filter.follow_children;
  ro->cfg_comm_roots = filter.comm_roots;
  if (filter.comm) {
    ro->cfg_filter_comm = true;
    std::strncpy(const_cast<char*>(ro->cfg_comm), filter.comm->c_str(), WP_COMM_LEN - 1);
  }
  ro->cfg_filter_cgroups = static_cast<std::uint32_t>(filter.cgroup_fds.size());
  ro->cfg_disk = filter.disk;
  for (std::size_t i = 0; i < filter.disk_fs_devs.size() && i < std::size(ro->cfg_disk_fs_devs);
       ++i)
    const_cast<std::uint32_t&>(ro->cfg_disk_fs_devs[i]) = filter.disk_fs_devs[i];
  ro->cfg_file_dev = filter.file_dev;
  ro->cfg_file_ino = filter.file_ino;
  ro->cfg_raw_syscall_slots = plan.raw_syscall_slots();
  // A trace's read items list their requests; serve --reads counts reads and sends no record.
  const bool read_requests = plan.traces_reads() && !filter.metrics;
  ro->cfg_reads = read_requests;
  ro->cfg_causes_min_ns = filter.causes_min_ns;
  ro->cfg_offcpu_stacks = filter.causes_min_ns != 0 && filter.offcpu_stacks;
  ro->cfg_throtl_timer_fn = filter.throtl_timer_fn;
  ro->cfg_min_latency_ns = filter.min_latency_ns;
  ro->cfg_metrics = filter.metrics;
  ro->cfg_metrics_sample = filter.metrics_sample;
  ro->cfg_metrics_slow_ns = filter.metrics_slow_ns;
  ro->cfg_metrics_comm = filter.metrics_comm;
  set_btrfs_inline_bits(*session->skel_);
  if (!filter.metrics) {  // nothing is ever added to them: keep them to one entry
    bpf_map__set_max_entries(session->skel_->maps.metric_slots, 1);
    bpf_map__set_max_entries(session->skel_->maps.metric_free_slots, 1);
    bpf_map__set_max_entries(session->skel_->maps.metric_values, 1);
    bpf_map__set_max_entries(session->skel_->maps.rq_issued, 1);
  } else {
    const std::uint32_t slots = metric_value_slots(libbpf_num_possible_cpus());
    bpf_map__set_max_entries(session->skel_->maps.metric_free_slots, slots);
    bpf_map__set_max_entries(session->skel_->maps.metric_values, slots);
  }
  if (!read_requests) {  // no read bio or request is ever kept
    bpf_map__set_max_entries(session->skel_->maps.read_bios, 1);
    bpf_map__set_max_entries(session->skel_->maps.read_rqs, 1);
  }
  // The kernel keeps other processes' files out only when the trace follows some processes
  // or one file (wp_filters_files); otherwise the maps it does that with stay empty.
  if (!filter.filter_tgid && !filter.comm && !filter.comm_roots && filter.cgroup_fds.empty() &&
      !filter.file_ino) {
    bpf_map__set_max_entries(session->skel_->maps.traced_files, 1);
    bpf_map__set_max_entries(session->skel_->maps.traced_disks, 1);
    bpf_map__set_max_entries(session->skel_->maps.filtered_bios, 1);
    bpf_map__set_max_entries(session->skel_->maps.filtered_rqs, 1);
    bpf_map__set_max_entries(session->skel_->maps.filtered_requests, 1);
    bpf_map__set_max_entries(session->skel_->maps.filtered_io, 1);
  }
  // One byte per tgid up to pid_max (wp_tgid_traced); one element when no tgid is filtered on.
  if (filter.filter_tgid || filter.comm_roots)
    bpf_map__set_max_entries(session->skel_->maps.traced_tgid_bytes, pid_max() / 8 + 1);
  else
    bpf_map__set_max_entries(session->skel_->maps.traced_tgid_bytes, 1);
  // One bit per tgid up to pid_max (namespace.bpf.c's ns_send_wanted).
  bpf_map__set_max_entries(session->skel_->maps.ns_send_wanted, pid_max() / 64 + 1);
  if (filter.ring_bytes) {
    const std::uint64_t ring = ring_buffer_size(filter.ring_bytes);
    if (int err = bpf_map__set_max_entries(session->skel_->maps.events,
                                           static_cast<std::uint32_t>(ring))) {
      error = fmt::format("cannot size the ring buffer to {} bytes: {}", ring, std::strerror(-err));
      return nullptr;
    }
  }
  // Wake the agent each time an eighth of the ring buffer is waiting: a sleeping agent is
  // woken seven eighths before the buffer fills.
  ro->cfg_wakeup_bytes = static_cast<std::uint32_t>(
      std::max<std::uint64_t>(bpf_map__max_entries(session->skel_->maps.events) / 8, 4096));
  // This architecture's syscall numbers, in slot order (WP_SYSCALL_TABLE); stored as
  // number + 1 so that an unset slot matches nothing.
  const long syscall_numbers[] = {
#define WP_SYSCALL_NUMBER_(id, value, name, Name, cls, vfs) SYS_##name,
      WP_SYSCALL_TABLE(WP_SYSCALL_NUMBER_)
#undef WP_SYSCALL_NUMBER_
  };
  static_assert(std::size(syscall_numbers) ==
                sizeof(writepath_bpf::writepath_bpf__rodata::cfg_syscall_nr_plus1) / sizeof(long));
  const std::uint8_t syscall_values[] = {
#define WP_SYSCALL_VALUE_(id, value, name, Name, cls, vfs) value,
      WP_SYSCALL_TABLE(WP_SYSCALL_VALUE_)
#undef WP_SYSCALL_VALUE_
  };
  const std::uint32_t raw_slots = plan.raw_syscall_slots();
  for (std::size_t i = 0; i < std::size(syscall_numbers); ++i) {
    const_cast<long&>(ro->cfg_syscall_nr_plus1[i]) = syscall_numbers[i] + 1;
    if ((raw_slots & (1u << i)) && syscall_numbers[i] >= 0 &&
        static_cast<std::size_t>(syscall_numbers[i]) < std::size(ro->cfg_raw_syscall_of_nr))
      const_cast<std::uint8_t&>(ro->cfg_raw_syscall_of_nr[syscall_numbers[i]]) = syscall_values[i];
  }

  const std::set<std::string> wanted = plan.programs();
  struct bpf_program* prog;
  const std::map<std::string, std::string>& entry_targets = plan.entry_functions;
  bpf_object__for_each_program(prog, session->skel_->obj) {
    bpf_program__set_autoload(prog, wanted.count(bpf_program__name(prog)) > 0);
    // A syscall entry program's section names no function: this kernel's is set here.
    if (auto target = entry_targets.find(bpf_program__name(prog)); target != entry_targets.end())
      if (int err = bpf_program__set_attach_target(prog, 0, target->second.c_str())) {
        error = fmt::format("cannot aim {} at {}: {}", target->first, target->second,
                            std::strerror(-err));
        return nullptr;
      }
  }
  if (int err = writepath_bpf__load(session->skel_)) {
    error = fmt::format("cannot load the BPF programs: {} (WRITEPATH_DEBUG=1 shows the log)",
                        std::strerror(-err));
    return nullptr;
  }

  {
    const std::size_t bytes = bpf_map__max_entries(session->skel_->maps.traced_tgid_bytes) * 8ul;
    void* mapped = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                          bpf_map__fd(session->skel_->maps.traced_tgid_bytes), 0);
    if (mapped == MAP_FAILED) {
      error = fmt::format("cannot map the tgid filter: {}", std::strerror(errno));
      return nullptr;
    }
    session->tgid_bytes_ = {static_cast<std::uint8_t*>(mapped), bytes};
  }
  // serve's metric slots, each given to the first label set that needs one (bpf/metrics.bpf.c).
  for (std::uint32_t slot = 0;
       filter.metrics && slot < bpf_map__max_entries(session->skel_->maps.metric_values); ++slot)
    if (bpf_map_update_elem(bpf_map__fd(session->skel_->maps.metric_free_slots), nullptr, &slot,
                            BPF_ANY) != 0) {
      error = fmt::format("cannot hand out the metric slots: {}", std::strerror(errno));
      return nullptr;
    }
  for (std::uint32_t tgid : filter.tgids) session->add_tgid(tgid);
  if (filter.cgroup_fds.size() > WP_MAX_FILTER_CGROUPS) {
    error = fmt::format("the cgroup filter holds at most {} cgroups, not {}", WP_MAX_FILTER_CGROUPS,
                        filter.cgroup_fds.size());
    return nullptr;
  }
  for (std::uint32_t key = 0; key < filter.cgroup_fds.size(); ++key) {
    const auto fd = static_cast<std::uint32_t>(filter.cgroup_fds[key]);
    if (bpf_map__update_elem(session->skel_->maps.cgroup_filter, &key, sizeof(key), &fd, sizeof(fd),
                             BPF_ANY) != 0) {
      error = fmt::format("cannot set the cgroup filter: {}", std::strerror(errno));
      return nullptr;
    }
  }

  bool attach_failed = false;
  session->attached_at_ = monotonic_now();  // the first program may run from here on
  bpf_object__for_each_program(prog, session->skel_->obj) {
    if (!bpf_program__autoload(prog)) continue;
    struct bpf_link* link = bpf_program__attach(prog);
    if (!link) {
      attach_failed = true;
      failed.insert(bpf_program__name(prog));
      error = fmt::format("cannot attach {}: {}", bpf_program__name(prog), std::strerror(errno));
      continue;
    }
    session->links_.push_back(link);
  }
  if (attach_failed) return nullptr;

  session->ring_ = ring_buffer__new(bpf_map__fd(session->skel_->maps.events),
                                    &BpfSession::on_record, session.get(), nullptr);
  if (!session->ring_) {
    error = fmt::format("cannot open the ring buffer: {}", std::strerror(errno));
    return nullptr;
  }
  return session;
}

BpfSession::~BpfSession() {
  detach();
  if (!tgid_bytes_.empty()) ::munmap(tgid_bytes_.data(), tgid_bytes_.size());
  ring_buffer__free(ring_);
  writepath_bpf__destroy(skel_);
}

int BpfSession::on_record(void* self, void* data, std::size_t size) {
  auto* session = static_cast<BpfSession*>(self);
  session->handler_(std::span<const std::byte>(static_cast<const std::byte*>(data), size));
  // A negative return makes libbpf stop after this record (it is consumed).
  return --session->batch_left_ > 0 ? 0 : -E2BIG;
}

int BpfSession::ring_fd() const {
  return ring_buffer__epoll_fd(ring_);
}

int BpfSession::consume(int max_records) {
  if (max_records <= 0) return 0;
  batch_left_ = max_records;
  const int got = ring_buffer__consume(ring_);
  if (got >= 0) return got;
  return got == -E2BIG ? max_records : 0;
}

void BpfSession::detach() {
  // One at a time. Detaching concurrently from threads shared RCU grace periods (faster),
  // but those threads then exited through tracepoint sites (sched_process_exit, sys_enter)
  // that other threads were live-patching, and under QEMU's TCG that soft-locked a CPU.
  for (auto* link : links_) bpf_link__destroy(link);
  links_.clear();
}

namespace {

// The sums over every CPU of a per-CPU array of u64 counters, into `totals` (one per key).
void sum_percpu_counters(int map_fd, std::span<std::uint64_t> totals) {
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) return;
  std::vector<std::uint64_t> per_cpu(static_cast<std::size_t>(cpus));
  for (std::uint32_t key = 0; key < totals.size(); ++key) {
    if (bpf_map_lookup_elem(map_fd, &key, per_cpu.data()) != 0) continue;
    for (auto n : per_cpu) totals[key] += n;
  }
}

}  // namespace

LostCounts BpfSession::lost() const {
  LostCounts total{};
  sum_percpu_counters(bpf_map__fd(skel_->maps.lost), total);
  return total;
}

std::vector<std::pair<wp_metric_key, wp_metric_value>> BpfSession::metric_entries() const {
  const int slots_fd = bpf_map__fd(skel_->maps.metric_slots);
  const int values_fd = bpf_map__fd(skel_->maps.metric_values);
  const int cpus = libbpf_num_possible_cpus();
  std::vector<std::pair<wp_metric_key, wp_metric_value>> entries;
  if (slots_fd < 0 || values_fd < 0 || cpus <= 0) return entries;
  std::vector<wp_metric_value> per_cpu(static_cast<std::size_t>(cpus));
  wp_metric_key key{}, next{};
  const void* previous = nullptr;  // null: the first key
  while (bpf_map_get_next_key(slots_fd, previous, &next) == 0) {
    key = next;
    previous = &key;
    std::uint32_t slot = 0;
    if (bpf_map_lookup_elem(slots_fd, &key, &slot) != 0) continue;  // deleted meanwhile
    if (bpf_map_lookup_elem(values_fd, &slot, per_cpu.data()) != 0) continue;
    wp_metric_value total{};
    for (const auto& v : per_cpu) {
      for (std::size_t i = 0; i < std::size(total.buckets); ++i) total.buckets[i] += v.buckets[i];
      total.sum_ns += v.sum_ns;
      total.bytes += v.bytes;
      total.dirtied_ops += v.dirtied_ops;
      total.dirtied_pages += v.dirtied_pages;
    }
    entries.emplace_back(key, total);
  }
  return entries;
}

std::uint64_t BpfSession::metrics_overflow() const {
  std::array<std::uint64_t, 1> total{};
  sum_percpu_counters(bpf_map__fd(skel_->maps.metrics_overflow), total);
  return total[0];
}

UntracedCounts BpfSession::untraced_calls() const {
  UntracedCounts total{};
  sum_percpu_counters(bpf_map__fd(skel_->maps.untraced_calls), total);
  return total;
}

bool kernel_counts_bpf_time() {
  std::ifstream in("/proc/sys/kernel/bpf_stats_enabled");
  int enabled = 0;
  return (in >> enabled) && enabled == 1;
}

std::vector<ProgramCost> BpfSession::program_costs() const {
  std::vector<ProgramCost> costs;
  struct bpf_program* prog;
  bpf_object__for_each_program(prog, skel_->obj) {
    const int fd = bpf_program__fd(prog);
    if (!bpf_program__autoload(prog) || fd < 0) continue;
    bpf_prog_info info{};
    std::uint32_t length = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &length) != 0) continue;  // libbpf 1.1 (bookworm)
    costs.push_back({bpf_program__name(prog), info.run_cnt, info.run_time_ns});
  }
  return costs;
}

std::map<DevT, wp_filtered_totals> BpfSession::filtered_requests() const {
  const int fd = bpf_map__fd(skel_->maps.filtered_requests);
  const int cpus = libbpf_num_possible_cpus();
  std::map<DevT, wp_filtered_totals> totals;
  if (fd < 0 || cpus <= 0) return totals;
  std::vector<wp_filtered_totals> per_cpu(static_cast<std::size_t>(cpus));
  std::uint32_t key = 0, next = 0;
  const void* previous = nullptr;  // null: the first key
  while (bpf_map_get_next_key(fd, previous, &next) == 0) {
    key = next;
    previous = &key;
    if (bpf_map_lookup_elem(fd, &key, per_cpu.data()) != 0) continue;
    wp_filtered_totals& t = totals[key];
    for (const auto& v : per_cpu) {
      t.write_requests += v.write_requests;
      t.write_bytes += v.write_bytes;
      t.flush_requests += v.flush_requests;
    }
  }
  return totals;
}

std::vector<FilteredIo> BpfSession::filtered_io() const {
  const int fd = bpf_map__fd(skel_->maps.filtered_io);
  std::vector<FilteredIo> owners;
  if (fd < 0) return owners;
  wp_filtered_io_key key{}, next{};
  const void* previous = nullptr;  // null: the first key
  while (bpf_map_get_next_key(fd, previous, &next) == 0) {
    key = next;
    previous = &key;
    wp_filtered_io io{};
    if (bpf_map_lookup_elem(fd, &key, &io) == 0) owners.push_back(filtered_io_entry(key, io));
  }
  return owners;
}

bool BpfSession::add_tgid(std::uint32_t tgid) {
  std::uint8_t traced = WP_TGID_TRACED;
  if (bpf_map__update_elem(skel_->maps.traced_tgids, &tgid, sizeof(tgid), &traced, sizeof(traced),
                           BPF_ANY) != 0)
    return false;
  // A byte store: the kernel side stores to its neighbours at any time, never to this one.
  if (tgid < tgid_bytes_.size()) std::atomic_ref<std::uint8_t>(tgid_bytes_[tgid]).store(1);
  return true;
}

bool BpfSession::remove_tgid(std::uint32_t tgid) {
  if (tgid < tgid_bytes_.size()) std::atomic_ref<std::uint8_t>(tgid_bytes_[tgid]).store(0);
  return bpf_map__delete_elem(skel_->maps.traced_tgids, &tgid, sizeof(tgid), 0) == 0;
}

std::uint8_t BpfSession::tgid_flags(std::uint32_t tgid) const {
  std::uint8_t flags = 0;
  if (bpf_map__lookup_elem(skel_->maps.traced_tgids, &tgid, sizeof(tgid), &flags, sizeof(flags),
                           0) != 0)
    return 0;
  return flags;
}

std::set<std::string> disabled_programs_from_env() {
  const char* disabled = std::getenv("WRITEPATH_DISABLE_PROGRAMS");
  return disabled ? parse_program_list(disabled) : std::set<std::string>{};
}

PlannedSession start_planned_session(const KernelCaps& caps, const HookPrefs& prefs,
                                     const KernelFilter& filter,
                                     const BpfSession::RecordHandler& handler) {
  PlannedSession out;
  const RunningKernelFacts facts(caps);
  out.idle_disks_completed_all = in_flight_outlasts_completion_event(facts);
  PlanOptions options{.fentry = prefs.fentry,
                      .raw_syscalls = prefs.raw_syscalls,
                      .causes = filter.causes_min_ns != 0,
                      .stacks = filter.offcpu_stacks,
                      .reads = prefs.reads,
                      .metrics = filter.metrics,
                      .throtl_timer_known = filter.throtl_timer_fn != 0,
                      .failed = prefs.disabled_programs};
  for (int attempt = 0; attempt < 4; ++attempt) {
    out.plan = plan_hooks(facts, options);
    if (!out.plan.runnable()) break;
    const std::size_t failed_before = options.failed.size();
    out.session = BpfSession::start(out.plan, filter, handler, out.error, options.failed);
    if (out.session) return out;
    if (options.failed.size() == failed_before) break;  // not an attach problem: no retry
  }
  if (out.error.empty())
    out.error = "a required hook has no usable tracepoint (see writepath doctor)";
  return out;
}

}  // namespace wp
