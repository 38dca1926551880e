// dirty-throttle: "a log write sometimes stalls for hundreds of ms". With the dirty limits
// lowered, a writer flooding the page cache is throttled in balance_dirty_pages, and a logger
// appending a short line now and then shares the same dirty memory, journal and device.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "loadgen/context.h"
#include "loadgen/measure.h"
#include "loadgen/scenarios/scenarios.h"
#include "sinks/units.h"

namespace wp::loadgen {
namespace {

constexpr std::uint64_t kFloodWrite = 1u << 20;
// The flood overwrites a file of at most this size in a loop: the throttling depends on the
// rate pages are dirtied, not on how much room the file takes.
constexpr std::uint64_t kFloodFileMax = 256u << 20;
constexpr std::uint64_t kLogLineMax = 64;
constexpr std::size_t kSlowestShown = 5;

const std::vector<std::string> kDirtyKnobs = {
    "vm/dirty_bytes", "vm/dirty_ratio", "vm/dirty_background_bytes", "vm/dirty_background_ratio"};

void write_proc_sys(const std::string& name, const std::string& value) {
  const std::string path = "/proc/sys/" + name;
  UniqueFd fd = open_file(path, O_WRONLY | O_TRUNC);
  const std::string text = value + "\n";
  if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    throw LoadError(fmt::format("cannot write {} = {}: {}", path, value, std::strerror(errno)));
}

// Sets one vm.dirty_*_bytes for its lifetime. The kernel keeps only one of each bytes/ratio
// pair in force: writing the bytes zeroes the ratio, writing the ratio zeroes the bytes, and
// *_bytes refuses 0. So the old state comes back by writing whichever of the pair was in
// force before: the bytes if they were non-zero, the ratio otherwise (which zeroes the bytes).
class DirtyLimitOverride {
 public:
  DirtyLimitOverride(std::string bytes_knob, std::string ratio_knob, std::uint64_t bytes)
      : bytes_knob_(std::move(bytes_knob)),
        ratio_knob_(std::move(ratio_knob)),
        old_bytes_(read_sysctl(bytes_knob_)),
        old_ratio_(read_sysctl(ratio_knob_)) {
    write_proc_sys(bytes_knob_, std::to_string(bytes));
  }
  ~DirtyLimitOverride() {
    const bool bytes_in_force = old_bytes_ != "0";
    const std::string& knob = bytes_in_force ? bytes_knob_ : ratio_knob_;
    const std::string& value = bytes_in_force ? old_bytes_ : old_ratio_;
    try {
      write_proc_sys(knob, value);
    } catch (const LoadError&) {
      fmt::print(stderr, "writepath: could not restore /proc/sys/{} to {}\n", knob, value);
    }
  }
  DirtyLimitOverride(const DirtyLimitOverride&) = delete;
  DirtyLimitOverride& operator=(const DirtyLimitOverride&) = delete;

 private:
  std::string bytes_knob_;
  std::string ratio_knob_;
  std::string old_bytes_;
  std::string old_ratio_;
};

std::map<std::string, std::string> read_dirty_knobs() {
  std::map<std::string, std::string> values;
  for (const auto& knob : kDirtyKnobs) values[knob] = read_sysctl(knob);
  return values;
}

nlohmann::ordered_json knobs_json(const std::map<std::string, std::string>& values) {
  nlohmann::ordered_json j;
  for (const auto& knob : kDirtyKnobs) j[knob.substr(knob.find('/') + 1)] = values.at(knob);
  return j;
}

// The first failure among the threads, and the flag that tells the others to stop.
class ThreadFailure {
 public:
  void record(std::exception_ptr error) {
    std::lock_guard lock(mutex_);
    if (!first_) first_ = error;
    stop_ = true;
  }
  void request_stop() { stop_ = true; }
  bool stopping() const { return stop_; }
  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr first_;
  std::atomic<bool> stop_{false};
};

struct FloodFigures {
  std::uint64_t bytes = 0;
  Nanos ns = 0;
};

struct LoggerFigures {
  std::vector<Nanos> latencies;
  std::uint64_t dirty_peak_bytes = 0;
};

class DirtyThrottle : public Scenario {
 public:
  std::string name() const override { return "dirty-throttle"; }
  std::string summary() const override {
    return "lowered dirty limits: a flooding writer is throttled and a logger's writes stall";
  }
  std::vector<Param> params() override {
    return {
        {"dirty-limit", "vm.dirty_bytes during the run", ParamKind::Size, &dirty_limit_, 4u << 20,
         64ull << 30},
        {"background", "vm.dirty_background_bytes during the run", ParamKind::Size, &background_,
         1u << 20, 64ull << 30},
        {"flood", "bytes the background writer writes (1 MiB writes)", ParamKind::Size, &flood_,
         kFloodWrite, 1ull << 40},
        {"interval", "time between the logger's appends", ParamKind::Duration, &interval_, 100'000,
         10'000'000'000},
        {"duration", "how long the logger appends", ParamKind::Duration, &duration_, 10'000'000,
         3'600'000'000'000},
    };
  }
  bool needs_root() const override { return true; }
  std::uint64_t space_needed() const override {
    return flood_file_bytes() + (duration_ / interval_ + 1) * kLogLineMax + 4096;
  }
  std::string validate() const override {
    if (background_ >= dirty_limit_) return "--background must be below --dirty-limit";
    if (interval_ > duration_) return "--interval is longer than --duration";
    return "";
  }

  ScenarioResult run(LoadContext& ctx) override {
    const auto flood_path = ctx.workspace().path("flood.dat");
    const auto log_path = ctx.workspace().path("app.log");
    const auto knobs_before = read_dirty_knobs();
    FloodFigures flood;
    LoggerFigures logger;
    logger.latencies.reserve(duration_ / interval_ + 16);
    {
      // Background first, so the restore (reverse order) puts the limit back first: the
      // kernel copes with any order, the log of a failed restore reads better this way.
      DirtyLimitOverride background("vm/dirty_background_bytes", "vm/dirty_background_ratio",
                                    background_);
      DirtyLimitOverride limit("vm/dirty_bytes", "vm/dirty_ratio", dirty_limit_);
      ThreadFailure failure;
      {
        std::jthread flood_thread([&] {
          try {
            flood = run_flood(ctx, flood_path, failure);
          } catch (...) {
            failure.record(std::current_exception());
          }
        });
        std::jthread logger_thread([&] {
          try {
            run_logger(ctx, log_path, failure, logger);
          } catch (...) {
            failure.record(std::current_exception());
          }
          failure.request_stop();  // the flood only runs while the logger logs
        });
      }  // both join here, before the limits are restored
      failure.rethrow();
    }
    const auto knobs_after = read_dirty_knobs();

    const LatencySummary log = summarize(logger.latencies);
    ScenarioResult r;
    r.figures["dirty_limit_bytes"] = dirty_limit_;
    r.figures["dirty_background_bytes"] = background_;
    r.figures["duration_ns"] = duration_;
    r.figures["interval_ns"] = interval_;
    r.figures["appends"] = log.count;
    r.figures["log_p50_ns"] = log.p50;
    r.figures["log_p99_ns"] = log.p99;
    r.figures["log_max_ns"] = log.max;
    r.figures["log_mean_ns"] = log.mean;
    r.figures["dirty_peak_bytes"] = logger.dirty_peak_bytes;
    r.figures["flood_bytes"] = flood.bytes;
    r.figures["flood_ns"] = flood.ns;
    r.figures["flood_mib_s"] = mib_per_s(flood.bytes, flood.ns);
    r.figures["flood_file_bytes"] = flood_file_bytes();
    r.figures["sysctl_before"] = knobs_json(knobs_before);
    r.figures["sysctl_after"] = knobs_json(knobs_after);
    r.figures["sysctl_restored"] = knobs_before == knobs_after;

    r.lines.push_back(fmt::format("dirty limits for the run: {} (background {})",
                                  human_bytes(dirty_limit_), human_bytes(background_)));
    r.lines.push_back(fmt::format("flood: {} in 1 MiB writes, {:.0f} MiB/s; Dirty peaked at {}",
                                  human_bytes(flood.bytes), mib_per_s(flood.bytes, flood.ns),
                                  human_bytes(logger.dirty_peak_bytes)));
    r.lines.push_back(fmt::format("logger: {} appends every {}: p50 {}, p99 {}, max {}", log.count,
                                  human_duration(interval_), human_duration(log.p50),
                                  human_duration(log.p99), human_duration(log.max)));
    r.lines.push_back(knobs_before == knobs_after
                          ? "dirty sysctls restored"
                          : "dirty sysctls NOT restored: check vm.dirty_* by hand");
    return r;
  }

  std::vector<std::string> explain(const ScenarioResult&,
                                   const std::vector<Timeline>& timelines) const override {
    // The logger appends with write(2), the flood with pwrite64 (write_all): the syscall
    // tells them apart. Only writes on the flood's filesystem count: the sysctl writes to
    // /proc are write(2)s to regular files too.
    std::optional<DevT> scratch_dev;
    for (const auto& item : timelines)
      if (const auto* w = std::get_if<WriteTimeline>(&item);
          w && w->call.syscall == Syscall::Pwrite64 && (w->call.file_flags & file_flag::kRegular))
        scratch_dev = w->call.dev;
    std::vector<const WriteTimeline*> log_writes;
    std::uint64_t flood_writes = 0, flood_pauses = 0;
    Nanos flood_throttle = 0, flood_time = 0, longest_flood_throttle = 0;
    std::optional<Nanos> origin;
    for (const auto& item : timelines) {
      const auto* w = std::get_if<WriteTimeline>(&item);
      if (!w || w->call.dev != scratch_dev) continue;
      origin = std::min(origin.value_or(w->call.start_ns), w->call.start_ns);
      if (w->call.syscall == Syscall::Write) {
        log_writes.push_back(w);
      } else if (w->call.syscall == Syscall::Pwrite64) {
        ++flood_writes;
        flood_pauses += w->call.throttle_events;
        flood_throttle += w->call.throttle_ns;
        flood_time += latency_ns(w->call);
        longest_flood_throttle = std::max(longest_flood_throttle, w->call.throttle_ns);
      }
    }
    std::vector<std::string> out;
    out.push_back(fmt::format(
        "flood writer: {} writes, throttled {} in all ({} balance_dirty_pages pauses, {:.0f}% of "
        "its time in write), at most {} in one write",
        flood_writes, human_duration(flood_throttle), flood_pauses,
        flood_time ? 100.0 * static_cast<double>(flood_throttle) / static_cast<double>(flood_time)
                   : 0.0,
        human_duration(longest_flood_throttle)));

    auto latency = [](const WriteTimeline* w) { return latency_ns(w->call); };
    std::sort(log_writes.begin(), log_writes.end(),
              [&](const auto* a, const auto* b) { return latency(a) > latency(b); });
    out.push_back(fmt::format("logger: {} appends traced; the slowest:", log_writes.size()));
    std::size_t throttled = 0;
    Nanos waited_elsewhere = 0;
    for (std::size_t i = 0; i < std::min(kSlowestShown, log_writes.size()); ++i) {
      const SyscallEvent& call = log_writes[i]->call;
      const Nanos total = latency(log_writes[i]);
      const Nanos other = total > call.throttle_ns ? total - call.throttle_ns : 0;
      throttled += call.throttle_ns > 0;
      waited_elsewhere += other;
      std::string line =
          fmt::format("  at +{}: {} B in {}: throttled {} ({} pauses)",
                      human_duration(call.start_ns - *origin), call.count, human_duration(total),
                      human_duration(call.throttle_ns), call.throttle_events);
      // With the off-CPU causes (the demo asks for them) "elsewhere" gets its names.
      if (const auto& c = log_writes[i]->causes) {
        line += fmt::format(
            "; on CPU {}, asleep throttled {}, waiting on writeback {}, "
            "blocked {}, runnable {}",
            human_duration(c->on_cpu_ns), human_duration(c->throttle_ns),
            human_duration(c->writeback_wait_ns), human_duration(c->blocked_ns),
            human_duration(c->runnable_ns));
      } else {
        line += fmt::format(", {} elsewhere", human_duration(other));
      }
      out.push_back(std::move(line));
    }
    if (!log_writes.empty()) {
      out.push_back(
          throttled == 0
              ? fmt::format("the logger was never throttled itself in those: its {} went to "
                            "waiting on something else (the journal, a page under writeback, "
                            "the device queue the flood fills)",
                            human_duration(waited_elsewhere))
              : fmt::format("the logger itself was throttled in {} of them; {} of their time "
                            "went elsewhere",
                            throttled, human_duration(waited_elsewhere)));
    }
    return out;
  }

 private:
  std::uint64_t flood_file_bytes() const { return std::min(flood_, kFloodFileMax); }

  // 1 MiB buffered writes over a file of flood_file_bytes(), looping, until --flood bytes are
  // written or the logger is done.
  FloodFigures run_flood(const LoadContext& ctx, const std::filesystem::path& path,
                         const ThreadFailure& failure) const {
    UniqueFd fd = open_file(path, O_WRONLY | O_CREAT | O_TRUNC);
    std::vector<char> block(kFloodWrite);
    fill_pattern(block, 3);
    const std::uint64_t file_bytes = flood_file_bytes();
    FloodFigures figures;
    Stopwatch time;
    while (figures.bytes < flood_ && !failure.stopping()) {
      ctx.check_interrupt();
      const std::uint64_t offset = figures.bytes % file_bytes;
      const std::uint64_t size =
          std::min({kFloodWrite, flood_ - figures.bytes, file_bytes - offset});
      write_all(fd.get(), block.data(), size, static_cast<off_t>(offset));
      figures.bytes += size;
    }
    figures.ns = time.elapsed_ns();
    return figures;
  }

  // A short line appended every --interval for --duration, each write(2) timed.
  void run_logger(const LoadContext& ctx, const std::filesystem::path& path,
                  const ThreadFailure& failure, LoggerFigures& figures) const {
    using Clock = std::chrono::steady_clock;
    UniqueFd fd = open_file(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND);
    const auto start = Clock::now();
    const auto end = start + std::chrono::nanoseconds(duration_);
    auto next = start;
    for (std::uint64_t seq = 0; Clock::now() < end && !failure.stopping(); ++seq) {
      ctx.check_interrupt();
      const std::string line =
          fmt::format("{:>8} +{:.3f}s request served\n", seq,
                      std::chrono::duration<double>(Clock::now() - start).count());
      Stopwatch time;
      ssize_t n;
      do {
        n = ::write(fd.get(), line.data(), line.size());
      } while (n < 0 && errno == EINTR);
      const Nanos latency = time.elapsed_ns();
      if (n != static_cast<ssize_t>(line.size()))
        throw LoadError(fmt::format("log append: {}", n < 0 ? std::strerror(errno) : "short"));
      figures.latencies.push_back(latency);
      figures.dirty_peak_bytes = std::max(figures.dirty_peak_bytes, meminfo_bytes("Dirty"));
      // A stalled append does not cause a burst of catch-up appends after it.
      next = std::max(next + std::chrono::nanoseconds(interval_), Clock::now());
      while (Clock::now() < next) {  // in short naps: Ctrl-C is seen within 100ms
        std::this_thread::sleep_until(
            std::min(next, Clock::now() + std::chrono::milliseconds(100)));
        ctx.check_interrupt();
      }
    }
  }

  std::uint64_t dirty_limit_ = 64u << 20;
  std::uint64_t background_ = 32u << 20;
  std::uint64_t flood_ = 1ull << 30;
  std::uint64_t interval_ = 10'000'000;
  std::uint64_t duration_ = 5'000'000'000;
};

}  // namespace

std::unique_ptr<Scenario> make_dirty_throttle() {
  return std::make_unique<DirtyThrottle>();
}

}  // namespace wp::loadgen
