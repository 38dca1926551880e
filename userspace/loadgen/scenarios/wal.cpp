// wal: a write-ahead log that makes every record durable before it returns. Each small append
// costs a whole fsync round trip (writeback, journal commit, cache flush), not its few bytes.
#include <fcntl.h>
#include <fmt/format.h>

#include <array>
#include <vector>

#include "loadgen/context.h"
#include "loadgen/measure.h"
#include "loadgen/scenarios/scenarios.h"
#include "sinks/units.h"

namespace wp::loadgen {
namespace {

class Wal : public Scenario {
 public:
  std::string name() const override { return "wal"; }
  std::string summary() const override {
    return "a log that fsyncs every small record: the fixed cost of one fsync";
  }
  std::vector<Param> params() override {
    return {{"count", "records appended, each written and fsynced", ParamKind::Count, &count_, 1,
             1'000'000},
            {"record", "bytes per record", ParamKind::Size, &record_, 1, 16u << 20}};
  }
  std::uint64_t space_needed() const override { return count_ * record_; }

  ScenarioResult run(LoadContext& ctx) override {
    auto path = ctx.workspace().path("wal.log");
    UniqueFd fd = open_file(path, O_WRONLY | O_CREAT | O_TRUNC);
    std::vector<char> record(record_);
    fill_pattern(record, 2);

    std::vector<Nanos> op_ns, write_ns, fsync_ns;
    op_ns.reserve(count_);
    write_ns.reserve(count_);
    fsync_ns.reserve(count_);
    auto progress = ctx.progress("wal", count_);
    Stopwatch total;
    for (std::uint64_t i = 0; i < count_; ++i) {
      ctx.check_interrupt();
      Stopwatch op;
      write_all(fd.get(), record.data(), record.size(), static_cast<off_t>(i * record_));
      const Nanos written = op.elapsed_ns();
      fsync_or_throw(fd.get());
      const Nanos done = op.elapsed_ns();
      op_ns.push_back(done);
      write_ns.push_back(written);
      fsync_ns.push_back(done - written);
      progress.update(i + 1);
    }
    const Nanos total_ns = total.elapsed_ns();
    const LatencySummary ops = summarize(op_ns);
    const LatencySummary writes = summarize(write_ns);
    const LatencySummary fsyncs = summarize(fsync_ns);
    const double ops_per_s = static_cast<double>(count_) / (static_cast<double>(total_ns) / 1e9);

    ScenarioResult r;
    r.figures["count"] = count_;
    r.figures["record_bytes"] = record_;
    r.figures["total_ns"] = total_ns;
    r.figures["ops_per_s"] = ops_per_s;
    r.figures["op_p50_ns"] = ops.p50;
    r.figures["op_p99_ns"] = ops.p99;
    r.figures["op_max_ns"] = ops.max;
    r.figures["op_mean_ns"] = ops.mean;
    r.figures["write_p50_ns"] = writes.p50;
    r.figures["fsync_p50_ns"] = fsyncs.p50;
    r.figures["fsync_p99_ns"] = fsyncs.p99;
    r.lines.push_back(fmt::format("{} × ({} B write + fsync) in {}: {:.0f} ops/s", count_, record_,
                                  human_duration(total_ns), ops_per_s));
    r.lines.push_back(fmt::format("per op: p50 {}, p99 {}, max {}", human_duration(ops.p50),
                                  human_duration(ops.p99), human_duration(ops.max)));
    r.lines.push_back(fmt::format("of which the write p50 {}, the fsync p50 {}",
                                  human_duration(writes.p50), human_duration(fsyncs.p50)));
    return r;
  }

  std::vector<std::string> explain(const ScenarioResult& result,
                                   const std::vector<Timeline>& timelines) const override {
    std::vector<Nanos> latency;
    std::array<std::vector<Nanos>, kSyncPhaseCount> phase_ns;  // indexed by SyncPhase
    Nanos all_ns = 0, flush_journal_ns = 0;
    std::size_t with_flush = 0, with_commit = 0;
    for (const auto& item : timelines) {
      const auto* sync = std::get_if<SyncTimeline>(&item);
      if (!sync || sync->call.syscall != Syscall::Fsync) continue;
      const SyncPhases& p = sync->phases;
      latency.push_back(latency_ns(sync->call));
      for (const SyncPhaseInfo& phase : kSyncPhases)
        phase_ns[static_cast<std::size_t>(phase.phase)].push_back(p.*phase.total);
      all_ns += latency.back();
      flush_journal_ns += p.flush_ns + p.journal_ns;
      with_flush += !sync->flushes.empty();
      with_commit += !sync->commits.empty();
    }
    std::vector<std::string> out;
    out.push_back(fmt::format("{} fsyncs traced (the log made {})", latency.size(),
                              result.figures.value("count", std::uint64_t{0})));
    if (latency.empty()) return out;
    std::string p50s;
    for (const SyncPhaseInfo& phase : kSyncPhases) {
      p50s += fmt::format(
          "{}{} {}", p50s.empty() ? "" : ", ", phase.text_name,
          human_duration(summarize(phase_ns[static_cast<std::size_t>(phase.phase)]).p50));
    }
    out.push_back(fmt::format("per fsync, p50 of each phase: {} (fsync p50 {})", p50s,
                              human_duration(summarize(latency).p50)));
    out.push_back(fmt::format(
        "journal + flush: {:.0f}% of all fsync time — the fixed round trip, whatever the record "
        "size",
        all_ns ? 100.0 * static_cast<double>(flush_journal_ns) / static_cast<double>(all_ns)
               : 0.0));
    out.push_back(fmt::format("{} of them waited for a journal commit, {} for a cache flush",
                              with_commit, with_flush));
    out.push_back(durable_writes_line(timelines));
    return out;
  }

 private:
  std::uint64_t count_ = 200;
  std::uint64_t record_ = 4096;
};

}  // namespace

std::unique_ptr<Scenario> make_wal() {
  return std::make_unique<Wal>();
}

}  // namespace wp::loadgen
