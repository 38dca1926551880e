#include "record/trace_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>

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
  return {{"writepath", h.writepath_version},
          {"kernel", h.kernel},
          {"record_version", h.record_version},
          {"clock", h.clock},
          {"hooks", h.hooks},
          {"devices", devices},
          {"command", h.command}};
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
  return h;
}

std::uint32_t read_u32(const std::byte* p) {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

}  // namespace

// ---- writer ----------------------------------------------------------------------------------

TraceFileWriter::TraceFileWriter(const std::string& path, const TraceFileHeader& header) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    throw std::runtime_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  // O_TRUNC keeps an existing file's mode: a trace is private whatever was there before.
  ::fchmod(fd, 0600);
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    ::close(fd);
    throw std::runtime_error(fmt::format("cannot write {}", path));
  }
  const std::string text = header_json(header).dump();
  const std::uint32_t version = kTraceFileVersion;
  const std::uint32_t length = static_cast<std::uint32_t>(text.size());
  ok_ = std::fwrite(kMagic, sizeof(kMagic), 1, file_) == 1 &&
        std::fwrite(&version, sizeof(version), 1, file_) == 1 &&
        std::fwrite(&length, sizeof(length), 1, file_) == 1 &&
        std::fwrite(text.data(), 1, text.size(), file_) == text.size();
  flush();
  if (!ok_)
    throw std::runtime_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
}

TraceFileWriter::~TraceFileWriter() {
  if (file_) std::fclose(file_);
}

void TraceFileWriter::frame(FrameKind kind, const void* payload, std::uint32_t size) {
  const std::uint32_t header[2] = {size, static_cast<std::uint32_t>(kind)};
  // One fwrite per frame: a kill between two of them can cut a frame, never garble one.
  ok_ = ok_ && std::fwrite(header, sizeof(header), 1, file_) == 1 &&
        (size == 0 || std::fwrite(payload, size, 1, file_) == 1);
}

void TraceFileWriter::record(std::span<const std::byte> bytes) {
  if (bytes.size() > kMaxFramePayload) return;
  frame(FrameKind::Record, bytes.data(), static_cast<std::uint32_t>(bytes.size()));
}

void TraceFileWriter::lost(const LostCounts& delta) {
  frame(FrameKind::Lost, delta.data(), sizeof(delta));
}

void TraceFileWriter::flush() {
  if (file_ && std::fflush(file_) != 0) ok_ = false;
}

// ---- reader ----------------------------------------------------------------------------------

TraceFileReader TraceFileReader::open(const std::string& path) {
  TraceFileReader reader;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    reader.error_ = fmt::format("cannot read {}: {}", path, std::strerror(errno));
    return reader;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  reader.data_.resize(bytes.size());
  std::memcpy(reader.data_.data(), bytes.data(), bytes.size());
  reader.parse_all();
  if (!reader.error_.empty()) reader.error_ = path + ": " + reader.error_;
  return reader;
}

TraceFileReader TraceFileReader::parse(std::span<const std::byte> data) {
  TraceFileReader reader;
  reader.data_.assign(data.begin(), data.end());
  reader.parse_all();
  return reader;
}

void TraceFileReader::parse_all() {
  const std::size_t size = data_.size();
  const std::byte* base = data_.data();
  if (size < sizeof(kMagic) + 8 || std::memcmp(base, kMagic, sizeof(kMagic)) != 0) {
    error_ = "not a writepath trace file";
    return;
  }
  const std::uint32_t version = read_u32(base + 8);
  if (version != kTraceFileVersion) {
    error_ =
        fmt::format("trace file format {} (this writepath reads {})", version, kTraceFileVersion);
    return;
  }
  const std::uint32_t header_length = read_u32(base + 12);
  std::size_t at = 16;
  if (header_length > kMaxHeader || header_length > size - at) {
    error_ = "damaged trace file header";
    return;
  }
  try {
    header_ = header_from(json::parse(reinterpret_cast<const char*>(base + at),
                                      reinterpret_cast<const char*>(base + at + header_length)));
  } catch (const std::exception&) {
    error_ = "damaged trace file header";
    return;
  }
  at += header_length;

  while (at < size) {
    if (size - at < 8) {
      warning_ = fmt::format("the file ends inside a frame after {} frames (recorder killed?)",
                             frames_.size());
      return;
    }
    const std::uint32_t length = read_u32(base + at);
    const std::uint32_t kind = read_u32(base + at + 4);
    const bool known =
        kind == static_cast<std::uint32_t>(FrameKind::Record) ||
        (kind == static_cast<std::uint32_t>(FrameKind::Lost) && length == sizeof(LostCounts));
    if (!known || length > kMaxFramePayload) {
      warning_ =
          fmt::format("damaged frame at byte {}: kept the {} frames before it", at, frames_.size());
      return;
    }
    if (length > size - at - 8) {
      warning_ = fmt::format("the file ends inside a frame after {} frames (recorder killed?)",
                             frames_.size());
      return;
    }
    frames_.push_back(Frame{static_cast<FrameKind>(kind), std::span(base + at + 8, length)});
    at += 8 + length;
  }
}

}  // namespace wp
