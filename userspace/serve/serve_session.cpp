// SPDX-License-Identifier: Apache-2.0
#include "serve/serve_session.h"

#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

#include <atomic>
#include <csignal>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "agent/pipeline.h"
#include "agent/session_loop.h"
#include "agent/trace_session.h"
#include "agent/trace_session_symbols.h"
#include "common/errors.h"
#include "common/fd.h"
#include "common/wall_clock.h"
#include "probe/bpf_session.h"
#include "probe/cgroups.h"
#include "probe/container_names.h"
#include "probe/coverage.h"
#include "probe/devices.h"
#include "probe/hook_plan.h"
#include "probe/kernel_caps.h"
#include "serve/slow_call_log.h"
#include "serve/write_metrics.h"

namespace wp {
namespace {

// Finished items go to the metrics and, when slow enough, to the slow-call log; nothing else.
class ServeSink : public Sink {
 public:
  ServeSink(WriteMetrics& metrics, SlowCallLog* slow) : metrics_(metrics), slow_(slow) {}
  void timeline(const Timeline& item) override {
    metrics_.observe(item);
    if (slow_) slow_->offer(item, monotonic_now());
  }
  void clock(const ClockOffsets& offsets) override {
    if (slow_) slow_->set_clock(offsets);
  }
  void summary(const TraceSummary&) override {}
  void flush() override {}

 private:
  WriteMetrics& metrics_;
  SlowCallLog* slow_;
};

// The agent's own cost, for its metrics: CPU (user + system) and resident set.
double agent_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

std::uint64_t agent_rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// /metrics: every scrape reads the kernel's maps and the agent's counters afresh.
class ScrapeSource : public prometheus::Collectable {
 public:
  ScrapeSource(const BpfSession& session, WriteMetrics& metrics, const SlowCallLog* slow,
               const std::atomic<std::uint64_t>& events)
      : session_(session), metrics_(metrics), slow_(slow), events_(events) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    ServeCounters counters;
    for (auto& [key, value] : session_.metric_entries())
      counters.rows.push_back(KernelMetricRow{key, value});
    counters.lost = session_.lost();
    counters.metrics_overflow = session_.metrics_overflow();
    counters.events = events_.load(std::memory_order_relaxed);
    if (slow_) {
      counters.slow_calls = slow_->written();
      counters.slow_calls_dropped = slow_->dropped();
    }
    counters.agent_cpu_seconds = agent_cpu_seconds();
    counters.agent_rss_bytes = agent_rss_bytes();
    return metrics_.collect(counters);
  }

 private:
  const BpfSession& session_;
  WriteMetrics& metrics_;
  const SlowCallLog* slow_;
  const std::atomic<std::uint64_t>& events_;
};

// Label values for devices and file systems, from what this host has at the start (a device
// or mount added later is named by its number).
MetricNamers host_namers() {
  std::unordered_map<DevT, std::string> devices, fs_types;
  for (const auto& d : list_block_devices()) devices[d.dev] = d.name;
  for (const auto& m : read_mountinfo()) fs_types.emplace(m.dev, m.type);
  for (const auto& fs : list_file_systems())
    for (DevT alias : fs.aliases) fs_types.emplace(alias, fs.type);
  auto paths = std::make_shared<std::optional<CgroupPaths>>(CgroupPaths::of_this_host());
  return MetricNamers{.device =
                          [devices](DevT dev) {
                            if (auto it = devices.find(dev); it != devices.end()) return it->second;
                            return fmt::format("{}:{}", dev >> 20, dev & 0xfffff);
                          },
                      .fs_type =
                          [fs_types](DevT dev) {
                            auto it = fs_types.find(dev);
                            return it != fs_types.end() ? it->second : std::string();
                          },
                      .cgroup_path = [paths](std::uint64_t id) -> std::optional<std::string> {
                        if (!*paths) return std::nullopt;
                        return (*paths)->path_of(id);
                      },
                      .container_names = [](const Container& c) { return container_names(c); }};
}

}  // namespace

int run_serve(const ServeOptions& options) {
  const ListenAddress address = parse_listen(options.listen);
  KernelCaps caps = detect_kernel_caps();
  if (!caps.privileges.ok) throw Failure(kExitRuntime, caps.privileges.error);
  if (!caps.btf)
    throw Failure(kExitRuntime, caps.btf_error + " (CO-RE needs CONFIG_DEBUG_INFO_BTF=y)");
  if (const std::string why = bind_error(address); !why.empty())
    throw Failure(kExitRuntime, fmt::format("cannot listen on {}: {}", options.listen, why));

  std::unique_ptr<SlowCallLog> slow;
  if (options.slow_ns)
    slow = std::make_unique<SlowCallLog>(options.slow_log, options.slow_ns, options.slow_rate);

  // Signals through a signalfd: SIGTERM/SIGINT stop, SIGHUP reopens the slow-call log. SIGPIPE
  // is blocked: a closed scrape connection or log pipe is an error return, not a death.
  // Blocked before the exporter's threads start, so they inherit the block.
  SignalInbox signals({SIGINT, SIGTERM, SIGHUP, SIGPIPE});

  KernelFilter filter;
  filter.self_tgid = static_cast<std::uint32_t>(::getpid());
  filter.metrics = true;
  filter.metrics_sample = options.durability_sample;
  filter.metrics_slow_ns = options.slow_ns;
  filter.metrics_comm = options.comm_labels;
  filter.causes_min_ns = options.slow_ns;
  filter.offcpu_stacks = options.stacks;
  filter.ring_bytes = options.buffer_bytes;

  WriteMetrics metrics(MetricLabelOptions{.max_cgroups = options.max_cgroups,
                                          .comm = options.comm_labels,
                                          .max_comms = options.max_comms,
                                          .durability_sample = options.durability_sample},
                       host_namers());
  ServeSink sink(metrics, slow.get());
  const std::vector<DeviceInfo> devices = list_block_devices();
  if (slow) slow->set_clock(measure_clock_offsets());
  Pipeline pipeline(PipelineOptions{.min_latency_ns = 0,
                                    .observer = {},
                                    .live = true,
                                    .item_progress = false,
                                    .file_systems = list_file_systems()},
                    devices, sink);
  const std::string cgroup2 = cgroup2_root();
  CgroupNamer cgroup_namer(
      CgroupPaths::of_this_host(), [&pipeline, &cgroup2](const CgroupName& name) {
        pipeline.name_cgroup(name.id, name.path, host_container_names(name.path, cgroup2));
      });
  const std::unique_ptr<KernelAddressNamer> address_namer =
      kernel_address_namer(filter, [&pipeline](const KernelSymbolName& symbol) {
        pipeline.name_kernel_address(symbol.address, symbol.name);
      });
  std::atomic<std::uint64_t> events{0};
  BpfSession::RecordHandler handler = [&](std::span<const std::byte> record) {
    events.fetch_add(1, std::memory_order_relaxed);
    cgroup_namer.on_record(record);
    if (address_namer) address_namer->on_record(record);
    pipeline.on_record(record);
  };
  PlannedSession planned = start_planned_session(
      caps,
      HookPrefs{
          .fentry = true, .raw_syscalls = false, .disabled_programs = disabled_programs_from_env()},
      filter, handler);
  if (!planned.session) throw Failure(kExitRuntime, planned.error);
  BpfSession& session = *planned.session;

  // The exporter last, so that a scrape always finds the kernel side attached; it goes first
  // at the end, before the hooks are detached.
  auto source = std::make_shared<ScrapeSource>(session, metrics, slow.get(), events);
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    const std::string bind = address.host.find(':') != std::string::npos
                                 ? fmt::format("[{}]:{}", address.host, address.port)
                                 : fmt::format("{}:{}", address.host, address.port);
    exposer = std::make_unique<prometheus::Exposer>(bind, 2);
    exposer->RegisterCollectable(source);
  } catch (const std::exception& e) {
    throw Failure(kExitRuntime, fmt::format("cannot listen on {}: {}", options.listen, e.what()));
  }
  std::cerr << fmt::format("writepath: serving write-path metrics on http://{}/metrics{}\n",
                           options.listen, address.loopback ? "" : " (reachable from other hosts)");

  auto flush_log = [&slow] {
    if (slow && !slow->flush())
      throw Failure(kExitRuntime, fmt::format("writing {}: {}", slow->name(), slow->error()));
  };
  SessionLoop loop(SessionLoopOptions{
      .ring_fd = session.ring_fd(),
      .consume = [&session](int max_records) { return session.consume(max_records); },
      .lost = [&session] { return session.lost(); },
      // Stop answering scrapes (one in progress completes), then detach the hooks.
      .detach =
          [&exposer, &session] {
            exposer.reset();
            session.detach();
          },
      .signal_fd = signals.fd(),
      .on_signal =
          [&slow](const signalfd_siginfo& info) {
            if (info.ssi_signo == SIGPIPE) return AfterSignal::Continue;
            if (info.ssi_signo != SIGHUP) return AfterSignal::Stop;
            if (slow)
              if (const std::string why = slow->reopen(); !why.empty())
                std::cerr << fmt::format(
                    "writepath: cannot reopen {}: {} (still writing the old)\n", slow->name(), why);
            return AfterSignal::Continue;
          },
      .duration_ns = options.duration_ns,
      .watched = {},
      .poll_ms = kServePollMs,
      .on_start = {},
      .on_lost = [&pipeline](const LostCounts& delta) { pipeline.add_lost(delta); },
      .flush = flush_log,
      .on_clock = [&pipeline](const ClockOffsets& offsets) { pipeline.set_clock(offsets); },
  });
  pipeline.finish(loop.run());
  flush_log();  // the items finish() completed
  signals.restore();
  return 0;
}

}  // namespace wp
