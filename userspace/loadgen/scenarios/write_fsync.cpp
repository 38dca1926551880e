// SPDX-License-Identifier: Apache-2.0
// write-fsync: a big buffered write lands in the page cache in no time; fsync pays for it.
#include <fcntl.h>
#include <fmt/format.h>

#include <vector>

#include "common/units.h"
#include "loadgen/context.h"
#include "loadgen/measure.h"
#include "loadgen/scenarios/scenarios.h"

namespace wp::loadgen {
namespace {

class WriteFsync : public Scenario {
 public:
  std::string name() const override { return "write-fsync"; }
  std::string summary() const override {
    return "buffered writes fill the page cache, then one fsync writes them out";
  }
  std::vector<Param> params() override {
    return {{"size", "bytes written in all", ParamKind::Size, &size_, 4096, 64ull << 30},
            {"block", "bytes per write(2)", ParamKind::Size, &block_, 512, 64u << 20}};
  }
  std::uint64_t space_needed() const override { return size_; }
  std::string validate() const override {
    return block_ > size_ ? "--block is larger than --size" : "";
  }

  ScenarioResult run(LoadContext& ctx) override {
    auto phase = ctx.measured_phase("writer");  // all of the run is measured
    auto path = ctx.workspace().path("write-fsync.dat");
    UniqueFd fd = open_file(path, O_WRONLY | O_CREAT | O_TRUNC);
    std::vector<char> buffer(block_);
    fill_pattern(buffer, 1);

    const std::uint64_t dirty_before = meminfo_bytes("Dirty");
    auto progress = ctx.progress("write", size_);
    Stopwatch write_time;
    for (std::uint64_t done = 0; done < size_; done += block_) {
      ctx.check_interrupt();
      write_all(fd.get(), buffer.data(), std::min<std::uint64_t>(block_, size_ - done),
                static_cast<off_t>(done));
      progress.update(done);
    }
    const Nanos write_ns = write_time.elapsed_ns();
    const std::uint64_t dirty_after_write = meminfo_bytes("Dirty");
    const std::optional<std::uint64_t> file_after_write = file_pending_bytes(fd.get());
    Stopwatch fsync_time;
    fsync_or_throw(fd.get());
    const Nanos fsync_ns = fsync_time.elapsed_ns();
    const std::uint64_t dirty_after_fsync = meminfo_bytes("Dirty");
    const std::optional<std::uint64_t> file_after_fsync = file_pending_bytes(fd.get());

    ScenarioResult r;
    r.figures["bytes"] = size_;
    r.figures["block"] = block_;
    r.figures["write_ns"] = write_ns;
    r.figures["write_mib_s"] = mib_per_s(size_, write_ns);
    r.figures["fsync_ns"] = fsync_ns;
    r.figures["dirty_before_bytes"] = dirty_before;
    r.figures["dirty_after_write_bytes"] = dirty_after_write;
    r.figures["dirty_after_fsync_bytes"] = dirty_after_fsync;
    // The file's own pages (cachestat), where the kernel tells: no other process's count.
    if (file_after_write && file_after_fsync) {
      r.figures["file_pending_after_write_bytes"] = *file_after_write;
      r.figures["file_pending_after_fsync_bytes"] = *file_after_fsync;
    }
    r.lines.push_back(fmt::format("write {} MiB in {} B writes: {} ({:.0f} MiB/s)", size_ >> 20,
                                  block_, human_duration(write_ns), mib_per_s(size_, write_ns)));
    r.lines.push_back(fmt::format("dirty: {:.1f} MiB before, {:.1f} MiB after the writes",
                                  dirty_before / 1048576.0, dirty_after_write / 1048576.0));
    r.lines.push_back(fmt::format("fsync: {}; dirty after: {:.1f} MiB", human_duration(fsync_ns),
                                  dirty_after_fsync / 1048576.0));
    return r;
  }

 private:
  std::uint64_t size_ = 256ull << 20;
  std::uint64_t block_ = 1u << 20;
};

}  // namespace

std::unique_ptr<Scenario> make_write_fsync() {
  return std::make_unique<WriteFsync>();
}

}  // namespace wp::loadgen
