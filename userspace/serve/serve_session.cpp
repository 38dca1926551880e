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

#include "agent/live_session.h"
#include "agent/session_loop.h"
#include "common/errors.h"
#include "common/wall_clock.h"
#include "probe/cgroups.h"
#include "probe/container_names.h"
#include "probe/devices.h"
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

// One line for both ways a listen fails: the address checked before anything is attached, the
// exporter's own bind after.
Failure cannot_listen(const std::string& listen, const std::string& why) {
  return Failure(kExitRuntime, fmt::format("cannot listen on {}: {}", listen, why));
}

KernelFilter serve_filter(const ServeOptions& options) {
  KernelFilter filter =
      metrics_filter(options.durability_sample, options.slow_ns, options.comm_labels);
  filter.causes_min_ns = options.slow_ns;
  filter.offcpu_stacks = options.stacks;
  filter.ring_bytes = options.buffer_bytes;
  return filter;
}

// /metrics, answered from `source` on the exporter's threads. The exporter holds `source`
// weakly: the caller keeps it for as long as the exporter lives.
std::unique_ptr<prometheus::Exposer> expose(const ServeOptions& options,
                                            const ListenAddress& address,
                                            const std::shared_ptr<ScrapeSource>& source) {
  try {
    const std::string bind = address.host.find(':') != std::string::npos
                                 ? fmt::format("[{}]:{}", address.host, address.port)
                                 : fmt::format("{}:{}", address.host, address.port);
    auto exposer = std::make_unique<prometheus::Exposer>(bind, 2);
    exposer->RegisterCollectable(source);
    return exposer;
  } catch (const std::exception& e) {
    throw cannot_listen(options.listen, e.what());
  }
}

// SIGTERM and SIGINT stop; SIGHUP reopens the slow-call log; a SIGPIPE (a closed scrape
// connection or log pipe) is only the error return of its write.
AfterSignal on_serve_signal(SlowCallLog* slow, const signalfd_siginfo& info) {
  if (info.ssi_signo == SIGPIPE) return AfterSignal::Continue;
  if (info.ssi_signo != SIGHUP) return AfterSignal::Stop;
  if (slow)
    if (const std::string why = slow->reopen(); !why.empty())
      std::cerr << fmt::format("writepath: cannot reopen {}: {} (still writing the old)\n",
                               slow->name(), why);
  return AfterSignal::Continue;
}

}  // namespace

int run_serve(const ServeOptions& options) {
  const ListenAddress address = parse_listen(options.listen);
  const KernelCaps caps = tracing_kernel();
  if (const std::string why = bind_error(address); !why.empty())
    throw cannot_listen(options.listen, why);
  std::unique_ptr<SlowCallLog> slow;
  if (options.slow_ns)
    slow = std::make_unique<SlowCallLog>(options.slow_log, options.slow_ns, options.slow_rate);
  // Signals through a signalfd, blocked before the exporter's threads start, so they inherit
  // the block.
  SignalInbox signals({SIGINT, SIGTERM, SIGHUP, SIGPIPE});
  WriteMetrics metrics(MetricLabelOptions{.max_cgroups = options.max_cgroups,
                                          .comm = options.comm_labels,
                                          .max_comms = options.max_comms,
                                          .durability_sample = options.durability_sample},
                       host_namers());
  ServeSink sink(metrics, slow.get());
  if (slow) slow->set_clock(measure_clock_offsets());
  std::atomic<std::uint64_t> events{0};
  const std::vector<DeviceInfo> devices = list_block_devices();
  LiveSession session(
      caps, serve_filter(options),
      LiveSessionOptions{.prefs = HookPrefs{.fentry = options.fentry, .reads = options.reads},
                         .sink = &sink,
                         .devices = devices,
                         .on_record = [&events](std::span<const std::byte>) {
                           events.fetch_add(1, std::memory_order_relaxed);
                         }});
  if (options.reads) {
    require_read_hooks(session.plan());
    warn_without_fault_hooks(session.plan());
  }
  // The exporter last, so that a scrape always finds the kernel side attached; it goes first
  // at the end, before the hooks are detached.
  const auto source = std::make_shared<ScrapeSource>(session.bpf(), metrics, slow.get(), events);
  std::unique_ptr<prometheus::Exposer> exposer = expose(options, address, source);
  if (const std::string slow_path = session.plan().slow_syscall_path(); !slow_path.empty())
    std::cerr << fmt::format(
        "writepath: syscall tracepoints for {}: every syscall of every thread on this machine "
        "takes the kernel's slow path while serve runs (writepath doctor: syscall plan)\n",
        slow_path);
  std::cerr << fmt::format("writepath: serving write-path metrics on http://{}/metrics{}\n",
                           options.listen, address.loopback ? "" : " (reachable from other hosts)");
  SessionLoop loop = session.loop(SessionLoopOptions{
      // Stop answering scrapes (one in progress completes), then detach the hooks.
      .detach = [&exposer] { exposer.reset(); },
      .signal_fd = signals.fd(),
      .on_signal =
          [&slow](const signalfd_siginfo& info) { return on_serve_signal(slow.get(), info); },
      .duration_ns = options.duration_ns,
      .poll_ms = kServePollMs,
      .flush =
          [&slow] {
            if (slow && !slow->flush())
              throw Failure(kExitRuntime, write_failed(slow->name(), slow->error()));
          },
  });
  session.finish(loop, loop.run());
  signals.restore();
  return 0;
}

}  // namespace wp
