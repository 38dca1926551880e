// SPDX-License-Identifier: Apache-2.0
// mmap-load: a safetensors file (8-byte little-endian header length, a JSON header of names,
// dtypes, shapes and data offsets, then raw tensor bytes) lets one tensor be viewed in place:
// mmap it and only the pages touched are read. Loaded three ways from a cold page cache —
// lazy (mmap on demand), eager (read the whole file first), prefetch (threads read the file
// into the page cache, then mmap) — to see what each reads and how much memory it takes; one
// way alone with --ways, to trace each apart. With --storage fuse the loads read the file
// through a FUSE file system whose readahead is one page: storage that answers page by page,
// as mmap over network storage reads (the lazy way's pathology).
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "common/units.h"
#include "loadgen/context.h"
#include "loadgen/measure.h"
#include "loadgen/scenarios/scenarios.h"

namespace wp::loadgen {
namespace {

constexpr std::uint64_t kHeaderLengthBytes = 8;
constexpr std::uint64_t kPrefetchChunk = 1u << 20;

// A read-only shared mapping of a whole file, unmapped on scope exit.
class FileMapping {
 public:
  FileMapping(int fd, std::size_t length) : length_(length) {
    void* map = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) throw LoadError(fmt::format("mmap: {}", std::strerror(errno)));
    data_ = static_cast<const char*>(map);
  }
  ~FileMapping() { ::munmap(const_cast<char*>(data_), length_); }
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;
  const char* data() const { return data_; }

 private:
  const char* data_ = nullptr;
  std::size_t length_;
};

// Anonymous memory of its own mapping: unmapped (and out of RSS) when it goes, whatever malloc
// would have kept for later.
class ScratchBuffer {
 public:
  explicit ScratchBuffer(std::size_t length) : length_(length) {
    void* map = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) throw LoadError(fmt::format("mmap: {}", std::strerror(errno)));
    data_ = static_cast<char*>(map);
  }
  ~ScratchBuffer() { ::munmap(data_, length_); }
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  char* data() const { return data_; }

 private:
  char* data_ = nullptr;
  std::size_t length_;
};

// The readahead window of the device under `fd` (what a lazy load reads beyond what it
// touches), or nothing when the filesystem has no block device.
std::optional<std::uint64_t> read_ahead_bytes(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::nullopt;
  const std::string dev =
      fmt::format("/sys/dev/block/{}:{}", ::major(st.st_dev), ::minor(st.st_dev));
  // A partition has no queue of its own: its disk's is one level up.
  for (const char* queue : {"/queue/read_ahead_kb", "/../queue/read_ahead_kb"}) {
    std::ifstream in(dev + queue);
    std::uint64_t kib = 0;
    if (in >> kib) return kib * 1024;
  }
  return std::nullopt;
}

// Where one tensor's bytes are, relative to the start of the file.
struct TensorSpan {
  std::uint64_t begin = 0;
  std::uint64_t size = 0;
};

// Reads the header from the first bytes of a safetensors file (a mapping or a buffer holding
// the whole file) and finds `name` in it. Only the header's own bytes are looked at.
TensorSpan find_tensor(const char* file, std::uint64_t file_size, const std::string& name) {
  if (file_size < kHeaderLengthBytes) throw LoadError("safetensors: file shorter than 8 bytes");
  std::uint64_t header_size = 0;
  for (std::uint64_t i = 0; i < kHeaderLengthBytes; ++i)  // little-endian whatever the host
    header_size |= static_cast<std::uint64_t>(static_cast<unsigned char>(file[i])) << (8 * i);
  if (header_size > file_size - kHeaderLengthBytes)
    throw LoadError("safetensors: header length beyond the end of the file");
  const char* header_begin = file + kHeaderLengthBytes;
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(header_begin, header_begin + header_size);
    const auto& offsets = header.at(name).at("data_offsets");
    TensorSpan span;
    const std::uint64_t begin = offsets.at(0).get<std::uint64_t>();
    const std::uint64_t end = offsets.at(1).get<std::uint64_t>();
    const std::uint64_t data_start = kHeaderLengthBytes + header_size;
    if (end < begin || end > file_size - data_start)
      throw LoadError(fmt::format("safetensors: {} lies outside the file", name));
    span.begin = data_start + begin;
    span.size = end - begin;
    return span;
  } catch (const nlohmann::json::exception& e) {
    throw LoadError(fmt::format("safetensors header: {}", e.what()));
  }
}

// A zero-copy view's first use: one byte of every page, so every page is faulted in (or
// found) exactly once. The sum proves the three strategies saw the same bytes.
std::uint64_t touch_pages(const char* data, std::uint64_t size) {
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < size; i += page)
    sum += static_cast<unsigned char>(*static_cast<const volatile char*>(data + i));
  return sum;
}

// What one load strategy cost, measured around it.
struct LoadCost {
  Nanos load_ns = 0;
  Nanos prefetch_ns = 0;  // prefetch only: the threads' read phase
  std::uint64_t major_faults = 0;
  std::int64_t rss_growth_bytes = 0;
  std::uint64_t read_bytes = 0;
  std::uint64_t touch_sum = 0;
  // cachestat(2) of the loaded file right after the load: what it left in the page cache
  // (through FUSE, the FUSE file's own cache).
  std::optional<std::uint64_t> cached_pages;
};

class CounterDelta {
 public:
  CounterDelta() : before_(process_counters()) {}
  // Called while the loaded tensor is still mapped or buffered: RSS counts it.
  void finish(LoadCost& cost) const {
    const ProcessCounters after = process_counters();
    cost.major_faults = after.major_faults - before_.major_faults;
    cost.rss_growth_bytes =
        static_cast<std::int64_t>(after.rss_bytes) - static_cast<std::int64_t>(before_.rss_bytes);
    cost.read_bytes = after.read_bytes - before_.read_bytes;
  }

 private:
  ProcessCounters before_;
};

nlohmann::ordered_json cost_json(const LoadCost& cost) {
  nlohmann::ordered_json j;
  j["load_ns"] = cost.load_ns;
  j["major_faults"] = cost.major_faults;
  j["rss_growth_bytes"] = cost.rss_growth_bytes;
  j["read_bytes"] = cost.read_bytes;
  return j;
}

std::string signed_bytes(std::int64_t bytes) {
  return bytes < 0 ? "-" + human_bytes(static_cast<std::uint64_t>(-bytes))
                   : "+" + human_bytes(static_cast<std::uint64_t>(bytes));
}

std::string cost_line(const std::string& what, const LoadCost& cost) {
  return fmt::format("{}: {}, {} major faults, RSS {}, {} read from storage", what,
                     human_duration(cost.load_ns), cost.major_faults,
                     signed_bytes(cost.rss_growth_bytes), human_bytes(cost.read_bytes));
}

class MmapLoad : public Scenario {
 public:
  std::string name() const override { return "mmap-load"; }
  std::string summary() const override {
    return "a safetensors file loaded lazily (mmap), eagerly (read all) and prefetched";
  }
  std::vector<Param> params() override {
    return {
        {"tensors", "tensors in the file", ParamKind::Count, &tensors_, 1, 4096},
        {"tensor-size", "bytes per tensor (f16: even)", ParamKind::Size, &tensor_size_, 4096,
         1ull << 30},
        {"threads", "prefetch threads", ParamKind::Count, &threads_, 1, 64},
        {"ways",
         "the loads to run",
         ParamKind::Choice,
         &ways_,
         0,
         3,
         {"all", "lazy", "eager", "prefetch"}},
        {"storage",
         "read from the workspace (local) or through bindfs with one-page readahead (fuse)",
         ParamKind::Choice,
         &storage_,
         0,
         1,
         {"local", "fuse"}},
    };
  }
  std::uint64_t space_needed() const override {
    // The header: about 80 bytes a tensor; a page of slack for the padding.
    return tensors_ * tensor_size_ + tensors_ * 128 + 4096;
  }
  std::string validate() const override {
    if (tensor_size_ % 2 != 0) return "--tensor-size must be even (f16 elements are 2 bytes)";
    if (tensors_ * tensor_size_ > (64ull << 30)) return "--tensors × --tensor-size exceeds 64 GiB";
    return "";
  }

  ScenarioResult run(LoadContext& ctx) override {
    auto phase = ctx.measured_phase("model-loader");  // all of the run is measured
    auto path = ctx.workspace().path("model.safetensors");
    const std::string wanted = tensor_name(tensors_ / 2);

    // ---- generate, then make it durable: the loads below start from storage.
    std::uint64_t header_bytes = 0;
    Nanos generate_ns = 0, fsync_ns = 0;
    Stopwatch generate_time;
    {
      UniqueFd out = open_file(path, O_WRONLY | O_CREAT | O_TRUNC);
      header_bytes = write_file(ctx, out.get());
      generate_ns = generate_time.elapsed_ns();
      Stopwatch fsync_time;
      fsync_or_throw(out.get());
      fsync_ns = fsync_time.elapsed_ns();
    }
    const std::uint64_t file_size = kHeaderLengthBytes + header_bytes + tensors_ * tensor_size_;

    // Through FUSE the daemon reads the workspace's file: both page caches start cold.
    UniqueFd local = open_file(path, O_RDONLY);
    std::optional<FuseMount> fuse;
    if (storage_ == kFuse) fuse.emplace(ctx.workspace().dir(), kFuseReadahead);
    UniqueFd fd = fuse ? open_file(fuse->dir() / path.filename(), O_RDONLY) : std::move(local);
    const auto cold = [&] {
      if (fuse) drop_page_cache(local.get());
      drop_page_cache(fd.get());
    };
    const auto run_way = [&](std::uint64_t way, auto load) -> std::optional<LoadCost> {
      if (ways_ != kAllWays && ways_ != way) return std::nullopt;
      ctx.check_interrupt();
      cold();
      LoadCost cost = load();
      if (const auto st = file_cachestat(fd.get())) cost.cached_pages = st->cached;
      return cost;
    };
    const auto lazy = run_way(kLazy, [&] { return load_lazy(fd.get(), file_size, wanted); });
    const auto eager = run_way(kEager, [&] { return load_eager(fd.get(), file_size, wanted); });
    const auto prefetch =
        run_way(kPrefetch, [&] { return load_prefetch(ctx, fd.get(), file_size, wanted); });

    ScenarioResult r;
    r.figures["file_bytes"] = file_size;
    r.figures["header_bytes"] = header_bytes;
    r.figures["tensors"] = tensors_;
    r.figures["tensor_bytes"] = tensor_size_;
    r.figures["tensor"] = wanted;
    const auto read_ahead = read_ahead_bytes(fd.get());
    r.figures["read_ahead_bytes"] = read_ahead ? nlohmann::ordered_json(*read_ahead) : nullptr;
    r.figures["storage"] = fuse ? "fuse" : "local";
    r.figures["file"] = (fuse ? fuse->dir() / path.filename() : path).string();
    r.figures["generate_ns"] = generate_ns;
    r.figures["fsync_ns"] = fsync_ns;
    std::optional<std::uint64_t> sum;
    bool agree = true;
    for (const auto& [name, cost] :
         {std::pair{"lazy", &lazy}, std::pair{"eager", &eager}, std::pair{"prefetch", &prefetch}}) {
      if (!*cost) continue;
      r.figures[name] = cost_json(**cost);
      r.figures[name]["cached_pages_after"] =
          (*cost)->cached_pages ? nlohmann::ordered_json(*(*cost)->cached_pages) : nullptr;
      if (sum && *sum != (*cost)->touch_sum) agree = false;
      sum = (*cost)->touch_sum;
    }
    if (prefetch) {
      r.figures["prefetch"]["prefetch_ns"] = prefetch->prefetch_ns;
      r.figures["prefetch"]["threads"] = threads_;
    }
    r.figures["views_agree"] = agree;

    r.lines.push_back(fmt::format("generated {} tensors × {} ({} in all): {}, fsync {}", tensors_,
                                  human_bytes(tensor_size_), human_bytes(file_size),
                                  human_duration(generate_ns), human_duration(fsync_ns)));
    r.lines.push_back(fmt::format("load {} ({}){}, page cache dropped before each way:", wanted,
                                  human_bytes(tensor_size_),
                                  fuse ? " through FUSE (bindfs, one-page readahead)" : ""));
    if (lazy) r.lines.push_back(cost_line("  lazy (mmap, touch the tensor)", *lazy));
    if (eager) r.lines.push_back(cost_line("  eager (read the whole file)", *eager));
    if (prefetch)
      r.lines.push_back(
          cost_line(fmt::format("  prefetch ({} threads, then mmap)", threads_), *prefetch) +
          fmt::format(" (prefetch {})", human_duration(prefetch->prefetch_ns)));
    if (fuse)
      r.lines.push_back(
          fmt::format("through FUSE each read the page cache misses asks the daemon for at most {}",
                      human_bytes(kFuseReadahead)));
    else if (read_ahead)
      r.lines.push_back(fmt::format(
          "lazy reads what it touches plus the device's readahead around each fault ({})",
          human_bytes(*read_ahead)));
    if (!agree) r.lines.push_back("the ways saw different bytes: the file changed under them?");
    return r;
  }

 private:
  static std::string tensor_name(std::uint64_t index) { return fmt::format("layer.{}", index); }

  // Writes header and tensors; returns the header's length (padded, without its 8-byte size).
  std::uint64_t write_file(LoadContext& ctx, int fd) const {
    const std::uint64_t elements = tensor_size_ / 2;
    nlohmann::ordered_json header;
    for (std::uint64_t i = 0; i < tensors_; ++i) {
      nlohmann::ordered_json shape = elements % 1024 == 0
                                         ? nlohmann::ordered_json{elements / 1024, 1024}
                                         : nlohmann::ordered_json{elements};
      header[tensor_name(i)] = {{"dtype", "F16"},
                                {"shape", shape},
                                {"data_offsets", {i * tensor_size_, (i + 1) * tensor_size_}}};
    }
    std::string text = header.dump();
    // Writers pad the header with spaces so the data starts 8-byte aligned.
    text.append((8 - text.size() % 8) % 8, ' ');
    std::vector<char> prefix(kHeaderLengthBytes);
    for (std::uint64_t i = 0; i < kHeaderLengthBytes; ++i)
      prefix[i] = static_cast<char>((text.size() >> (8 * i)) & 0xff);
    prefix.insert(prefix.end(), text.begin(), text.end());
    write_all(fd, prefix.data(), prefix.size(), 0);

    std::vector<char> tensor(tensor_size_);
    auto progress = ctx.progress("generate", tensors_);
    for (std::uint64_t i = 0; i < tensors_; ++i) {
      ctx.check_interrupt();
      fill_pattern(tensor, i + 1);
      write_all(fd, tensor.data(), tensor.size(),
                static_cast<off_t>(prefix.size() + i * tensor_size_));
      progress.update(i + 1);
    }
    return text.size();
  }

  // The end of the lazy and prefetched loads: map the file, find the tensor from the header in
  // the mapping and touch its pages in place; the load's time and counters stop there.
  static LoadCost touch_mapped_tensor(int fd, std::uint64_t file_size, const std::string& wanted,
                                      const Stopwatch& time, const CounterDelta& counters,
                                      LoadCost cost) {
    FileMapping map(fd, file_size);
    const TensorSpan span = find_tensor(map.data(), file_size, wanted);
    cost.touch_sum = touch_pages(map.data() + span.begin, span.size);
    cost.load_ns = time.elapsed_ns();
    counters.finish(cost);
    return cost;
  }

  // mmap the file, read the header from the mapping, touch the tensor's pages in place.
  static LoadCost load_lazy(int fd, std::uint64_t file_size, const std::string& wanted) {
    LoadCost cost;
    CounterDelta counters;
    Stopwatch time;
    return touch_mapped_tensor(fd, file_size, wanted, time, counters, cost);
  }

  // read() the whole file into memory, then take the tensor from the buffer.
  static LoadCost load_eager(int fd, std::uint64_t file_size, const std::string& wanted) {
    LoadCost cost;
    CounterDelta counters;
    Stopwatch time;
    // new char[] leaves the buffer untouched: the read's copy is what makes it resident.
    std::unique_ptr<char[]> buffer(new char[file_size]);
    read_all(fd, buffer.get(), file_size, 0);
    const TensorSpan span = find_tensor(buffer.get(), file_size, wanted);
    cost.touch_sum = touch_pages(buffer.get() + span.begin, span.size);
    cost.load_ns = time.elapsed_ns();
    counters.finish(cost);
    return cost;
  }

  // Threads pread the file chunk by chunk into throw-away buffers (the page cache keeps the
  // pages), then the tensor is viewed through mmap as in the lazy way, without faults to disk.
  LoadCost load_prefetch(const LoadContext& ctx, int fd, std::uint64_t file_size,
                         const std::string& wanted) const {
    LoadCost cost;
    CounterDelta counters;
    Stopwatch time;
    {
      const std::uint64_t chunks = (file_size + kPrefetchChunk - 1) / kPrefetchChunk;
      std::atomic<std::uint64_t> next_chunk{0};
      std::atomic<bool> stop{false};
      std::mutex error_mutex;
      std::exception_ptr first_error;
      {
        std::vector<std::jthread> readers;
        for (std::uint64_t t = 0; t < threads_; ++t) {
          readers.emplace_back([&, t] {
            name_this_thread(fmt::format("prefetch-{}", t));
            try {
              ScratchBuffer scratch(kPrefetchChunk);
              for (std::uint64_t c = next_chunk++; c < chunks && !stop; c = next_chunk++) {
                ctx.check_interrupt();
                const std::uint64_t offset = c * kPrefetchChunk;
                read_all(fd, scratch.data(), std::min(kPrefetchChunk, file_size - offset),
                         static_cast<off_t>(offset));
              }
            } catch (...) {
              std::lock_guard lock(error_mutex);
              if (!first_error) first_error = std::current_exception();
              stop = true;
            }
          });
        }
      }  // jthreads join here
      if (first_error) std::rethrow_exception(first_error);
    }
    cost.prefetch_ns = time.elapsed_ns();
    return touch_mapped_tensor(fd, file_size, wanted, time, counters, cost);
  }

  // --ways and --storage, by index of their choices.
  static constexpr std::uint64_t kAllWays = 0, kLazy = 1, kEager = 2, kPrefetch = 3;
  static constexpr std::uint64_t kFuse = 1;
  static constexpr std::uint64_t kFuseReadahead = 4096;

  std::uint64_t tensors_ = 16;
  std::uint64_t tensor_size_ = 2u << 20;
  std::uint64_t threads_ = 4;
  std::uint64_t ways_ = kAllWays;
  std::uint64_t storage_ = 0;
};

}  // namespace

std::unique_ptr<Scenario> make_mmap_load() {
  return std::make_unique<MmapLoad>();
}

}  // namespace wp::loadgen
