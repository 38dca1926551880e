// SPDX-License-Identifier: Apache-2.0
// odirect: O_DIRECT bypasses the page cache, and in exchange the buffer's address, the length
// and the file offset must be aligned to the device's logical block size. An unaligned write
// fails with EINVAL; an aligned one goes straight to the device and leaves no page cached.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "common/units.h"
#include "loadgen/context.h"
#include "loadgen/measure.h"
#include "loadgen/scenarios/scenarios.h"

namespace wp::loadgen {
namespace {

constexpr std::uint64_t kUnalignedBytes = 1000;
constexpr std::uint64_t kUnalignedBufferShift = 1;  // bytes past a page boundary
constexpr std::uint64_t kAlignment = 4096;

// One pwrite's outcome: bytes written or the errno it failed with.
struct Attempt {
  std::uint64_t request_bytes = 0;
  std::uint64_t buffer_misalignment_bytes = 0;
  std::uint64_t offset = 0;
  std::optional<std::uint64_t> written_bytes;
  std::optional<int> error;
  Nanos ns = 0;
};

Attempt attempt_write(int fd, const char* buffer, std::uint64_t size, std::uint64_t offset) {
  Attempt a;
  a.request_bytes = size;
  a.buffer_misalignment_bytes = reinterpret_cast<std::uintptr_t>(buffer) % kAlignment;
  a.offset = offset;
  Stopwatch time;
  ssize_t n;
  do {
    n = ::pwrite(fd, buffer, size, static_cast<off_t>(offset));
  } while (n < 0 && errno == EINTR);
  a.ns = time.elapsed_ns();
  if (n < 0)
    a.error = errno;
  else
    a.written_bytes = static_cast<std::uint64_t>(n);
  return a;
}

nlohmann::ordered_json attempt_json(const Attempt& a) {
  nlohmann::ordered_json j;
  j["request_bytes"] = a.request_bytes;
  j["buffer_misalignment_bytes"] = a.buffer_misalignment_bytes;
  j["offset_bytes"] = a.offset;
  j["written_bytes"] = a.written_bytes ? nlohmann::ordered_json(*a.written_bytes) : nullptr;
  j["error"] = a.error ? nlohmann::ordered_json(errno_name(*a.error)) : nullptr;
  j["write_ns"] = a.ns;
  return j;
}

std::string outcome(const Attempt& a) {
  return a.error ? fmt::format("{} ({})", errno_name(*a.error), std::strerror(*a.error))
                 : fmt::format("{} written", human_bytes(*a.written_bytes));
}

// What the filesystem says O_DIRECT needs (statx STATX_DIOALIGN, Linux 6.1+), when it says.
struct DioAlignment {
  std::uint32_t memory = 0;
  std::uint32_t offset = 0;
};
std::optional<DioAlignment> dio_alignment(int fd) {
  struct statx stx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) != 0) return std::nullopt;
  if (!(stx.stx_mask & STATX_DIOALIGN) || stx.stx_dio_offset_align == 0) return std::nullopt;
  return DioAlignment{stx.stx_dio_mem_align, stx.stx_dio_offset_align};
}

class ODirect : public Scenario {
 public:
  std::string name() const override { return "odirect"; }
  std::string summary() const override {
    return "O_DIRECT: an unaligned write fails with EINVAL, an aligned one skips the page cache";
  }
  std::vector<Param> params() override {
    return {{"size", "bytes of the aligned write (a multiple of 4k)", ParamKind::Size, &size_,
             kAlignment, 256u << 20},
            {"offset", "file offset of the aligned write (a multiple of 4k)", ParamKind::Size,
             &offset_, 0, 1ull << 40}};
  }
  std::uint64_t space_needed() const override {
    // The file is sparse below --offset: only the written blocks take room.
    return size_ + kAlignment;
  }
  std::string validate() const override {
    if (size_ % kAlignment != 0) return "--size must be a multiple of 4k";
    if (offset_ % kAlignment != 0) return "--offset must be a multiple of 4k";
    return "";
  }

  ScenarioResult run(LoadContext& ctx) override {
    auto phase = ctx.measured_phase("odirect-writer");  // all of the run is measured
    auto path = ctx.workspace().path("odirect.dat");
    UniqueFd fd = open_file(path, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT);
    const auto alignment = dio_alignment(fd.get());

    // One page more than the aligned write needs: the unaligned attempt starts a byte in.
    AlignedBuffer buffer(size_ + kAlignment);
    std::vector<char> pattern(size_ + kAlignment);
    fill_pattern(pattern, 7);
    std::memcpy(buffer.data(), pattern.data(), pattern.size());

    const Attempt unaligned =
        attempt_write(fd.get(), buffer.data() + kUnalignedBufferShift, kUnalignedBytes, 0);
    ctx.check_interrupt();
    const Attempt aligned = attempt_write(fd.get(), buffer.data(), size_, offset_);
    const Residency residency = page_cache_residency(path);

    ScenarioResult r;
    r.figures["unaligned"] = attempt_json(unaligned);
    r.figures["aligned"] = attempt_json(aligned);
    r.figures["dio_mem_align_bytes"] =
        alignment ? nlohmann::ordered_json(alignment->memory) : nlohmann::ordered_json(nullptr);
    r.figures["dio_offset_align_bytes"] =
        alignment ? nlohmann::ordered_json(alignment->offset) : nlohmann::ordered_json(nullptr);
    r.figures["resident_pages"] = residency.resident_pages;
    r.figures["file_pages"] = residency.total_pages;

    r.lines.push_back(fmt::format(
        "unaligned: {} B from buffer+{} at offset 0: {}{}", kUnalignedBytes, kUnalignedBufferShift,
        outcome(unaligned), unaligned.error == EINVAL ? " (expected)" : " (EINVAL expected)"));
    r.lines.push_back(fmt::format("aligned: {} from a page-aligned buffer at offset {}: {} in {}",
                                  human_bytes(size_), offset_, outcome(aligned),
                                  human_duration(aligned.ns)));
    if (alignment)
      r.lines.push_back(fmt::format(
          "the filesystem asks O_DIRECT for buffers aligned to {} B, offsets and lengths to {} B",
          alignment->memory, alignment->offset));
    r.lines.push_back(fmt::format("page cache afterwards: {} of the file's {} pages",
                                  residency.resident_pages, residency.total_pages));
    return r;
  }

 private:
  std::uint64_t size_ = kAlignment;
  std::uint64_t offset_ = 0;
};

}  // namespace

std::unique_ptr<Scenario> make_odirect() {
  return std::make_unique<ODirect>();
}

}  // namespace wp::loadgen
