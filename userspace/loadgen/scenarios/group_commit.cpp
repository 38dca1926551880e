// SPDX-License-Identifier: Apache-2.0
// group-commit: threads appending records to one log, each record durable before its thread
// goes on. Per record, every record pays a whole fsync; with a group-commit leader, the records
// that queued up while one fsync ran share the next one.
#include <fcntl.h>
#include <fmt/format.h>

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "common/units.h"
#include "loadgen/context.h"
#include "loadgen/measure.h"
#include "loadgen/scenarios/scenarios.h"

namespace wp::loadgen {
namespace {

struct ModeFigures {
  std::uint64_t records = 0;
  std::uint64_t fsyncs = 0;
  Nanos elapsed_ns = 0;
  LatencySummary commit;
};

// What the appending threads share: the log, its tail, the group-commit queue, and the first
// failure of any thread. A failure (an I/O error, or the user's interrupt) stops every thread;
// the caller rethrows it after joining, since an exception must not leave a std::thread.
struct SharedLog {
  explicit SharedLog(int log_fd) : fd(log_fd) {}

  const int fd;
  std::mutex mutex;
  std::condition_variable changed;
  // Everything below is under `mutex`.
  std::uint64_t tail = 0;    // where the next bytes go
  std::uint64_t fsyncs = 0;  // made so far
  // Group commit: bytes queued for the next flush, records ever queued and made durable
  // (numbered from 1), whether a leader is writing and fsyncing now.
  std::vector<char> queue;
  std::uint64_t queued = 0;
  std::uint64_t durable = 0;
  bool leader_busy = false;
  std::exception_ptr failure;

  bool stopped() const { return failure != nullptr; }
  void fail(std::exception_ptr e) {
    if (!failure) failure = e;
    changed.notify_all();
  }
};

// Runs `body(thread_index, commit_latencies)` on `threads` threads; returns all latencies.
template <typename Body>
std::vector<Nanos> run_threads(SharedLog& log, std::uint64_t threads, Body body) {
  std::vector<std::vector<Nanos>> latencies(threads);
  std::vector<std::thread> workers;
  for (std::uint64_t t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      name_this_thread(fmt::format("committer-{}", t));
      try {
        body(t, latencies[t]);
      } catch (...) {
        std::lock_guard lock(log.mutex);
        log.fail(std::current_exception());
      }
    });
  for (auto& worker : workers) worker.join();
  if (log.failure) std::rethrow_exception(log.failure);  // joined: no other thread touches it
  std::vector<Nanos> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  return all;
}

class GroupCommit : public Scenario {
 public:
  std::string name() const override { return "group-commit"; }
  std::string summary() const override {
    return "threads append durable records: one fsync each vs a group-commit leader";
  }
  std::vector<Param> params() override {
    return {{"threads", "appending threads", ParamKind::Count, &threads_, 1, 64},
            {"records", "records per thread", ParamKind::Count, &records_, 1, 100'000},
            {"record", "bytes per record", ParamKind::Size, &record_, 1, 1u << 20}};
  }
  // The two modes write a log each.
  std::uint64_t space_needed() const override { return 2 * threads_ * records_ * record_; }

  ScenarioResult run(LoadContext& ctx) override {
    auto phase = ctx.measured_phase("group-commit");  // all of the run is measured
    const ModeFigures per_record = run_mode(ctx, false);
    const ModeFigures group = run_mode(ctx, true);

    ScenarioResult r;
    r.figures["threads"] = threads_;
    r.figures["records_per_thread"] = records_;
    r.figures["record_bytes"] = record_;
    r.figures["per_record"] = mode_json(per_record);
    r.figures["group"] = mode_json(group);
    r.figures["speedup"] = records_per_s(group) / records_per_s(per_record);
    for (const auto& [label, m] : {std::pair{"per-record", per_record}, std::pair{"group", group}})
      r.lines.push_back(fmt::format(
          "{:<10} {:>8.0f} records/s, {} fsyncs for {} records ({:.2f} records per fsync), "
          "commit p50 {}, p99 {}",
          label, records_per_s(m), m.fsyncs, m.records,
          static_cast<double>(m.records) / static_cast<double>(m.fsyncs),
          human_duration(m.commit.p50), human_duration(m.commit.p99)));
    r.lines.push_back(fmt::format("group commit: {:.1f}× the records per second with {} threads",
                                  records_per_s(group) / records_per_s(per_record), threads_));
    return r;
  }

 private:
  static double records_per_s(const ModeFigures& m) {
    return m.elapsed_ns ? static_cast<double>(m.records) / (static_cast<double>(m.elapsed_ns) / 1e9)
                        : 0.0;
  }

  static nlohmann::ordered_json mode_json(const ModeFigures& m) {
    nlohmann::ordered_json j;
    j["records"] = m.records;
    j["fsyncs"] = m.fsyncs;
    j["fsyncs_per_record"] = static_cast<double>(m.fsyncs) / static_cast<double>(m.records);
    j["elapsed_ns"] = m.elapsed_ns;
    j["records_per_s"] = records_per_s(m);
    j["commit_p50_ns"] = m.commit.p50;
    j["commit_p99_ns"] = m.commit.p99;
    j["commit_max_ns"] = m.commit.max;
    return j;
  }

  ModeFigures run_mode(LoadContext& ctx, bool group) {
    auto path = ctx.workspace().path(group ? "group-commit-group.log" : "group-commit-single.log");
    UniqueFd fd = open_file(path, O_WRONLY | O_CREAT | O_TRUNC);
    SharedLog log(fd.get());
    Stopwatch elapsed;
    std::vector<Nanos> latencies = run_threads(log, threads_, [&](std::uint64_t t, auto& out) {
      std::vector<char> record(record_);
      fill_pattern(record, 100 + t);
      out.reserve(records_);
      for (std::uint64_t i = 0; i < records_; ++i) {
        ctx.check_interrupt();
        Stopwatch commit;
        if (group ? !append_grouped(log, record) : !append_alone(log, record)) return;
        out.push_back(commit.elapsed_ns());
      }
    });
    ModeFigures m;
    m.elapsed_ns = elapsed.elapsed_ns();
    m.records = threads_ * records_;
    m.fsyncs = log.fsyncs;
    m.commit = summarize(std::move(latencies));
    if (log.tail != m.records * record_)
      throw LoadError(
          fmt::format("the log holds {} bytes, {} expected", log.tail, m.records * record_));
    return m;
  }

  // The classic: the log mutex is held across the write and its fsync, so each record waits
  // for an fsync of its own and no two overlap. Returns false when the run is stopping.
  static bool append_alone(SharedLog& log, const std::vector<char>& record) {
    std::lock_guard lock(log.mutex);
    if (log.stopped()) return false;
    write_all(log.fd, record.data(), record.size(), static_cast<off_t>(log.tail));
    log.tail += record.size();
    fsync_or_throw(log.fd);
    ++log.fsyncs;
    return true;
  }

  // Group commit. The thread queues its record and waits until a flush covers it; whenever no
  // flush is running, a waiting thread becomes the leader: it takes everything queued, writes
  // it with one write and one fsync outside the mutex (so others keep queueing meanwhile), then
  // wakes the owners. Returns false when the run is stopping.
  static bool append_grouped(SharedLog& log, const std::vector<char>& record) {
    std::unique_lock lock(log.mutex);
    if (log.stopped()) return false;
    log.queue.insert(log.queue.end(), record.begin(), record.end());
    const std::uint64_t mine = ++log.queued;
    while (log.durable < mine) {
      if (log.stopped()) return false;
      if (log.leader_busy) {
        log.changed.wait(lock);
        continue;
      }
      log.leader_busy = true;
      std::vector<char> batch;
      batch.swap(log.queue);
      const std::uint64_t last = log.queued;
      const std::uint64_t offset = log.tail;
      log.tail += batch.size();
      lock.unlock();
      try {
        write_all(log.fd, batch.data(), batch.size(), static_cast<off_t>(offset));
        fsync_or_throw(log.fd);
      } catch (...) {
        lock.lock();
        log.leader_busy = false;  // the caller's fail() wakes the waiters
        throw;
      }
      lock.lock();
      ++log.fsyncs;
      log.durable = last;
      log.leader_busy = false;
      log.changed.notify_all();
    }
    return true;
  }

  std::uint64_t threads_ = 4;
  std::uint64_t records_ = 100;
  std::uint64_t record_ = 512;
};

}  // namespace

std::unique_ptr<Scenario> make_group_commit() {
  return std::make_unique<GroupCommit>();
}

}  // namespace wp::loadgen
