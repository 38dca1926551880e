// SPDX-License-Identifier: Apache-2.0
// The metrics `writepath serve` exports, built at scrape time from two sources: the kernel's
// own aggregates (the metric slots: write and sync latency, bytes, O_DIRECT writes that
// dirtied pages, throttle pauses, request service and flush times; with serve --reads, read
// latency, read bytes by source and major faults), and what the stitcher
// finishes in the agent (each sync's phases, a sampled write's time to durable, the writes
// the kernel does not aggregate: io_uring and AIO). Pure: no kernel, no network, no clock;
// names for devices and cgroups come through the Namers the agent hands in.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "decode/events.h"
#include "probe/container_names.h"
#include "stitch/timeline.h"
#include "writepath.h"

namespace wp {

// One label set of the kernel's metrics, its per-CPU values summed.
struct KernelMetricRow {
  wp_metric_key key{};
  wp_metric_value value{};
};

// What the kernel side and the agent's loop have counted so far (all cumulative).
struct ServeCounters {
  std::vector<KernelMetricRow> rows;
  std::array<std::uint64_t, WP_HOOK_COUNT> lost{};  // records lost per hook (ring buffer full)
  std::uint64_t metrics_overflow = 0;               // kernel updates that found no metric slot free
  std::uint64_t events = 0;                         // records the agent decoded
  std::uint64_t slow_calls = 0;                     // slow calls written to the slow-call log
  std::uint64_t slow_calls_dropped = 0;             // slow calls over the log's rate limit
  double agent_cpu_seconds = 0;                     // the agent's own CPU time (user + system)
  std::uint64_t agent_rss_bytes = 0;                // the agent's resident set
};

// How a kernel number becomes a label value.
struct MetricNamers {
  std::function<std::string(DevT)> device;   // "vda", "loop0", else "MAJ:MIN"
  std::function<std::string(DevT)> fs_type;  // "ext4", "xfs", else ""
  std::function<std::optional<std::string>(std::uint64_t)> cgroup_path;  // "/system.slice/x"
  // A container's names from its runtime's state (probe/container_names.h); unset: ids only.
  std::function<ContainerNames(const Container&)> container_names;
};

// The cardinality bound: a cgroup gets a label value of its own (its cgroup v2 path, or
// "id:<N>" when the path is not known) when first seen while fewer than max_cgroups have one,
// the most active first among those first seen in one scrape (observations, then bytes), and
// keeps it for the agent's lifetime, so that counters never move between series; every later
// cgroup, however busy, is "other" (cgroup id 0, not known, too). The same for comm with
// max_comms. A family so has at most (max_cgroups + 1) x (max_comms + 1) series per device,
// file system and io/call value.
struct MetricLabelOptions {
  // Cgroups that get a label value of their own, at most; every other cgroup is "other".
  std::size_t max_cgroups = 20;
  // With comm labels: at most this many names, the rest "other".
  bool comm = false;
  std::size_t max_comms = 20;
  // The agent keeps 1 in this many plain writes for the time-to-durable histogram.
  std::uint32_t durability_sample = 1;
};

// One metric family the exporter can export: what the dashboard and the docs may name.
struct MetricInfo {
  std::string name;  // as exposed: "writepath_write_latency_seconds"
  prometheus::MetricType type;
  std::vector<std::string> labels;
  std::string help;
  // With MetricLabelOptions::comm, "comm" follows `labels` (the write, sync and read families).
  bool comm = false;
};
// Every family collect() can return, in a fixed order.
const std::vector<MetricInfo>& metric_catalogue();

class WriteMetrics {
 public:
  WriteMetrics(MetricLabelOptions options, MetricNamers namers);
  ~WriteMetrics();

  // A finished timeline from the stitcher (the agent's loop thread).
  void observe(const Timeline& item);
  // Every family of the catalogue, from `counters` and what observe() saw (the scrape thread).
  // Safe to call concurrently with observe().
  std::vector<prometheus::MetricFamily> collect(const ServeCounters& counters);

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::mutex mutex_;
};

// The bucket upper bounds in seconds, from writepath.h's WP_METRIC_BOUND_LIST.
const std::vector<double>& metric_bounds_seconds();

}  // namespace wp
