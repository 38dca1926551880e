// SPDX-License-Identifier: Apache-2.0
// noisy-neighbour: "whose I/O made my fsync slow?". A write-ahead log appends a 4 KiB record
// and fdatasyncs it, again and again, on the same file system as a bulk writer (a backup, a
// compaction, a log shipper) that dirties a large file in buffered 1 MiB writes and then syncs
// it. Alone, each fdatasync costs one small write and a journal commit; beside the bulk's
// sync it queues behind hundreds of MiB of the neighbour's data on the same device, and its
// journal commit can wait for the neighbour's newly allocated blocks too.
//
// Each writer is a child process of its own, named (wal-writer, bulk-writer) and in a cgroup of
// its own, as two services on one host are: a tracer can then tell whose requests the slow
// fdatasyncs waited behind, by comm, pid or cgroup. Three phases: the WAL alone, the bulk alone,
// then both: the bulk first, the WAL once the bulk has dirtied --wal-after percent of its bytes
// (all of them by default: as its sync begins), so that its fdatasyncs meet the bulk's
// write-back. On ext4 the first of them waits for the journal commit that carries the bulk's
// data, about the whole of the bulk's sync; those after it run at their usual speed, so the
// median moves only where the bulk keeps the device busy longer than the WAL runs (a host whose
// dirty limits start write-back during the bulk's writes: --wal-after below 100).
// Every child reports its own figures, /proc/self/io's write_bytes included, for tests to hold
// a tracer to.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "common/mount_path.h"
#include "common/units.h"
#include "common/wall_clock.h"
#include "loadgen/context.h"
#include "loadgen/measure.h"
#include "loadgen/scenarios/scenarios.h"

namespace wp::loadgen {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr std::uint64_t kWalRecordBytes = 4096;
// How long the parent waits between looks for Ctrl-C while a writer works.
constexpr int kReportPollMs = 100;
// A cgroup is busy for a moment after its last process is reaped (the kernel unlinks the
// exited task from its css_set asynchronously on some kernels): rmdir is retried this long.
constexpr auto kCgroupRemoveGrace = std::chrono::seconds(2);

enum class NeighbourRole { Wal, Bulk };
constexpr std::array<NeighbourRole, 2> kNeighbourRoles = {NeighbourRole::Wal, NeighbourRole::Bulk};

const char* role_word(NeighbourRole role) {
  return role == NeighbourRole::Wal ? "wal" : "bulk";
}

// Where the cgroup2 hierarchy is mounted whole (its root "/"), from /proc/self/mountinfo:
// /sys/fs/cgroup on a unified host, /sys/fs/cgroup/unified on a hybrid one; "" without cgroup2.
// (The agent's probe/cgroups.h has its own; the load generator builds on common/ alone.)
std::string find_cgroup2_mount() {
  std::ifstream mountinfo("/proc/self/mountinfo");
  for (std::string line; std::getline(mountinfo, line);) {
    // id parent major:minor root mount-point options [optional…] - type source super-options
    const auto separator = line.find(" - ");
    if (separator == std::string::npos) continue;
    std::istringstream before(line.substr(0, separator)), after(line.substr(separator + 3));
    std::string id, parent, device, root, mount_point, type;
    if (!(before >> id >> parent >> device >> root >> mount_point) || !(after >> type)) continue;
    if (type == "cgroup2" && root == "/") return unescape_mount_path(mount_point);
  }
  return "";
}

// The two cgroups of a run, writepath-nn-wal-PID and writepath-nn-bulk-PID (PID the load's),
// right under the cgroup2 root: made when the run starts, each phase's writer moved into its
// own, removed when the run ends (after the writers in them have been reaped), whatever the
// outcome. Where none can be made or joined (no cgroup2, cgroup v1 only, a hierarchy this
// process may not write), the writers run in the load's own cgroup and `skipped()` says why:
// the run still measures, only a tracer's --cgroup cannot tell them apart.
class NeighbourCgroups {
 public:
  NeighbourCgroups() : mount_(find_cgroup2_mount()) {
    if (mount_.empty()) {
      skipped_ = "no cgroup2 file system is mounted";
      return;
    }
    for (NeighbourRole role : kNeighbourRoles) {
      const std::string dir =
          fmt::format("{}/writepath-nn-{}-{}", mount_, role_word(role), ::getpid());
      if (::mkdir(dir.c_str(), 0755) != 0) {
        skipped_ = fmt::format("cannot make a cgroup under {}: {}", mount_, std::strerror(errno));
        remove();
        return;
      }
      dirs_[index(role)] = dir;
    }
  }
  ~NeighbourCgroups() { remove(); }
  NeighbourCgroups(const NeighbourCgroups&) = delete;
  NeighbourCgroups& operator=(const NeighbourCgroups&) = delete;

  bool active() const { return skipped_.empty(); }
  const std::string& skipped() const { return skipped_; }
  const std::string& mount() const { return mount_; }
  // The role's cgroup directory ("/sys/fs/cgroup/unified/writepath-nn-wal-7"); "" when inactive.
  const std::string& dir(NeighbourRole role) const { return dirs_[index(role)]; }

  // Moves `pid` into the role's cgroup. If the very first move fails (a hierarchy that lets
  // this process make directories but not migrate into them, as in some containers), the run
  // goes on without cgroups; a later failure, after a writer was placed, is the run's.
  void enter(NeighbourRole role, pid_t pid) {
    if (!active()) return;
    const std::string procs = dir(role) + "/cgroup.procs";
    const std::string text = std::to_string(pid);
    UniqueFd fd(::open(procs.c_str(), O_WRONLY | O_CLOEXEC));
    if (fd && ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size())) {
      placed_any_ = true;
      return;
    }
    const std::string why = std::strerror(errno);
    if (placed_any_)
      throw LoadError(fmt::format("cannot move pid {} into {}: {}", pid, procs, why));
    skipped_ = fmt::format("cannot move a writer into {}: {}", procs, why);
    remove();
  }

 private:
  static std::size_t index(NeighbourRole role) { return role == NeighbourRole::Wal ? 0 : 1; }

  void remove() noexcept {
    for (std::string& dir : dirs_) {
      if (dir.empty()) continue;
      const auto give_up = std::chrono::steady_clock::now() + kCgroupRemoveGrace;
      while (::rmdir(dir.c_str()) != 0 && errno == EBUSY &&
             std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (::access(dir.c_str(), F_OK) == 0)
        fmt::print(stderr, "writepath: could not remove the cgroup {}: {}\n", dir,
                   std::strerror(errno));
      dir.clear();
    }
  }

  std::string mount_;
  std::string skipped_;
  std::array<std::string, 2> dirs_;
  bool placed_any_ = false;
};

// The cgroup v2 path of the calling process, as /proc/self/cgroup's "0::" line says it.
std::string own_cgroup_path() {
  std::ifstream cgroup("/proc/self/cgroup");
  for (std::string line; std::getline(cgroup, line);)
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  return "";
}

// Sends one report line, whole, on a stream socket; the reader gone (its end closed) is the
// end of the child's run, and no SIGPIPE.
void send_report_line(int fd, const Json& report) {
  const std::string line = report.dump() + "\n";
  for (std::size_t sent = 0; sent < line.size();) {
    const ssize_t n = ::send(fd, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(3);
    sent += static_cast<std::size_t>(n);
  }
}

using ReportFn = std::function<void(const Json&)>;
// A writer's work, run in its child: it may report events on the way ({"event": "dirtied"})
// and returns its figures.
using WriterBody = std::function<Json(const ReportFn& report)>;

// One writer in a child process of its own, forked, named `comm` and held at a gate until the
// parent has moved it into its cgroup and lets it go: every page it dirties is then charged
// to that cgroup, from the first. It reports on a socket, one JSON object a line, its last
// {"event": "done", ...} with its figures, pid, comm, cgroup and /proc/self/io write_bytes
// read as it ends, or {"event": "failed", "error": ...}. Killed and reaped if still running
// when this goes (Ctrl-C, the other writer's failure).
class WriterProcess {
 public:
  WriterProcess(std::string comm, const WriterBody& body) : comm_(std::move(comm)) {
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
      throw LoadError(fmt::format("socketpair: {}", std::strerror(errno)));
    UniqueFd parent_end(ends[0]), child_end(ends[1]);
    pid_ = ::fork();
    if (pid_ < 0) throw LoadError(fmt::format("fork: {}", std::strerror(errno)));
    if (pid_ == 0) {
      parent_end.reset();
      run_child(child_end.get(), body);
    }
    socket_ = std::move(parent_end);
  }
  ~WriterProcess() {
    if (reaped_) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  WriterProcess(const WriterProcess&) = delete;
  WriterProcess& operator=(const WriterProcess&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& comm() const { return comm_; }

  void release() {
    const char go = 'g';
    if (::send(socket_.get(), &go, 1, MSG_NOSIGNAL) != 1)
      throw LoadError(fmt::format("{} (pid {}) went away before it started", comm_, pid_));
  }

  // Waits for the report of `event` (the writer's next), looking for Ctrl-C meanwhile. The
  // child's failure is thrown: Interrupted for its own Ctrl-C, LoadError otherwise. "done"
  // also reaps the child.
  Json await(const LoadContext& ctx, const std::string& event) {
    const Json report = next_report(ctx);
    if (report.value("event", "") == "failed") {
      reap();
      if (report.value("interrupted", false)) throw Interrupted();
      throw LoadError(fmt::format("{}: {}", comm_, report.value("error", "failed")));
    }
    if (report.value("event", "") != event)
      throw LoadError(fmt::format("{} reported {} where {} was due", comm_, report.dump(), event));
    if (event == "done") reap();
    return report;
  }

 private:
  [[noreturn]] void run_child(int socket, const WriterBody& body) {
    name_this_thread(comm_);
    char go = 0;
    ssize_t n;
    do {
      n = ::recv(socket, &go, 1, 0);
    } while (n < 0 && errno == EINTR);
    if (n != 1) ::_exit(2);  // the parent went away before letting it go
    const ReportFn report = [socket](const Json& line) { send_report_line(socket, line); };
    try {
      Json done = body(report);
      const ProcessCounters counters = process_counters();  // after its last write and sync
      done["event"] = "done";
      done["pid"] = ::getpid();
      done["comm"] = comm_;
      done["cgroup"] = own_cgroup_path();
      done["io_write_bytes"] = counters.io_accounted ? Json(counters.write_bytes) : Json(nullptr);
      report(done);
    } catch (const std::exception& e) {
      report({{"event", "failed"},
              {"error", e.what()},
              {"interrupted", dynamic_cast<const Interrupted*>(&e) != nullptr}});
      ::_exit(1);
    }
    // No destructors, no stdio flush: they are the parent's, copied by fork.
    ::_exit(0);
  }

  Json next_report(const LoadContext& ctx) {
    for (;;) {
      if (const auto end = pending_.find('\n'); end != std::string::npos) {
        Json report = Json::parse(pending_.substr(0, end), nullptr, /*allow_exceptions=*/false);
        pending_.erase(0, end + 1);
        if (report.is_discarded()) throw LoadError(fmt::format("{}: unreadable report", comm_));
        return report;
      }
      ctx.check_interrupt();
      pollfd ready{socket_.get(), POLLIN, 0};
      if (::poll(&ready, 1, kReportPollMs) <= 0) continue;
      char buffer[64 * 1024];
      const ssize_t n = ::recv(socket_.get(), buffer, sizeof(buffer), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw LoadError(fmt::format("{} (pid {}) {}", comm_, pid_, end_of(reap())));
      pending_.append(buffer, static_cast<std::size_t>(n));
    }
  }

  int reap() {
    int status = 0;
    if (!reaped_) {
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      reaped_ = true;
    }
    return status;
  }

  static std::string end_of(int status) {
    if (WIFSIGNALED(status)) return fmt::format("was killed by signal {}", WTERMSIG(status));
    return fmt::format("exited with status {} without a report", WEXITSTATUS(status));
  }

  std::string comm_;
  pid_t pid_ = -1;
  UniqueFd socket_;
  std::string pending_;
  bool reaped_ = false;
};

// What every writer's child says of itself.
struct WriterIdentity {
  pid_t pid = 0;
  std::string comm;
  std::string cgroup;      // its own /proc/self/cgroup
  std::string cgroup_dir;  // the directory it was moved into; "" without cgroups
  std::optional<std::uint64_t> io_write_bytes;

  static WriterIdentity of(const Json& done, const std::string& cgroup_dir) {
    WriterIdentity id;
    id.pid = done.value("pid", 0);
    id.comm = done.value("comm", "");
    id.cgroup = done.value("cgroup", "");
    id.cgroup_dir = cgroup_dir;
    if (done["io_write_bytes"].is_number()) id.io_write_bytes = done["io_write_bytes"];
    return id;
  }
  void add_to(nlohmann::ordered_json& figures) const {
    figures["pid"] = pid;
    figures["comm"] = comm;
    figures["cgroup"] = cgroup;
    figures["cgroup_dir"] = cgroup_dir;
    figures["io_write_bytes"] =
        io_write_bytes ? nlohmann::ordered_json(*io_write_bytes) : nlohmann::ordered_json(nullptr);
  }
};

struct WalRun {
  WriterIdentity id;
  std::vector<Nanos> started;  // CLOCK_MONOTONIC, each fdatasync's call
  std::vector<Nanos> latency;
};

struct BulkRun {
  WriterIdentity id;
  std::uint64_t bytes = 0;
  Nanos write_ns = 0;
  Nanos sync_started = 0;  // CLOCK_MONOTONIC
  Nanos sync_ns = 0;
};

struct TogetherRun {
  WalRun wal;
  BulkRun bulk;
  Nanos wal_start_after_ns = 0;  // from the bulk's release to the WAL's
};

nlohmann::ordered_json wal_json(const WalRun& run) {
  const LatencySummary s = summarize(run.latency);
  nlohmann::ordered_json j;
  run.id.add_to(j);
  j["fdatasync_count"] = s.count;
  j["fdatasync_p50_ns"] = s.p50;
  j["fdatasync_p99_ns"] = s.p99;
  j["fdatasync_max_ns"] = s.max;
  return j;
}

nlohmann::ordered_json bulk_json(const BulkRun& run) {
  nlohmann::ordered_json j;
  run.id.add_to(j);
  j["bytes"] = run.bytes;
  j["write_ns"] = run.write_ns;
  j["sync_ns"] = run.sync_ns;
  return j;
}

// "the bulk-writer's /proc io write_bytes 512.0 MiB" or where the kernel keeps none.
std::string io_text(const WriterIdentity& id) {
  return id.io_write_bytes
             ? fmt::format("its /proc io write_bytes {}", human_bytes(*id.io_write_bytes))
             : "no /proc/PID/io on this kernel";
}

// Writes back what the file system holds dirty and commits its journal: each phase starts on a
// quiet file system, not behind the previous one's leftovers.
void settle(const fs::path& dir) {
  UniqueFd fd = open_file(dir, O_RDONLY | O_DIRECTORY);
  if (::syncfs(fd.get()) != 0) throw LoadError(fmt::format("syncfs: {}", std::strerror(errno)));
}

enum BulkSync : std::uint64_t { kBulkFsync = 0, kBulkSyncAll = 1 };

class NoisyNeighbour : public Scenario {
 public:
  std::string name() const override { return "noisy-neighbour"; }
  std::string summary() const override {
    return "a WAL's fdatasyncs alone, then beside a bulk writer's sync, each in its own cgroup";
  }
  std::vector<Param> params() override {
    return {{"count", "WAL records, each a 4 KiB append then fdatasync (per WAL phase)",
             ParamKind::Count, &count_, 1, 1'000'000},
            {"bulk-size", "bytes the bulk writer writes in 1 MiB buffered writes (per bulk phase)",
             ParamKind::Size, &bulk_bytes_, kChunkBytes, 64ull << 30},
            {"wal-after",
             "percent of --bulk-size the bulk writer dirties before the WAL starts beside it (100: "
             "as its sync begins)",
             ParamKind::Count, &wal_after_percent_, 0, 100},
            {"bulk-sync",
             "how the bulk writer syncs its writes: fsync (its file) or sync (the machine)",
             ParamKind::Choice,
             &bulk_sync_,
             0,
             1,
             {"fsync", "sync"}}};
  }
  // The phases one after another: the bulk file is removed before the together phase writes it
  // again, the WAL file is rewritten.
  std::uint64_t space_needed() const override { return bulk_bytes_ + count_ * kWalRecordBytes; }

  ScenarioResult run(LoadContext& ctx) override {
    const fs::path wal_path = ctx.workspace().path("wal.log");
    const fs::path bulk_path = ctx.workspace().path("bulk.dat");
    const fs::path dir = ctx.workspace().dir();
    // Made before the writers and removed after they are reaped (declared first, gone last).
    NeighbourCgroups cgroups;
    WalRun wal_alone;
    BulkRun bulk_alone;
    TogetherRun together;
    {
      auto phase = ctx.measured_phase("noisy-neighbour");  // all three phases are measured
      wal_alone = run_wal_alone(ctx, cgroups, wal_path);
      settle(dir);
      bulk_alone = run_bulk_alone(ctx, cgroups, bulk_path);
      // Its blocks freed (the unlink committed) before the together phase allocates them again.
      fs::remove(bulk_path);
      settle(dir);
      together = run_together(ctx, cgroups, wal_path, bulk_path);
    }
    return report(cgroups, wal_alone, bulk_alone, together);
  }

 private:
  const char* sync_word() const { return bulk_sync_ == kBulkSyncAll ? "sync" : "fsync"; }

  WalRun run_wal_alone(const LoadContext& ctx, NeighbourCgroups& cgroups,
                       const fs::path& path) const {
    WriterProcess wal("wal-writer", [&](const ReportFn&) { return wal_body(ctx, path); });
    cgroups.enter(NeighbourRole::Wal, wal.pid());
    wal.release();
    return wal_run(wal.await(ctx, "done"), cgroups.dir(NeighbourRole::Wal));
  }

  BulkRun run_bulk_alone(const LoadContext& ctx, NeighbourCgroups& cgroups,
                         const fs::path& path) const {
    WriterProcess bulk("bulk-writer",
                       [&](const ReportFn& report) { return bulk_body(ctx, path, report); });
    cgroups.enter(NeighbourRole::Bulk, bulk.pid());
    bulk.release();
    bulk.await(ctx, "dirtied");
    return bulk_run(bulk.await(ctx, "done"), cgroups.dir(NeighbourRole::Bulk));
  }

  // The bulk writer first; the WAL once the bulk has dirtied --wal-after percent of its bytes,
  // so that the WAL's fdatasyncs queue behind the neighbour's write-back and then its sync.
  TogetherRun run_together(const LoadContext& ctx, NeighbourCgroups& cgroups,
                           const fs::path& wal_path, const fs::path& bulk_path) const {
    WriterProcess bulk("bulk-writer",
                       [&](const ReportFn& report) { return bulk_body(ctx, bulk_path, report); });
    WriterProcess wal("wal-writer", [&](const ReportFn&) { return wal_body(ctx, wal_path); });
    cgroups.enter(NeighbourRole::Bulk, bulk.pid());
    cgroups.enter(NeighbourRole::Wal, wal.pid());
    TogetherRun run;
    Stopwatch since_bulk;
    bulk.release();
    bulk.await(ctx, "dirtied");
    run.wal_start_after_ns = since_bulk.elapsed_ns();
    wal.release();
    run.wal = wal_run(wal.await(ctx, "done"), cgroups.dir(NeighbourRole::Wal));
    run.bulk = bulk_run(bulk.await(ctx, "done"), cgroups.dir(NeighbourRole::Bulk));
    return run;
  }

  // In the child: --count × (4 KiB append, fdatasync), each fdatasync timed.
  Json wal_body(const LoadContext& ctx, const fs::path& path) const {
    UniqueFd fd = open_file(path, O_WRONLY | O_CREAT | O_TRUNC);
    std::vector<char> record(kWalRecordBytes);
    fill_pattern(record, 5);
    std::vector<Nanos> started, latency;
    started.reserve(count_);
    latency.reserve(count_);
    for (std::uint64_t i = 0; i < count_; ++i) {
      ctx.check_interrupt();
      write_all(fd.get(), record.data(), record.size(), static_cast<off_t>(i * kWalRecordBytes));
      const Nanos start = monotonic_now();
      fdatasync_or_throw(fd.get());
      latency.push_back(monotonic_now() - start);
      started.push_back(start);
    }
    return {{"started_ns", started}, {"fdatasync_ns", latency}};
  }

  // In the child: --bulk-size in 1 MiB buffered writes, then one fsync of the file (or sync).
  // It reports "dirtied" once --wal-after percent of the bytes are written (at 100, as its sync
  // begins): the together phase starts the WAL then.
  Json bulk_body(const LoadContext& ctx, const fs::path& path, const ReportFn& report) const {
    UniqueFd fd = open_file(path, O_WRONLY | O_CREAT | O_TRUNC);
    std::vector<char> block(kChunkBytes);
    fill_pattern(block, 6);
    const std::uint64_t wal_point = bulk_bytes_ / 100 * wal_after_percent_;
    bool wal_point_reported = false;
    const Nanos write_start = monotonic_now();
    for (std::uint64_t done = 0; done < bulk_bytes_;) {
      ctx.check_interrupt();
      const std::uint64_t size = std::min(kChunkBytes, bulk_bytes_ - done);
      write_all(fd.get(), block.data(), size, static_cast<off_t>(done));
      done += size;
      if (!wal_point_reported && done >= wal_point) {
        report({{"event", "dirtied"}, {"bytes", done}});
        wal_point_reported = true;
      }
    }
    const Nanos sync_start = monotonic_now();
    if (bulk_sync_ == kBulkSyncAll)
      ::sync();  // cannot fail
    else
      fsync_or_throw(fd.get(), "fsync of the bulk file");
    const Nanos sync_end = monotonic_now();
    return {{"bytes", bulk_bytes_},
            {"write_ns", sync_start - write_start},
            {"sync_started_ns", sync_start},
            {"sync_ns", sync_end - sync_start}};
  }

  static WalRun wal_run(const Json& done, const std::string& cgroup_dir) {
    WalRun run;
    run.id = WriterIdentity::of(done, cgroup_dir);
    run.started = done["started_ns"].get<std::vector<Nanos>>();
    run.latency = done["fdatasync_ns"].get<std::vector<Nanos>>();
    return run;
  }

  static BulkRun bulk_run(const Json& done, const std::string& cgroup_dir) {
    BulkRun run;
    run.id = WriterIdentity::of(done, cgroup_dir);
    run.bytes = done.value("bytes", std::uint64_t{0});
    run.write_ns = done.value("write_ns", Nanos{0});
    run.sync_started = done.value("sync_started_ns", Nanos{0});
    run.sync_ns = done.value("sync_ns", Nanos{0});
    return run;
  }

  ScenarioResult report(const NeighbourCgroups& cgroups, const WalRun& wal_alone,
                        const BulkRun& bulk_alone, const TogetherRun& together) const {
    const LatencySummary alone = summarize(wal_alone.latency);
    const LatencySummary beside = summarize(together.wal.latency);
    // The WAL's fdatasyncs called before the bulk's sync returned: those that met its
    // write-back (the WAL starts after the bulk, so all of these overlap it).
    const Nanos bulk_end = together.bulk.sync_started + together.bulk.sync_ns;
    std::vector<Nanos> beside_bulk;
    for (std::size_t i = 0; i < together.wal.started.size(); ++i)
      if (together.wal.started[i] < bulk_end) beside_bulk.push_back(together.wal.latency[i]);
    const LatencySummary overlapped = summarize(beside_bulk);
    const double slowdown =
        alone.p50 ? static_cast<double>(beside.p50) / static_cast<double>(alone.p50) : 0.0;

    ScenarioResult r;
    r.figures["count"] = count_;
    r.figures["record_bytes"] = kWalRecordBytes;
    r.figures["bulk_bytes"] = bulk_bytes_;
    r.figures["bulk_sync"] = sync_word();
    r.figures["wal_after_percent"] = wal_after_percent_;
    r.figures["cgroup2_mount"] = cgroups.mount();
    r.figures["in_cgroups"] = cgroups.active();
    r.figures["cgroups_skipped"] = cgroups.skipped();
    r.figures["wal_alone"] = wal_json(wal_alone);
    r.figures["bulk_alone"] = bulk_json(bulk_alone);
    nlohmann::ordered_json both;
    both["wal"] = wal_json(together.wal);
    both["bulk"] = bulk_json(together.bulk);
    both["wal_start_after_ns"] = together.wal_start_after_ns;
    both["fdatasyncs_beside_bulk"] = overlapped.count;
    both["beside_bulk_p50_ns"] = overlapped.p50;
    both["beside_bulk_max_ns"] = overlapped.max;
    r.figures["together"] = both;
    r.figures["slowdown_p50"] = slowdown;

    if (cgroups.active())
      r.lines.push_back(fmt::format("cgroups: wal-writer in {}, bulk-writer in {} (cgroup2 at {})",
                                    together.wal.id.cgroup, together.bulk.id.cgroup,
                                    cgroups.mount()));
    else
      r.lines.push_back(fmt::format("no cgroups ({}): both writers run in the load's own cgroup {}",
                                    cgroups.skipped(), together.wal.id.cgroup));
    r.lines.push_back(fmt::format(
        "WAL alone: {} × (4 KiB append + fdatasync): median {}, p99 {}, max {}", alone.count,
        human_duration(alone.p50), human_duration(alone.p99), human_duration(alone.max)));
    r.lines.push_back(fmt::format(
        "bulk alone: wrote {} in {} ({:.0f} MiB/s), {} {}; {}", human_bytes(bulk_alone.bytes),
        human_duration(bulk_alone.write_ns), mib_per_s(bulk_alone.bytes, bulk_alone.write_ns),
        sync_word(), human_duration(bulk_alone.sync_ns), io_text(bulk_alone.id)));
    r.lines.push_back(fmt::format(
        "together: bulk-writer (pid {}) wrote {} in {}, then its {} took {}; wal-writer (pid {}) "
        "started at +{}, {}% dirtied",
        together.bulk.id.pid, human_bytes(together.bulk.bytes),
        human_duration(together.bulk.write_ns), sync_word(), human_duration(together.bulk.sync_ns),
        together.wal.id.pid, human_duration(together.wal_start_after_ns), wal_after_percent_));
    r.lines.push_back(
        fmt::format("together: fdatasync median {} (alone {}, ×{:.1f}), p99 {}, max {}",
                    human_duration(beside.p50), human_duration(alone.p50), slowdown,
                    human_duration(beside.p99), human_duration(beside.max)));
    r.lines.push_back(fmt::format(
        "  {} of the {} fdatasyncs began before the bulk's {} returned: median {}, max {}",
        overlapped.count, beside.count, sync_word(),
        overlapped.count ? human_duration(overlapped.p50) : "-",
        overlapped.count ? human_duration(overlapped.max) : "-"));
    r.lines.push_back(fmt::format(
        "/proc io write_bytes: wal-writer {}, bulk-writer {}",
        together.wal.id.io_write_bytes ? human_bytes(*together.wal.id.io_write_bytes) : "not kept",
        together.bulk.id.io_write_bytes ? human_bytes(*together.bulk.id.io_write_bytes)
                                        : "not kept"));
    return r;
  }

  std::uint64_t count_ = 200;
  std::uint64_t bulk_bytes_ = 1ull << 30;
  std::uint64_t wal_after_percent_ = 100;
  std::uint64_t bulk_sync_ = kBulkFsync;
};

}  // namespace

std::unique_ptr<Scenario> make_noisy_neighbour() {
  return std::make_unique<NoisyNeighbour>();
}

}  // namespace wp::loadgen
