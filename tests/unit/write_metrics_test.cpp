// SPDX-License-Identifier: Apache-2.0
#include "serve/write_metrics.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>

#include "builders.h"
#include "decode/syscalls.h"

namespace wp {
namespace {

using namespace builders;
using prometheus::ClientMetric;
using prometheus::MetricFamily;

constexpr DevT kVda = make_dev(253, 0);
constexpr Nanos kUs = 1000;
constexpr Nanos kMs = 1000 * kUs;

MetricNamers fake_namers() {
  MetricNamers n;
  n.device = [](DevT dev) { return dev == kVda ? std::string("vda") : dev_string(dev); };
  n.fs_type = [](DevT dev) { return dev == kVda ? std::string("ext4") : std::string(); };
  n.cgroup_path = [](std::uint64_t id) -> std::optional<std::string> {
    if (id >= 100) return std::nullopt;
    return "/cg" + std::to_string(id);
  };
  return n;
}

KernelMetricRow row(std::uint8_t metric, std::uint8_t sub, DevT dev, std::uint64_t cgroup,
                    const char* comm = "") {
  KernelMetricRow r;
  r.key.metric = metric;
  r.key.sub = sub;
  r.key.dev = dev;
  r.key.cgroup = cgroup;
  std::strncpy(r.key.comm, comm, sizeof(r.key.comm));
  return r;
}

const MetricFamily& family(const std::vector<MetricFamily>& all, const std::string& name) {
  for (const MetricFamily& f : all)
    if (f.name == name) return f;
  throw std::runtime_error("no family " + name);
}

std::string label(const ClientMetric& m, const std::string& name) {
  for (const auto& l : m.label)
    if (l.name == name) return l.value;
  return "<absent>";
}

bool has_label(const ClientMetric& m, const std::string& name) {
  for (const auto& l : m.label)
    if (l.name == name) return true;
  return false;
}

// The series of a family whose label `name` is `value` (the first such).
const ClientMetric* find(const MetricFamily& f, const std::map<std::string, std::string>& want) {
  for (const ClientMetric& m : f.metric) {
    bool all = true;
    for (const auto& [name, value] : want) all = all && label(m, name) == value;
    if (all) return &m;
  }
  return nullptr;
}

TEST(WriteMetrics, BoundsAreTheHeadersInSeconds) {
  const std::vector<double>& bounds = metric_bounds_seconds();
  ASSERT_EQ(bounds.size(), std::size_t{WP_METRIC_BOUNDS});
  EXPECT_DOUBLE_EQ(bounds.front(), 1e-6);
  EXPECT_DOUBLE_EQ(bounds[2], 5e-6);
  EXPECT_DOUBLE_EQ(bounds.back(), 10.0);
}

TEST(WriteMetrics, KernelWriteRowsGiveCumulativeBucketsAndSumsInSeconds) {
  WriteMetrics metrics({}, fake_namers());
  ServeCounters counters;
  KernelMetricRow buffered = row(WP_METRIC_WRITE, 0, kVda, 7);
  buffered.value.buckets[0] = 3;   // <= 1 us
  buffered.value.buckets[4] = 2;   // <= 20 us
  buffered.value.buckets[22] = 1;  // over 10 s
  buffered.value.sum_ns = 12 * 1'000'000'000ull;
  buffered.value.bytes = 6 * 4096;
  KernelMetricRow direct = row(WP_METRIC_WRITE, 1, kVda, 7);
  direct.value.buckets[9] = 4;  // <= 1 ms
  direct.value.sum_ns = 3 * kMs;
  direct.value.bytes = 4 * 65536;
  direct.value.dirtied_ops = 1;
  direct.value.dirtied_pages = 16;
  counters.rows = {buffered, direct};

  const auto all = metrics.collect(counters);
  const MetricFamily& latency = family(all, "writepath_write_latency_seconds");
  ASSERT_EQ(latency.metric.size(), 2u);
  const ClientMetric* b = find(latency, {{"io", "buffered"}});
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(label(*b, "device"), "vda");
  EXPECT_EQ(label(*b, "fs"), "ext4");
  EXPECT_EQ(label(*b, "cgroup"), "/cg7");
  EXPECT_FALSE(has_label(*b, "comm"));
  const auto& buckets = b->histogram.bucket;
  ASSERT_EQ(buckets.size(), std::size_t{WP_METRIC_BUCKETS});
  EXPECT_EQ(buckets[0].cumulative_count, 3u);
  EXPECT_EQ(buckets[3].cumulative_count, 3u);
  EXPECT_EQ(buckets[4].cumulative_count, 5u);
  EXPECT_EQ(buckets[21].cumulative_count, 5u);
  EXPECT_EQ(buckets[22].cumulative_count, 6u);
  EXPECT_TRUE(std::isinf(buckets[22].upper_bound));
  EXPECT_DOUBLE_EQ(buckets[4].upper_bound, 20e-6);
  EXPECT_EQ(b->histogram.sample_count, 6u);
  EXPECT_DOUBLE_EQ(b->histogram.sample_sum, 12.0);

  const ClientMetric* d = find(latency, {{"io", "direct"}});
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->histogram.sample_count, 4u);
  EXPECT_EQ(d->histogram.bucket[8].cumulative_count, 0u);
  EXPECT_EQ(d->histogram.bucket[9].cumulative_count, 4u);
  EXPECT_DOUBLE_EQ(d->histogram.sample_sum, 0.003);

  const MetricFamily& bytes = family(all, "writepath_written_bytes_total");
  EXPECT_DOUBLE_EQ(find(bytes, {{"io", "buffered"}})->counter.value, 6 * 4096);
  EXPECT_DOUBLE_EQ(find(bytes, {{"io", "direct"}})->counter.value, 4 * 65536);
  const MetricFamily& dirtied = family(all, "writepath_direct_writes_dirtied_total");
  ASSERT_EQ(dirtied.metric.size(), 1u);
  EXPECT_FALSE(has_label(dirtied.metric[0], "io"));
  EXPECT_EQ(label(dirtied.metric[0], "cgroup"), "/cg7");
  EXPECT_DOUBLE_EQ(dirtied.metric[0].counter.value, 1);
  EXPECT_DOUBLE_EQ(family(all, "writepath_direct_dirtied_pages_total").metric[0].counter.value, 16);
}

TEST(WriteMetrics, SyncRequestFlushAndThrottleRowsAreNamedAsTheOutputsNameThem) {
  WriteMetrics metrics({}, fake_namers());
  ServeCounters counters;
  KernelMetricRow fsync = row(WP_METRIC_SYNC, WP_SYS_FDATASYNC, kVda, 7);
  fsync.value.buckets[12] = 2;
  KernelMetricRow request = row(WP_METRIC_REQUEST, WP_OP_WRITE_ZEROES, kVda, 0);
  request.value.buckets[10] = 1;
  request.value.bytes = 1 << 20;
  KernelMetricRow flush = row(WP_METRIC_FLUSH, 0, make_dev(7, 3), 0);
  flush.value.buckets[11] = 5;
  KernelMetricRow throttle = row(WP_METRIC_THROTTLE, 0, 0, 7);
  throttle.value.buckets[15] = 1;
  throttle.value.sum_ns = 80 * kMs;
  counters.rows = {fsync, request, flush, throttle};

  const auto all = metrics.collect(counters);
  const ClientMetric& sync = family(all, "writepath_sync_latency_seconds").metric.at(0);
  EXPECT_EQ(label(sync, "call"), "fdatasync");
  EXPECT_EQ(sync.histogram.sample_count, 2u);
  const ClientMetric& req = family(all, "writepath_request_service_seconds").metric.at(0);
  EXPECT_EQ(label(req, "op"), "write_zeroes");
  EXPECT_EQ(label(req, "device"), "vda");
  EXPECT_FALSE(has_label(req, "cgroup"));
  EXPECT_DOUBLE_EQ(family(all, "writepath_request_bytes_total").metric.at(0).counter.value,
                   1 << 20);
  const ClientMetric& fl = family(all, "writepath_flush_latency_seconds").metric.at(0);
  EXPECT_EQ(label(fl, "device"), "7:3");
  EXPECT_EQ(fl.histogram.sample_count, 5u);
  const ClientMetric& th = family(all, "writepath_dirty_throttle_pause_seconds").metric.at(0);
  EXPECT_EQ(th.label.size(), 3u);  // cgroup, and its container and pod: none here
  EXPECT_EQ(label(th, "cgroup"), "/cg7");
  EXPECT_EQ(label(th, "container"), "");
  EXPECT_EQ(label(th, "pod"), "");
  EXPECT_DOUBLE_EQ(th.histogram.sample_sum, 0.08);
}

// Two rows whose label values agree after mapping are one series: their counts add up.
TEST(WriteMetrics, RowsThatMapToOneLabelSetAreSummed) {
  WriteMetrics metrics({.max_cgroups = 1}, fake_namers());
  ServeCounters counters;
  for (std::uint64_t cgroup : {1, 2, 3}) {
    KernelMetricRow r = row(WP_METRIC_WRITE, 0, kVda, cgroup, cgroup == 2 ? "db" : "dd");
    r.value.buckets[5] = cgroup;  // cgroup 3 most active, then 2
    r.value.bytes = 100 * cgroup;
    counters.rows.push_back(r);
  }
  const auto all = metrics.collect(counters);
  const MetricFamily& latency = family(all, "writepath_write_latency_seconds");
  ASSERT_EQ(latency.metric.size(), 2u);
  EXPECT_EQ(find(latency, {{"cgroup", "/cg3"}})->histogram.sample_count, 3u);
  EXPECT_EQ(find(latency, {{"cgroup", "other"}})->histogram.sample_count, 3u);  // 1 + 2
  EXPECT_DOUBLE_EQ(
      find(family(all, "writepath_written_bytes_total"), {{"cgroup", "other"}})->counter.value,
      300);
}

// A container's cgroup: its name and pod beside the cgroup's path, from the cgroup's value, so
// a capped cgroup ("other") has none and no series is added.
TEST(WriteMetrics, AContainersCgroupIsLabelledWithTheContainerAndItsPod) {
  const std::string id(64, 'a');
  const std::string pod_cgroup = "/kubepods/burstable/pod8c1d0f2e-1b2a-4c3d-9e8f-0a1b2c3d4e5f";
  const std::string docker_cgroup = "/system.slice/docker-" + std::string(64, 'b') + ".scope";
  MetricNamers namers = fake_namers();
  namers.cgroup_path = [&](std::uint64_t cg) -> std::optional<std::string> {
    if (cg == 1) return pod_cgroup + "/" + id;
    if (cg == 2) return docker_cgroup;
    return "/cg" + std::to_string(cg);
  };
  int reads = 0;
  namers.container_names = [&reads](const Container& c) {
    ++reads;
    return c.runtime == ContainerRuntime::Containerd ? ContainerNames{.name = "api",
                                                                      .pod = "api-7f9",
                                                                      .namespace_ = "shop",
                                                                      .hostname = ""}
                                                     : ContainerNames{};
  };
  WriteMetrics metrics({.max_cgroups = 3}, namers);
  ServeCounters counters;
  for (std::uint64_t cg : {1, 2, 3, 4}) {  // the fourth is over the cap: "other"
    KernelMetricRow r = row(WP_METRIC_WRITE, 0, kVda, cg);
    r.value.buckets[3] = 1;
    counters.rows.push_back(r);
  }
  for (int scrape = 0; scrape < 2; ++scrape) {
    const auto all = metrics.collect(counters);
    const MetricFamily& f = family(all, "writepath_write_latency_seconds");
    ASSERT_EQ(f.metric.size(), 4u);
    EXPECT_NE(
        find(f, {{"cgroup", pod_cgroup + "/" + id}, {"container", "api"}, {"pod", "shop/api-7f9"}}),
        nullptr);
    EXPECT_NE(
        find(f, {{"cgroup", docker_cgroup}, {"container", std::string(12, 'b')}, {"pod", ""}}),
        nullptr);
    EXPECT_NE(find(f, {{"cgroup", "/cg3"}, {"container", ""}, {"pod", ""}}), nullptr);
    EXPECT_NE(find(f, {{"cgroup", "other"}, {"container", ""}, {"pod", ""}}), nullptr);
  }
  EXPECT_EQ(reads, 2) << "each container's state is read once, not per scrape";
}

TEST(WriteMetrics, CgroupLabelsAreStickyAndCountersNeverGoDown) {
  WriteMetrics metrics({.max_cgroups = 2}, fake_namers());
  ServeCounters counters;
  KernelMetricRow a = row(WP_METRIC_WRITE, 0, kVda, 1);
  a.value.buckets[3] = 1;
  KernelMetricRow unknown_path = row(WP_METRIC_WRITE, 0, kVda, 150);  // the namer has no path
  unknown_path.value.buckets[3] = 1;
  counters.rows = {a, unknown_path};
  auto first = metrics.collect(counters);
  const MetricFamily& f1 = family(first, "writepath_write_latency_seconds");
  ASSERT_EQ(f1.metric.size(), 2u);
  EXPECT_NE(find(f1, {{"cgroup", "/cg1"}}), nullptr);
  EXPECT_NE(find(f1, {{"cgroup", "id:150"}}), nullptr);

  // A third cgroup, far busier than the first two, comes too late: it is "other" for good.
  KernelMetricRow busy = row(WP_METRIC_WRITE, 0, kVda, 3);
  busy.value.buckets[3] = 1000;
  counters.rows.push_back(busy);
  std::map<std::string, double> before;
  for (int scrape = 0; scrape < 3; ++scrape) {
    counters.rows[0].value.buckets[3] += 1;
    counters.rows[2].value.buckets[3] += 500;
    const auto all = metrics.collect(counters);
    const MetricFamily& f = family(all, "writepath_write_latency_seconds");
    ASSERT_EQ(f.metric.size(), 3u);
    EXPECT_NE(find(f, {{"cgroup", "/cg1"}}), nullptr);
    EXPECT_EQ(find(f, {{"cgroup", "/cg3"}}), nullptr);
    ASSERT_NE(find(f, {{"cgroup", "other"}}), nullptr);
    for (const ClientMetric& m : f.metric) {
      const double count = static_cast<double>(m.histogram.sample_count);
      const std::string key = label(m, "cgroup");
      if (before.contains(key)) {
        EXPECT_GE(count, before[key]) << key;
      }
      before[key] = count;
    }
  }
}

TEST(WriteMetrics, NewcomersOfOneScrapeGetLabelsMostActiveFirst) {
  WriteMetrics metrics({.max_cgroups = 1}, fake_namers());
  ServeCounters counters;
  KernelMetricRow quiet = row(WP_METRIC_WRITE, 0, kVda, 1);
  quiet.value.buckets[0] = 5;
  quiet.value.bytes = 10;
  KernelMetricRow heavy = row(WP_METRIC_WRITE, 0, kVda, 2);  // as many calls, more bytes
  heavy.value.buckets[0] = 5;
  heavy.value.bytes = 1 << 20;
  counters.rows = {quiet, heavy};
  const auto all = metrics.collect(counters);
  const MetricFamily& f = family(all, "writepath_write_latency_seconds");
  EXPECT_NE(find(f, {{"cgroup", "/cg2"}}), nullptr);
  EXPECT_EQ(find(f, {{"cgroup", "/cg1"}}), nullptr);
}

TEST(WriteMetrics, CommLabelsAreCappedToo) {
  WriteMetrics metrics({.comm = true, .max_comms = 1}, fake_namers());
  ServeCounters counters;
  KernelMetricRow postgres = row(WP_METRIC_WRITE, 0, kVda, 1, "postgres");
  postgres.value.buckets[0] = 9;
  KernelMetricRow cp = row(WP_METRIC_SYNC, WP_SYS_FSYNC, kVda, 1, "cp");
  cp.value.buckets[0] = 1;
  KernelMetricRow throttle = row(WP_METRIC_THROTTLE, 0, 0, 1);
  throttle.value.buckets[0] = 1;
  counters.rows = {postgres, cp, throttle};
  const auto all = metrics.collect(counters);
  EXPECT_EQ(label(family(all, "writepath_write_latency_seconds").metric.at(0), "comm"), "postgres");
  EXPECT_EQ(label(family(all, "writepath_sync_latency_seconds").metric.at(0), "comm"), "other");
  EXPECT_FALSE(
      has_label(family(all, "writepath_dirty_throttle_pause_seconds").metric.at(0), "comm"));
}

SyscallEvent uring_write(Nanos start, Nanos end, std::int64_t ret) {
  SyscallEvent call = syscall_event({.syscall = Syscall::IoUringWrite,
                                     .start_ns = start,
                                     .end_ns = end,
                                     .dev = kVda,
                                     .ret = ret});
  call.via = WP_VIA_IO_URING;
  call.cgroup_id = 7;
  call.cgroup = "/from-the-call";
  return call;
}

TEST(WriteMetrics, IoUringAndAioWritesAreCountedPlainSyscallsAreNot) {
  WriteMetrics metrics({}, fake_namers());
  // A plain pwrite64: the kernel counted it already.
  SyscallEvent plain = syscall_event({.start_ns = 0, .end_ns = 5 * kUs, .dev = kVda});
  plain.cgroup_id = 7;
  metrics.observe(dirty_write(plain));
  // An io_uring write taking 3 ms, and an O_DIRECT io_submit write that dirtied pages.
  metrics.observe(dirty_write(uring_write(0, 3 * kMs, 8192)));
  SyscallEvent aio = syscall_event({.syscall = Syscall::IoSubmit,
                                    .start_ns = 0,
                                    .end_ns = 40 * kUs,
                                    .dev = kVda,
                                    .ret = 4096,
                                    .pages_dirtied = 2});
  aio.cgroup_id = 7;
  WriteTimeline aio_write = dirty_write(aio);
  aio_write.direct = true;
  metrics.observe(aio_write);

  const auto all = metrics.collect({});
  const MetricFamily& latency = family(all, "writepath_write_latency_seconds");
  ASSERT_EQ(latency.metric.size(), 2u);
  const ClientMetric* uring = find(latency, {{"io", "buffered"}});
  ASSERT_NE(uring, nullptr);
  EXPECT_EQ(uring->histogram.sample_count, 1u);  // not 2: the pwrite64 is the kernel's
  EXPECT_EQ(label(*uring, "cgroup"), "/from-the-call");
  EXPECT_EQ(uring->histogram.bucket[10].cumulative_count, 0u);  // <= 2 ms
  EXPECT_EQ(uring->histogram.bucket[11].cumulative_count, 1u);  // <= 5 ms
  EXPECT_DOUBLE_EQ(uring->histogram.sample_sum, 0.003);
  EXPECT_DOUBLE_EQ(
      find(family(all, "writepath_written_bytes_total"), {{"io", "buffered"}})->counter.value,
      8192);
  EXPECT_DOUBLE_EQ(family(all, "writepath_direct_writes_dirtied_total").metric.at(0).counter.value,
                   1);
  EXPECT_DOUBLE_EQ(family(all, "writepath_direct_dirtied_pages_total").metric.at(0).counter.value,
                   2);
}

TEST(WriteMetrics, StitchedAndKernelFiguresOfOneLabelSetAddUp) {
  WriteMetrics metrics({}, fake_namers());
  metrics.observe(dirty_write(uring_write(0, 3 * kMs, 100)));
  ServeCounters counters;
  KernelMetricRow r = row(WP_METRIC_WRITE, 0, kVda, 7);
  r.value.buckets[11] = 2;
  r.value.bytes = 50;
  counters.rows = {r};
  // The call's own path names cgroup 7 first; the kernel's row of it joins that series.
  const auto all = metrics.collect(counters);
  const MetricFamily& latency = family(all, "writepath_write_latency_seconds");
  ASSERT_EQ(latency.metric.size(), 1u);
  EXPECT_EQ(latency.metric[0].histogram.sample_count, 3u);
  EXPECT_DOUBLE_EQ(family(all, "writepath_written_bytes_total").metric[0].counter.value, 150);
}

TEST(WriteMetrics, SyncPhasesAreObservedOncePerPhaseThatOccurred) {
  WriteMetrics metrics({}, fake_namers());
  SyscallEvent fsync =
      syscall_event({.syscall = Syscall::Fsync, .start_ns = 0, .end_ns = 10 * kMs, .dev = kVda});
  fsync.cgroup_id = 7;
  metrics.observe(sync_timeline(fsync, {.writeback_ns = 0,
                                        .data_io_ns = 4 * kMs,
                                        .journal_ns = 0,
                                        .flush_ns = 5 * kMs,
                                        .other_ns = 1 * kMs}));
  metrics.observe(sync_timeline(
      fsync,
      {.writeback_ns = 0, .data_io_ns = 0, .journal_ns = 0, .flush_ns = 0, .other_ns = 10 * kMs}));
  SyscallEvent uring_fsync = fsync;
  uring_fsync.syscall = Syscall::IoUringFsync;
  uring_fsync.via = WP_VIA_IO_URING | WP_VIA_IO_WQ;
  metrics.observe(sync_timeline(uring_fsync, {.other_ns = 10 * kMs}));

  const auto all = metrics.collect({});
  const MetricFamily& phases = family(all, "writepath_sync_phase_seconds");
  std::map<std::string, std::uint64_t> counts;
  for (const ClientMetric& m : phases.metric) {
    EXPECT_EQ(label(m, "device"), "vda");
    counts[label(m, "phase")] += m.histogram.sample_count;
  }
  EXPECT_EQ(counts,
            (std::map<std::string, std::uint64_t>{{"data_io", 1}, {"flush", 1}, {"other", 3}}));
  EXPECT_DOUBLE_EQ(find(phases, {{"phase", "flush"}})->histogram.sample_sum, 0.005);
  // Only the io_uring fsync is counted in the latency family: the kernel has the fsyncs.
  const MetricFamily& sync = family(all, "writepath_sync_latency_seconds");
  ASSERT_EQ(sync.metric.size(), 1u);
  EXPECT_EQ(label(sync.metric[0], "call"), "io_uring_fsync");
  EXPECT_EQ(sync.metric[0].histogram.sample_count, 1u);
}

TEST(WriteMetrics, DurableWritesGiveTheirLagFromReturn) {
  WriteMetrics metrics({.durability_sample = 16}, fake_namers());
  SyscallEvent call = syscall_event({.start_ns = 1 * kMs, .end_ns = 2 * kMs, .dev = kVda});
  call.cgroup_id = 7;
  metrics.observe(durable_write(call, write_request(kVda, 0, 4096, 3 * kMs, 4 * kMs),
                                42 * kMs));  // durable 40 ms after the return
  metrics.observe(dirty_write(call));        // not durable: no observation
  const auto all = metrics.collect({});
  const MetricFamily& lag = family(all, "writepath_write_durable_lag_seconds");
  ASSERT_EQ(lag.metric.size(), 1u);
  EXPECT_EQ(lag.metric[0].histogram.sample_count, 1u);
  EXPECT_DOUBLE_EQ(lag.metric[0].histogram.sample_sum, 0.04);
  EXPECT_EQ(lag.metric[0].histogram.bucket[13].cumulative_count, 0u);  // <= 20 ms
  EXPECT_EQ(lag.metric[0].histogram.bucket[14].cumulative_count, 1u);  // <= 50 ms
  EXPECT_EQ(label(lag.metric[0], "cgroup"), "/cg7");
  // A plain write's latency is the kernel's: none here.
  EXPECT_TRUE(family(all, "writepath_write_latency_seconds").metric.empty());
  EXPECT_DOUBLE_EQ(family(all, "writepath_durability_sample_ratio").metric.at(0).gauge.value,
                   1.0 / 16);
}

// A write whose writeback failed counts in writepath_lost_writes_total (and its bytes), by the
// device, file system and cgroup of its file; a durable one does not. The kernel's count of
// failed write requests, every one of them, is its own family per disk.
TEST(WriteMetrics, LostWritesAndFailedWriteRequestsAreCounted) {
  WriteMetrics metrics({}, fake_namers());
  SyscallEvent call =
      syscall_event({.start_ns = 1 * kMs, .end_ns = 2 * kMs, .dev = kVda, .ret = 8192});
  call.cgroup_id = 7;
  WriteTimeline lost = dirty_write(call);
  lost.state = WriteState::Lost;
  lost.lost_ns = 5 * kMs;
  lost.lost_error = -EIO;
  metrics.observe(lost);
  metrics.observe(lost);
  metrics.observe(durable_write(call, write_request(kVda, 0, 8192, 3 * kMs, 4 * kMs), 5 * kMs));
  ServeCounters counters;
  KernelMetricRow failed = row(WP_METRIC_WRITE_ERROR, 0, kVda, 0);
  failed.value.buckets[0] = 3;
  failed.value.bytes = 3 << 20;
  counters.rows.push_back(failed);
  const auto all = metrics.collect(counters);
  const MetricFamily& writes = family(all, "writepath_lost_writes_total");
  ASSERT_EQ(writes.metric.size(), 1u);
  EXPECT_DOUBLE_EQ(writes.metric[0].counter.value, 2);
  EXPECT_EQ(label(writes.metric[0], "device"), "vda");
  EXPECT_EQ(label(writes.metric[0], "fs"), "ext4");
  EXPECT_EQ(label(writes.metric[0], "cgroup"), "/cg7");
  EXPECT_DOUBLE_EQ(family(all, "writepath_lost_write_bytes_total").metric.at(0).counter.value,
                   2 * 8192);
  const MetricFamily& requests = family(all, "writepath_failed_write_requests_total");
  ASSERT_EQ(requests.metric.size(), 1u);
  EXPECT_DOUBLE_EQ(requests.metric[0].counter.value, 3);
  EXPECT_EQ(label(requests.metric[0], "device"), "vda");
  EXPECT_DOUBLE_EQ(family(all, "writepath_failed_write_bytes_total").metric.at(0).counter.value,
                   3 << 20);
}

TEST(WriteMetrics, ReadBytesBySourceAndMajorFaultsAreLabelledAsWritesAre) {
  WriteMetrics metrics({.comm = true}, fake_namers());
  ServeCounters counters;
  KernelMetricRow reads = row(WP_METRIC_READ, 0, kVda, 7, "postgres");
  reads.value.buckets[2] = 5;   // <= 5 us
  reads.value.buckets[12] = 1;  // <= 10 ms
  reads.value.sum_ns = 8 * kMs;
  reads.value.bytes = 5 * 4096 + 1000;  // what they found cached
  KernelMetricRow missed = row(WP_METRIC_READ, 1, kVda, 7, "postgres");
  missed.value.buckets[12] = 1;
  missed.value.sum_ns = 8 * kMs;
  missed.value.bytes = 32 * 4096;  // what they brought in, readahead included
  KernelMetricRow faults = row(WP_METRIC_MAJOR_FAULT, 0, kVda, 7, "postgres");
  faults.value.buckets[0] = 12;
  counters.rows = {reads, missed, faults};

  const auto all = metrics.collect(counters);
  const MetricFamily& latency = family(all, "writepath_read_latency_seconds");
  ASSERT_EQ(latency.metric.size(), 1u);  // every read once: the missed ones are among them
  EXPECT_EQ(latency.metric[0].histogram.sample_count, 6u);
  EXPECT_DOUBLE_EQ(latency.metric[0].histogram.sample_sum, 0.008);
  EXPECT_EQ(label(latency.metric[0], "comm"), "postgres");
  const MetricFamily& bytes = family(all, "writepath_read_bytes_total");
  ASSERT_EQ(bytes.metric.size(), 2u);
  const ClientMetric* cache = find(bytes, {{"source", "cache"}});
  const ClientMetric* device = find(bytes, {{"source", "device"}});
  ASSERT_NE(cache, nullptr);
  ASSERT_NE(device, nullptr);
  EXPECT_DOUBLE_EQ(cache->counter.value, 5 * 4096 + 1000);
  EXPECT_DOUBLE_EQ(device->counter.value, 32 * 4096);
  EXPECT_EQ(label(*device, "device"), "vda");
  EXPECT_EQ(label(*device, "fs"), "ext4");
  EXPECT_EQ(label(*device, "cgroup"), "/cg7");
  EXPECT_EQ(label(*device, "comm"), "postgres");
  const MetricFamily& major = family(all, "writepath_major_faults_total");
  ASSERT_EQ(major.metric.size(), 1u);
  EXPECT_DOUBLE_EQ(major.metric[0].counter.value, 12);
  EXPECT_EQ(label(major.metric[0], "cgroup"), "/cg7");
  EXPECT_FALSE(has_label(major.metric[0], "source"));
}

// Readers compete for the capped cgroup values as writers do: a cgroup that only reads or only
// faults gets one of its own while there is room, and keeps it.
TEST(WriteMetrics, ReadersAndFaultersTakeCgroupLabelsUnderTheSameCap) {
  WriteMetrics metrics({.max_cgroups = 2}, fake_namers());
  ServeCounters counters;
  KernelMetricRow reader = row(WP_METRIC_READ, 0, kVda, 1);
  reader.value.buckets[0] = 3;
  KernelMetricRow faulter = row(WP_METRIC_MAJOR_FAULT, 0, kVda, 2);
  faulter.value.buckets[0] = 2;
  KernelMetricRow late = row(WP_METRIC_READ, 1, kVda, 3);  // a third: no room left
  late.value.buckets[0] = 1;
  late.value.bytes = 4096;
  counters.rows = {reader, faulter, late};
  const auto all = metrics.collect(counters);
  EXPECT_NE(find(family(all, "writepath_read_latency_seconds"), {{"cgroup", "/cg1"}}), nullptr);
  EXPECT_NE(find(family(all, "writepath_major_faults_total"), {{"cgroup", "/cg2"}}), nullptr);
  const ClientMetric* other =
      find(family(all, "writepath_read_bytes_total"), {{"cgroup", "other"}, {"source", "device"}});
  ASSERT_NE(other, nullptr);
  EXPECT_DOUBLE_EQ(other->counter.value, 4096);
}

// The time other cgroups' I/O added to syncs, by victim and culprit cgroup: a neighbour in the
// sync's own cgroup is not counted, and culprits take the capped cgroup labels too.
TEST(WriteMetrics, NeighboursChargeOtherCgroupsWithDelayAndBytes) {
  WriteMetrics metrics({.max_cgroups = 2}, fake_namers());
  SyscallEvent fsync = syscall_event(
      {.syscall = Syscall::Fdatasync, .start_ns = 0, .end_ns = 10 * kMs, .dev = kVda});
  fsync.cgroup_id = 1;
  SyncTimeline sync = sync_timeline(fsync, {.other_ns = 10 * kMs});
  const auto neighbour = [](std::uint64_t cgroup, std::uint64_t bytes, Nanos delay) {
    Neighbour n;
    n.owner.pid = 300 + static_cast<std::uint32_t>(cgroup);
    n.owner.cgroup_id = cgroup;
    n.disk = kVda;
    n.bytes = bytes;
    n.delay_ns = delay;
    return n;
  };
  sync.neighbours = {neighbour(2, 1 << 20, 8 * kMs), neighbour(1, 4096, 1 * kMs),
                     neighbour(3, 8192, 500 * kUs)};
  metrics.observe(sync);
  metrics.observe(sync);
  const auto all = metrics.collect({});
  const MetricFamily& delay = family(all, "writepath_neighbour_delay_seconds_total");
  ASSERT_EQ(delay.metric.size(), 2u);  // its own cgroup's neighbour is not one
  const ClientMetric* bulk =
      find(delay, {{"victim_cgroup", "/cg1"}, {"culprit_cgroup", "/cg2"}, {"device", "vda"}});
  ASSERT_NE(bulk, nullptr);
  EXPECT_DOUBLE_EQ(bulk->counter.value, 0.016);
  // Past the cap (two cgroups labelled: /cg1, /cg2) the third culprit is "other".
  EXPECT_NE(find(delay, {{"culprit_cgroup", "other"}}), nullptr);
  const ClientMetric* bytes = find(family(all, "writepath_neighbour_bytes_total"),
                                   {{"victim_cgroup", "/cg1"}, {"culprit_cgroup", "/cg2"}});
  ASSERT_NE(bytes, nullptr);
  EXPECT_DOUBLE_EQ(bytes->counter.value, 2.0 * (1 << 20));
}

TEST(WriteMetrics, AgentCountersAreExported) {
  WriteMetrics metrics({}, fake_namers());
  ServeCounters counters;
  counters.lost[WP_HOOK_BIO] = 4;
  counters.events = 1000;
  counters.metrics_overflow = 2;
  counters.slow_calls = 5;
  counters.slow_calls_dropped = 1;
  counters.agent_cpu_seconds = 1.5;
  counters.agent_rss_bytes = 1 << 24;
  const auto all = metrics.collect(counters);
  const MetricFamily& lost = family(all, "writepath_lost_events_total");
  EXPECT_EQ(lost.metric.size(), std::size_t{WP_HOOK_COUNT});
  EXPECT_DOUBLE_EQ(find(lost, {{"hook", "bio"}})->counter.value, 4);
  EXPECT_DOUBLE_EQ(find(lost, {{"hook", "syscall"}})->counter.value, 0);
  EXPECT_DOUBLE_EQ(family(all, "writepath_events_total").metric.at(0).counter.value, 1000);
  EXPECT_DOUBLE_EQ(family(all, "writepath_metrics_overflow_total").metric.at(0).counter.value, 2);
  EXPECT_DOUBLE_EQ(family(all, "writepath_slow_calls_total").metric.at(0).counter.value, 5);
  EXPECT_DOUBLE_EQ(family(all, "writepath_slow_calls_dropped_total").metric.at(0).counter.value, 1);
  EXPECT_DOUBLE_EQ(family(all, "writepath_agent_cpu_seconds_total").metric.at(0).counter.value,
                   1.5);
  EXPECT_DOUBLE_EQ(family(all, "writepath_agent_resident_memory_bytes").metric.at(0).gauge.value,
                   1 << 24);
  EXPECT_DOUBLE_EQ(family(all, "writepath_durability_sample_ratio").metric.at(0).gauge.value, 1);
}

TEST(WriteMetrics, CollectReturnsTheCatalogueInOrderEvenWhenEmpty) {
  WriteMetrics metrics({.comm = true}, fake_namers());
  const auto all = metrics.collect({});
  const auto& catalogue = metric_catalogue();
  ASSERT_EQ(all.size(), catalogue.size());
  std::set<std::string> names;
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].name, catalogue[i].name);
    EXPECT_EQ(all[i].type, catalogue[i].type);
    EXPECT_EQ(all[i].help, catalogue[i].help);
    EXPECT_FALSE(all[i].help.empty());
    EXPECT_TRUE(all[i].name.starts_with("writepath_"));
    names.insert(all[i].name);
  }
  EXPECT_EQ(names.size(), catalogue.size());
  EXPECT_TRUE(family(all, "writepath_write_latency_seconds").metric.empty());
}

TEST(WriteMetrics, LabelNamesAreTheCataloguesPlusCommWhenOn) {
  WriteMetrics metrics({.comm = true}, fake_namers());
  metrics.observe(dirty_write(uring_write(0, kMs, 10)));
  const auto all = metrics.collect({});
  for (std::size_t i = 0; i < all.size(); ++i)
    for (const ClientMetric& m : all[i].metric) {
      std::vector<std::string> names;
      for (const auto& l : m.label) names.push_back(l.name);
      std::vector<std::string> want = metric_catalogue()[i].labels;
      if (metric_catalogue()[i].comm) want.push_back("comm");
      EXPECT_EQ(names, want) << all[i].name;
    }
}

TEST(WriteMetrics, TextSerializerShowsHelpForEveryFamilyAndEveryBucket) {
  WriteMetrics metrics({}, fake_namers());
  ServeCounters counters;
  KernelMetricRow r = row(WP_METRIC_FLUSH, 0, kVda, 0);
  r.value.buckets[0] = 1;
  counters.rows = {r};
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, metrics.collect(counters));
  const std::string text = out.str();
  for (const MetricInfo& info : metric_catalogue()) {
    EXPECT_NE(text.find("# HELP " + info.name + " "), std::string::npos) << info.name;
    EXPECT_NE(text.find("# TYPE " + info.name + " "), std::string::npos) << info.name;
  }
  EXPECT_NE(text.find("writepath_flush_latency_seconds_bucket{device=\"vda\",le=\"1e-06\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("writepath_flush_latency_seconds_bucket{device=\"vda\",le=\"10\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("writepath_flush_latency_seconds_bucket{device=\"vda\",le=\"+Inf\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("writepath_events_total 0"), std::string::npos);
}

}  // namespace
}  // namespace wp
