// SPDX-License-Identifier: Apache-2.0
// writepath audit on real programs, against what the programs did by their own account: the
// load generator's count of the saves it made unsafe, strace's list of the renames and links
// git made, the files a shell left behind, sqlite3's row count, and PostgreSQL's file layout.
// Sizes and rounds are random (the seed is printed).
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using namespace wp::testing;

// A file of this test process's own in the temporary directory: tests run side by side.
fs::path temp_path(const std::string& name, const std::string& extension) {
  return fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()) + extension);
}

struct Audit {
  int exit_code = -1;
  std::vector<json> hazards;  // the "hazard" lines
  json summary;               // the "audit_summary" line
  std::string err;
};

// `writepath audit --format json -o FILE -- argv…`: the command's own stdout stays its own.
Audit audit(const std::vector<std::string>& command) {
  const fs::path out = temp_path("wp_audit", ".jsonl");
  std::vector<std::string> argv = {writepath(), "audit",      "--format", "json",
                                   "-o",        out.string(), "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  const RunResult r = run(argv);
  Audit a;
  a.exit_code = r.exit_code;
  a.err = r.err;
  for (const json& line : json_lines(slurp(out))) {
    if (line["type"] == "hazard") a.hazards.push_back(line);
    if (line["type"] == "audit_summary") a.summary = line;
  }
  fs::remove(out);
  return a;
}

std::multiset<std::string> rules_of(const std::vector<json>& hazards) {
  std::multiset<std::string> out;
  for (const json& h : hazards) out.insert(h["rule"].get<std::string>());
  return out;
}

std::string sh_out(const std::string& command) {
  const RunResult r = run({"sh", "-c", command});
  return r.out;
}

class AuditRun : public SeededTest {};

// Each --unsafe variant of the atomic save is reported with its rule, once per round the load
// says it saved, and with nothing else; the safe save with nothing at all.
TEST_F(AuditRun, EachUnsafeAtomicSaveIsItsRuleOncePerRoundAndNothingElse) {
  const std::vector<std::pair<std::string, std::string>> variants = {
      {"none", ""},
      {"rename-of-unsynced-data", "rename"},
      {"write-after-fsync-before-rename", "rename"},
      {"name-not-durable", "rename"},
      {"sync-of-the-wrong-thing", "sync_file_range"}};
  for (const auto& [variant, syscall] : variants) {
    SCOPED_TRACE(variant);
    const std::uint64_t rounds = 1 + rng_() % 3;
    const std::string size = std::to_string(64u << (rng_() % 6)) + "K";  // 64 KiB .. 2 MiB
    const fs::path figures = temp_path("wp_audit_load", ".json");
    const Audit a = audit({writepath(), "load", "atomic-save", "--unsafe", variant, "--rounds",
                           std::to_string(rounds), "--size", size, "--json", "--result-file",
                           figures.string()});
    // The load's own account: what it saved, and which mistake it made.
    const json load = json::parse(slurp(figures), nullptr, false);
    fs::remove(figures);
    ASSERT_TRUE(load.is_object() && load.contains("figures")) << a.err;
    ASSERT_EQ(load["figures"]["rounds"], rounds);
    if (variant == "none") {
      EXPECT_EQ(a.exit_code, 0) << a.err;
      EXPECT_TRUE(a.hazards.empty()) << a.hazards.front().dump();
      EXPECT_EQ(a.summary["hazards"], 0);
      EXPECT_GT(a.summary["namespace_calls"].get<int>(), 0) << "the renames were seen";
      continue;
    }
    EXPECT_EQ(a.exit_code, 3) << a.err;
    std::multiset<std::string> expected;
    for (std::uint64_t i = 0; i < rounds; ++i) expected.insert(variant);
    EXPECT_EQ(rules_of(a.hazards), expected);
    EXPECT_EQ(a.summary["hazards"], rounds);
    for (const json& h : a.hazards) {
      EXPECT_EQ(h["item"]["syscall"], syscall) << h.dump();
      EXPECT_NE(h["item"]["what"].get<std::string>().find("checkpoint.tmp"), std::string::npos)
          << h.dump();
    }
  }
}

// `echo > tmp && mv tmp f` over the saved f: the two hazards a naive save has, on mv's
// rename; the same save with coreutils' sync of the file and of the directory has none; and
// the naive save of a file that did not exist yet replaces nothing (mv's RENAME_NOREPLACE
// succeeded), so it has none either. The journal commits every 60 s (commit=60): nothing
// but a sync flushes the disk while the test runs (another test's sync(2) flushes every
// disk, so the write may still turn durable, after the rename).
TEST_F(AuditRun, TheNaiveShellSaveHasTwoHazardsAndTheSyncedOneNone) {
  ScratchFs disk("ext4", "mkfs.ext4 -q -F", "commit=60");
  ASSERT_TRUE(disk.ready());
  const std::string dir = disk.mount_point();
  const std::string data = "saved " + std::to_string(rng_());
  ASSERT_TRUE(sh("echo old > " + disk.file("f") + " && sync"));
  const Audit naive =
      audit({"sh", "-c", "cd " + dir + " && echo '" + data + "' > tmp && mv tmp f"});
  // The shell's own result: f holds the data, tmp is gone.
  EXPECT_EQ(slurp(disk.file("f")), data + "\n");
  EXPECT_FALSE(fs::exists(disk.file("tmp")));
  EXPECT_EQ(naive.exit_code, 3) << naive.err;
  EXPECT_EQ(rules_of(naive.hazards),
            (std::multiset<std::string>{"name-not-durable", "rename-of-unsynced-data"}));
  for (const json& h : naive.hazards) {
    EXPECT_EQ(h["item"]["comm"], "mv");
    EXPECT_EQ(h["item"]["what"], disk.file("tmp") + " -> " + disk.file("f"));
    if (h["rule"] == "rename-of-unsynced-data") {
      ASSERT_EQ(h["related"].size(), 1u) << h.dump();  // the one write echo made
      EXPECT_EQ(h["related"][0]["comm"], "sh");
      // Not durable at the rename: dirty, or written without a flush (ext4's auto_da_alloc
      // starts the writeback of a file renamed over another). Its state is its last: another
      // process's sync(2) beside the test flushes this disk too, and makes it durable after.
      const json& write = h["related"][0];
      if (write["state"] == "durable") {
        ASSERT_TRUE(write.contains("durable_ns")) << h.dump();
        EXPECT_GT(write["durable_ns"].get<std::uint64_t>(),
                  h["item"]["end_ns"].get<std::uint64_t>())
            << h.dump();
      } else {
        EXPECT_FALSE(write.contains("durable_ns")) << h.dump();
      }
    }
  }

  const Audit safe =
      audit({"sh", "-c",
             "cd " + dir + " && echo '" + data + "' > tmp2 && sync tmp2 && mv tmp2 g && sync ."});
  EXPECT_EQ(slurp(disk.file("g")), data + "\n");
  EXPECT_EQ(safe.exit_code, 0) << safe.err;
  EXPECT_TRUE(safe.hazards.empty()) << safe.hazards.front().dump();

  const Audit first =
      audit({"sh", "-c", "cd " + dir + " && echo '" + data + "' > tmp3 && mv tmp3 new"});
  EXPECT_EQ(slurp(disk.file("new")), data + "\n");
  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_TRUE(first.hazards.empty()) << first.hazards.front().dump();
}

// A server's reply: a save made safe by the directory's fsync, and the same save answered on
// its socket before that fsync. Only the second has a hazard, on the rename, whose related
// item is the script's own send (its socket's fd, as the script printed it).
TEST_F(AuditRun, AReplyBeforeTheDirectorySyncIsNameNotDurable) {
  ScratchFs disk("ext4", "mkfs.ext4 -q -F");
  ASSERT_TRUE(disk.ready());
  ASSERT_TRUE(sh("echo old > " + disk.file("f") + " && sync"));
  const int size = 1 + static_cast<int>(rng_() % 65536);
  for (const bool reply_first : {false, true}) {
    SCOPED_TRACE(reply_first ? "reply, then the directory's fsync" : "fsync, then the reply");
    const std::string sync_dir =
        "    dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY); os.fsync(dfd); os.close(dfd)\n";
    const std::string reply = "    a.send(b'saved')\n";
    const std::string script =
        "import os, socket, sys\n"
        "d = sys.argv[1]\n"
        "a, b = socket.socketpair()\n"
        "fd = os.open(f'{d}/f.tmp', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)\n"
        "os.write(fd, b'x' * " +
        std::to_string(size) +
        ")\n"
        "os.fsync(fd); os.close(fd)\n"
        "os.rename(f'{d}/f.tmp', f'{d}/f')\n"
        "if True:\n" +
        (reply_first ? reply + sync_dir : sync_dir + reply) +
        "assert b.recv(16) == b'saved'\n"
        "print(a.fileno())\n";
    const fs::path printed = temp_path("wp_audit_reply", ".out");
    const Audit a = audit(
        {"sh", "-c", "python3 -c \"$0\" \"$1\" > " + printed.string(), script, disk.mount_point()});
    const std::string fd = slurp(printed);
    fs::remove(printed);
    ASSERT_FALSE(fd.empty()) << a.err;
    EXPECT_EQ(fs::file_size(disk.file("f")), static_cast<std::uintmax_t>(size));
    if (!reply_first) {
      EXPECT_EQ(a.exit_code, 0) << a.err;
      EXPECT_TRUE(a.hazards.empty()) << a.hazards.front().dump();
      continue;
    }
    EXPECT_EQ(a.exit_code, 3) << a.err;
    ASSERT_EQ(a.hazards.size(), 1u);
    const json& h = a.hazards.front();
    EXPECT_EQ(h["rule"], "name-not-durable") << h.dump();
    EXPECT_EQ(h["item"]["what"], disk.file("f.tmp") + " -> " + disk.file("f")) << h.dump();
    ASSERT_EQ(h["related"].size(), 1u) << h.dump();
    EXPECT_EQ(h["related"][0]["syscall"], "sendto") << h.dump();
    EXPECT_NE(h["detail"].get<std::string>().find("replied on fd " + fd.substr(0, fd.find('\n'))),
              std::string::npos)
        << h.dump();
  }
}

// sqlite3 with synchronous=FULL in WAL and rollback-journal modes: journals made, synced and
// removed as it should; no hazard.
TEST_F(AuditRun, Sqlite3WithFullSyncHasNone) {
  if (!sh("command -v sqlite3 >/dev/null")) GTEST_SKIP() << "sqlite3 not installed";
  ScratchFs disk("ext4", "mkfs.ext4 -q -F");
  ASSERT_TRUE(disk.ready());
  const int rows = 5 + static_cast<int>(rng_() % 40);
  for (const char* mode : {"wal", "delete"}) {
    SCOPED_TRACE(mode);
    const std::string db = disk.file(std::string(mode) + ".db");
    std::string sql = std::string("PRAGMA journal_mode=") + mode +
                      "; PRAGMA synchronous=FULL; CREATE TABLE t(k INTEGER PRIMARY KEY, v);";
    for (int i = 0; i < rows; ++i)
      sql += "INSERT INTO t VALUES(" + std::to_string(i) + ", randomblob(3000));";
    const Audit a = audit({"sqlite3", db, sql});
    EXPECT_EQ(a.exit_code, 0) << a.err;
    EXPECT_TRUE(a.hazards.empty()) << a.hazards.front().dump();
    EXPECT_GE(a.summary["syncs"].get<int>(), rows) << "each commit synced";
    EXPECT_GT(a.summary["namespace_calls"].get<int>(), 0) << "its journal's calls were seen";
    // sqlite3's own count of what it committed.
    EXPECT_EQ(sh_out("sqlite3 " + db + " 'SELECT count(*) FROM t'"), std::to_string(rows) + "\n");
  }
}

// git commit, core.fsync off: every rename strace saw git make publishes unsynced data whose
// name nothing syncs. On (fsync each file): no rename of unsynced data is left, but git never
// syncs a directory, so each rename and each link of a synced object still has a name that is
// not durable.
TEST_F(AuditRun, GitCommitWithAndWithoutCoreFsync) {
  if (!sh("command -v git >/dev/null && command -v strace >/dev/null"))
    GTEST_SKIP() << "git or strace not installed";
  ScratchFs disk("ext4", "mkfs.ext4 -q -F");
  ASSERT_TRUE(disk.ready());
  const std::string repo = disk.file("repo");
  ASSERT_TRUE(sh("git init -q " + repo + " && git -C " + repo + " config user.email t@t &&" +
                 " git -C " + repo + " config user.name t"));
  const fs::path log = temp_path("wp_audit_git", ".strace");
  for (const std::string fsync : {"none", "all"}) {
    SCOPED_TRACE("core.fsync=" + fsync);
    const int files = 1 + static_cast<int>(rng_() % 4);
    for (int i = 0; i < files; ++i)
      ASSERT_TRUE(
          sh("echo " + std::to_string(rng_()) + " > " + repo + "/f" + fsync + std::to_string(i)));
    ASSERT_TRUE(sh("git -C " + repo + " add -A"));
    const Audit a =
        audit({"strace", "-f", "-qq", "-e", "trace=rename,renameat,renameat2,link,linkat", "-o",
               log.string(), "git", "-C", repo, "-c", "core.fsync=" + fsync, "-c",
               "core.fsyncMethod=fsync", "commit", "-qm", "c"});
    // strace's account of the names git made.
    int renames = 0, links = 0;
    const std::string calls = slurp(log);
    const std::regex made("(rename(?:at2?)?|link(?:at)?)\\(.*\\) = 0\\n");
    for (std::sregex_iterator it(calls.begin(), calls.end(), made), end; it != end; ++it)
      ((*it)[1].str().rfind("link", 0) == 0 ? links : renames) += 1;
    ASSERT_GT(renames, 0) << calls;
    const auto found = rules_of(a.hazards);
    EXPECT_EQ(a.exit_code, 3) << a.err;
    if (fsync == "none") {
      EXPECT_EQ(found.count("rename-of-unsynced-data"), static_cast<std::size_t>(renames));
      EXPECT_EQ(found.count("name-not-durable"), static_cast<std::size_t>(renames));
    } else {
      EXPECT_EQ(found.count("rename-of-unsynced-data"), 0u);
      EXPECT_EQ(found.count("name-not-durable"), static_cast<std::size_t>(renames + links));
    }
    EXPECT_EQ(found.size(),
              found.count("rename-of-unsynced-data") + found.count("name-not-durable"));
  }
  fs::remove(log);
}

// PostgreSQL's server (initdb before the audit: it runs with fsync off and syncs everything
// at its end): pgbench's load and a clean shutdown. Its WAL segments, relation files and
// control file are made durably; the two files it writes unsynced by design (the relation
// cache's init file and the statistics file, both rebuilt when missing) are renamed to names
// it unlinked at startup, so they replace nothing: no hazard at all.
TEST_F(AuditRun, PostgresqlKeepsItsDurableFilesSafe) {
  const std::string bin = "/usr/lib/postgresql/15/bin";
  if (!fs::exists(bin + "/pgbench") || !sh("command -v runuser >/dev/null"))
    GTEST_SKIP() << "PostgreSQL 15 (postgresql-15, postgresql-contrib) not installed";
  ScratchFs disk("ext4", "mkfs.ext4 -q -F");
  ASSERT_TRUE(disk.ready());
  const std::string d = disk.mount_point();
  const std::string u = "runuser -u postgres -- ";
  ASSERT_TRUE(sh("chmod 755 " + fs::path(d).parent_path().string() + " && chown postgres " + d +
                 " && " + u + bin + "/initdb -D " + d + "/pg -A trust -U postgres >/dev/null"));
  const int seconds = 2 + static_cast<int>(rng_() % 3);
  const Audit a =
      audit({"sh", "-c",
             u + bin + "/pg_ctl -D " + d + "/pg -o \"-k " + d + " -c listen_addresses=''\" -l " +
                 d + "/pg.log -w start >/dev/null || exit 1; " + u + bin + "/pgbench -h " + d +
                 " -i -s 1 -q postgres >/dev/null 2>&1 && " + u + bin + "/pgbench -h " + d +
                 " -c 2 -T " + std::to_string(seconds) + " postgres >/dev/null 2>&1; rc=$?; " + u +
                 bin + "/pg_ctl -D " + d + "/pg -m fast -w stop >/dev/null; exit $rc"});
  EXPECT_GT(a.summary["syncs"].get<int>(), 0) << a.err;
  EXPECT_GT(a.summary["namespace_calls"].get<int>(), 0) << a.err;
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_TRUE(a.hazards.empty()) << a.hazards.front().dump();
  // The server's own account: it started, served pgbench and shut down cleanly.
  EXPECT_NE(slurp(d + "/pg.log").find("database system is shut down"), std::string::npos);
}

// A recording keeps the name-change records: report finds the same hazards the live trace did.
TEST_F(AuditRun, ARecordingReportsTheSameHazards) {
  ScratchFs disk("ext4", "mkfs.ext4 -q -F");
  ASSERT_TRUE(disk.ready());
  const fs::path wpt = temp_path("wp_audit", ".wpt");
  const std::string script = "cd " + disk.mount_point() + " && echo x > t && mv t f";
  ASSERT_TRUE(sh("echo old > " + disk.file("f")));
  const RunResult traced = run(
      {writepath(), "trace", "--format", "json", "--save", wpt.string(), "--", "sh", "-c", script});
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  const RunResult reported = run({writepath(), "report", "--format", "json", wpt.string()});
  ASSERT_EQ(reported.exit_code, 0) << reported.err;
  fs::remove(wpt);
  const auto renames = [&](const std::string& out) {
    std::vector<json> r;
    for (const json& item : json_lines(out))
      if (item["type"] == "namespace" && item["op"] == "rename" && item["ret"] == 0)
        r.push_back(item);  // (not mv's first try, RENAME_NOREPLACE, which found f there)
    return r;
  };
  const auto live = renames(traced.out), again = renames(reported.out);
  ASSERT_EQ(live.size(), 1u) << traced.out;
  ASSERT_EQ(again.size(), 1u) << reported.out;
  EXPECT_EQ(live[0]["new_path"], disk.file("f"));
  EXPECT_EQ(again[0]["name_path"], live[0]["name_path"]);
  EXPECT_EQ(again[0]["new_path"], live[0]["new_path"]);
  EXPECT_EQ(again[0]["hazards"], live[0]["hazards"]);
  EXPECT_EQ(live[0]["hazards"].size(), 2u) << live[0].dump();
}

}  // namespace
