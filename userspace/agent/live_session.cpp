// SPDX-License-Identifier: Apache-2.0
#include "agent/live_session.h"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <utility>

#include "common/errors.h"
#include "common/wall_clock.h"
#include "probe/cgroups.h"
#include "probe/container_names.h"
#include "probe/coverage.h"
#include "probe/devices.h"
#include "probe/host_paths.h"

namespace wp {
namespace {

HookPrefs with_disabled_from_env(HookPrefs prefs) {
  prefs.disabled_programs.merge(disabled_programs_from_env());
  return prefs;
}

KernelFilter without_self(KernelFilter filter) {
  filter.self_tgid = static_cast<std::uint32_t>(::getpid());
  return filter;
}

// What the programs cost, as the kernel counted it (kernel.bpf_stats_enabled = 1): those that
// ran, most time first.
BpfCost program_cost(const BpfSession& session) {
  BpfCost cost;
  for (auto& p : session.program_costs())
    if (p.runs) cost.programs.push_back(std::move(p));
  std::sort(cost.programs.begin(), cost.programs.end(),
            [](const ProgramCost& a, const ProgramCost& b) { return a.ns > b.ns; });
  cost.cpus = static_cast<unsigned>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  cost.window_ns = monotonic_now() - session.attached_at();
  return cost;
}

}  // namespace

KernelCaps tracing_kernel() {
  KernelCaps caps = detect_kernel_caps();
  if (!caps.privileges.ok) throw Failure(kExitRuntime, caps.privileges.error);
  if (!caps.btf)
    throw Failure(kExitRuntime, caps.btf_error + " (CO-RE needs CONFIG_DEBUG_INFO_BTF=y)");
  return caps;
}

KernelFilter metrics_filter(std::uint32_t sample, Nanos slow_ns, bool comm) {
  KernelFilter filter;
  filter.metrics = true;
  filter.metrics_sample = sample;
  filter.metrics_slow_ns = slow_ns;
  filter.metrics_comm = comm;
  return filter;
}

LiveSession::LiveSession(const KernelCaps& caps, KernelFilter filter, LiveSessionOptions options)
    : filter_(without_self(std::move(filter))),
      cgroup2_(cgroup2_root()),
      first_(std::move(options.on_record)),
      pipeline_(options.sink == nullptr
                    ? nullptr
                    : std::make_unique<Pipeline>(
                          PipelineOptions{
                              .min_latency_ns = options.min_latency_ns,
                              .observer = std::move(options.observer),
                              .live = true,
                              .item_progress = options.item_progress,
                              .file_systems = list_file_systems(),
                              .host_paths = options.host_paths
                                                ? std::make_shared<HostPaths>("/proc", cgroup2_)
                                                : nullptr},
                          options.devices, *options.sink)),
      // A container's cgroup is also asked what the host says of it (its runtime's names, its
      // hostname), once, while it runs: the recording keeps that too.
      cgroup_namer_(CgroupPaths::of_this_host(),
                    [this](const CgroupName& name) { name_cgroup(name); }),
      address_namer_(kernel_address_namer(
          filter_, [this](const KernelSymbolName& symbol) { name_kernel_address(symbol); })),
      planned_(
          start_planned_session(caps, with_disabled_from_env(std::move(options.prefs)), filter_,
                                [this](std::span<const std::byte> record) { on_record(record); })) {
  if (!planned_.session && !options.keep_failure) throw Failure(kExitRuntime, planned_.error);
  devices_ = options.devices.empty() ? list_block_devices() : std::move(options.devices);
}

// Per record: a copy into the trace file's buffer and/or the live pipeline; nothing else.
void LiveSession::on_record(std::span<const std::byte> record) {
  if (first_) first_(record);
  cgroup_namer_.on_record(record);
  if (address_namer_) address_namer_->on_record(record);
  if (recording_) recording_->record(record);
  if (pipeline_) pipeline_->on_record(record);
}

void LiveSession::name_cgroup(const CgroupName& name) {
  if (!recording_ && !pipeline_) return;
  const ContainerNames names = host_container_names(name.path, cgroup2_);
  if (recording_) {
    recording_->cgroup_name(name);
    recording_->container_names({name.id, names});
  }
  if (pipeline_) pipeline_->name_cgroup(name.id, name.path, names);
}

void LiveSession::name_kernel_address(const KernelSymbolName& symbol) {
  if (recording_) recording_->kernel_symbol(symbol);
  if (pipeline_) pipeline_->name_kernel_address(symbol.address, symbol.name);
}

void LiveSession::record_to(std::unique_ptr<TraceFileWriter> recording, std::string path) {
  recording_ = std::move(recording);
  recording_path_ = std::move(path);
}

SessionLoop LiveSession::loop(SessionLoopOptions own) {
  BpfSession& session = *planned_.session;
  own.ring_fd = session.ring_fd();
  own.consume = [&session](int max_records) { return session.consume(max_records); };
  own.lost = [&session] { return session.lost(); };
  own.detach = [&session, before = std::move(own.detach)] {
    if (before) before();
    session.detach();
  };
  own.on_lost = [this](const LostCounts& delta) {
    if (recording_) recording_->lost(delta);
    if (pipeline_) pipeline_->add_lost(delta);
  };
  own_flush_ = std::move(own.flush);
  own.flush = [this] { flush(); };
  own.on_clock = [this](const ClockOffsets& offsets) {
    if (pipeline_) pipeline_->set_clock(offsets);
  };
  return SessionLoop(std::move(own));
}

// Writes out what is buffered; a failed write ends the session with its reason. The session
// and the hooks go with the stack as the Failure leaves.
void LiveSession::flush() {
  if (recording_) {
    recording_->flush();
    if (!recording_->ok())
      throw Failure(kExitRuntime, write_failed(recording_path_, recording_->error()));
  }
  if (own_flush_) own_flush_();
}

namespace {

// The disks with no write request in flight now, and the time once they were all read.
WriteIdleDisks write_idle_disks(const std::vector<DeviceInfo>& devices) {
  WriteIdleDisks idle;
  for (const DeviceInfo& d : devices)
    if (d.dev == d.disk && writes_in_flight(d.disk, devices) == 0) idle.disks.push_back(d.disk);
  idle.at = monotonic_now();
  return idle;
}

}  // namespace

SessionEnd LiveSession::finish(const SessionLoop& loop, Nanos span) {
  BpfSession& session = *planned_.session;
  // Read once the hooks are detached: a write request the trace saw begin on an idle disk
  // and never saw complete completed unseen (BlockTracker::write_idle_at_end).
  if (planned_.idle_disks_completed_all && (pipeline_ || recording_)) {
    WriteIdleDisks idle = write_idle_disks(devices_);
    if (recording_) recording_->write_idle_disks(idle);
    summary_.set_write_idle_disks(std::move(idle));
  }
  // Read once the hooks are detached: the final counts, kept by a recording too.
  const auto untraced = untraced_by_name(untraced_tally(planned_.plan, session.untraced_calls()));
  if (recording_) recording_->untraced(untraced);
  FilteredRequestsByDisk filtered;
  for (const auto& [dev, t] : session.filtered_requests())
    filtered[dev] = {t.write_requests, t.write_bytes, t.flush_requests};
  if (recording_ && !filtered.empty()) recording_->filtered_requests(filtered);
  const std::vector<FilteredIo> filtered_io = session.filtered_io();
  for (const FilteredIo& io : filtered_io)
    cgroup_namer_.name(io.cgroup_id);  // its CgroupName before the frame naming it
  if (recording_ && !filtered_io.empty()) recording_->filtered_io(filtered_io);
  SessionEnd end;
  if (pipeline_) {
    if (kernel_counts_bpf_time()) summary_.set_bpf_cost(program_cost(session));
    summary_.add_filtered_requests(filtered);
    summary_.add_filtered_io(filtered_io);
    summary_.set_untraced_calls(untraced);
    end.summary = pipeline_->finish(span, summary_);
    end.loss = loss_report(end.summary->events, loop.lost_total(), true);
  } else if (recording_) {
    end.loss = loss_report(recording_->records(), loop.lost_total(), false);
  }
  flush();
  return end;
}

void require_read_hooks(const HookPlan& plan) {
  const std::vector<const HookChoice*> missing = plan.unplanned("read");
  if (missing.empty()) return;
  const HookChoice& first = *missing.front();
  throw Failure(kExitRuntime,
                fmt::format("--reads: this kernel offers no {} hook ({}), without which a read's "
                            "pages cannot be told cached from brought in; writepath doctor says "
                            "what it has",
                            first.hook->name, first.why.empty() ? "no variant" : first.why));
}

void warn_without_fault_hooks(const HookPlan& plan) {
  // What each optional layer of the read path leaves unknown without its hooks.
  constexpr std::pair<const char*, const char*> kOptional[] = {
      {"fault", "page faults on file mappings go unseen"},
      {"readahead",
       "the readaheads a read ran go uncounted (sync_readaheads, async_readaheads 0)"}};
  for (const auto& [layer, cost] : kOptional) {
    const std::vector<const HookChoice*> missing = plan.unplanned(layer);
    if (missing.empty()) continue;
    std::cerr << fmt::format(
        "writepath: --reads: this kernel offers no {} hook ({}): {}\n", missing.front()->hook->name,
        missing.front()->why.empty() ? "no variant" : missing.front()->why, cost);
  }
}

}  // namespace wp
