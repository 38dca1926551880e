// SPDX-License-Identifier: Apache-2.0
// wal: a write-ahead log that makes every record durable before it returns. Each small append
// costs a whole fsync round trip (writeback, journal commit, cache flush), not its few bytes.
#include <fcntl.h>
#include <fmt/format.h>

#include <vector>

#include "common/units.h"
#include "loadgen/context.h"
#include "loadgen/measure.h"
#include "loadgen/scenarios/scenarios.h"

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
    auto phase = ctx.measured_phase("wal-writer");  // all of the run is measured
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

 private:
  std::uint64_t count_ = 200;
  std::uint64_t record_ = 4096;
};

}  // namespace

std::unique_ptr<Scenario> make_wal() {
  return std::make_unique<Wal>();
}

}  // namespace wp::loadgen
