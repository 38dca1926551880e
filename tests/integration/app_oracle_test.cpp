// SPDX-License-Identifier: Apache-2.0
// Real applications under the oracle: PostgreSQL (initdb, pgbench), Redis with
// `appendfsync always`, and sqlite3 in WAL and DELETE journal modes with synchronous=FULL, each
// on a fresh loop-device ext4 with a journal, run under `writepath trace` and strace at once.
// strace is the truth for the calls: every write and sync call to a file on that disk, named by
// the path its descriptor had when the call returned, is an item with that path, and the items'
// bytes and failed calls are strace's. The verdicts are held to the sync contract, the pages and
// times rules, and the disk's /proc/diskstats (oracle.h). Each application is skipped, with a
// line saying so, where Debian's package is not installed.
#include <map>
#include <set>

#include "harness.h"
#include "oracle.h"
#include "strace_log.h"

namespace wp::testing {
namespace {

// The calls strace records: every write and sync with a descriptor. msync has none.
constexpr const char* kTracedCalls =
    "write,pwrite64,writev,pwritev,pwritev2,fsync,fdatasync,sync_file_range";

bool is_sync(const std::string& name) {
  return name == "fsync" || name == "fdatasync" || name == "sync_file_range";
}

struct PerFile {
  std::int64_t writes = 0, write_bytes = 0, failed_writes = 0;
  std::int64_t syncs = 0, failed_syncs = 0;
  bool operator==(const PerFile&) const = default;
  std::string describe() const {
    return std::to_string(writes) + " writes (" + std::to_string(write_bytes) + " B, " +
           std::to_string(failed_writes) + " failed), " + std::to_string(syncs) + " syncs (" +
           std::to_string(failed_syncs) + " failed)";
  }
};

struct Tally {
  std::size_t files = 0, writes = 0, syncs = 0;
};

// Runs `script` (sh -c) under writepath and strace with the disk's file system as its stage, and
// returns the oracle's violations. The script's $1 is the mount point.
std::vector<std::string> run_app(const std::string& app, const std::string& script, Tally& tally) {
  ScratchFs disk("ext4", "mkfs.ext4 -q -F -O has_journal");
  if (!disk.ready()) return {"could not make an ext4 on a loop device"};
  const fs::path scratch =
      fs::temp_directory_path() / ("wp_app_" + app + "_" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  const std::string trace = (scratch / "trace.jsonl").string();
  const std::string strace_log = (scratch / "strace.log").string();
  const std::string ds0 = (scratch / "diskstats.start").string();
  const std::string ds1 = (scratch / "diskstats.end").string();
  // The disk's counters as the application starts and after it ended: inside the trace.
  const std::string wrapped = "cat /proc/diskstats > " + ds0 + " && (" + script +
                              "); rc=$?; cat /proc/diskstats > " + ds1 + "; exit $rc";
  std::vector<std::string> argv = {
      writepath(), "trace", "--dev", disk.disk(), "--format",
      "json",      "-o",    trace,   "--save",    (scratch / "raw.wpt").string(),
      "--"};
  for (const std::string& a : strace::command(strace_log, kTracedCalls)) argv.push_back(a);
  for (const std::string& a :
       {std::string("sh"), std::string("-c"), wrapped, std::string("sh"), disk.mount_point()})
    argv.push_back(a);

  const DiskCounters before = disk_counters(disk.loop_name());
  const RunResult res = run(argv);
  const DiskCounters after = disk_counters(disk.loop_name());
  if (res.exit_code != 0)
    return {app + " under trace exited " + std::to_string(res.exit_code) + ": " + res.err};

  std::vector<std::string> v;
  auto add = [&](const std::string& check, std::vector<std::string> found) {
    for (auto& line : found) v.push_back(check + ": " + line);
  };
  const std::vector<json> items = json_lines(slurp(trace));
  const json summary = items.empty() ? json::object() : items.back();
  if (summary.value("type", "") != "summary") return {"no summary line"};
  if (summary.value("lost", 0) != 0)
    v.push_back("records lost: " + std::to_string(summary.value("lost", 0)));
  add("incomplete", oracle::check_incomplete(items, summary));
  if (const std::uint64_t missed = summary.value("missed_completions", 0ull); missed != 0)
    std::printf("[ apps     ] %s: %llu request completions not delivered by the kernel, inferred\n",
                app.c_str(), static_cast<unsigned long long>(missed));

  // The calls, file by file: strace's against the items'.
  const std::string root = disk.mount_point() + "/";
  std::map<std::string, PerFile> truth, traced;
  for (const strace::Call& c : strace::parse(slurp(strace_log))) {
    if (!c.path.starts_with(root)) continue;
    PerFile& f = truth[c.path];
    if (is_sync(c.name)) {
      ++f.syncs;
      f.failed_syncs += c.error;
    } else {
      ++f.writes;
      f.write_bytes += c.ret > 0 ? c.ret : 0;
      f.failed_writes += c.error;
    }
  }
  if (truth.empty()) return {"strace saw no write to a file on the disk"};
  for (const json& o : items) {
    if (!o.contains("path") || !o["path"].is_string()) continue;
    const std::string path = o["path"];
    if (!path.starts_with(root)) continue;
    PerFile& f = traced[path];
    const std::int64_t ret = oracle::i64(o["ret"]);
    if (o["type"] == "write" && oracle::is_write_call(o)) {
      ++f.writes;
      f.write_bytes += ret > 0 ? ret : 0;
      f.failed_writes += ret < 0 ? 1 : 0;
    } else if (o["type"] == "fsync" && is_sync(o.value("syscall", ""))) {
      ++f.syncs;
      f.failed_syncs += ret < 0 ? 1 : 0;
    }
  }
  std::size_t named_wrong = 0;
  for (const auto& [path, want] : truth) {
    auto it = traced.find(path);
    const PerFile got = it == traced.end() ? PerFile{} : it->second;
    if (got != want && ++named_wrong <= 12)
      v.push_back("calls: " + path + ": strace " + want.describe() + ", traced " + got.describe());
  }
  for (const auto& [path, got] : traced) {
    if (!truth.contains(path) && (got.writes || got.syncs) && ++named_wrong <= 12)
      v.push_back("calls: " + path + ": traced " + got.describe() + ", strace saw none");
  }
  if (named_wrong > 12) v.push_back("calls: ... " + std::to_string(named_wrong - 12) + " more");

  // The verdicts, file by file.
  for (const auto& [path, want] : truth) {
    const oracle::FileItems f = oracle::items_of(items, path);
    add("pages " + path, oracle::check_pages(f));
    add("times " + path, oracle::check_times(f));
    add("sync contract " + path, oracle::check_sync_contract(f));
    ++tally.files;
    tally.writes += f.writes.size();
    tally.syncs += f.syncs.size();
  }

  // The disk: the summary's totals between what it completed while the application ran and
  // what it completed from before the trace to after it.
  const DiskCounters start = disk_counters_in(slurp(ds0), disk.loop_name());
  const DiskCounters end = disk_counters_in(slurp(ds1), disk.loop_name());
  const DiskCounters inner{end.writes - start.writes, end.write_sectors - start.write_sectors,
                           end.flushes - start.flushes};
  const DiskCounters outer{after.writes - before.writes, after.write_sectors - before.write_sectors,
                           after.flushes - before.flushes};
  add("diskstats", oracle::check_disk_totals(summary, disk.disk(), inner, outer));
  // A failed run keeps its files: the raw trace (`writepath report raw.wpt`), strace's log and
  // the disk's counters.
  if (v.empty())
    fs::remove_all(scratch);
  else
    std::printf("[ apps     ] %s: kept %s\n", app.c_str(), scratch.c_str());
  return v;
}

void expect_holds(const std::string& app, const std::string& script) {
  Tally tally;
  const std::vector<std::string> v = run_app(app, script, tally);
  std::printf("[ apps     ] %s: %zu files, %zu writes, %zu syncs, %zu violations\n", app.c_str(),
              tally.files, tally.writes, tally.syncs, v.size());
  std::string shown;
  for (std::size_t i = 0; i < v.size() && i < 16; ++i) shown += "\n  " + v[i];
  EXPECT_TRUE(v.empty()) << app << shown;
}

TEST(StraceLog, ReadsCallsSplitAroundOtherThreads) {
  const std::vector<strace::Call> calls = strace::parse(
      "101 pwrite64(5</m/pg/base/1/1259>, \"\"..., 8192, 0) = 8192\n"
      "102 fdatasync(7</m/pg/pg_wal/000000010000000000000001> <unfinished ...>\n"
      "101 write(3</m/f (deleted)>, \"\"..., 16) = -1 ENOSPC (No space left on device)\n"
      "102 <... fdatasync resumed>) = 0\n"
      "103 write(1<pipe:[123]>, \"\"..., 3) = 3\n");
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[0].name, "pwrite64");
  EXPECT_EQ(calls[0].path, "/m/pg/base/1/1259");
  EXPECT_EQ(calls[0].ret, 8192);
  EXPECT_EQ(calls[1].path, "/m/f");
  EXPECT_EQ(calls[1].error, 1);
  EXPECT_EQ(calls[1].errno_name, "ENOSPC");
  EXPECT_EQ(calls[2].name, "fdatasync");
  EXPECT_EQ(calls[2].pid, 102);
  EXPECT_EQ(calls[2].path, "/m/pg/pg_wal/000000010000000000000001");
  EXPECT_EQ(calls[2].ret, 0);
  EXPECT_EQ(calls[3].path, "pipe:[123]");
}

// sqlite3 commits each insert on its own (autocommit): WAL mode appends to -wal and fsyncs it,
// DELETE mode writes a rollback journal, fsyncs it and the database, and unlinks it.
TEST(AppOracle, Sqlite3WalAndRollbackJournalsWithFullSync) {
  WP_REQUIRE_ROOT();
  if (!have("sqlite3") || !have("strace")) GTEST_SKIP() << "sqlite3 or strace not installed";
  expect_holds("sqlite3",
               "for mode in wal delete; do"
               "  { echo \"PRAGMA journal_mode=$mode; PRAGMA synchronous=FULL;\";"
               "    echo 'CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB);';"
               "    i=0; while [ $i -lt 150 ]; do"
               "      echo \"INSERT INTO t VALUES($i, randomblob(1000 + $i * 37));\";"
               "      i=$((i + 1)); done;"
               "    echo 'UPDATE t SET v = randomblob(5000) WHERE k % 7 = 0;'; }"
               "  | sqlite3 \"$1/$mode.db\" >/dev/null || exit 1;"
               "done");
}

// Redis with its append-only file fsynced after every write (Redis 7: a multi-part AOF in
// appendonlydir, its manifest replaced by rename), driven by redis-benchmark over a unix socket.
TEST(AppOracle, RedisAppendFsyncAlways) {
  WP_REQUIRE_ROOT();
  if (!have("redis-server") || !have("redis-benchmark") || !have("strace"))
    GTEST_SKIP() << "redis-server, redis-benchmark or strace not installed";
  expect_holds("redis",
               "s=$1/redis.sock;"
               "redis-server --port 0 --unixsocket $s --dir $1 --save '' --appendonly yes"
               "  --appendfsync always --daemonize no --logfile $1/redis.log & pid=$!;"
               "i=0; until redis-cli -s $s ping >/dev/null 2>&1; do"
               "  i=$((i + 1)); [ $i -gt 200 ] && exit 1; sleep 0.05; done;"
               "redis-benchmark -s $s -n 1500 -c 4 -t set,lpush -d 256 -q >/dev/null || exit 1;"
               "redis-cli -s $s shutdown >/dev/null 2>&1; wait $pid");
}

// PostgreSQL: initdb (every file it makes is fsynced), then pgbench's initialisation and a few
// seconds of its TPC-B-like load from 4 clients (WAL fdatasync'd at each commit, the checkpointer
// and backends writing data files, WAL segments made under a temporary name and renamed).
TEST(AppOracle, PostgresqlInitdbAndPgbench) {
  WP_REQUIRE_ROOT();
  const std::string bin = "/usr/lib/postgresql/15/bin";
  if (!fs::exists(bin + "/pgbench") || !have("runuser") || !have("strace"))
    GTEST_SKIP() << "PostgreSQL 15 (postgresql-15, postgresql-contrib) or strace not installed";
  expect_holds("postgresql",
               "u='runuser -u postgres --'; b=" + bin +
                   "; chmod 755 \"$(dirname \"$1\")\"; chown postgres \"$1\";"
                   "$u $b/initdb -D $1/pg -A trust -U postgres >/dev/null || exit 1;"
                   "$u $b/pg_ctl -D $1/pg -o \"-k $1 -c listen_addresses=''"
                   " -c max_wal_size=64MB -c checkpoint_timeout=30s\" -l $1/pg.log -w start"
                   " >/dev/null || exit 1;"
                   "$u $b/pgbench -h $1 -i -s 2 -q postgres >/dev/null 2>&1 &&"
                   " $u $b/pgbench -h $1 -c 4 -T 6 postgres >/dev/null 2>&1; rc=$?;"
                   "$u $b/pg_ctl -D $1/pg -m fast -w stop >/dev/null; exit $rc");
}

}  // namespace
}  // namespace wp::testing
