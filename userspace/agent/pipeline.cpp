// SPDX-License-Identifier: Apache-2.0
#include "agent/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "analyze/hazards.h"
#include "probe/container_names.h"

namespace wp {

LossReport loss_report(std::uint64_t events, std::uint64_t lost, bool suggest_record) {
  LossReport report;
  if (lost == 0) return report;
  report.share = static_cast<double>(lost) / static_cast<double>(events + lost);
  report.advice = suggest_record ? "raise --buffer-size, narrow the filters "
                                   "(-p/--comm/--cgroup/--file/--dev), or use writepath record "
                                   "and report later"
                                 : "raise --buffer-size or narrow the filters "
                                   "(-p/--comm/--cgroup/--file/--dev) when recording";
  report.warning = fmt::format(
      "warning: lost {} of {} records ({:.1f}%): the ring buffer was full, items they touched "
      "are marked incomplete; {}",
      lost, events + lost, 100.0 * report.share, report.advice);
  return report;
}

void warn_of_losses(const LossReport& loss) {
  if (!loss.warning.empty()) std::cerr << "writepath: " << loss.warning << "\n";
}

namespace {

// With --min-latency only slow calls reach the stitcher (the kernel drops the rest), so the
// block events they need are those of their own call: a shorter history window releases the
// block events no slow call claims sooner.
StitchLimits limits_for(const PipelineOptions& options) {
  StitchLimits limits;
  limits.page_shift = options.page_shift;
  limits.io_owners = options.io_owners;
  if (options.min_latency_ns != 0) {
    limits.history_ns = std::max<Nanos>(10'000'000'000ull, 4 * options.min_latency_ns);
    limits.max_history_per_key = 1024;
  }
  return limits;
}

}  // namespace

Pipeline::Pipeline(PipelineOptions options, const std::vector<DeviceInfo>& devices, Sink& sink)
    : options_(std::move(options)),
      sink_(sink),
      stitcher_(limits_for(options_)),
      emit_([this](Timeline&& item) { emit(item); }) {
  for (const auto& device : devices) stitcher_.add_device(device);
  for (const auto& fs : options_.file_systems) stitcher_.add_file_system(fs);
  if (options_.item_progress)
    stitcher_.set_progress([this](ItemProgress progress, Timeline& item) {
      if (!passes(item)) return;
      name_item_context(item);
      sink_.progress(progress, item);
    });
}

void Pipeline::on_record(std::span<const std::byte> record) {
  if (auto event = decoder_.decode(record)) feed(*event);
}

void Pipeline::name_stack(KernelStack& stack) const {
  stack.frames.resize(stack.addrs.size());
  for (std::size_t i = 0; i < stack.addrs.size(); ++i)
    if (auto it = kernel_names_.find(stack.addrs[i]); it != kernel_names_.end())
      stack.frames[i] = it->second;
  // The tracer's own frames come first (the BPF program, loaded after kallsyms was read, and
  // the bpf_trace_run<N> that ran it, how many depends on the kernel): the stack starts at
  // the tracepoint's caller.
  constexpr std::size_t kTracerFrames = 4;
  std::size_t own = 0;
  for (std::size_t i = 0; i < std::min(kTracerFrames, stack.frames.size()); ++i)
    if (stack.frames[i].starts_with("bpf_trace_run")) own = i + 1;
  stack.addrs.erase(stack.addrs.begin(), stack.addrs.begin() + static_cast<std::ptrdiff_t>(own));
  stack.frames.erase(stack.frames.begin(), stack.frames.begin() + static_cast<std::ptrdiff_t>(own));
}

OffCpuEvent Pipeline::named_frames(OffCpuEvent event) const {
  for (auto& sleep : event.sleeps) {
    name_stack(sleep.stack);
    if (sleep.waker) name_stack(sleep.waker->stack);
  }
  return event;
}

void Pipeline::feed(const Event& event) {
  if (const auto* offcpu = std::get_if<OffCpuEvent>(&event)) {
    // The stitcher sees the stacks named: a copy of this (rare: one per slow call) event.
    last_ts_ = std::max(last_ts_, offcpu->ts);
    stitcher_.feed(Event(named_frames(*offcpu)), emit_);
    return;
  }
  std::visit(
      [this](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, NameChangeEvent>) {
          last_ts_ = std::max(last_ts_, e.end_ns);
        } else if constexpr (std::is_same_v<T, SyscallEvent>) {
          last_ts_ = std::max(last_ts_, e.end_ns);
          // While the writer runs: its namespace is read now, its items may come later.
          if (options_.host_paths) options_.host_paths->note_process(e.pid, e.end_ns);
        } else if constexpr (std::is_same_v<T, ReadEvent>) {
          last_ts_ = std::max(last_ts_, e.call.end_ns);
          if (options_.host_paths) options_.host_paths->note_process(e.call.pid, e.call.end_ns);
        } else {
          last_ts_ = std::max(last_ts_, e.ts);
        }
      },
      event);
  stitcher_.feed(event, emit_);
}

void Pipeline::add_lost(const LostCounts& delta) {
  std::uint64_t total = 0;
  for (std::size_t hook = 0; hook < delta.size(); ++hook) {
    lost_[hook] += delta[hook];
    total += delta[hook];
  }
  if (total) feed(LostEvent{last_ts_, total});
}

TraceSummary Pipeline::finish(Nanos duration_ns, const SummaryBuilder& facts) {
  if (const auto& idle = facts.write_idle_disks())
    stitcher_.disks_write_idle(idle->disks, idle->at, emit_);
  stitcher_.finish(emit_);
  auditor_.finish(deliver_);
  TraceSummary summary;
  summary.events = decoder_.stats().records + decoded_events_;
  for (std::size_t hook = 0; hook < lost_.size(); ++hook) {
    summary.lost += lost_[hook];
    if (lost_[hook]) summary.lost_by_hook[hook_counter_name(hook)] = lost_[hook];
  }
  const auto& stats = stitcher_.stats();
  summary.writes = stats.writes;
  summary.fsyncs = stats.syncs;
  summary.name_change_calls = stats.name_change_calls;
  summary.reads = stats.reads;
  summary.faults = stats.faults;
  summary.incomplete = stats.incomplete;
  summary.aged_out = stats.aged_out;
  summary.evicted = stats.evicted;
  summary.discarded = stats.discarded;
  summary.memory_only = stats.memory_only;
  summary.lost_writes = stats.lost_writes;
  summary.lost_bytes = stats.lost_bytes;
  summary.missed_completions = stats.missed_completions;
  summary.disks = stats.disks;
  summary.duration_ns = duration_ns;
  summary.sync_phases = sync_phases_;
  summary.neighbours = neighbours_.rows();
  stitcher_.add_filtered_io(facts.filtered_io());
  summary.io_by_process = stitcher_.io_by_owner();
  if (summary.io_by_process.size() > 10) summary.io_by_process.resize(10);
  for (OwnerIo& io : summary.io_by_process) name_owner(io.owner);
  summary.direct_io = direct_io_;
  summary.read_files = read_files_;
  summary.read_findings =
      diagnose_reads(read_files_.files(), std::uint64_t{1} << options_.page_shift);
  summary.hazards = hazards_.by_rule();
  summary.hazards_by_file = hazards_.by_file();
  summary.hazards_by_process = hazards_.by_process();
  const LossReport loss = loss_report(summary.events, summary.lost, options_.live);
  summary.lost_share = loss.share;
  summary.lost_advice = loss.advice;
  facts.complete(summary);
  sink_.summary(summary);
  sink_.flush();
  return summary;
}

namespace {

Container with_names(Container c, const ContainerNames& names) {
  c.name = names.name;
  c.pod_name = names.pod;
  c.pod_namespace = names.namespace_;
  c.hostname = names.hostname;
  return c;
}

}  // namespace

void Pipeline::name_cgroup(std::uint64_t id, std::string path, const ContainerNames& names) {
  std::optional<Container> container = container_of_cgroup(path);
  cgroup_names_[id] = CgroupName{
      std::move(path),
      container ? std::make_shared<const Container>(with_names(std::move(*container), names))
                : nullptr};
}

void Pipeline::name_container(std::uint64_t id, const ContainerNames& names) {
  auto it = cgroup_names_.find(id);
  if (it == cgroup_names_.end() || !it->second.container || names.empty()) return;
  // Items already emitted keep the container as they had it: a copy, named.
  it->second.container =
      std::make_shared<const Container>(with_names(*it->second.container, names));
}

void Pipeline::name_owner(IoOwner& owner) const {
  if (auto it = cgroup_names_.find(owner.cgroup_id); it != cgroup_names_.end()) {
    owner.cgroup = it->second.path;
    owner.container = it->second.container;
  }
}

void Pipeline::name_item_context(Timeline& item) const {
  if (auto* sync = std::get_if<SyncTimeline>(&item))
    for (Neighbour& n : sync->neighbours) name_owner(n.owner);
  std::visit(
      [this](auto& t) {
        SyscallEvent& call = t.call;
        if (auto it = cgroup_names_.find(call.cgroup_id); it != cgroup_names_.end()) {
          call.cgroup = it->second.path;
          call.container = it->second.container;
        }
        if (options_.host_paths && !call.path.empty()) {
          const DevT backing = call.view_dev != 0 ? call.dev : 0;
          static const std::string kNoContainer;
          const std::string& cgroup = call.container ? call.container->cgroup : kNoContainer;
          if (auto host = options_.host_paths->host_path(call.pid, cgroup, stat_dev(call), backing,
                                                         call.path, call.ns_path, call.mnt_ns))
            call.host_path = std::move(*host);
        }
      },
      item);
}

bool Pipeline::passes(const Timeline& item) const {
  const SyscallEvent& call = call_of(item);
  return call.end_ns - call.start_ns >= options_.min_latency_ns;
}

void Pipeline::emit(Timeline& item) {
  if (!passes(item)) return;
  name_item_context(item);
  auditor_.take(std::move(item), deliver_);
}

void Pipeline::deliver(Timeline& item) {
  hazards_.add(item);
  if (options_.observer) options_.observer(item);
  if (const auto* sync = std::get_if<SyncTimeline>(&item)) {
    sync_phases_.add(*sync);
    neighbours_.add(*sync);
  }
  if (const auto* write = std::get_if<WriteTimeline>(&item)) direct_io_.add(*write);
  if (const auto* read = std::get_if<ReadTimeline>(&item)) read_files_.add(*read);
  sink_.take(std::move(item));
}

}  // namespace wp
