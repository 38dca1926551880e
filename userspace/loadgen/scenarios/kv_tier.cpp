// SPDX-License-Identifier: Apache-2.0
// kv-tier: KV-cache blocks evicted to an SSD tier. Written with O_DIRECT (no fsync: a lost
// block is recomputed, a checksum catches a torn one) they leave the page cache to the model;
// written buffered, the same blocks fill it. --engine io_uring submits both modes' writes
// through a ring, --iodepth at a time, instead of one pwrite after another.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/units.h"
#include "loadgen/context.h"
#include "loadgen/measure.h"
#include "loadgen/scenarios/scenarios.h"
#include "loadgen/uring_writer.h"

namespace wp::loadgen {
namespace {

constexpr std::uint64_t kAlignment = 4096;

// --engine's values, in the order of their names in params().
enum Engine : std::uint64_t { kPwrite = 0, kIoUring = 1 };

struct TierFigures {
  LatencySummary write;
  Nanos write_total_ns = 0;
  Nanos read_total_ns = 0;
  std::uint64_t verify_ok = 0;
  std::uint64_t verify_failed = 0;
  std::uint64_t resident_bytes = 0;
  std::uint64_t file_bytes = 0;
  std::int64_t cached_delta_bytes = 0;
  bool registered_buffers = false;  // io_uring engine: WRITE_FIXED from pinned buffers
};

nlohmann::ordered_json tier_json(const TierFigures& t, std::uint64_t bytes) {
  nlohmann::ordered_json j;
  j["write_p50_ns"] = t.write.p50;
  j["write_p99_ns"] = t.write.p99;
  j["write_max_ns"] = t.write.max;
  j["write_mib_s"] = mib_per_s(bytes, t.write_total_ns);
  j["read_mib_s"] = mib_per_s(bytes, t.read_total_ns);
  j["verify_ok"] = t.verify_ok;
  j["verify_failed"] = t.verify_failed;
  j["resident_bytes"] = t.resident_bytes;
  j["file_bytes"] = t.file_bytes;
  j["cached_delta_bytes"] = t.cached_delta_bytes;
  return j;
}

std::string tier_line(const std::string& mode, const TierFigures& t, std::uint64_t bytes) {
  return fmt::format(
      "{}: write p50 {}, p99 {}, {:.0f} MiB/s; read back {:.0f} MiB/s, {} ok / {} bad; "
      "page cache: {} of {} resident",
      mode, human_duration(t.write.p50), human_duration(t.write.p99),
      mib_per_s(bytes, t.write_total_ns), mib_per_s(bytes, t.read_total_ns), t.verify_ok,
      t.verify_failed, human_bytes(t.resident_bytes), human_bytes(t.file_bytes));
}

class KvTier : public Scenario {
 public:
  std::string name() const override { return "kv-tier"; }
  std::string summary() const override {
    return "KV-cache blocks to an SSD tier: O_DIRECT with checksums vs buffered";
  }
  std::vector<Param> params() override {
    return {{"blocks", "KV blocks written per mode", ParamKind::Count, &blocks_, 1, 1u << 20},
            {"block-size", "bytes per block (a multiple of 4k)", ParamKind::Size, &block_size_,
             kAlignment, 256u << 20},
            {"engine",
             "how blocks are written: pwrite (one call a block) or io_uring",
             ParamKind::Choice,
             &engine_,
             kPwrite,
             kIoUring,
             {"pwrite", "io_uring"}},
            {"iodepth", "io_uring engine: writes in flight at once", ParamKind::Count, &iodepth_, 1,
             4096}};
  }
  // Both modes' files stay until the end.
  std::uint64_t space_needed() const override { return 2 * blocks_ * block_size_; }
  std::string validate() const override {
    if (block_size_ % kAlignment != 0) return "--block-size must be a multiple of 4k (O_DIRECT)";
    if (blocks_ * block_size_ > (64ull << 30)) return "--blocks × --block-size exceeds 64 GiB";
    if (engine_ == kIoUring && iodepth_ * block_size_ > (1ull << 30))
      return "--iodepth × --block-size exceeds 1 GiB of buffers";
    return "";
  }

  ScenarioResult run(LoadContext& ctx) override {
    auto phase = ctx.measured_phase("kv-store");  // all of the run is measured
    // The blocks' contents and checksums, computed once: both modes write the same bytes.
    std::vector<std::uint32_t> checksums(blocks_);
    const TierFigures direct =
        run_mode(ctx, ctx.workspace().path("kv-direct.bin"), true, checksums);
    const TierFigures buffered =
        run_mode(ctx, ctx.workspace().path("kv-buffered.bin"), false, checksums);
    const std::uint64_t bytes = blocks_ * block_size_;

    ScenarioResult r;
    r.figures["blocks"] = blocks_;
    r.figures["block_bytes"] = block_size_;
    r.figures["engine"] = engine_ == kIoUring ? "io_uring" : "pwrite";
    r.figures["iodepth"] = engine_ == kIoUring ? iodepth_ : 1;
    r.figures["registered_buffers"] = direct.registered_buffers && buffered.registered_buffers;
    r.figures["direct"] = tier_json(direct, bytes);
    r.figures["buffered"] = tier_json(buffered, bytes);
    r.lines.push_back(fmt::format("{} blocks of {} ({}) per mode, no fsync, {}", blocks_,
                                  human_bytes(block_size_), human_bytes(bytes),
                                  engine_line(direct)));
    r.lines.push_back(tier_line("O_DIRECT", direct, bytes));
    r.lines.push_back(tier_line("buffered", buffered, bytes));
    r.lines.push_back(fmt::format("meminfo Cached grew {} (O_DIRECT) vs {} (buffered)",
                                  signed_bytes(direct.cached_delta_bytes),
                                  signed_bytes(buffered.cached_delta_bytes)));
    // Cached is system-wide: it also counts whatever caches the storage under the files
    // (a loop device's backing file without direct I/O, say). Say so when it shows.
    if (direct.cached_delta_bytes > static_cast<std::int64_t>(bytes / 4))
      r.lines.push_back(
          "(Cached is system-wide: the storage under these files is itself cached, so O_DIRECT "
          "data shows up there too; the page counts above are the file's own)");
    return r;
  }

 private:
  static std::string signed_bytes(std::int64_t bytes) {
    return bytes < 0 ? "-" + human_bytes(static_cast<std::uint64_t>(-bytes))
                     : "+" + human_bytes(static_cast<std::uint64_t>(bytes));
  }

  std::string engine_line(const TierFigures& direct) const {
    if (engine_ != kIoUring) return "pwrite, one block a call";
    return fmt::format("io_uring, {} in flight, {}; latencies are submission to completion",
                       iodepth_,
                       direct.registered_buffers ? "registered buffers (WRITE_FIXED)"
                                                 : "unregistered buffers (WRITE)");
  }

  // Block i's bytes into `block`, its checksum into checksums[i].
  static void make_block(std::vector<char>& block, std::uint64_t i,
                         std::vector<std::uint32_t>& checksums) {
    fill_pattern(block, i + 1);
    checksums[i] = crc32(block.data(), block.size());
  }

  void write_with_pwrite(const LoadContext& ctx, int fd, Progress& progress,
                         std::vector<std::uint32_t>& checksums, TierFigures& t,
                         std::vector<Nanos>& latencies) const {
    AlignedBuffer io(block_size_);
    std::vector<char> block(block_size_);
    for (std::uint64_t i = 0; i < blocks_; ++i) {
      ctx.check_interrupt();
      make_block(block, i, checksums);
      std::memcpy(io.data(), block.data(), block_size_);
      Stopwatch one;
      write_all(fd, io.data(), block_size_, static_cast<off_t>(i * block_size_));
      latencies.push_back(one.elapsed_ns());
      t.write_total_ns += latencies.back();  // the writes alone, not making the blocks
      progress.update(i + 1);
    }
  }

  // The same blocks through a ring. A block is made while the writes before it are in
  // flight, hidden behind them; only the time the ring sat empty while one was made (the
  // first block's, say) is taken out of the write time, as the pwrite engine leaves it out.
  void write_with_io_uring(const LoadContext& ctx, int fd, Progress& progress,
                           std::vector<std::uint32_t>& checksums, TierFigures& t,
                           std::vector<Nanos>& latencies) const {
    UringWriter ring(fd, block_size_, static_cast<unsigned>(iodepth_));
    std::vector<char> block(block_size_);
    Nanos idle_making_ns = 0;
    Stopwatch phase;
    for (std::uint64_t i = 0; i < blocks_; ++i) {
      ctx.check_interrupt();
      char* buffer = ring.next_buffer();
      const bool ring_empty = ring.in_flight() == 0;
      Stopwatch making;
      make_block(block, i, checksums);
      std::memcpy(buffer, block.data(), block_size_);
      if (ring_empty) idle_making_ns += making.elapsed_ns();
      ring.write(static_cast<off_t>(i * block_size_));
      progress.update(i + 1);
    }
    ring.drain();
    t.write_total_ns = phase.elapsed_ns() - idle_making_ns;
    t.registered_buffers = ring.registered_buffers();
    latencies = ring.latencies();
  }

  TierFigures run_mode(const LoadContext& ctx, const std::filesystem::path& path, bool direct,
                       std::vector<std::uint32_t>& checksums) const {
    const int mode_flag = direct ? O_DIRECT : 0;
    TierFigures t;
    std::vector<Nanos> latencies;
    latencies.reserve(blocks_);

    const std::uint64_t cached_before = meminfo_bytes("Cached");
    {
      UniqueFd fd = open_file(path, O_WRONLY | O_CREAT | O_TRUNC | mode_flag);
      auto progress = ctx.progress(direct ? "write (O_DIRECT)" : "write (buffered)", blocks_);
      if (engine_ == kIoUring)
        write_with_io_uring(ctx, fd.get(), progress, checksums, t, latencies);
      else
        write_with_pwrite(ctx, fd.get(), progress, checksums, t, latencies);
    }
    t.cached_delta_bytes = static_cast<std::int64_t>(meminfo_bytes("Cached")) -
                           static_cast<std::int64_t>(cached_before);
    const Residency residency = page_cache_residency(path);
    const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    t.resident_bytes = residency.resident_pages * page;
    t.file_bytes = blocks_ * block_size_;
    t.write = summarize(std::move(latencies));

    // Read back the same way (pread: the engine is about writing) and check every block.
    AlignedBuffer io(block_size_);
    UniqueFd fd = open_file(path, O_RDONLY | mode_flag);
    for (std::uint64_t i = 0; i < blocks_; ++i) {
      ctx.check_interrupt();
      Stopwatch read_time;  // the read alone: the checksum is the same work in both modes
      read_all(fd.get(), io.data(), block_size_, static_cast<off_t>(i * block_size_));
      t.read_total_ns += read_time.elapsed_ns();
      if (crc32(io.data(), block_size_) == checksums[i])
        ++t.verify_ok;
      else
        ++t.verify_failed;
    }
    return t;
  }

  std::uint64_t blocks_ = 64;
  std::uint64_t block_size_ = 256u << 10;
  std::uint64_t engine_ = kPwrite;
  std::uint64_t iodepth_ = 16;
};

}  // namespace

std::unique_ptr<Scenario> make_kv_tier() {
  return std::make_unique<KvTier>();
}

}  // namespace wp::loadgen
