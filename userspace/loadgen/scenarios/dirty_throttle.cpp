// SPDX-License-Identifier: Apache-2.0
// dirty-throttle: "a log write sometimes stalls for hundreds of ms". A writer floods the page
// cache under the system's own (generous) dirty limits; then the limits fall below what is
// dirty, as they do when available memory shrinks (vm.dirty_ratio is a share of it), and a
// logger appending a short line now and then waits in balance_dirty_pages with the flood until
// write-back brings the dirty pages back under the limit.
//
// Why the drop: below the hard limit the kernel paces each task in proportion to what it
// dirtied (pause = pages dirtied / task rate limit), so a logger dirtying one page now and then
// sleeps microseconds however hard the flood is throttled. Only over the hard limit is every
// writer's rate limit zero: it sleeps the longest pause (dirty pages over write-back bandwidth,
// capped at 200ms) and sleeps again while still over.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "common/units.h"
#include "loadgen/context.h"
#include "loadgen/measure.h"
#include "loadgen/scenarios/scenarios.h"

namespace wp::loadgen {
namespace {

constexpr std::uint64_t kFloodWrite = 1u << 20;
// The flood overwrites a file of at most this size in a loop: the throttling depends on the
// rate pages are dirtied, not on how much room the file takes. It must be well over the dirty
// limit, or the flood would only re-dirty pages that are dirty already.
constexpr std::uint64_t kFloodFileMax = 4ull << 30;
// The write-back speed is measured by writing and fsyncing this much of the flood file.
constexpr std::uint64_t kProbeBytes = 64u << 20;
// The chosen dirty limit holds this much write-back: a throttled writer's pause grows with the
// dirty pages over the write-back bandwidth (wb_max_pause, capped at 200ms), and ~0.8s of them
// make a pause of 100ms.
constexpr double kLimitSeconds = 2.0;
constexpr std::uint64_t kLimitMin = 16u << 20;
// The scratch device's own strict limit: a quarter second of its write-back, below what its
// write-back holds in flight (tens of MiB on a loop device), so its writers pause.
constexpr double kDeviceLimitSeconds = 0.25;
constexpr std::uint64_t kDeviceLimitMin = 16u << 20;
// The flood first dirties this much write-back over the hard limit the run then sets: the
// writers wait about that long for write-back to catch up, and the longest pause (at HZ=250,
// an eighth of the time the dirty pages take to write back, at most 200ms) is over 100ms
// while 0.8 s of write-back is dirty. Write-back faster than measured shortens both.
constexpr double kOverLimitSeconds = 2.0;
// What counts is what is still dirty or under write-back when the limits drop, not what was
// written: when other I/O on the machine has the system over its background limit, the
// flusher writes the flood file back while it is being dirtied. Where cachestat(2) tells the
// file's own pending pages, the preload runs on until they reach the target, looking every
// this many bytes (a cachestat of the flood file walks its page cache: up to 4 GiB of it).
constexpr std::uint64_t kPendingCheckBytes = 16u << 20;

const std::vector<std::string> kDirtyKnobs = {
    "vm/dirty_bytes", "vm/dirty_ratio", "vm/dirty_background_bytes", "vm/dirty_background_ratio"};

void write_knob(const std::string& path, const std::string& value) {
  UniqueFd fd = open_file(path, O_WRONLY | O_TRUNC);
  const std::string text = value + "\n";
  if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    throw LoadError(fmt::format("cannot write {} = {}: {}", path, value, std::strerror(errno)));
}

void write_proc_sys(const std::string& name, const std::string& value) {
  write_knob("/proc/sys/" + name, value);
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

// The sysfs directory of the BDI that holds `dir`, if it has the strict-limit knobs; "" if not.
std::string strict_limit_bdi(const std::filesystem::path& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return "";
  std::string bdi = fmt::format("/sys/class/bdi/{}:{}/", major(st.st_dev), minor(st.st_dev));
  for (const char* knob : {"strict_limit", "max_ratio", "max_bytes"})
    if (!std::filesystem::exists(bdi + knob)) return "";
  return bdi;
}

// The scratch filesystem's device (its BDI) given a strict limit of its own for its lifetime:
// strict_limit makes its writers throttled on the device's own dirty and under-writeback pages
// (the way FUSE devices always are), and max_bytes sets those below what its write-back keeps
// in flight: a flood that dirties pages no faster than they are written back (a small VM) is
// throttled all the same. A device without the knobs (before 6.2, or a --dir on another
// filesystem) runs with the vm.dirty_* limits alone.
class DeviceLimitOverride {
 public:
  DeviceLimitOverride(const std::string& bdi, std::uint64_t max_bytes) {
    std::ifstream strict(bdi + "strict_limit"), ratio(bdi + "max_ratio");
    if (bdi.empty() || !std::getline(strict, old_strict_) || !std::getline(ratio, old_max_ratio_))
      return;
    bdi_ = bdi;
    try {
      write_knob(bdi_ + "strict_limit", "1");
      write_knob(bdi_ + "max_bytes", std::to_string(max_bytes));
    } catch (const LoadError&) {
      restore();  // no destructor runs for a constructor that throws
      throw;
    }
  }
  ~DeviceLimitOverride() { restore(); }
  DeviceLimitOverride(const DeviceLimitOverride&) = delete;
  DeviceLimitOverride& operator=(const DeviceLimitOverride&) = delete;
  bool set() const { return !bdi_.empty(); }

 private:
  void restore() noexcept {
    if (bdi_.empty()) return;
    // max_bytes is stored as a ratio: writing the old ratio back restores it.
    for (const auto& [knob, value] : {std::pair{std::string("max_ratio"), old_max_ratio_},
                                      std::pair{std::string("strict_limit"), old_strict_}}) {
      try {
        write_knob(bdi_ + knob, value);
      } catch (const LoadError&) {
        fmt::print(stderr, "writepath: could not restore {}{} to {}\n", bdi_, knob, value);
      }
    }
  }

  std::string bdi_;
  std::string old_strict_;
  std::string old_max_ratio_;
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
  // The file's bytes dirty or under write-back at the end (cachestat); nullopt where unknown.
  std::optional<std::uint64_t> pending_bytes;
};

// Where a flood writes: `total` bytes from `start`, wrapping over the file; with
// `until_pending`, it stops sooner once the file has that many bytes dirty or under write-back.
struct FloodSpan {
  std::uint64_t start = 0;
  std::uint64_t total = 0;
  std::uint64_t until_pending = 0;
};

struct LoggerFigures {
  std::vector<Nanos> latencies;
  std::uint64_t dirty_peak_bytes = 0;
};

// What the run uses: the options given, the rest chosen from the measured write-back speed.
struct Sizing {
  std::uint64_t writeback_bytes_per_s = 0;
  std::uint64_t dirty_limit = 0;
  std::uint64_t background = 0;
  std::uint64_t device_limit = 0;
  // Dirty or under write-back when the limits drop: kOverLimitSeconds of write-back over the
  // hard limit. Where the kernel has no cachestat(2), the preload writes this much.
  std::uint64_t preload = 0;
  // The most the preload writes while write-back keeps the file's pending bytes below it.
  std::uint64_t preload_max = 0;
  std::uint64_t flood = 0;
};

class DirtyThrottle : public Scenario {
 public:
  std::string name() const override { return "dirty-throttle"; }
  std::string summary() const override {
    return "dirty limits drop below what a flood dirtied: a logger's appends wait in dirty "
           "throttling";
  }
  std::vector<Param> params() override {
    return {
        {"dirty-limit",
         "vm.dirty_bytes once the flood has dirtied its preload (default: 2 s of the write-back "
         "speed measured first)",
         ParamKind::Size, &dirty_limit_, 4u << 20, 64ull << 30},
        {"background", "vm.dirty_background_bytes from then on (default: half the limit)",
         ParamKind::Size, &background_, 1u << 20, 64ull << 30},
        {"device-limit",
         "the scratch device's own strict dirty limit (default: a quarter second of the "
         "write-back speed, below the dirty limit)",
         ParamKind::Size, &device_limit_, 1u << 20, 64ull << 30},
        {"flood",
         "bytes the background writer writes in 1 MiB writes, its preload (until 2 s of "
         "write-back over the limit are dirty) included (default: until the logger is done)",
         ParamKind::Size, &flood_, kFloodWrite, 1ull << 40},
        {"line", "bytes per append (a stdio-buffered logger writes its 4 KiB buffer)",
         ParamKind::Size, &line_, 16, 1u << 20},
        {"interval", "time between the logger's appends", ParamKind::Duration, &interval_, 100'000,
         10'000'000'000},
        {"duration", "how long the logger appends", ParamKind::Duration, &duration_, 10'000'000,
         3'600'000'000'000},
    };
  }
  bool needs_root() const override { return true; }
  std::uint64_t space_needed() const override {
    return flood_file_bytes() + (duration_ / interval_ + 1) * line_ + 4096;
  }
  std::string validate() const override {
    if (dirty_limit_ && background_ && background_ >= dirty_limit_)
      return "--background must be below --dirty-limit";
    if (dirty_limit_ && device_limit_ && device_limit_ >= dirty_limit_)
      return "--device-limit must be below --dirty-limit";
    if (interval_ > duration_) return "--interval is longer than --duration";
    return "";
  }

  ScenarioResult run(LoadContext& ctx) override {
    const auto flood_path = ctx.workspace().path("flood.dat");
    const auto log_path = ctx.workspace().path("app.log");
    const auto knobs_before = read_dirty_knobs();
    const std::string bdi = strict_limit_bdi(ctx.workspace().dir());
    const Sizing sizing = choose_sizing(measure_writeback(ctx, flood_path), !bdi.empty());
    FloodFigures preload, flood;
    LoggerFigures logger;
    bool device_limited = false;
    logger.latencies.reserve(duration_ / interval_ + 16);
    {
      // Set once the preload is dirty, restored after both threads have joined. Background
      // first, so the restore (reverse order) puts the limit back first: the kernel copes
      // with any order, the log of a failed restore reads better this way.
      std::optional<DirtyLimitOverride> background, limit;
      std::optional<DeviceLimitOverride> device;
      ThreadFailure failure;
      std::promise<void> preloaded;
      // Measured: the two threads from the limits' drop to their end; not the probe, the
      // preload (its figures say what it did) nor the sysctl writes. Ends after both join.
      std::unique_ptr<MeasuredPhase> phase;
      {
        std::jthread flood_thread([&] {
          name_this_thread("flood");
          try {
            preload = run_flood(ctx, flood_path, {0, sizing.preload_max, sizing.preload}, failure);
          } catch (...) {
            preloaded.set_exception(std::current_exception());
            return;
          }
          preloaded.set_value();
          try {
            flood = run_flood(ctx, flood_path,
                              {preload.bytes, sizing.flood - std::min(sizing.flood, preload.bytes)},
                              failure);
          } catch (...) {
            failure.record(std::current_exception());
          }
        });
        try {
          preloaded.get_future().get();
          background.emplace("vm/dirty_background_bytes", "vm/dirty_background_ratio",
                             sizing.background);
          limit.emplace("vm/dirty_bytes", "vm/dirty_ratio", sizing.dirty_limit);
          device.emplace(bdi, sizing.device_limit);
          device_limited = device->set();
          // A prvalue initializes the new object itself: MeasuredPhase does not move.
          phase.reset(new MeasuredPhase(ctx.measured_phase("dirty-throttle")));
        } catch (...) {
          failure.record(std::current_exception());
        }
        // The logger starts as the limits drop.
        std::jthread logger_thread([&] {
          if (failure.stopping()) return;
          name_this_thread("logger");
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
    r.figures["writeback_bytes_per_s"] = sizing.writeback_bytes_per_s;
    r.figures["dirty_limit_bytes"] = sizing.dirty_limit;
    r.figures["dirty_background_bytes"] = sizing.background;
    r.figures["duration_ns"] = duration_;
    r.figures["interval_ns"] = interval_;
    r.figures["line_bytes"] = line_;
    r.figures["device_limit_bytes"] = device_limited ? sizing.device_limit : 0;
    r.figures["preload_bytes"] = preload.bytes;
    r.figures["preload_ns"] = preload.ns;
    r.figures["preload_target_bytes"] = sizing.preload;
    if (preload.pending_bytes) r.figures["preload_pending_bytes"] = *preload.pending_bytes;
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

    r.lines.push_back(fmt::format("write-back measured at {:.0f} MiB/s ({} written and fsynced)",
                                  static_cast<double>(sizing.writeback_bytes_per_s) / (1 << 20),
                                  human_bytes(kProbeBytes)));
    r.lines.push_back(fmt::format(
        "flood: {} dirtied first under the system's own limits ({:.0f} MiB/s){}",
        human_bytes(preload.bytes), mib_per_s(preload.bytes, preload.ns),
        preload.pending_bytes
            ? fmt::format(", {} of the file dirty or under write-back then (aimed at {})",
                          human_bytes(*preload.pending_bytes), human_bytes(sizing.preload))
            : ""));
    r.lines.push_back(fmt::format(
        "then the limits dropped below that, as when available memory shrinks: {} (background "
        "{}){}",
        human_bytes(sizing.dirty_limit), human_bytes(sizing.background),
        dirty_limit_ ? "" : ", from the measured speed"));
    r.lines.push_back(
        device_limited ? fmt::format("  and the scratch device's own strict limit: {}",
                                     human_bytes(sizing.device_limit))
                       : "  and no strict limit for the scratch device (the kernel has no knob)");
    r.lines.push_back(
        fmt::format("flood, from then on: {} in 1 MiB writes, {:.0f} MiB/s; Dirty peaked at {}",
                    human_bytes(flood.bytes), mib_per_s(flood.bytes, flood.ns),
                    human_bytes(logger.dirty_peak_bytes)));
    r.lines.push_back(fmt::format("logger: {} appends of {} every {}: p50 {}, p99 {}, max {}",
                                  log.count, human_bytes(line_), human_duration(interval_),
                                  human_duration(log.p50), human_duration(log.p99),
                                  human_duration(log.max)));
    r.lines.push_back(knobs_before == knobs_after
                          ? "dirty sysctls restored"
                          : "dirty sysctls NOT restored: check vm.dirty_* by hand");
    return r;
  }

 private:
  std::uint64_t flood_file_bytes() const {
    return flood_ ? std::min(flood_, kFloodFileMax) : kFloodFileMax;
  }

  // Bytes per second the scratch filesystem writes back: the start of the flood file written
  // and fsynced, with the system's own dirty limits still in force.
  std::uint64_t measure_writeback(const LoadContext& ctx, const std::filesystem::path& path) const {
    UniqueFd fd = open_file(path, O_WRONLY | O_CREAT | O_TRUNC);
    std::vector<char> block(kFloodWrite);
    fill_pattern(block, 4);
    const std::uint64_t bytes = std::min(kProbeBytes, flood_file_bytes());
    Stopwatch time;
    for (std::uint64_t done = 0; done < bytes; done += kFloodWrite) {
      ctx.check_interrupt();
      write_all(fd.get(), block.data(), std::min(kFloodWrite, bytes - done),
                static_cast<off_t>(done));
    }
    fsync_or_throw(fd.get(), "fsync of the write-back probe");
    const Nanos ns = std::max<Nanos>(time.elapsed_ns(), 1);
    return static_cast<std::uint64_t>(static_cast<double>(bytes) * 1e9 / static_cast<double>(ns));
  }

  Sizing choose_sizing(std::uint64_t writeback_bytes_per_s, bool device_limited) const {
    Sizing s;
    s.writeback_bytes_per_s = writeback_bytes_per_s;
    const auto seconds_of_writeback =
        static_cast<std::uint64_t>(kLimitSeconds * static_cast<double>(writeback_bytes_per_s));
    // A MiB multiple, within what the flood file can hold dirty.
    s.dirty_limit = dirty_limit_
                        ? dirty_limit_
                        : std::clamp<std::uint64_t>(seconds_of_writeback & ~((1ull << 20) - 1),
                                                    kLimitMin, flood_file_bytes() / 4);
    s.background = background_ ? background_ : s.dirty_limit / 2;
    if (s.background >= s.dirty_limit) s.background = s.dirty_limit / 2;
    s.device_limit =
        device_limit_ ? device_limit_
                      : std::max<std::uint64_t>(
                            kDeviceLimitMin,
                            static_cast<std::uint64_t>(kDeviceLimitSeconds *
                                                       static_cast<double>(writeback_bytes_per_s)) &
                                ~((1ull << 20) - 1));
    // The kernel takes a device limit up to the system's; below it, it changes something.
    if (s.device_limit >= s.dirty_limit) s.device_limit = s.dirty_limit / 2;
    // Over the limit that throttles the scratch device's writers: its own when it has one
    // (at the default sizes the system-wide limit stays above the preload, so other devices'
    // writers are not held up).
    const std::uint64_t hard_limit = device_limited ? s.device_limit : s.dirty_limit;
    s.preload =
        std::min(hard_limit + (static_cast<std::uint64_t>(
                                   kOverLimitSeconds * static_cast<double>(writeback_bytes_per_s)) &
                               ~(kFloodWrite - 1)),
                 flood_file_bytes() / 4 * 3);
    if (flood_) s.preload = std::min(s.preload, flood_);
    // Write-back running beside the preload may need the whole file dirtied, and more.
    s.preload_max = flood_ ? flood_ : 2 * flood_file_bytes();
    s.flood = flood_ ? flood_ : ~0ull;  // less the preload; the logger's end stops it
    return s;
  }

  // 1 MiB buffered writes over a file of flood_file_bytes(), looping from span.start, until
  // span.total bytes are written or the logger is done.
  FloodFigures run_flood(const LoadContext& ctx, const std::filesystem::path& path, FloodSpan span,
                         const ThreadFailure& failure) const {
    std::uint64_t total = span.total;
    UniqueFd fd = open_file(path, O_WRONLY);
    std::vector<char> block(kFloodWrite);
    fill_pattern(block, 3);
    const std::uint64_t file_bytes = flood_file_bytes();
    FloodFigures figures;
    Stopwatch time;
    bool pending_known = span.until_pending != 0;
    std::uint64_t next_check = 0;
    while (figures.bytes < total && !failure.stopping()) {
      ctx.check_interrupt();
      if (pending_known && figures.bytes >= next_check) {
        figures.pending_bytes = file_pending_bytes(fd.get());
        pending_known = figures.pending_bytes.has_value();
        if (pending_known && *figures.pending_bytes >= span.until_pending) break;
        // Without cachestat(2), the target is what the preload writes.
        if (!pending_known) total = std::min(total, span.until_pending);
        next_check = figures.bytes + kPendingCheckBytes;
      }
      const std::uint64_t offset = (span.start + figures.bytes) % file_bytes;
      const std::uint64_t size =
          std::min({kFloodWrite, total - figures.bytes, file_bytes - offset});
      write_all(fd.get(), block.data(), size, static_cast<off_t>(offset));
      figures.bytes += size;
    }
    figures.ns = time.elapsed_ns();
    if (pending_known) figures.pending_bytes = file_pending_bytes(fd.get());
    return figures;
  }

  // --line bytes of log lines appended every --interval for --duration, each write(2) timed.
  void run_logger(const LoadContext& ctx, const std::filesystem::path& path,
                  const ThreadFailure& failure, LoggerFigures& figures) const {
    using Clock = std::chrono::steady_clock;
    UniqueFd fd = open_file(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND);
    const auto start = Clock::now();
    const auto end = start + std::chrono::nanoseconds(duration_);
    auto next = start;
    for (std::uint64_t seq = 0; Clock::now() < end && !failure.stopping(); ++seq) {
      ctx.check_interrupt();
      std::string line = fmt::format("{:>8} +{:.3f}s request served", seq,
                                     std::chrono::duration<double>(Clock::now() - start).count());
      line.resize(line_ - 1, ' ');
      line += '\n';
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

  // 0: chosen from the measured write-back speed.
  std::uint64_t dirty_limit_ = 0;
  std::uint64_t background_ = 0;
  std::uint64_t device_limit_ = 0;
  std::uint64_t flood_ = 0;
  std::uint64_t line_ = 4096;
  std::uint64_t interval_ = 10'000'000;
  std::uint64_t duration_ = 5'000'000'000;
};

}  // namespace

std::unique_ptr<Scenario> make_dirty_throttle() {
  return std::make_unique<DirtyThrottle>();
}

}  // namespace wp::loadgen
