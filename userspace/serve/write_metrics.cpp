// SPDX-License-Identifier: Apache-2.0
#include "serve/write_metrics.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "decode/decoder.h"
#include "decode/syscalls.h"
#include "serve/metric_labels.h"
#include "stitch/sync_phase.h"

namespace wp {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr std::array<Nanos, WP_METRIC_BOUNDS> kBoundsNs = {
#define WP_METRIC_BOUND_NS_(ns) ns,
    WP_METRIC_BOUND_LIST(WP_METRIC_BOUND_NS_)
#undef WP_METRIC_BOUND_NS_
};

// The catalogue's order, which collect() keeps.
enum Family : std::size_t {
  kWriteLatency,
  kWrittenBytes,
  kDirectDirtied,
  kDirectDirtiedPages,
  kSyncLatency,
  kSyncPhase,
  kDurableLag,
  kThrottle,
  kRequestService,
  kRequestBytes,
  kFlushLatency,
  kLostWrites,
  kLostWriteBytes,
  kFailedWriteRequests,
  kFailedWriteBytes,
  kReadLatency,
  kReadBytes,
  kMajorFaults,
  kNeighbourDelay,
  kNeighbourBytes,
  kLostEvents,
  kEvents,
  kMetricsOverflow,
  kSlowCalls,
  kSlowCallsDropped,
  kAgentCpu,
  kAgentRss,
  kSampleRatio,
  kFamilyCount,
};

// A latency histogram as the kernel keeps it: non-cumulative counts per bound (the last one
// past 10 s), the sum in ns.
struct Distribution {
  std::array<std::uint64_t, WP_METRIC_BUCKETS> buckets{};
  std::uint64_t sum_ns = 0;

  void observe(Nanos ns) {
    const auto bound = std::lower_bound(kBoundsNs.begin(), kBoundsNs.end(), ns);
    ++buckets[static_cast<std::size_t>(bound - kBoundsNs.begin())];
    sum_ns += ns;
  }
  void add(const wp_metric_value& v) {
    for (std::size_t i = 0; i < buckets.size(); ++i) buckets[i] += v.buckets[i];
    sum_ns += v.sum_ns;
  }
  std::uint64_t count() const {
    std::uint64_t n = 0;
    for (std::uint64_t b : buckets) n += b;
    return n;
  }
};

// One label set's figures: its latency and, where the family has them, its byte and page counts.
struct Aggregate {
  Distribution latency;
  std::uint64_t bytes = 0;
  std::uint64_t dirtied_ops = 0;
  std::uint64_t dirtied_pages = 0;
  std::uint64_t count = 0;  // the families that count without timing (lost, failed)
  Nanos delay_ns = 0;       // the neighbours': sync latency charged to a culprit
};

// Label values in the order of the family's MetricInfo::labels (then "comm" with comm labels).
using LabelValues = std::vector<std::string>;
using Series = std::map<LabelValues, Aggregate>;

// The series the figures are kept in, each behind one or more families:
struct SeriesSet {
  Series writes;      // device, fs, cgroup, io[, comm]: latency, bytes, direct dirtied
  Series syncs;       // device, fs, cgroup, call[, comm]
  Series phases;      // device, fs, cgroup, phase
  Series lags;        // device, fs, cgroup
  Series throttle;    // cgroup
  Series requests;    // device, op: service time, bytes
  Series flushes;     // device
  Series lost;        // device, fs, cgroup: lost writes (count) and their bytes
  Series failed;      // device: failed write requests (count) and their bytes
  Series reads;       // device, fs, cgroup[, comm]: every read's latency (serve --reads)
  Series read_bytes;  // device, fs, cgroup, source[, comm]: bytes by where they came from
  Series faults;      // device, fs, cgroup[, comm]: major faults (count)
  Series neighbours;  // device, victim_cgroup, culprit_cgroup: delay charged, bytes
};

// The kernel's READ subs: what the read found in the page cache, what it brought in.
const char* read_source_name(std::uint8_t sub) {
  return sub == 1 ? "device" : "cache";
}

// The families the kernel keys by the caller's cgroup (and comm): the ones whose newcomers
// compete for the capped label values.
bool keyed_by_task(std::uint8_t metric) {
  return metric == WP_METRIC_WRITE || metric == WP_METRIC_SYNC || metric == WP_METRIC_THROTTLE ||
         metric == WP_METRIC_READ || metric == WP_METRIC_MAJOR_FAULT;
}

const char* io_name(bool direct) {
  return direct ? "direct" : "buffered";
}

const char* request_op_name(std::uint8_t op) {
  switch (op) {
    case WP_OP_READ: return "read";
    case WP_OP_WRITE: return "write";
    case WP_OP_FLUSH: return "flush";
    case WP_OP_DISCARD: return "discard";
    case WP_OP_WRITE_ZEROES: return "write_zeroes";
  }
  return "other";
}

const char* sync_call_name(std::uint8_t sub) {
  const std::optional<Syscall> call = syscall_from_record(sub);
  return call ? syscall_name(*call) : "unknown";
}

// The device the kernel keys a file's write or sync by: its superblock's.
DevT superblock_dev(const SyscallEvent& call) {
  return call.fs_dev ? call.fs_dev : call.dev;
}

// Writes and syncs the kernel's metrics do not see: io_uring ops (no syscall of their
// own) and io_submit's writes (the kernel hooks aggregate the syscalls of WP_SYSCALL_TABLE's
// plain writes and syncs only). Everything else it has counted already.
bool kernel_aggregates(const SyscallEvent& call) {
  return !(call.via & WP_VIA_IO_URING) && !is_uring_op(call.syscall) &&
         call.syscall != Syscall::IoSubmit;
}

double seconds(std::uint64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

ClientMetric histogram_metric(const Distribution& d) {
  ClientMetric m;
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < kBoundsNs.size(); ++i) {
    cumulative += d.buckets[i];
    m.histogram.bucket.push_back({cumulative, metric_bounds_seconds()[i]});
  }
  cumulative += d.buckets.back();
  m.histogram.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
  m.histogram.sample_count = cumulative;
  m.histogram.sample_sum = seconds(d.sum_ns);
  return m;
}

ClientMetric counter_metric(double value) {
  ClientMetric m;
  m.counter.value = value;
  return m;
}

ClientMetric gauge_metric(double value) {
  ClientMetric m;
  m.gauge.value = value;
  return m;
}

}  // namespace

const std::vector<double>& metric_bounds_seconds() {
  static const std::vector<double> bounds = [] {
    std::vector<double> out;
    for (Nanos ns : kBoundsNs) out.push_back(seconds(ns));
    return out;
  }();
  return bounds;
}

const std::vector<MetricInfo>& metric_catalogue() {
  using T = MetricType;
  static const std::vector<MetricInfo> catalogue = {
      {"writepath_write_latency_seconds",
       T::Histogram,
       {"device", "fs", "cgroup", "container", "pod", "io"},
       "Write syscall latency, entry to return (write, pwrite64, writev, pwritev, pwritev2; "
       "io_uring write ops and io_submit writes from submission to completion as traced)",
       true},
      {"writepath_written_bytes_total",
       T::Counter,
       {"device", "fs", "cgroup", "container", "pod", "io"},
       "Bytes that write calls returned as written",
       true},
      {"writepath_direct_writes_dirtied_total",
       T::Counter,
       {"device", "fs", "cgroup", "container", "pod"},
       "O_DIRECT writes that dirtied page-cache pages anyway (the file system took the "
       "buffered path)",
       true},
      {"writepath_direct_dirtied_pages_total",
       T::Counter,
       {"device", "fs", "cgroup", "container", "pod"},
       "Page-cache pages dirtied by O_DIRECT writes",
       true},
      {"writepath_sync_latency_seconds",
       T::Histogram,
       {"device", "fs", "cgroup", "container", "pod", "call"},
       "Sync call latency, entry to return (fsync, fdatasync, sync_file_range, syncfs, sync, "
       "msync, io_uring fsync ops)",
       true},
      {"writepath_sync_phase_seconds",
       T::Histogram,
       {"device", "fs", "cgroup", "container", "pod", "phase"},
       "Time of each traced sync call spent in one phase (writeback submission, data I/O, "
       "journal commit, cache flush, other); one observation per phase that occurred",
       false},
      {"writepath_write_durable_lag_seconds",
       T::Histogram,
       {"device", "fs", "cgroup", "container", "pod"},
       "Time from a sampled write's return until its data is durable (written and, on a "
       "volatile cache, flushed)",
       false},
      {"writepath_dirty_throttle_pause_seconds",
       T::Histogram,
       {"cgroup", "container", "pod"},
       "Dirty-page throttling pauses (balance_dirty_pages), one observation per pause",
       false},
      {"writepath_request_service_seconds",
       T::Histogram,
       {"device", "op"},
       "Block request service time, issue to completion, per disk",
       false},
      {"writepath_request_bytes_total",
       T::Counter,
       {"device", "op"},
       "Bytes of the block requests issued, per disk",
       false},
      {"writepath_flush_latency_seconds",
       T::Histogram,
       {"device"},
       "Cache FLUSH request latency, issue to completion, per disk",
       false},
      {"writepath_lost_writes_total",
       T::Counter,
       {"device", "fs", "cgroup", "container", "pod"},
       "Writes whose writeback failed (their data never reached the disk), among the writes the "
       "agent stitches: every write with --durability-sample 1, else the sampled and slow ones",
       false},
      {"writepath_lost_write_bytes_total",
       T::Counter,
       {"device", "fs", "cgroup", "container", "pod"},
       "Bytes of those lost writes",
       false},
      {"writepath_failed_write_requests_total",
       T::Counter,
       {"device"},
       "Block write requests that completed with an error, per disk (every one, not sampled)",
       false},
      {"writepath_failed_write_bytes_total",
       T::Counter,
       {"device"},
       "Bytes of those failed write requests",
       false},
      {"writepath_read_latency_seconds",
       T::Histogram,
       {"device", "fs", "cgroup", "container", "pod"},
       "Read syscall latency, entry to return (read, pread64, readv, preadv, preadv2 of regular "
       "files; serve --reads)",
       true},
      {"writepath_read_bytes_total",
       T::Counter,
       {"device", "fs", "cgroup", "container", "pod", "source"},
       "Bytes of read syscalls by source: cache, returned from pages already in the page cache; "
       "device, the pages the reads brought into the page cache (their readahead included) and "
       "O_DIRECT reads' bytes (serve --reads)",
       true},
      {"writepath_major_faults_total",
       T::Counter,
       {"device", "fs", "cgroup", "container", "pod"},
       "Major page faults on file mappings: the page was not in the page cache or not yet read "
       "in (serve --reads)",
       true},
      {"writepath_neighbour_delay_seconds_total",
       T::Counter,
       {"device", "victim_cgroup", "culprit_cgroup"},
       "Sync latency charged to another cgroup's I/O: each sync's latency times the share of the "
       "bytes its disk wrote during it that were the culprit's (a flusher's writeback charged to "
       "the cgroup that dirtied the file); cgroups capped as the cgroup label is",
       false},
      {"writepath_neighbour_bytes_total",
       T::Counter,
       {"device", "victim_cgroup", "culprit_cgroup"},
       "Bytes of another cgroup the disk wrote while a sync of the victim cgroup waited",
       false},
      {"writepath_lost_events_total",
       T::Counter,
       {"hook"},
       "Records lost because the ring buffer was full (or a kernel table had no room), per hook",
       false},
      {"writepath_events_total", T::Counter, {}, "Records the agent decoded", false},
      {"writepath_metrics_overflow_total",
       T::Counter,
       {},
       "Kernel metric updates dropped because no metric slot was free",
       false},
      {"writepath_slow_calls_total",
       T::Counter,
       {},
       "Slow calls written to the slow-call log",
       false},
      {"writepath_slow_calls_dropped_total",
       T::Counter,
       {},
       "Slow calls not written because of the slow-call log's rate limit",
       false},
      {"writepath_agent_cpu_seconds_total",
       T::Counter,
       {},
       "CPU time of the agent itself, user and system",
       false},
      {"writepath_agent_resident_memory_bytes",
       T::Gauge,
       {},
       "Resident memory of the agent",
       false},
      {"writepath_durability_sample_ratio",
       T::Gauge,
       {},
       "Share of plain writes the time-to-durable histogram sees (1 / the sampling interval)",
       false},
  };
  return catalogue;
}

struct WriteMetrics::State {
  State(MetricLabelOptions o, MetricNamers n)
      : options(o), namers(std::move(n)), cgroups(o.max_cgroups), comms(o.max_comms) {}

  MetricLabelOptions options;
  MetricNamers namers;
  StickyLabels<std::uint64_t> cgroups;
  StickyLabels<std::string> comms;
  SeriesSet stitched;  // what observe() saw, cumulative
  // Device names and file system types, forgotten at each collect so that a re-attached loop
  // device gets its new name by the next scrape.
  std::map<DevT, std::pair<std::string, std::string>> device_names;

  const std::pair<std::string, std::string>& device(DevT dev) {
    auto it = device_names.find(dev);
    if (it != device_names.end()) return it->second;
    std::string name = namers.device ? namers.device(dev) : dev_string(dev);
    std::string fs = namers.fs_type ? namers.fs_type(dev) : "";
    return device_names.emplace(dev, std::pair{std::move(name), std::move(fs)}).first->second;
  }

  std::string cgroup_name(std::uint64_t id, const std::string& known_path) const {
    if (!known_path.empty()) return known_path;
    if (namers.cgroup_path)
      if (std::optional<std::string> path = namers.cgroup_path(id)) return *path;
    return fmt::format("id:{}", id);
  }

  // Cgroup 0 is "not known" (no cgroup record seen): it takes no label value of its own.
  std::string cgroup_label(std::uint64_t id, const std::string& known_path) {
    if (id == 0) return kOtherLabel;
    return cgroups.label(id, [&] { return cgroup_name(id, known_path); });
  }

  // The container and pod labels of a cgroup label value, read once per value (names from the
  // runtime's state on disk).
  std::map<std::string, std::pair<std::string, std::string>> containers_by_cgroup;
  const std::pair<std::string, std::string>& container_labels(const std::string& cgroup) {
    auto it = containers_by_cgroup.find(cgroup);
    if (it != containers_by_cgroup.end()) return it->second;
    std::pair<std::string, std::string> labels;
    if (auto c = container_of_cgroup(cgroup)) {
      const ContainerNames names =
          namers.container_names ? namers.container_names(*c) : ContainerNames{};
      labels.first = names.name.empty() ? std::string(c->short_id()) : names.name;
      const std::string pod = names.pod.empty() ? c->pod_uid : names.pod;
      labels.second = names.namespace_.empty() || pod.empty() ? pod : names.namespace_ + "/" + pod;
    }
    return containers_by_cgroup.emplace(cgroup, std::move(labels)).first->second;
  }

  void add_comm(LabelValues& labels, const std::string& comm) {
    if (options.comm) labels.push_back(comms.label(comm, [&] { return comm; }));
  }

  // device, fs, cgroup of a stitched call.
  LabelValues file_labels(const SyscallEvent& call) {
    const auto& [name, fs] = device(superblock_dev(call));
    return {name, fs, cgroup_label(call.cgroup_id, call.cgroup)};
  }

  void observe_write(const WriteTimeline& write);
  void observe_sync(const SyncTimeline& sync);
  SeriesSet with_kernel_rows(const std::vector<KernelMetricRow>& rows);
};

void WriteMetrics::State::observe_write(const WriteTimeline& write) {
  const SyscallEvent& call = write.call;
  if (write.state == WriteState::Lost) {
    Aggregate& lost = stitched.lost[file_labels(call)];
    lost.count += 1;
    lost.bytes += bytes_written(call);
  }
  // A store into a mapping has no call to time, and an open's copy-up is no write call (the
  // copy is synced inside the open): neither is in the other families.
  if (is_mmap_store(call) || is_copy_up(call.syscall)) return;
  if (write.durable_ns) {
    const Nanos lag = elapsed_ns(call_end(call), *write.durable_ns);
    stitched.lags[file_labels(call)].latency.observe(lag);
  }
  if (kernel_aggregates(call)) return;
  LabelValues labels = file_labels(call);
  labels.push_back(io_name(write.direct));
  add_comm(labels, call.comm);
  Aggregate& a = stitched.writes[labels];
  a.latency.observe(latency_ns(call));
  a.bytes += bytes_written(call);
  if (write.direct && call.pages_dirtied > 0) {
    a.dirtied_ops += 1;
    a.dirtied_pages += call.pages_dirtied;
  }
}

void WriteMetrics::State::observe_sync(const SyncTimeline& sync) {
  const SyscallEvent& call = sync.call;
  const LabelValues file = file_labels(call);
  for (const SyncPhaseInfo& info : kSyncPhases) {
    const Nanos ns = sync.phases.*info.total;
    if (ns == 0) continue;
    LabelValues labels = file;
    labels.push_back(info.name);
    stitched.phases[labels].latency.observe(ns);
  }
  // Whose I/O it waited behind: other cgroups' only (a cgroup's own processes are its own).
  for (const Neighbour& n : sync.neighbours) {
    if (n.owner.cgroup_id == call.cgroup_id) continue;
    Aggregate& a = stitched.neighbours[{device(n.disk).first, file[2],
                                        cgroup_label(n.owner.cgroup_id, n.owner.cgroup)}];
    a.delay_ns += n.delay_ns;
    a.bytes += n.bytes;
  }
  if (kernel_aggregates(call)) return;
  LabelValues labels = file;
  labels.push_back(call_name(call));
  add_comm(labels, call.comm);
  stitched.syncs[labels].latency.observe(latency_ns(call));
}

// The kernel's rows mapped to their label values and added to what observe() saw.
SeriesSet WriteMetrics::State::with_kernel_rows(const std::vector<KernelMetricRow>& rows) {
  // The newcomers of this scrape get their label values most active first.
  std::map<std::uint64_t, LabelActivity> new_cgroups;
  std::map<std::string, LabelActivity> new_comms;
  auto comm_of = [](const wp_metric_key& key) {
    return std::string(key.comm, strnlen(key.comm, sizeof(key.comm)));
  };
  for (const KernelMetricRow& row : rows) {
    const std::uint8_t metric = row.key.metric;
    if (!keyed_by_task(metric)) continue;
    Distribution d;
    d.add(row.value);
    if (row.key.cgroup != 0) {
      LabelActivity& a = new_cgroups[row.key.cgroup];
      a.observations += d.count();
      a.bytes += row.value.bytes;
    }
    if (options.comm && metric != WP_METRIC_THROTTLE) {
      LabelActivity& a = new_comms[comm_of(row.key)];
      a.observations += d.count();
      a.bytes += row.value.bytes;
    }
  }
  cgroups.admit(new_cgroups, [&](std::uint64_t id) { return cgroup_name(id, ""); });
  if (options.comm) comms.admit(new_comms, [](const std::string& comm) { return comm; });

  SeriesSet out = stitched;
  for (const KernelMetricRow& row : rows) {
    const wp_metric_key& key = row.key;
    const std::string cgroup = key.cgroup ? cgroups.known(key.cgroup) : kOtherLabel;
    const auto& [device_name, fs] = device(key.dev);
    auto with_comm = [&](LabelValues labels) {
      if (options.comm) labels.push_back(comms.known(comm_of(key)));
      return labels;
    };
    switch (key.metric) {
      case WP_METRIC_WRITE: {
        Aggregate& a = out.writes[with_comm({device_name, fs, cgroup, io_name(key.sub == 1)})];
        a.latency.add(row.value);
        a.bytes += row.value.bytes;
        a.dirtied_ops += row.value.dirtied_ops;
        a.dirtied_pages += row.value.dirtied_pages;
        break;
      }
      case WP_METRIC_SYNC:
        out.syncs[with_comm({device_name, fs, cgroup, sync_call_name(key.sub)})].latency.add(
            row.value);
        break;
      case WP_METRIC_THROTTLE: out.throttle[{cgroup}].latency.add(row.value); break;
      case WP_METRIC_REQUEST: {
        Aggregate& a = out.requests[{device_name, request_op_name(key.sub)}];
        a.latency.add(row.value);
        a.bytes += row.value.bytes;
        break;
      }
      case WP_METRIC_FLUSH: out.flushes[{device_name}].latency.add(row.value); break;
      case WP_METRIC_WRITE_ERROR: {
        Aggregate& a = out.failed[{device_name}];
        Distribution d;
        d.add(row.value);
        a.count += d.count();
        a.bytes += row.value.bytes;
        break;
      }
      case WP_METRIC_READ: {
        const LabelValues file = with_comm({device_name, fs, cgroup});
        if (key.sub == 0) out.reads[file].latency.add(row.value);
        out.read_bytes[with_comm({device_name, fs, cgroup, read_source_name(key.sub)})].bytes +=
            row.value.bytes;
        break;
      }
      case WP_METRIC_MAJOR_FAULT: {
        Distribution d;
        d.add(row.value);
        out.faults[with_comm({device_name, fs, cgroup})].count += d.count();
        break;
      }
      default: break;  // a metric this agent does not know: a newer BPF object's
    }
  }
  return out;
}

WriteMetrics::WriteMetrics(MetricLabelOptions options, MetricNamers namers)
    : state_(std::make_unique<State>(options, std::move(namers))) {}

WriteMetrics::~WriteMetrics() = default;

void WriteMetrics::observe(const Timeline& item) {
  std::lock_guard lock(mutex_);
  if (const auto* write = std::get_if<WriteTimeline>(&item)) state_->observe_write(*write);
  if (const auto* sync = std::get_if<SyncTimeline>(&item)) state_->observe_sync(*sync);
}

namespace {

// A cgroup label value's container and pod labels: the container's name (or short id) and
// the pod's namespace/name (or uid); "" for a host cgroup and for "other". Functions of the
// cgroup's value, so they are as capped and sticky as it is and add no series.
using ContainerLabels =
    std::function<const std::pair<std::string, std::string>&(const std::string&)>;

std::vector<ClientMetric::Label> labels_of(const MetricInfo& info, bool comm,
                                           const LabelValues& values,
                                           const ContainerLabels& container_labels) {
  std::vector<std::string> names = info.labels;
  if (comm && info.comm) names.push_back("comm");
  std::vector<ClientMetric::Label> out;
  std::size_t v = 0;  // the next of `values`: container and pod have none of their own
  const std::string* cgroup = nullptr;
  for (const std::string& name : names) {
    if ((name == "container" || name == "pod") && cgroup != nullptr) {
      const auto& [container, pod] = container_labels(*cgroup);
      out.push_back({name, name == "container" ? container : pod});
      continue;
    }
    if (v >= values.size()) break;
    if (name == "cgroup") cgroup = &values[v];
    out.push_back({name, values[v++]});
  }
  return out;
}

// The write series' label values without "io" (the direct-dirtied families have none).
LabelValues without_io(const LabelValues& values) {
  LabelValues out = values;
  out.erase(out.begin() + 3);
  return out;
}

}  // namespace

std::vector<MetricFamily> WriteMetrics::collect(const ServeCounters& counters) {
  std::lock_guard lock(mutex_);
  State& s = *state_;
  s.device_names.clear();
  const SeriesSet series = s.with_kernel_rows(counters.rows);

  const std::vector<MetricInfo>& catalogue = metric_catalogue();
  std::vector<MetricFamily> families(kFamilyCount);
  for (std::size_t i = 0; i < kFamilyCount; ++i) {
    families[i].name = catalogue[i].name;
    families[i].help = catalogue[i].help;
    families[i].type = catalogue[i].type;
  }
  const ContainerLabels container_labels =
      [&s](const std::string& cgroup) -> const std::pair<std::string, std::string>& {
    return s.container_labels(cgroup);
  };
  auto add = [&](Family f, const LabelValues& values, ClientMetric metric) {
    metric.label = labels_of(catalogue[f], s.options.comm, values, container_labels);
    families[f].metric.push_back(std::move(metric));
  };
  for (const auto& [labels, a] : series.writes) {
    add(kWriteLatency, labels, histogram_metric(a.latency));
    add(kWrittenBytes, labels, counter_metric(static_cast<double>(a.bytes)));
    if (labels[3] != io_name(true)) continue;
    add(kDirectDirtied, without_io(labels), counter_metric(static_cast<double>(a.dirtied_ops)));
    add(kDirectDirtiedPages, without_io(labels),
        counter_metric(static_cast<double>(a.dirtied_pages)));
  }
  const std::pair<Family, const Series*> histograms[] = {
      {kSyncLatency, &series.syncs},       {kSyncPhase, &series.phases},
      {kDurableLag, &series.lags},         {kThrottle, &series.throttle},
      {kRequestService, &series.requests}, {kFlushLatency, &series.flushes},
  };
  for (const auto& [family, of] : histograms)
    for (const auto& [labels, a] : *of) add(family, labels, histogram_metric(a.latency));
  for (const auto& [labels, a] : series.requests)
    add(kRequestBytes, labels, counter_metric(static_cast<double>(a.bytes)));

  for (const auto& [labels, a] : series.lost) {
    add(kLostWrites, labels, counter_metric(static_cast<double>(a.count)));
    add(kLostWriteBytes, labels, counter_metric(static_cast<double>(a.bytes)));
  }
  for (const auto& [labels, a] : series.failed) {
    add(kFailedWriteRequests, labels, counter_metric(static_cast<double>(a.count)));
    add(kFailedWriteBytes, labels, counter_metric(static_cast<double>(a.bytes)));
  }
  for (const auto& [labels, a] : series.reads)
    add(kReadLatency, labels, histogram_metric(a.latency));
  for (const auto& [labels, a] : series.read_bytes)
    add(kReadBytes, labels, counter_metric(static_cast<double>(a.bytes)));
  for (const auto& [labels, a] : series.faults)
    add(kMajorFaults, labels, counter_metric(static_cast<double>(a.count)));
  for (const auto& [labels, a] : series.neighbours) {
    add(kNeighbourDelay, labels, counter_metric(static_cast<double>(a.delay_ns) / 1e9));
    add(kNeighbourBytes, labels, counter_metric(static_cast<double>(a.bytes)));
  }
  for (std::size_t hook = 0; hook < counters.lost.size(); ++hook)
    add(kLostEvents, {hook_counter_name(hook)},
        counter_metric(static_cast<double>(counters.lost[hook])));
  add(kEvents, {}, counter_metric(static_cast<double>(counters.events)));
  add(kMetricsOverflow, {}, counter_metric(static_cast<double>(counters.metrics_overflow)));
  add(kSlowCalls, {}, counter_metric(static_cast<double>(counters.slow_calls)));
  add(kSlowCallsDropped, {}, counter_metric(static_cast<double>(counters.slow_calls_dropped)));
  add(kAgentCpu, {}, counter_metric(counters.agent_cpu_seconds));
  add(kAgentRss, {}, gauge_metric(static_cast<double>(counters.agent_rss_bytes)));
  add(kSampleRatio, {},
      gauge_metric(1.0 /
                   static_cast<double>(std::max<std::uint32_t>(s.options.durability_sample, 1))));
  return families;
}

}  // namespace wp
