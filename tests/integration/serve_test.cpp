// SPDX-License-Identifier: Apache-2.0
// `writepath serve` against a real Prometheus (Debian's `prometheus`, started here) scraping it:
// what Prometheus's HTTP API answers is compared with what `trace --format json` measured of
// the very same calls (trace runs the workload while serve watches the whole machine).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <fstream>
#include <functional>
#include <random>
#include <regex>
#include <set>
#include <thread>

#include "harness.h"

namespace wp::testing {
namespace {

// A TCP port nothing listens on now (the kernel's pick for port 0).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa));
  socklen_t len = sizeof(sa);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  ::close(fd);
  return ntohs(sa.sin_port);
}

// `curl -sf URL [ARGS…]`: its output, or nullopt when the request failed.
std::optional<std::string> curl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"curl", "-sS", "-f", "--max-time", "10"};
  argv.insert(argv.end(), args.begin(), args.end());
  RunResult r = run(argv);
  if (r.exit_code != 0) return std::nullopt;
  return r.out;
}

std::optional<std::string> scrape(int port) {
  return curl({"http://127.0.0.1:" + std::to_string(port) + "/metrics"});
}

// A Prometheus server of its own, scraping 127.0.0.1:target every second.
class Prometheus {
 public:
  explicit Prometheus(int target) : port_(free_port()) {
    char templ[] = "/tmp/wp_prom.XXXXXX";
    dir_ = ::mkdtemp(templ);
    std::ofstream(dir_ / "prometheus.yml")
        << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        << "scrape_configs:\n  - job_name: writepath\n    static_configs:\n"
        << "      - targets: ['127.0.0.1:" << target << "']\n";
    server_ = std::make_unique<Background>(std::vector<std::string>{
        "prometheus", "--config.file=" + (dir_ / "prometheus.yml").string(),
        "--storage.tsdb.path=" + (dir_ / "data").string(),
        "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"});
  }
  ~Prometheus() {
    server_.reset();
    fs::remove_all(dir_);
  }
  bool ready() {
    return wait_until([this] { return curl({url("/-/ready")}).has_value(); },
                      std::chrono::seconds(60));
  }
  // An instant query's samples: label set → value (NaN stays NaN).
  std::vector<std::pair<json, double>> query(const std::string& promql) {
    std::vector<std::pair<json, double>> samples;
    auto body = curl({url("/api/v1/query"), "--data-urlencode", "query=" + promql});
    if (!body) return samples;
    json doc = json::parse(*body, nullptr, false);
    if (doc.is_discarded() || doc["status"] != "success") return samples;
    for (const auto& r : doc["data"]["result"])
      samples.emplace_back(r["metric"], std::stod(r["value"][1].get<std::string>()));
    return samples;
  }
  // The one value of a query that sums to a single sample; nullopt when there is none.
  std::optional<double> value(const std::string& promql) {
    auto samples = query(promql);
    if (samples.size() != 1) return std::nullopt;
    return samples[0].second;
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  std::string log() const { return server_->err(); }

 private:
  int port_;
  fs::path dir_;
  std::unique_ptr<Background> server_;
};

// Nearest-rank percentile of the values.
double percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::max<std::size_t>(rank, 1) - 1];
}

class Serve : public ScratchExt4 {
 protected:
  // The loop device's name ("loop3"): the device label of the scratch file system's calls.
  static std::string loop_name() { return fs::path(loop_).filename().string(); }

  static std::unique_ptr<Background> start_serve(int port, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {tool("writepath"), "serve", "--listen",
                                     "127.0.0.1:" + std::to_string(port)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto serve = std::make_unique<Background>(argv);
    EXPECT_TRUE(serve->wait_for_stderr("serving write-path metrics")) << serve->err();
    return serve;
  }
};

TEST_F(Serve, PrometheusSeesTheFsyncFlushPhaseAndTheDirectWritesTraceMeasured) {
  const int port = free_port();
  auto serve = start_serve(port);
  Prometheus prometheus(port);
  ASSERT_TRUE(prometheus.ready()) << prometheus.log();
  ASSERT_TRUE(wait_until([&] { return prometheus.value("up{job=\"writepath\"}") == 1.0; },
                         std::chrono::seconds(60)))
      << prometheus.log();

  // The WAL loop and the O_DIRECT writer, each under `trace` for the figures to compare with.
  constexpr int kSyncs = 150, kDirect = 120;
  RunResult wal = trace_workload("fsync-each", file("wal"), kSyncs);
  ASSERT_EQ(wal.exit_code, 0) << wal.err;
  RunResult direct = run({tool("writepath"), "trace", "--format", "json", "--", tool("wp_workload"),
                          "direct", file("direct"), std::to_string(kDirect), "65536"});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;

  std::vector<double> trace_flush_s;
  int trace_syncs = 0;
  for (const auto& s : of_type(json_lines(wal.out), "fsync")) {
    ++trace_syncs;
    const double flush = u64(s["phases"]["flush_ns"]) / 1e9;
    if (flush > 0) trace_flush_s.push_back(flush);
  }
  ASSERT_EQ(trace_syncs, kSyncs);
  ASSERT_FALSE(trace_flush_s.empty()) << "no fsync waited on a cache flush";
  int trace_direct = 0, trace_direct_dirtied = 0;
  std::uint64_t trace_direct_bytes = 0;
  for (const auto& w : of_type(json_lines(direct.out), "write")) {
    if (!w["direct"].get<bool>()) continue;
    ++trace_direct;
    trace_direct_bytes += u64(w["bytes"]);
    if (u64(w["pages_dirtied"]) > 0) ++trace_direct_dirtied;
  }
  ASSERT_EQ(trace_direct, kDirect);

  const std::string dev = "device=\"" + loop_name() + "\"";
  // Counts are exact: the kernel counted the same calls trace saw.
  const std::string direct_count =
      "sum(writepath_write_latency_seconds_count{io=\"direct\"," + dev + "})";
  ASSERT_TRUE(wait_until([&] { return prometheus.value(direct_count) == kDirect; },
                         std::chrono::seconds(30)))
      << direct_count << " = " << prometheus.value(direct_count).value_or(-1);
  EXPECT_EQ(prometheus.value("sum(writepath_written_bytes_total{io=\"direct\"," + dev + "})"),
            static_cast<double>(trace_direct_bytes));
  EXPECT_EQ(prometheus.value("sum(writepath_direct_writes_dirtied_total{" + dev + "})").value_or(0),
            trace_direct_dirtied);
  const std::string sync_count =
      "sum(writepath_sync_latency_seconds_count{call=\"fsync\"," + dev + "})";
  EXPECT_TRUE(wait_until([&] { return prometheus.value(sync_count) == kSyncs; }))
      << sync_count << " = " << prometheus.value(sync_count).value_or(-1);
  // The flush phase: every sync that had one is counted, and its p99 is trace's within the
  // buckets' resolution (1-2-5 steps: a factor of 2.5 at most).
  const std::string flush_count =
      "sum(writepath_sync_phase_seconds_count{phase=\"flush\"," + dev + "})";
  EXPECT_TRUE(wait_until([&] { return prometheus.value(flush_count) == trace_flush_s.size(); }))
      << flush_count << " = " << prometheus.value(flush_count).value_or(-1) << ", trace "
      << trace_flush_s.size();
  const std::string flush_p99 =
      "histogram_quantile(0.99, sum by (le) (writepath_sync_phase_seconds_bucket{phase=\"flush\"," +
      dev + "}))";
  const auto prom_p99 = prometheus.value(flush_p99);
  ASSERT_TRUE(prom_p99.has_value()) << flush_p99;
  const double trace_p99 = percentile(trace_flush_s, 0.99);
  EXPECT_GT(*prom_p99, trace_p99 / 3) << "trace's p99 " << trace_p99;
  EXPECT_LT(*prom_p99, trace_p99 * 3) << "trace's p99 " << trace_p99;
  std::cout << "flush phase p99: Prometheus " << *prom_p99 << " s, trace " << trace_p99
            << " s over " << trace_flush_s.size() << " fsyncs; O_DIRECT writes: " << kDirect
            << "\n";

  // The device's requests and flushes were timed too.
  EXPECT_GT(prometheus.value("sum(writepath_flush_latency_seconds_count{" + dev + "})").value_or(0),
            0);
  EXPECT_GT(
      prometheus.value("sum(writepath_request_service_seconds_count{op=\"write\"," + dev + "})")
          .value_or(0),
      kDirect - 1);
  EXPECT_EQ(serve->stop(SIGTERM), 0) << serve->err();
}

TEST_F(Serve, EveryMetricTheDashboardNamesIsExported) {
  const int port = free_port();
  auto serve = start_serve(port);
  auto text = scrape(port);
  ASSERT_TRUE(text.has_value());
  std::set<std::string> exported;
  std::regex family("^# TYPE (\\S+) (\\S+)");
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, family)) continue;
    exported.insert(m[1]);
    if (m[2] == "histogram")
      for (const char* suffix : {"_bucket", "_sum", "_count"}) exported.insert(m[1].str() + suffix);
  }
  ASSERT_GT(exported.size(), 10u) << *text;
  const std::string dashboard =
      slurp(fs::path(WRITEPATH_SOURCE_DIR) / "deploy/grafana/writepath.json");
  json doc = json::parse(dashboard, nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  // The metric names in every query: panel targets' `expr`, template variables' `query`.
  std::vector<std::string> queries;
  std::function<void(const json&)> walk = [&](const json& node) {
    if (node.is_array())
      for (const auto& child : node) walk(child);
    if (!node.is_object()) return;
    for (const auto& [key, child] : node.items()) {
      if ((key == "expr" || key == "query" || key == "definition") && child.is_string())
        queries.push_back(child.get<std::string>());
      walk(child);
    }
  };
  walk(doc);
  std::set<std::string> named;
  std::regex metric("writepath_[a-z0-9_]+");
  for (const auto& q : queries)
    for (auto it = std::sregex_iterator(q.begin(), q.end(), metric); it != std::sregex_iterator();
         ++it)
      named.insert(it->str());
  ASSERT_FALSE(named.empty());
  for (const auto& name : named) EXPECT_TRUE(exported.count(name)) << name << " is not in /metrics";
  EXPECT_EQ(serve->stop(SIGTERM), 0) << serve->err();
}

TEST_F(Serve, SlowCallsGoToTheLogAndSighupReopensIt) {
  const int port = free_port();
  const std::string log = (root_ / "slow.jsonl").string();
  // Every fsync on this journaled loop ext4 takes well over 100 us.
  auto serve = start_serve(port, {"--slow", "100us", "--slow-log", log, "--slow-rate", "1000"});
  RunResult first = run({tool("wp_workload"), "fsync-each", file("slow1"), "20"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto lines_in = [](const std::string& path) {
    std::vector<json> items;
    for (const auto& j : json_lines(slurp(path)))
      if (j["comm"] == "wp_workload" && j["type"] == "fsync") items.push_back(j);
    return items;
  };
  ASSERT_TRUE(wait_until([&] { return lines_in(log).size() >= 20; })) << slurp(log);
  for (const auto& item : lines_in(log)) {
    EXPECT_GE(u64(item["latency_ns"]), 100'000u);
    EXPECT_TRUE(item["causes"].is_object()) << item.dump();
  }
  // As logrotate does: rename, then SIGHUP; the next lines go to a new file of the old name.
  fs::rename(log, log + ".1");
  ::kill(serve->pid(), SIGHUP);
  ASSERT_TRUE(wait_until([&] { return fs::exists(log); })) << serve->err();
  RunResult second = run({tool("wp_workload"), "fsync-each", file("slow2"), "10"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_TRUE(wait_until([&] { return lines_in(log).size() >= 10; })) << slurp(log);
  const auto text = scrape(port);
  ASSERT_TRUE(text.has_value());
  std::smatch m;
  ASSERT_TRUE(std::regex_search(*text, m, std::regex("\nwritepath_slow_calls_total (\\d+)")));
  EXPECT_GE(std::stoul(m[1]), 30u);
  EXPECT_EQ(serve->stop(SIGTERM), 0) << serve->err();
}

TEST_F(Serve, DirtyThrottlePausesAreCountedAsTraceCountsThem) {
  const int port = free_port();
  auto serve = start_serve(port);
  const std::string items = (root_ / "dt.jsonl").string();
  RunResult load = run({tool("writepath"),
                        "trace",
                        "--format",
                        "json",
                        "-o",
                        items,
                        "--",
                        tool("writepath"),
                        "load",
                        "dirty-throttle",
                        "--dirty-limit",
                        "16M",
                        "--background",
                        "8M",
                        "--flood",
                        "128M",
                        "--duration",
                        "2s",
                        "--dir",
                        file("dt")});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  std::uint64_t trace_pauses = 0;
  for (const auto& item : json_lines(slurp(items)))
    if (item["type"] == "write") trace_pauses += u64(item["throttle_events"]);
  ASSERT_GT(trace_pauses, 0u) << "the flood was never throttled";
  const auto text = scrape(port);
  ASSERT_TRUE(text.has_value());
  std::uint64_t served = 0;
  std::regex count("\nwritepath_dirty_throttle_pause_seconds_count\\{[^}]*\\} (\\d+)");
  for (auto it = std::sregex_iterator(text->begin(), text->end(), count);
       it != std::sregex_iterator(); ++it)
    served += std::stoull((*it)[1]);
  // serve sees the whole machine: at least every pause trace saw of its command.
  EXPECT_GE(served, trace_pauses);
  EXPECT_EQ(serve->stop(SIGTERM), 0) << serve->err();
}

// The sum of the series of `family` whose labels include each of `labels` (name, value), 0
// when there is none.
double served_sum(const std::string& text, const std::string& family,
                  const std::vector<std::pair<std::string, std::string>>& labels) {
  std::regex series("\n" + family + "\\{([^}]*)\\} ([0-9.e+]+)");
  double total = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), series);
       it != std::sregex_iterator(); ++it) {
    const std::string set = "," + (*it)[1].str() + ",";
    bool all = true;
    for (const auto& [name, value] : labels)
      all = all && set.find("," + name + "=\"" + value + "\",") != std::string::npos;
    if (all) total += std::stod((*it)[2]);
  }
  return total;
}

// The value of the series of `family` whose labels include device="DEVICE", 0 when absent.
double served_value(const std::string& text, const std::string& family, const std::string& device) {
  return served_sum(text, family, {{"device", device}});
}

// fsyncgate under serve: a thin-provisioned disk runs out of space under writeback (the
// workload's fsync returns ENOSPC, the kernel logs the failed requests). serve, following every
// write (--durability-sample 1), counts the disk's failed write requests and the writes they
// lost, by device: at least one of each, no more lost writes than the workload made.
TEST_F(Serve, WritesLostToAFullThinDiskAreCountedByDevice) {
  ThinDisk thin;
  ASSERT_TRUE(thin.ready());
  const int port = free_port();
  auto serve = start_serve(port, {"--durability-sample", "1"});
  const std::string marker =
      "writepath-test: thin disk " + thin.loop_name() + " " + std::to_string(::getpid()) + "\n";
  { std::ofstream("/dev/kmsg") << marker; }
  constexpr int kBlocks = 80;
  const std::string log = thin.scratch("truth.log");
  RunResult res =
      run({tool("wp_oracle_writer"), thin.file("data"), log, "pwrite", std::to_string(1 << 20),
           std::to_string(kBlocks), "1", "end-fsync", "1", "1"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  ASSERT_NE(slurp(log).find("sync fsync " + std::to_string(-ENOSPC) + " "), std::string::npos)
      << "the disk did not run out of space: " << slurp(log);

  // The kernel's own account: its log names failed requests of this disk after the marker
  // (blk_print_req_error: "critical space allocation error, dev loopN, sector …" for ENOSPC).
  const std::string kernel_log = run({"dmesg"}).out;
  const auto since = kernel_log.find(marker.substr(0, marker.size() - 1));
  ASSERT_NE(since, std::string::npos) << "the marker is not in the kernel log";
  EXPECT_NE(kernel_log.find(" error, dev " + thin.loop_name() + ", sector", since),
            std::string::npos)
      << kernel_log.substr(since);

  double lost = 0, failed = 0, lost_bytes = 0;
  for (int tries = 0; tries < 50 && (lost == 0 || failed == 0); ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto text = scrape(port);
    ASSERT_TRUE(text.has_value());
    lost = served_value(*text, "writepath_lost_writes_total", thin.loop_name());
    lost_bytes = served_value(*text, "writepath_lost_write_bytes_total", thin.loop_name());
    failed = served_value(*text, "writepath_failed_write_requests_total", thin.loop_name());
  }
  EXPECT_GE(failed, 1);
  EXPECT_GE(lost, 1);
  EXPECT_LE(lost, kBlocks);
  EXPECT_DOUBLE_EQ(lost_bytes, lost * (1 << 20));
  EXPECT_EQ(serve->stop(SIGTERM), 0) << serve->err();
}

TEST_F(Serve, BadListenAndATakenPortAreOneLineErrors) {
  for (const std::string bad :
       {"nowhere", "127.0.0.1:0", "127.0.0.1:70000", "host.example:80", "[::1:9441"}) {
    RunResult r = run({tool("writepath"), "serve", "--listen", bad});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("--listen " + bad), std::string::npos) << r.err;
  }
  // A port already taken.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof(sa);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  const std::string taken = "127.0.0.1:" + std::to_string(ntohs(sa.sin_port));
  RunResult r = run({tool("writepath"), "serve", "--listen", taken});
  ::close(fd);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "writepath: cannot listen on " + taken + ": Address already in use\n");
}

TEST_F(Serve, ScrapesWhileItDetachesGetWholeAnswersOrARefusal) {
  const int port = free_port();
  auto serve = start_serve(port);
  std::atomic<bool> stop{false};
  std::atomic<int> whole{0}, refused{0}, partial{0};
  std::thread scraper([&] {
    while (!stop) {
      auto text = scrape(port);
      if (!text)
        ++refused;
      else if (text->find("# TYPE writepath_agent_resident_memory_bytes gauge") !=
               std::string::npos)
        ++whole;
      else
        ++partial;
    }
  });
  ASSERT_TRUE(wait_until([&] { return whole > 3; }));
  EXPECT_EQ(serve->stop(SIGTERM), 0) << serve->err();
  ASSERT_TRUE(wait_until([&] { return refused > 0; }));
  stop = true;
  scraper.join();
  EXPECT_EQ(partial, 0);
  // The "serving" line, and on a kernel that refuses trampolines the fallback's cost, no more.
  const bool fallback =
      serve->err().find("writepath: syscall tracepoints for ") != std::string::npos;
  EXPECT_EQ(line_count(serve->err()), fallback ? 2 : 1) << serve->err();
}

// The reader of serve --reads: reads FILE whole in 64 KiB read(2) calls ("read"), or maps it
// with MADV_RANDOM (no read-around: each page its own fault) and touches each page ("mmap");
// prints what it got and its own counters' change across it: getrusage major faults and
// /proc/self/io read_bytes (what it caused to be read from storage).
const char* kServedReader = R"(
import mmap, os, resource, sys
def read_bytes():
    for line in open('/proc/self/io'):
        if line.startswith('read_bytes:'):
            return int(line.split()[1])
majflt = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_majflt
path, mode = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDONLY)
f0, b0 = majflt(), read_bytes()
got = 0
if mode == 'read':
    while True:
        n = len(os.read(fd, 65536))
        if not n:
            break
        got += n
else:
    m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
    m.madvise(mmap.MADV_RANDOM)
    for p in range(0, len(m), 4096):
        got += m[p] >= 0
print(got, majflt() - f0, read_bytes() - b0)
)";

// serve --reads against the reader's own truths, on its own cgroup's series of the scratch
// disk only (anything else may run beside it): a cold read's device bytes are what the reader
// caused to be read from storage (/proc/self/io) and what cachestat(2) then finds cached, a
// warm read's bytes all come from the cache, and a cold mapping touched page by page makes the
// major faults the reader's getrusage counts.
TEST_F(Serve, ReadsAreCountedByTheirSourceAndMajorFaultsByCgroup) {
  const std::string mount = cgroup2_mount();
  if (mount.empty()) GTEST_SKIP() << "no cgroup2 mounted";
  constexpr std::uint64_t kFileBytes = 8 << 20, kMappedBytes = 4 << 20, kPage = 4096;
  const std::string data = file("served_read.dat"), mapped = file("served_mapped.dat");
  const std::string script = (root_ / "served_reader.py").string();
  std::ofstream(script) << kServedReader;
  for (const auto& [path, bytes] : {std::pair{data, kFileBytes}, std::pair{mapped, kMappedBytes}})
    ASSERT_TRUE(sh(fmt::format("head -c {} /dev/urandom > {} && sync {}", bytes, path, path)));
  auto drop_cache = [](const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
    const auto counts = cachestat(path);
    return counts ? std::optional{counts->cache} : std::nullopt;
  };
  const auto cold = drop_cache(data);
  if (!cold) GTEST_SKIP() << "no cachestat(2) here";
  ASSERT_EQ(*cold, 0u) << "the file kept pages cached";

  TestCgroups cgroups(mount);
  const std::string cgroup = "/wp_served_reads_" + std::to_string(::getpid());
  const std::string dir = cgroups.make(cgroup);
  const int port = free_port();
  // Label room for every cgroup of a busy machine: this one must get its own.
  auto serve = start_serve(port, {"--reads", "--cgroup-labels", "1000"});
  struct Truth {
    std::uint64_t got = 0, majflt = 0, storage = 0;
  };
  auto read_in_cgroup = [&](const std::string& path, const std::string& mode) {
    const RunResult r = run(
        {"sh", "-c",
         "echo $$ > " + dir + "/cgroup.procs && exec python3 " + script + " " + path + " " + mode});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Truth t;
    std::istringstream(r.out) >> t.got >> t.majflt >> t.storage;
    return t;
  };
  const std::vector<std::pair<std::string, std::string>> own = {{"device", loop_name()},
                                                                {"cgroup", cgroup}};
  auto served = [&](const std::string& family, const std::string& source = "") {
    const auto text = scrape(port);
    EXPECT_TRUE(text.has_value());
    auto labels = own;
    if (!source.empty()) labels.emplace_back("source", source);
    return text ? served_sum(*text, family, labels) : -1;
  };

  const Truth cold_read = read_in_cgroup(data, "read");
  ASSERT_EQ(cold_read.got, kFileBytes);
  const std::uint64_t cached_after = cachestat(data)->cache * kPage;
  const double device = served("writepath_read_bytes_total", "device");
  const double cold_cache = served("writepath_read_bytes_total", "cache");
  // What the reads brought in is what the reader caused to be read and what is now cached: a
  // page apiece, so within 1% (a page the reader's readahead did not bring in, or evicted).
  EXPECT_NEAR(device, static_cast<double>(cold_read.storage), kFileBytes / 100.0);
  EXPECT_NEAR(device, static_cast<double>(cached_after), kFileBytes / 100.0);
  EXPECT_NEAR(device, static_cast<double>(kFileBytes), kFileBytes / 100.0);
  // Every byte returned is the cache's or was brought in by the call that returned it.
  EXPECT_LE(cold_cache, static_cast<double>(kFileBytes));

  const Truth warm_read = read_in_cgroup(data, "read");
  ASSERT_EQ(warm_read.got, kFileBytes);
  const double warm_cache = served("writepath_read_bytes_total", "cache") - cold_cache;
  const double warm_device = served("writepath_read_bytes_total", "device") - device;
  // Warm: what the reader had read from storage, at most a few pages dropped since.
  EXPECT_NEAR(warm_device, static_cast<double>(warm_read.storage), kFileBytes / 100.0);
  EXPECT_NEAR(warm_cache + warm_device, static_cast<double>(kFileBytes), kFileBytes / 100.0);
  EXPECT_GE(warm_cache, kFileBytes * 0.99);

  ASSERT_EQ(drop_cache(mapped), 0u);
  const double faults_before = served("writepath_major_faults_total");
  const Truth touched = read_in_cgroup(mapped, "mmap");
  ASSERT_EQ(touched.got, kMappedBytes / kPage);
  const double faults = served("writepath_major_faults_total") - faults_before;
  // MADV_RANDOM: no read-around, each page read in by its own fault, as getrusage counts it.
  EXPECT_GE(touched.majflt, kMappedBytes / kPage * 99 / 100);
  EXPECT_NEAR(faults, static_cast<double>(touched.majflt), touched.majflt / 100.0 + 2);
  std::cout << fmt::format(
      "served reads of {} on {}: cold device {} B (reader's read_bytes {}, cachestat {}), "
      "cache {} B; warm cache {} B, device {} B (read_bytes {}); mapped {} pages: major "
      "faults {} (getrusage {})\n",
      cgroup, loop_name(), device, cold_read.storage, cached_after, cold_cache, warm_cache,
      warm_device, warm_read.storage, kMappedBytes / kPage, faults, touched.majflt);
  EXPECT_EQ(serve->stop(SIGTERM), 0) << serve->err();
}

// Moves itself to the cgroup directory of each phase (from a thread of its own: the writing
// thread makes no call between its phases), takes its name, and makes its writes and fdatasyncs
// there: argv is FILE then CGROUP_DIR NAME WRITES SYNCS per phase.
const char* kMovingWriter = R"(
import ctypes, os, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
block = b'w' * 4096
args = sys.argv[2:]
def move(directory):
    with open(directory + '/cgroup.procs', 'w') as procs:
        procs.write(str(os.getpid()))
for i in range(0, len(args), 4):
    directory, name, writes, syncs = args[i], args[i + 1], int(args[i + 2]), int(args[i + 3])
    mover = threading.Thread(target=move, args=(directory,))
    mover.start()
    mover.join()
    libc.prctl(15, name.encode(), 0, 0, 0)  # PR_SET_NAME
    for n in range(writes):
        assert os.pwrite(fd, block, (n % 256) * 4096) == 4096
        if n < syncs:
            os.fdatasync(fd)
)";

// One thread's writes and syncs as it moves between two cgroups and renames itself, each phase's
// counted under its own cgroup and name, the writer's own counts the truth: serve keeps a thread's
// label sets between its calls, and must see the move and the new name at the call after them.
TEST_F(Serve, AThreadMovedOrRenamedIsCountedUnderItsNewLabelsAtOnce) {
  const std::string mount = cgroup2_mount();
  if (mount.empty()) GTEST_SKIP() << "no cgroup2 mounted";
  const auto seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::string script = (root_ / "moving_writer.py").string();
  std::ofstream(script) << kMovingWriter;
  TestCgroups cgroups(mount);
  const std::string base = "/wp_moving_writer_" + std::to_string(::getpid());
  const std::string a = base + "_a", b = base + "_b";
  const std::string dir_a = cgroups.make(a), dir_b = cgroups.make(b);
  struct Phase {
    std::string cgroup, dir, comm;
    int writes, syncs;
  };
  std::uniform_int_distribution<int> writes(50, 400), syncs(1, 20);
  // Each phase changes one label: the cgroup, the name, the cgroup back.
  const std::vector<Phase> phases = {{a, dir_a, "wp_mover_one", writes(rng), syncs(rng)},
                                     {b, dir_b, "wp_mover_one", writes(rng), syncs(rng)},
                                     {b, dir_b, "wp_mover_two", writes(rng), syncs(rng)},
                                     {a, dir_a, "wp_mover_two", writes(rng), syncs(rng)}};
  const int port = free_port();
  auto serve = start_serve(port, {"--cgroup-labels", "1000", "--comm-labels"});
  std::vector<std::string> argv = {"python3", script, file("moving_writer.dat")};
  for (const auto& p : phases)
    argv.insert(argv.end(), {p.dir, p.comm, std::to_string(p.writes), std::to_string(p.syncs)});
  const RunResult r = run(argv);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const auto text = scrape(port);
  ASSERT_TRUE(text.has_value());
  for (const auto& p : phases) {
    const std::vector<std::pair<std::string, std::string>> labels = {
        {"device", loop_name()}, {"cgroup", p.cgroup}, {"comm", p.comm}};
    SCOPED_TRACE(
        fmt::format("{} as {}: {} writes, {} fdatasyncs", p.cgroup, p.comm, p.writes, p.syncs));
    EXPECT_EQ(served_sum(*text, "writepath_write_latency_seconds_count", labels), p.writes);
    EXPECT_EQ(served_sum(*text, "writepath_written_bytes_total", labels), p.writes * 4096.0);
    EXPECT_EQ(served_sum(*text, "writepath_sync_latency_seconds_count", labels), p.syncs);
    std::cout << fmt::format(
        "{} as {}: {} writes ({} served), {} fdatasyncs ({} served)\n", p.cgroup, p.comm, p.writes,
        served_sum(*text, "writepath_write_latency_seconds_count", labels), p.syncs,
        served_sum(*text, "writepath_sync_latency_seconds_count", labels));
  }
  EXPECT_EQ(serve->stop(SIGTERM), 0) << serve->err();
}

// The time another cgroup's I/O added to syncs: the load's WAL writer beside its bulk writer,
// each in a cgroup of its own. The bytes served for the pair are the bulk writer's, no more
// than its own /proc/self/io write_bytes; the delay no more than the WAL's syncs took.
TEST_F(Serve, NeighbourDelayNamesTheBulkWritersCgroupBehindTheWalsSyncs) {
  const int port = free_port();
  auto serve = start_serve(port);
  const json figures = load_figures(
      "noisy-neighbour", {"--bulk-size", "256M", "--count", "40", "--bulk-sync", "sync"});
  ASSERT_TRUE(figures.contains("together")) << figures.dump();
  if (figures["in_cgroups"] != true) GTEST_SKIP() << "the load ran without cgroups";
  const json& wal = figures["together"]["wal"];
  const json& bulk = figures["together"]["bulk"];
  const std::vector<std::pair<std::string, std::string>> pair = {
      {"victim_cgroup", wal["cgroup"].get<std::string>()},
      {"culprit_cgroup", bulk["cgroup"].get<std::string>()}};
  double bytes = 0, delay = 0;
  // The sync items reach the exporter as the agent stitches them: soon, not at once.
  EXPECT_TRUE(wait_until([&] {
    const auto text = scrape(port);
    if (!text) return false;
    bytes = served_sum(*text, "writepath_neighbour_bytes_total", pair);
    delay = served_sum(*text, "writepath_neighbour_delay_seconds_total", pair);
    return bytes > 0;
  })) << "no neighbour bytes served for "
      << bulk["cgroup"];
  EXPECT_LE(bytes, 1.1 * static_cast<double>(u64(bulk["io_write_bytes"])));
  EXPECT_GT(delay, 0.0);
  EXPECT_LE(delay, static_cast<double>(u64(wal["fdatasync_max_ns"])) * 40 / 1e9);
  EXPECT_EQ(serve->stop(SIGTERM), 0) << serve->err();
}

}  // namespace
}  // namespace wp::testing
