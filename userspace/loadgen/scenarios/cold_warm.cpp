// SPDX-License-Identifier: Apache-2.0
// cold-warm: the second read of a file is fast because the first left it in the page cache.
// POSIX_FADV_DONTNEED drops the file's pages first, so the first read has to go to the device.
#include <fcntl.h>
#include <fmt/format.h>

#include <vector>

#include "common/units.h"
#include "loadgen/context.h"
#include "loadgen/measure.h"
#include "loadgen/scenarios/scenarios.h"

namespace wp::loadgen {
namespace {

struct ReadFigures {
  Nanos elapsed_ns = 0;
  double resident_before = 0;       // share of the file's pages cached before the read, 0..1
  std::uint64_t storage_bytes = 0;  // what the read fetched from storage (/proc/self/io)
};

class ColdWarm : public Scenario {
 public:
  std::string name() const override { return "cold-warm"; }
  std::string summary() const override {
    return "read a file with its pages dropped, then again from the page cache";
  }
  std::vector<Param> params() override {
    return {{"size", "file size", ParamKind::Size, &size_, 1u << 20, 64ull << 30}};
  }
  std::uint64_t space_needed() const override { return size_; }

  ScenarioResult run(LoadContext& ctx) override {
    auto phase = ctx.measured_phase("cold-warm");  // all of the run is measured
    auto path = ctx.workspace().path("cold-warm.dat");
    std::vector<char> buffer(kChunkBytes);
    fill_pattern(buffer, 3);

    Nanos write_ns = 0, fsync_ns = 0;
    {
      UniqueFd fd = open_file(path, O_WRONLY | O_CREAT | O_TRUNC);
      auto progress = ctx.progress("write", size_);
      Stopwatch write_time;
      for (std::uint64_t done = 0; done < size_; done += kChunkBytes) {
        ctx.check_interrupt();
        write_all(fd.get(), buffer.data(), std::min(kChunkBytes, size_ - done),
                  static_cast<off_t>(done));
        progress.update(done);
      }
      write_ns = write_time.elapsed_ns();
      Stopwatch fsync_time;
      fsync_or_throw(fd.get());
      fsync_ns = fsync_time.elapsed_ns();
      drop_page_cache(fd.get());
    }
    const ReadFigures cold = read_through(ctx, path, buffer, "cold read");
    const ReadFigures warm = read_through(ctx, path, buffer, "warm read");
    const double cold_mib_s = mib_per_s(size_, cold.elapsed_ns);
    const double warm_mib_s = mib_per_s(size_, warm.elapsed_ns);

    ScenarioResult r;
    r.figures["file"] = path;  // the file both passes read, as the load named it
    r.figures["size_bytes"] = size_;
    r.figures["chunk_bytes"] = kChunkBytes;
    r.figures["write_ns"] = write_ns;
    r.figures["fsync_ns"] = fsync_ns;
    r.figures["cold_resident_before_pct"] = 100.0 * cold.resident_before;
    r.figures["cold_ns"] = cold.elapsed_ns;
    r.figures["cold_mib_s"] = cold_mib_s;
    r.figures["cold_storage_read_bytes"] = cold.storage_bytes;
    r.figures["warm_resident_before_pct"] = 100.0 * warm.resident_before;
    r.figures["warm_ns"] = warm.elapsed_ns;
    r.figures["warm_mib_s"] = warm_mib_s;
    r.figures["warm_storage_read_bytes"] = warm.storage_bytes;
    r.figures["warm_over_cold"] = cold_mib_s > 0 ? warm_mib_s / cold_mib_s : 0.0;
    r.lines.push_back(fmt::format("write {} MiB: {}, fsync: {}; then its pages dropped",
                                  size_ >> 20, human_duration(write_ns), human_duration(fsync_ns)));
    r.lines.push_back(
        fmt::format("cold read: {} ({:.0f} MiB/s), {:.0f}% cached before, {:.1f} MiB from storage",
                    human_duration(cold.elapsed_ns), cold_mib_s, 100.0 * cold.resident_before,
                    cold.storage_bytes / 1048576.0));
    r.lines.push_back(
        fmt::format("warm read: {} ({:.0f} MiB/s), {:.0f}% cached before, {:.1f} MiB from storage",
                    human_duration(warm.elapsed_ns), warm_mib_s, 100.0 * warm.resident_before,
                    warm.storage_bytes / 1048576.0));
    r.lines.push_back(fmt::format("warm/cold: {:.1f}×", r.figures["warm_over_cold"].get<double>()));
    return r;
  }

 private:
  // Reads the whole file sequentially, in kChunkBytes reads.
  ReadFigures read_through(LoadContext& ctx, const std::filesystem::path& path,
                           std::vector<char>& buffer, const std::string& label) const {
    ReadFigures f;
    const Residency residency = page_cache_residency(path);
    f.resident_before = residency.total_pages ? static_cast<double>(residency.resident_pages) /
                                                    static_cast<double>(residency.total_pages)
                                              : 0.0;
    UniqueFd fd = open_file(path, O_RDONLY);
    auto progress = ctx.progress(label, size_);
    const std::uint64_t storage_before = process_counters().read_bytes;
    Stopwatch elapsed;
    for (std::uint64_t done = 0; done < size_; done += kChunkBytes) {
      ctx.check_interrupt();
      read_all(fd.get(), buffer.data(), std::min(kChunkBytes, size_ - done),
               static_cast<off_t>(done));
      progress.update(done);
    }
    f.elapsed_ns = elapsed.elapsed_ns();
    f.storage_bytes = process_counters().read_bytes - storage_before;
    return f;
  }

  std::uint64_t size_ = 256ull << 20;
};

}  // namespace

std::unique_ptr<Scenario> make_cold_warm() {
  return std::make_unique<ColdWarm>();
}

}  // namespace wp::loadgen
