// SPDX-License-Identifier: Apache-2.0
#include "record/trace_file.h"

#include <array>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

#include "common/errors.h"

namespace wp {
namespace {

constexpr char kMagic[8] = {'W', 'P', 'T', 'R', 'A', 'C', 'E', '\0'};
constexpr std::uint32_t kMaxHeader = 1u << 20;

using json = nlohmann::json;

json header_json(const TraceFileHeader& h) {
  json devices = json::array();
  for (const auto& d : h.devices)
    devices.push_back({{"dev", d.dev},
                       {"disk", d.disk},
                       {"name", d.name},
                       {"volatile_write_cache", d.volatile_write_cache},
                       {"fua", d.fua}});
  json out = {{"writepath", h.writepath_version},
              {"kernel", h.kernel},
              {"record_version", h.record_version},
              {"clock", h.clock},
              {"hooks", h.hooks},
              {"devices", devices},
              {"command", h.command}};
  if (h.min_latency_ns) out["min_latency_ns"] = h.min_latency_ns;
  out["page_shift"] = h.page_shift;
  if (h.io_owners) out["io_owners"] = true;
  if (h.clock_offsets)
    out["clock_offsets"] = {{"realtime_ns", h.clock_offsets->realtime_ns},
                            {"boottime_ns", h.clock_offsets->boottime_ns}};
  if (!h.file_systems.empty()) {
    json file_systems = json::array();
    for (const auto& f : h.file_systems)
      file_systems.push_back(
          {{"dev", f.dev}, {"aliases", f.aliases}, {"disks", f.disks}, {"type", f.type}});
    out["file_systems"] = file_systems;
  }
  return out;
}

// Throws json exceptions on missing or mistyped keys; the caller turns them into an error.
TraceFileHeader header_from(const json& j) {
  TraceFileHeader h;
  h.writepath_version = j.at("writepath").get<std::string>();
  h.kernel = j.at("kernel").get<std::string>();
  h.record_version = j.at("record_version").get<std::uint32_t>();
  h.clock = j.at("clock").get<std::string>();
  h.hooks = j.at("hooks").get<std::vector<std::string>>();
  for (const auto& d : j.at("devices")) {
    DeviceInfo info;
    info.dev = d.at("dev").get<DevT>();
    info.disk = d.at("disk").get<DevT>();
    info.name = d.at("name").get<std::string>();
    info.volatile_write_cache = d.at("volatile_write_cache").get<bool>();
    info.fua = d.at("fua").get<bool>();
    h.devices.push_back(std::move(info));
  }
  h.command = j.at("command").get<std::vector<std::string>>();
  if (j.contains("min_latency_ns")) h.min_latency_ns = j.at("min_latency_ns").get<Nanos>();
  if (j.contains("page_shift")) {
    h.page_shift = j.at("page_shift").get<unsigned>();
    // Pages of 512 bytes to 2 MiB: anything else is damage, not a kernel.
    if (h.page_shift < 9 || h.page_shift > 21) throw std::out_of_range("page_shift");
  }
  if (j.contains("io_owners")) h.io_owners = j.at("io_owners").get<bool>();
  if (j.contains("clock_offsets")) {
    const json& c = j.at("clock_offsets");
    h.clock_offsets = ClockOffsets{.realtime_ns = c.at("realtime_ns").get<std::int64_t>(),
                                   .boottime_ns = c.at("boottime_ns").get<std::int64_t>()};
  }
  if (j.contains("file_systems")) {
    for (const auto& f : j.at("file_systems")) {
      FileSystemInfo info;
      info.dev = f.at("dev").get<DevT>();
      info.aliases = f.at("aliases").get<std::vector<DevT>>();
      info.disks = f.at("disks").get<std::vector<DevT>>();
      info.type = f.at("type").get<std::string>();
      h.file_systems.push_back(std::move(info));
    }
  }
  return h;
}

std::uint32_t read_u32(const std::byte* p) {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

}  // namespace

// ---- writer ----------------------------------------------------------------------------------

TraceFileWriter::TraceFileWriter(const std::string& path, const TraceFileHeader& header,
                                 std::size_t buffer_bytes)
    : buffer_(std::max<std::size_t>(buffer_bytes, kMaxFramePayload + 8)) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd_ < 0) throw std::runtime_error(cannot_write(path, std::strerror(errno)));
  // O_TRUNC keeps an existing file's mode: a trace is private whatever was there before
  // (a device or a pipe given as the path keeps its own).
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) ::fchmod(fd_, 0600);
  const std::string text = header_json(header).dump();
  const std::uint32_t version = kTraceFileVersion;
  const std::uint32_t length = static_cast<std::uint32_t>(text.size());
  std::string head(kMagic, sizeof(kMagic));
  head.append(reinterpret_cast<const char*>(&version), sizeof(version));
  head.append(reinterpret_cast<const char*>(&length), sizeof(length));
  head += text;
  write_out(reinterpret_cast<const std::byte*>(head.data()), head.size());
  if (!ok()) {
    const std::string reason = error();
    ::close(fd_);
    throw std::runtime_error(cannot_write(path, reason));
  }
}

TraceFileWriter::~TraceFileWriter() {
  flush();
  ::close(fd_);
}

std::string TraceFileWriter::error() const {
  return error_ ? std::strerror(error_) : "";
}

void TraceFileWriter::write_out(const std::byte* data, std::size_t size) {
  while (size > 0 && ok()) {
    const ssize_t n = ::write(fd_, data, size);
    if (n < 0) {
      if (errno != EINTR) error_ = errno;
      continue;
    }
    if (n == 0) error_ = EIO;  // a regular file never takes nothing: do not spin
    data += n;
    size -= static_cast<std::size_t>(n);
    written_ += static_cast<std::uint64_t>(n);
  }
}

void TraceFileWriter::frame(FrameKind kind, const void* payload, std::uint32_t size) {
  if (!ok()) return;
  const std::size_t whole = 8 + std::size_t{size};
  if (buffer_.size() - used_ < whole) flush();
  const std::uint32_t header[2] = {size, static_cast<std::uint32_t>(kind)};
  std::memcpy(buffer_.data() + used_, header, sizeof(header));
  if (size) std::memcpy(buffer_.data() + used_ + sizeof(header), payload, size);
  used_ += whole;
}

void TraceFileWriter::record(std::span<const std::byte> bytes) {
  if (bytes.size() > kMaxFramePayload) return;
  frame(FrameKind::Record, bytes.data(), static_cast<std::uint32_t>(bytes.size()));
  ++records_;
}

bool lost_frame_length_ok(std::uint32_t length) {
  return length >= kMinLostFramePayload && length <= sizeof(LostCounts) &&
         length % sizeof(std::uint64_t) == 0;
}

LostCounts lost_counts_of(std::span<const std::byte> payload) {
  LostCounts counts{};
  std::memcpy(counts.data(), payload.data(), std::min(payload.size(), sizeof(counts)));
  return counts;
}

void TraceFileWriter::lost(const LostCounts& delta) {
  frame(FrameKind::Lost, delta.data(), sizeof(delta));
}

void TraceFileWriter::untraced(const UntracedByName& counts) {
  std::vector<std::byte> payload;
  for (const auto& [name, count] : counts) {
    if (name.empty() || name.size() > 0xff) continue;  // cannot be framed; the table has none
    payload.push_back(static_cast<std::byte>(name.size()));
    const auto* chars = reinterpret_cast<const std::byte*>(name.data());
    payload.insert(payload.end(), chars, chars + name.size());
    std::byte bytes[sizeof(count)];
    std::memcpy(bytes, &count, sizeof(count));
    payload.insert(payload.end(), bytes, bytes + sizeof(count));
  }
  frame(FrameKind::Untraced, payload.data(), static_cast<std::uint32_t>(payload.size()));
}

namespace {
struct FilteredRequestsEntry {
  std::uint32_t dev;
  std::uint32_t zero;
  std::uint64_t write_requests;
  std::uint64_t write_bytes;
  std::uint64_t flush_requests;
};
static_assert(sizeof(FilteredRequestsEntry) == 32);
}  // namespace

void TraceFileWriter::filtered_requests(const FilteredRequestsByDisk& totals) {
  std::vector<FilteredRequestsEntry> entries;
  for (const auto& [dev, t] : totals)
    entries.push_back({dev, 0, t.write_requests, t.write_bytes, t.flush_requests});
  frame(FrameKind::FilteredRequests, entries.data(),
        static_cast<std::uint32_t>(entries.size() * sizeof(FilteredRequestsEntry)));
}

std::optional<FilteredRequestsByDisk> filtered_requests_of(const Frame& frame) {
  if (frame.kind != FrameKind::FilteredRequests ||
      frame.payload.size() % sizeof(FilteredRequestsEntry) != 0)
    return std::nullopt;
  FilteredRequestsByDisk totals;
  for (std::size_t at = 0; at < frame.payload.size(); at += sizeof(FilteredRequestsEntry)) {
    FilteredRequestsEntry e;
    std::memcpy(&e, frame.payload.data() + at, sizeof(e));
    if (e.zero != 0 || totals.count(e.dev)) return std::nullopt;
    totals[e.dev] = {e.write_requests, e.write_bytes, e.flush_requests};
  }
  return totals;
}

namespace {
// The kernel's map entry as it is: its key, then its value.
struct FilteredIoEntry {
  wp_filtered_io_key key;
  wp_filtered_io io;
};
static_assert(sizeof(FilteredIoEntry) == 64);
// One frame holds the whole map (bpf/block.bpf.c filtered_io, 16384 entries).
static_assert(16384 * sizeof(FilteredIoEntry) <= kMaxFramePayload);
}  // namespace

void TraceFileWriter::filtered_io(const std::vector<FilteredIo>& owners) {
  std::vector<FilteredIoEntry> entries;
  for (const FilteredIo& o : owners) {
    FilteredIoEntry e{{o.disk, o.tgid, o.cgroup_id, o.ino, o.dev, 0}, {o.bytes, o.bios, {}}};
    std::memcpy(e.io.comm, o.comm.data(), std::min(o.comm.size(), sizeof(e.io.comm)));
    entries.push_back(e);
  }
  frame(FrameKind::FilteredIo, entries.data(),
        static_cast<std::uint32_t>(entries.size() * sizeof(FilteredIoEntry)));
}

std::optional<std::vector<FilteredIo>> filtered_io_of(const Frame& frame) {
  if (frame.kind != FrameKind::FilteredIo || frame.payload.size() % sizeof(FilteredIoEntry) != 0)
    return std::nullopt;
  std::vector<FilteredIo> owners;
  for (std::size_t at = 0; at < frame.payload.size(); at += sizeof(FilteredIoEntry)) {
    FilteredIoEntry e;
    std::memcpy(&e, frame.payload.data() + at, sizeof(e));
    if (e.key.pad != 0) return std::nullopt;
    owners.push_back(filtered_io_entry(e.key, e.io));
  }
  return owners;
}

void TraceFileWriter::write_idle_disks(const WriteIdleDisks& idle) {
  std::vector<std::byte> payload(sizeof(std::uint64_t) + idle.disks.size() * sizeof(DevT));
  const std::uint64_t at = idle.at;
  std::memcpy(payload.data(), &at, sizeof(at));
  if (!idle.disks.empty())
    std::memcpy(payload.data() + sizeof(at), idle.disks.data(), idle.disks.size() * sizeof(DevT));
  frame(FrameKind::WriteIdleDisks, payload.data(), static_cast<std::uint32_t>(payload.size()));
}

std::optional<WriteIdleDisks> write_idle_disks_of(const Frame& frame) {
  constexpr std::size_t kAt = sizeof(std::uint64_t);
  if (frame.kind != FrameKind::WriteIdleDisks || frame.payload.size() < kAt ||
      (frame.payload.size() - kAt) % sizeof(DevT) != 0)
    return std::nullopt;
  WriteIdleDisks idle;
  std::uint64_t at = 0;
  std::memcpy(&at, frame.payload.data(), kAt);
  idle.at = at;
  idle.disks.resize((frame.payload.size() - kAt) / sizeof(DevT));
  if (!idle.disks.empty())
    std::memcpy(idle.disks.data(), frame.payload.data() + kAt, idle.disks.size() * sizeof(DevT));
  std::vector<DevT> sorted = idle.disks;
  std::sort(sorted.begin(), sorted.end());
  if (idle.at == 0 || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    return std::nullopt;
  return idle;
}

void TraceFileWriter::cgroup_name(const CgroupName& name) {
  if (name.path.empty() || name.path.size() > kMaxCgroupPath) return;
  std::vector<std::byte> payload(sizeof(name.id) + name.path.size());
  std::memcpy(payload.data(), &name.id, sizeof(name.id));
  std::memcpy(payload.data() + sizeof(name.id), name.path.data(), name.path.size());
  frame(FrameKind::CgroupName, payload.data(), static_cast<std::uint32_t>(payload.size()));
}

void TraceFileWriter::container_names(const CgroupContainerNames& names) {
  const ContainerNames& n = names.names;
  if (n.empty()) return;
  std::string text;
  for (const std::string* field : {&n.name, &n.pod, &n.namespace_, &n.hostname}) {
    if (field->size() > kMaxContainerName || field->find('\0') != std::string::npos) return;
    text += *field;
    text += '\0';
  }
  std::vector<std::byte> payload(sizeof(names.id) + text.size());
  std::memcpy(payload.data(), &names.id, sizeof(names.id));
  std::memcpy(payload.data() + sizeof(names.id), text.data(), text.size());
  frame(FrameKind::ContainerNames, payload.data(), static_cast<std::uint32_t>(payload.size()));
}

std::optional<CgroupContainerNames> container_names_of(const Frame& frame) {
  if (frame.kind != FrameKind::ContainerNames) return std::nullopt;
  const auto& p = frame.payload;
  if (p.size() < sizeof(std::uint64_t) + 4) return std::nullopt;
  CgroupContainerNames out;
  std::memcpy(&out.id, p.data(), sizeof(out.id));
  std::string_view rest(reinterpret_cast<const char*>(p.data()) + sizeof(out.id),
                        p.size() - sizeof(out.id));
  ContainerNames& n = out.names;
  for (std::string* field : {&n.name, &n.pod, &n.namespace_, &n.hostname}) {
    const auto end = rest.find('\0');
    if (end == std::string_view::npos || end > kMaxContainerName) return std::nullopt;
    field->assign(rest.substr(0, end));
    rest.remove_prefix(end + 1);
  }
  if (!rest.empty()) return std::nullopt;
  return out;
}

void TraceFileWriter::kernel_symbol(const KernelSymbolName& symbol) {
  if (symbol.name.empty() || symbol.name.size() > kMaxKernelSymbolName) return;
  std::vector<std::byte> payload(sizeof(symbol.address) + symbol.name.size());
  std::memcpy(payload.data(), &symbol.address, sizeof(symbol.address));
  std::memcpy(payload.data() + sizeof(symbol.address), symbol.name.data(), symbol.name.size());
  frame(FrameKind::KernelSymbol, payload.data(), static_cast<std::uint32_t>(payload.size()));
}

std::optional<KernelSymbolName> kernel_symbol_of(const Frame& frame) {
  if (frame.kind != FrameKind::KernelSymbol) return std::nullopt;
  const auto& p = frame.payload;
  if (p.size() <= sizeof(std::uint64_t) || p.size() > sizeof(std::uint64_t) + kMaxKernelSymbolName)
    return std::nullopt;
  KernelSymbolName symbol;
  std::memcpy(&symbol.address, p.data(), sizeof(symbol.address));
  symbol.name.assign(reinterpret_cast<const char*>(p.data()) + sizeof(symbol.address),
                     p.size() - sizeof(symbol.address));
  if (symbol.address == 0 || symbol.name.find('\0') != std::string::npos) return std::nullopt;
  return symbol;
}

std::optional<CgroupName> cgroup_name_of(const Frame& frame) {
  if (frame.kind != FrameKind::CgroupName) return std::nullopt;
  const auto& p = frame.payload;
  if (p.size() <= sizeof(std::uint64_t) || p.size() > sizeof(std::uint64_t) + kMaxCgroupPath)
    return std::nullopt;
  CgroupName name;
  std::memcpy(&name.id, p.data(), sizeof(name.id));
  name.path.assign(reinterpret_cast<const char*>(p.data()) + sizeof(name.id),
                   p.size() - sizeof(name.id));
  if (name.path.front() != '/' || name.path.find('\0') != std::string::npos) return std::nullopt;
  return name;
}

namespace {

// The calls a kind-3 frame counted, in its order: seven u64 counts, then a u64 whose bit i says
// call i had a counter.
constexpr std::array<const char*, 7> kLegacyUntracedCalls{
    "io_uring_enter", "io_submit", "msync", "copy_file_range", "sendfile", "splice", "fallocate"};
constexpr std::size_t kLegacyUntracedPayload = 8 * (kLegacyUntracedCalls.size() + 1);

std::optional<UntracedByName> untraced_fixed_of(std::span<const std::byte> payload) {
  if (payload.size() != kLegacyUntracedPayload) return std::nullopt;
  std::array<std::uint64_t, kLegacyUntracedCalls.size() + 1> words;
  std::memcpy(words.data(), payload.data(), payload.size());
  UntracedByName out;
  for (std::size_t i = 0; i < kLegacyUntracedCalls.size(); ++i)
    if (words.back() & (1ull << i)) out[kLegacyUntracedCalls[i]] = words[i];
  return out;
}

std::optional<UntracedByName> untraced_named_of(std::span<const std::byte> payload) {
  UntracedByName out;
  std::size_t at = 0;
  while (at < payload.size()) {
    const std::size_t length = std::to_integer<std::size_t>(payload[at]);
    if (length == 0 || payload.size() - at - 1 < length + sizeof(std::uint64_t))
      return std::nullopt;
    std::string name(reinterpret_cast<const char*>(payload.data() + at + 1), length);
    std::uint64_t count;
    std::memcpy(&count, payload.data() + at + 1 + length, sizeof(count));
    out[std::move(name)] = count;
    at += 1 + length + sizeof(count);
  }
  return out;
}

}  // namespace

std::optional<UntracedByName> untraced_counts_of(const Frame& frame) {
  switch (frame.kind) {
    case FrameKind::UntracedFixed: return untraced_fixed_of(frame.payload);
    case FrameKind::Untraced: return untraced_named_of(frame.payload);
    default: return std::nullopt;
  }
}

void TraceFileWriter::flush() {
  if (used_ == 0) return;
  write_out(buffer_.data(), used_);
  used_ = 0;
}

// ---- reader ----------------------------------------------------------------------------------

namespace {
// The reader's buffer: a whole maximal frame always fits, reads are large.
constexpr std::size_t kReadChunk = 4u << 20;
}  // namespace

TraceFileReader TraceFileReader::open(const std::string& path) {
  TraceFileReader reader;
  reader.path_ = path;
  reader.file_.open(path, std::ios::binary);
  if (!reader.file_) {
    reader.error_ = fmt::format("cannot read {}: {}", path, std::strerror(errno));
    return reader;
  }
  reader.buffer_.resize(std::max<std::size_t>(kReadChunk, 2 * (std::size_t{kMaxFramePayload} + 8)));
  reader.read_header();
  if (!reader.error_.empty()) reader.error_ = path + ": " + reader.error_;
  return reader;
}

TraceFileReader TraceFileReader::parse(std::span<const std::byte> data) {
  TraceFileReader reader;
  reader.buffer_.assign(data.begin(), data.end());
  reader.end_ = reader.buffer_.size();
  reader.read_header();
  return reader;
}

bool TraceFileReader::have(std::size_t bytes) {
  if (end_ - begin_ >= bytes) return true;
  if (!file_.is_open()) return false;  // from memory: all of it is there
  // Move what is left to the front, then fill the rest.
  std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
  end_ -= begin_;
  begin_ = 0;
  if (buffer_.size() < bytes) buffer_.resize(bytes);
  while (end_ < bytes && file_) {
    file_.read(reinterpret_cast<char*>(buffer_.data() + end_),
               static_cast<std::streamsize>(buffer_.size() - end_));
    end_ += static_cast<std::size_t>(file_.gcount());
  }
  return end_ >= bytes;
}

void TraceFileReader::read_header() {
  if (!have(sizeof(kMagic) + 8) ||
      std::memcmp(buffer_.data() + begin_, kMagic, sizeof(kMagic)) != 0) {
    // Say what it is when it is writepath's own text output, and where a trace file comes from.
    const bool json = have(1) && buffer_[begin_] == std::byte{'{'};
    error_ = fmt::format(
        "{}not a writepath trace file: report reads recordings (writepath record -o FILE, or "
        "trace --save FILE)",
        json ? "JSON Lines, " : "");
    done_ = true;
    return;
  }
  const std::byte* base = buffer_.data() + begin_;
  const std::uint32_t version = read_u32(base + 8);
  if (version != kTraceFileVersion) {
    error_ =
        fmt::format("trace file format {} (this writepath reads {})", version, kTraceFileVersion);
    done_ = true;
    return;
  }
  const std::uint32_t header_length = read_u32(base + 12);
  const auto damaged = [this] {
    error_ = "damaged trace file header";
    done_ = true;
  };
  if (header_length > kMaxHeader || !have(16 + std::size_t{header_length})) return damaged();
  base = buffer_.data() + begin_;
  try {
    header_ = header_from(json::parse(reinterpret_cast<const char*>(base + 16),
                                      reinterpret_cast<const char*>(base + 16 + header_length)));
  } catch (const std::exception&) {
    return damaged();
  }
  begin_ += 16 + header_length;
  offset_ += 16 + header_length;
}

std::optional<Frame> TraceFileReader::next() {
  if (done_ || !error_.empty()) return std::nullopt;
  auto stop = [this](std::string why) -> std::optional<Frame> {
    warning_ = std::move(why);
    done_ = true;
    return std::nullopt;
  };
  const auto cut_short = [&] {
    return stop(fmt::format("the file ends inside a frame after {} frames (recorder killed?)",
                            frames_read_));
  };
  if (!have(1)) {
    done_ = true;  // the end, between frames
    return std::nullopt;
  }
  if (!have(8)) return cut_short();
  const std::uint32_t length = read_u32(buffer_.data() + begin_);
  const std::uint32_t kind = read_u32(buffer_.data() + begin_ + 4);
  const bool known =
      kind == static_cast<std::uint32_t>(FrameKind::Record) ||
      (kind == static_cast<std::uint32_t>(FrameKind::Lost) && lost_frame_length_ok(length)) ||
      kind == static_cast<std::uint32_t>(FrameKind::UntracedFixed) ||
      kind == static_cast<std::uint32_t>(FrameKind::Untraced) ||
      kind == static_cast<std::uint32_t>(FrameKind::CgroupName) ||
      kind == static_cast<std::uint32_t>(FrameKind::KernelSymbol) ||
      kind == static_cast<std::uint32_t>(FrameKind::FilteredRequests) ||
      kind == static_cast<std::uint32_t>(FrameKind::ContainerNames) ||
      kind == static_cast<std::uint32_t>(FrameKind::WriteIdleDisks) ||
      kind == static_cast<std::uint32_t>(FrameKind::FilteredIo);
  const auto damaged = [&] {
    return stop(fmt::format("damaged frame at byte {}: kept the {} frames before it", offset_,
                            frames_read_));
  };
  if (!known || length > kMaxFramePayload) return damaged();
  if (!have(8 + std::size_t{length})) return cut_short();
  Frame frame{static_cast<FrameKind>(kind), std::span(buffer_.data() + begin_ + 8, length)};
  if ((frame.kind == FrameKind::UntracedFixed || frame.kind == FrameKind::Untraced) &&
      !untraced_counts_of(frame))
    return damaged();
  if (frame.kind == FrameKind::CgroupName && !cgroup_name_of(frame)) return damaged();
  if (frame.kind == FrameKind::KernelSymbol && !kernel_symbol_of(frame)) return damaged();
  if (frame.kind == FrameKind::FilteredRequests && !filtered_requests_of(frame)) return damaged();
  if (frame.kind == FrameKind::ContainerNames && !container_names_of(frame)) return damaged();
  if (frame.kind == FrameKind::WriteIdleDisks && !write_idle_disks_of(frame)) return damaged();
  if (frame.kind == FrameKind::FilteredIo && !filtered_io_of(frame)) return damaged();
  begin_ += 8 + length;
  offset_ += 8 + length;
  ++frames_read_;
  return frame;
}

}  // namespace wp
