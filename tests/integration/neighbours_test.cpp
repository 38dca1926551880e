// SPDX-License-Identifier: Apache-2.0
// The neighbours of a slow sync, held to what the neighbour and the disk say themselves: a
// bulk writer the test starts in a cgroup of its own beside a traced WAL writer is named by
// the WAL's slow syncs, with its cgroup, and its bytes agree with its own /proc/PID/io and fit
// in the disk's diskstats; no neighbour is named when the WAL runs alone or the bulk writes to
// another disk. Also the load's noisy-neighbour scenario under a trace of its WAL writer only.
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <iostream>
#include <random>

#include "decode/decoder.h"
#include "harness.h"
#include "record/trace_file.h"

namespace wp::testing {
namespace {

// The WAL: 4 KiB appends and an fsync each, 20 per process, until `stop` exists (a process
// per round: the test holds every round's syncs as the one victim's).
std::vector<std::string> wal_loop(const std::string& wal, const std::string& stop) {
  return {writepath(),
          "trace",
          "--format",
          "json",
          "-o",
          "",  // -o filled by the caller
          "--",
          "sh",
          "-c",
          fmt::format("while [ ! -e '{}' ]; do '{}' fsync-each '{}' 20 || exit 1; done", stop,
                      (build_dir() / "wp_workload").string(), wal)};
}

// The bulk writer: `mib` MiB buffered by dd, then syncfs (the flusher writes it back: its
// pages are the dirtier's), in cgroup `procs`; prints its shell's /proc/PID/io afterwards,
// which counts the reaped dd's writes.
std::vector<std::string> bulk_writer(const std::string& procs, const std::string& file,
                                     unsigned mib) {
  return {"sh", "-c",
          fmt::format("echo $$ > '{}' || exit 1; dd if=/dev/zero of='{}' bs=1M count={} "
                      "status=none || exit 1; sync -f '{}' || exit 1; grep write_bytes /proc/$$/io",
                      procs, file, mib, file)};
}

std::uint64_t write_bytes_of(const std::string& io) {
  const auto at = io.find("write_bytes:");
  return at == std::string::npos ? 0 : std::stoull(io.substr(at + 12));
}

std::uint64_t median(std::vector<std::uint64_t> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

class Neighbours : public ::testing::Test {
 protected:
  void SetUp() override {
    WP_REQUIRE_ROOT();
    ASSERT_TRUE(disk_.ready());
    ASSERT_FALSE(cgroup2_mount().empty()) << "no cgroup2 mount";
    out_ = fs::temp_directory_path() / ("wp_it_nn_" + std::to_string(::getpid()) + ".json");
  }
  void TearDown() override { fs::remove(out_); }

  // Traces the WAL until `during` returns, then stops it; the trace's lines.
  template <typename During>
  std::vector<json> trace_wal(During during) {
    const std::string stop = disk_.file("stop");
    std::vector<std::string> argv = wal_loop(disk_.file("wal"), stop);
    argv[5] = out_.string();
    Background trace(argv);
    EXPECT_TRUE(trace.wait_for_stderr("tracing")) << trace.err();
    // The WAL at work before the neighbour starts: its disk is a traced one by then.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    during();
    std::ofstream(stop).put('\n');
    EXPECT_EQ(trace.wait(), 0) << trace.err();
    return json_lines(slurp(out_));
  }

  ScratchFs disk_{"ext4", "mkfs.ext4 -q -F"};
  fs::path out_;
};

TEST_F(Neighbours, TheBulkWriterIsNamedBehindTheSlowSyncsWithItsOwnBytes) {
  TestCgroups cgroups(cgroup2_mount());
  const std::string name = "/wp-it-bulk-" + std::to_string(::getpid());
  const std::string dir = cgroups.make(name);
  std::mt19937 rng(std::random_device{}());
  const unsigned mib = 192 + rng() % 128;
  SCOPED_TRACE(fmt::format("bulk {} MiB", mib));
  std::string bulk_io;
  DiskCounters before, after;
  const auto items = trace_wal([&] {
    before = disk_counters(disk_.loop_name());
    RunResult bulk = run(bulk_writer(dir + "/cgroup.procs", disk_.file("bulk"), mib));
    after = disk_counters(disk_.loop_name());
    EXPECT_EQ(bulk.exit_code, 0) << bulk.err;
    bulk_io = bulk.out;
    // The WAL's syncs after the bulk's are its alone-figures.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  });
  const std::uint64_t own = write_bytes_of(bulk_io);
  ASSERT_EQ(own, std::uint64_t{mib} << 20) << bulk_io;  // dd's writes, as the kernel counted

  const auto syncs = of_type(items, "fsync");
  ASSERT_GT(syncs.size(), 20u);
  std::vector<std::uint64_t> latencies;
  for (const json& s : syncs) latencies.push_back(u64(s["latency_ns"]));
  const std::uint64_t typical = median(latencies);
  std::uint64_t named = 0;
  for (const json& s : syncs) {
    for (const json& n : s["neighbours"]) {
      // Only the bulk writer's processes (dd, or sync's own metadata) share this disk.
      EXPECT_EQ(n["cgroup"], name) << n.dump();
      EXPECT_NE(u64(n["pid"]), u64(s["pid"]));
      EXPECT_LE(n["share"].get<double>(), 1.0);
    }
    const bool names_dd = std::any_of(s["neighbours"].begin(), s["neighbours"].end(),
                                      [](const json& n) { return n["comm"] == "dd"; });
    named += names_dd;
    // A sync far slower than the WAL's usual waited behind the bulk writer's writeback.
    if (u64(s["latency_ns"]) > std::max<std::uint64_t>(2 * typical, 100'000'000)) {
      EXPECT_TRUE(names_dd) << "slow and naming no neighbour: " << s.dump();
    }
  }
  std::cout << fmt::format("wal: {} syncs, median {} ns, slowest {} ns, {} named dd\n",
                           syncs.size(), typical,
                           *std::max_element(latencies.begin(), latencies.end()), named);
  EXPECT_GT(named, 0u) << "no sync named the bulk writer";

  // The summary: dd's bytes as the trace counted them, against its own counter and the disk's.
  const json summary = of_type(items, "summary").at(0);
  const auto& by_process = summary["io_by_process"];
  // Its bytes on the scratch disk (a loop device: the disk under it has them again).
  const auto dd = std::find_if(by_process.begin(), by_process.end(), [&](const json& io) {
    return io["owner"]["comm"] == "dd" && io["disk"] == disk_.disk();
  });
  ASSERT_NE(dd, by_process.end()) << summary.dump();
  EXPECT_EQ((*dd)["owner"]["cgroup"], name);
  EXPECT_EQ((*dd)["disk"], disk_.disk());
  const double bytes = static_cast<double>(u64((*dd)["bytes"]));
  EXPECT_NEAR(bytes, static_cast<double>(own), 0.1 * static_cast<double>(own));
  EXPECT_LE(bytes, static_cast<double>((after.write_sectors - before.write_sectors) * 512));
  ASSERT_FALSE(summary["neighbours"].empty());
  EXPECT_EQ(summary["neighbours"][0]["culprit"]["cgroup"], name);
}

TEST_F(Neighbours, NoneWhenTheWalRunsAloneOrTheBulkWritesToAnotherDisk) {
  ScratchFs other("ext4", "mkfs.ext4 -q -F");
  ASSERT_TRUE(other.ready());
  TestCgroups cgroups(cgroup2_mount());
  const std::string dir = cgroups.make("/wp-it-other-" + std::to_string(::getpid()));
  const auto items = trace_wal([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // alone
    RunResult bulk = run(bulk_writer(dir + "/cgroup.procs", other.file("bulk"), 128));
    EXPECT_EQ(bulk.exit_code, 0) << bulk.err;
    EXPECT_EQ(write_bytes_of(bulk.out), 128u << 20) << bulk.out;
  });
  const auto syncs = of_type(items, "fsync");
  ASSERT_GT(syncs.size(), 20u);
  for (const json& s : syncs) EXPECT_TRUE(s["neighbours"].empty()) << s.dump();
  const json summary = of_type(items, "summary").at(0);
  EXPECT_TRUE(summary["neighbours"].empty()) << summary.dump();
}

// While no traced sync waits, a bystander's data on a traced disk is counted in the kernel, not
// sent: beside a traced writer that never syncs, the recording holds no bio of the bulk writer's
// file and no bystander-io record, and the summary still gives the bulk writer its bytes, in
// its cgroup, within 10 % of its own /proc/PID/io.
TEST_F(Neighbours, ABystandersDataIsCountedNotSentWhileNoTracedSyncWaits) {
  TestCgroups cgroups(cgroup2_mount());
  const std::string name = "/wp-it-quiet-" + std::to_string(::getpid());
  const std::string dir = cgroups.make(name);
  std::mt19937 rng(std::random_device{}());
  const unsigned mib = 128 + rng() % 128;
  SCOPED_TRACE(fmt::format("bulk {} MiB", mib));
  const std::string stop = disk_.file("stop");
  const fs::path saved = out_.string() + ".wpt";
  Background trace({writepath(), "trace", "--format", "json", "-o", out_.string(), "--save",
                    saved.string(), "--", "sh", "-c",
                    fmt::format("echo traced > '{}' && while [ ! -e '{}' ]; do sleep 0.05; done",
                                disk_.file("note"), stop)});
  ASSERT_TRUE(trace.wait_for_stderr("tracing")) << trace.err();
  // The traced shell's write has made the scratch disk a traced one by then.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const RunResult bulk = run(bulk_writer(dir + "/cgroup.procs", disk_.file("bulk"), mib));
  std::ofstream(stop).put('\n');
  ASSERT_EQ(trace.wait(), 0) << trace.err();
  ASSERT_EQ(bulk.exit_code, 0) << bulk.err;
  const std::uint64_t own = write_bytes_of(bulk.out);
  ASSERT_EQ(own, std::uint64_t{mib} << 20) << bulk.out;

  struct stat st {};
  ASSERT_EQ(::stat(disk_.file("bulk").c_str(), &st), 0);
  std::uint64_t sent = 0, bios = 0, bystander_io = 0;
  auto reader = TraceFileReader::open(saved.string());
  ASSERT_EQ(reader.error(), "");
  Decoder decoder;
  while (auto frame = reader.next()) {
    if (frame->kind != FrameKind::Record) continue;
    const auto event = decoder.decode(frame->payload);
    if (const auto* bio = event ? std::get_if<BioEvent>(&*event) : nullptr) {
      ++bios;
      if (bio->ino == st.st_ino) sent += bio->bytes;
    }
    if (event && std::holds_alternative<BystanderIoEvent>(*event)) ++bystander_io;
  }
  fs::remove(saved);
  std::cout << fmt::format("bulk {} B; {} bios sent, {} B of them the bulk file's\n", own, bios,
                           sent);
  EXPECT_EQ(sent, 0u);
  EXPECT_EQ(bystander_io, 0u) << "told a bystander's completion with no traced sync waiting";

  const json summary = of_type(json_lines(slurp(out_)), "summary").at(0);
  std::uint64_t counted = 0;
  for (const json& io : summary["io_by_process"])
    if (io["owner"]["comm"] == "dd" && io["disk"] == disk_.disk()) {
      EXPECT_EQ(io["owner"]["cgroup"], name) << io.dump();
      counted += u64(io["bytes"]);
    }
  EXPECT_NEAR(static_cast<double>(counted), static_cast<double>(own), 0.1 * own)
      << summary["io_by_process"].dump();
  EXPECT_TRUE(summary["neighbours"].empty()) << summary["neighbours"].dump();
}

// The load's scenario under a trace (its writers are the load's children, so both are traced:
// a neighbour may be traced too): the WAL's syncs beside the bulk name the bulk writer the
// figures name, in its cgroup, with bytes within 10 % of the bulk writer's own /proc/self/io;
// its syncs alone name no one.
TEST_F(Neighbours, TheScenariosWalNamesItsBulkWriter) {
  const RunResult r = run({writepath(), "trace", "--format", "json", "-o", out_.string(), "--",
                           writepath(), "load", "noisy-neighbour", "--json", "--bulk-size", "256M",
                           "--count", "40", "--bulk-sync", "sync"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(doc.is_object() && doc.contains("figures")) << r.out;
  const json figures = doc["figures"];
  ASSERT_TRUE(figures.contains("together")) << figures.dump();
  const json& f = figures;
  const auto items = json_lines(slurp(out_));
  const std::uint64_t alone_pid = u64(f["wal_alone"]["pid"]);
  const std::uint64_t wal_pid = u64(f["together"]["wal"]["pid"]);
  const std::uint64_t bulk_pid = u64(f["together"]["bulk"]["pid"]);
  std::uint64_t alone = 0, together = 0, named = 0;
  for (const json& s : of_type(items, "fsync", "wal-writer")) {
    if (u64(s["pid"]) == alone_pid) {
      ++alone;
      EXPECT_TRUE(s["neighbours"].empty()) << s.dump();
    }
    if (u64(s["pid"]) != wal_pid) continue;
    ++together;
    for (const json& n : s["neighbours"])
      if (u64(n["pid"]) == bulk_pid) {
        ++named;
        if (f["in_cgroups"] == true) {
          EXPECT_EQ(n["cgroup"], f["together"]["bulk"]["cgroup"]);
        }
      }
  }
  EXPECT_EQ(alone, 40u);
  EXPECT_EQ(together, 40u);
  EXPECT_GT(named, 0u) << "no WAL sync beside the bulk named it";
  const json summary = of_type(items, "summary").at(0);
  bool found = false;
  for (const json& io : summary["io_by_process"])
    if (u64(io["owner"]["pid"]) == bulk_pid) {
      found = true;
      const double own = static_cast<double>(u64(f["together"]["bulk"]["io_write_bytes"]));
      EXPECT_NEAR(static_cast<double>(u64(io["bytes"])), own, 0.1 * own) << io.dump();
    }
  EXPECT_TRUE(found) << summary.dump();
}

// What the trace says of a real client beside a bulk writer the test started in a cgroup of
// its own: the client's syncs that named the writer, and the writer's bytes over the trace
// (every process of that comm, in that cgroup, on the scratch disk).
struct Named {
  std::uint64_t syncs = 0;          // the client's syncs
  std::uint64_t naming = 0;         // of which named the bulk writer
  std::uint64_t bulk_bytes = 0;     // the bulk writer's bytes in io_by_process
  std::vector<std::string> others;  // neighbours neither the client's nor the bulk writer's
};

Named named_in(const std::vector<json>& items, const std::string& client, const std::string& bulk,
               const std::string& cgroup, const std::string& disk) {
  Named n;
  for (const json& s : of_type(items, "fsync", client)) {
    ++n.syncs;
    bool names = false;
    for (const json& x : s["neighbours"]) {
      if (x["comm"] == bulk && x["cgroup"] == cgroup)
        names = true;
      else if (x["comm"] != client && x["cgroup"] != cgroup)
        n.others.push_back(x.dump());
    }
    n.naming += names;
  }
  const json summary = of_type(items, "summary").at(0);
  for (const json& io : summary["io_by_process"])
    if (io["owner"]["comm"] == bulk && io["owner"]["cgroup"] == cgroup && io["disk"] == disk)
      n.bulk_bytes += u64(io["bytes"]);
  return n;
}

// The client made more than `min_syncs` syncs, some named the bulk writer, none named anyone
// else, and the bulk writer's traced bytes are within 10 % of `own`, its own count.
void expect_named(const Named& n, const std::string& client, const std::string& bulk,
                  std::uint64_t own, std::uint64_t min_syncs) {
  std::cout << fmt::format("{}: {} syncs, {} named {}; {} {} B traced, {} B its own\n", client,
                           n.syncs, n.naming, bulk, bulk, n.bulk_bytes, own);
  EXPECT_GT(n.syncs, min_syncs);
  EXPECT_GT(n.naming, 0u) << "no " << client << " sync named " << bulk;
  EXPECT_TRUE(n.others.empty()) << n.others.front();
  EXPECT_NEAR(static_cast<double>(n.bulk_bytes), static_cast<double>(own), 0.1 * own);
}

// PostgreSQL's commits (pgbench, WAL fdatasync'd at each) beside a bulk dd and its syncfs.
TEST_F(Neighbours, PgbenchBesideABulkDdNamesTheDd) {
  const std::string bin = "/usr/lib/postgresql/15/bin";
  if (!fs::exists(bin + "/pgbench") || !have("runuser"))
    GTEST_SKIP() << "PostgreSQL 15 (postgresql-15, postgresql-contrib) not installed";
  TestCgroups cgroups(cgroup2_mount());
  const std::string name = "/wp-it-pg-bulk-" + std::to_string(::getpid());
  const std::string dir = cgroups.make(name);
  const std::string root = disk_.mount_point();
  const std::string u = "runuser -u postgres -- ", pg = root + "/pg";
  ASSERT_TRUE(sh("chmod 755 " + fs::path(root).parent_path().string() + " " + root +
                 " && chown postgres " + root));
  ASSERT_TRUE(sh(u + bin + "/initdb -D " + pg + " -A trust -U postgres >/dev/null"));
  ASSERT_TRUE(sh(u + bin + "/pg_ctl -D " + pg + " -o \"-k " + root +
                 " -c listen_addresses=''\" -l " + root + "/pg.log -w start >/dev/null"));
  const bool loaded = sh(u + bin + "/pgbench -h " + root + " -i -s 1 -q postgres >/dev/null 2>&1");
  Background trace(
      {writepath(), "trace", "--comm", "postgres", "--format", "json", "-o", out_.string()});
  EXPECT_TRUE(trace.wait_attached()) << trace.err();
  Background bench({"runuser", "-u", "postgres", "--", bin + "/pgbench", "-h", root, "-c", "2",
                    "-T", "6", "postgres"});
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  RunResult bulk = run(bulk_writer(dir + "/cgroup.procs", root + "/bulk", 192));
  EXPECT_EQ(bench.wait(), 0) << bench.err();
  EXPECT_EQ(trace.stop(SIGINT), 0) << trace.err();
  sh(u + bin + "/pg_ctl -D " + pg + " -m fast -w stop >/dev/null");
  ASSERT_TRUE(loaded);
  ASSERT_EQ(bulk.exit_code, 0) << bulk.err;
  const std::uint64_t own = write_bytes_of(bulk.out);
  ASSERT_EQ(own, 192u << 20) << bulk.out;
  expect_named(named_in(json_lines(slurp(out_)), "postgres", "dd", name, disk_.disk()), "postgres",
               "dd", own, 50);
}

// Redis with appendfsync always (an fdatasync per write) beside fio writing buffered and
// fsyncing at its end, in another cgroup.
TEST_F(Neighbours, RedisAppendFsyncAlwaysBesideFioNamesFio) {
  if (!have("redis-server") || !have("redis-benchmark") || !have("fio"))
    GTEST_SKIP() << "redis-server, redis-benchmark or fio not installed";
  TestCgroups cgroups(cgroup2_mount());
  const std::string name = "/wp-it-fio-" + std::to_string(::getpid());
  const std::string dir = cgroups.make(name);
  const std::string root = disk_.mount_point(), sock = root + "/redis.sock";
  Background trace(
      {writepath(), "trace", "--comm", "redis-server", "--format", "json", "-o", out_.string()});
  EXPECT_TRUE(trace.wait_attached()) << trace.err();
  Background redis({"redis-server", "--port", "0", "--unixsocket", sock, "--dir", root, "--save",
                    "", "--appendonly", "yes", "--appendfsync", "always", "--daemonize", "no"});
  ASSERT_TRUE(wait_until([&] { return sh("redis-cli -s " + sock + " ping >/dev/null 2>&1"); }))
      << redis.err();
  Background bench(
      {"redis-benchmark", "-s", sock, "-n", "12000", "-c", "4", "-t", "set", "-d", "256", "-q"});
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  RunResult fio = run({"sh", "-c",
                       fmt::format("echo $$ > '{}/cgroup.procs' || exit 1; fio --name=bulk "
                                   "--filename='{}/bulk' --rw=write --bs=1M --size=160M "
                                   "--ioengine=psync --end_fsync=1 >/dev/null || exit 1; "
                                   "grep write_bytes /proc/$$/io",
                                   dir, root)});
  EXPECT_EQ(bench.wait(), 0) << bench.err();
  sh("redis-cli -s " + sock + " shutdown nosave >/dev/null 2>&1");
  redis.wait();
  EXPECT_EQ(trace.stop(SIGINT), 0) << trace.err();
  ASSERT_EQ(fio.exit_code, 0) << fio.err;
  const std::uint64_t own = write_bytes_of(fio.out);
  ASSERT_GE(own, 160u << 20) << fio.out;
  expect_named(named_in(json_lines(slurp(out_)), "redis-server", "fio", name, disk_.disk()),
               "redis-server", "fio", own, 100);
}

}  // namespace
}  // namespace wp::testing
