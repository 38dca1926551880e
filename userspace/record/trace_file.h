// SPDX-License-Identifier: Apache-2.0
// The binary trace file of `writepath record` / `report`: a versioned header, then
// length-framed frames holding the ring-buffer records exactly as the kernel side wrote them.
// A recorder killed mid-write leaves a file readable up to its last whole frame.
//
//   "WPTRACE\0"  u32 format version  u32 header length  header (JSON, UTF-8)
//   frame*:      u32 payload length  u32 frame kind     payload
//
// All integers little-endian (the machines writepath runs on).
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/container.h"
#include "common/wall_clock.h"
#include "decode/decoder.h"
#include "decode/events.h"
#include "decode/syscalls.h"

namespace wp {

constexpr std::uint32_t kTraceFileVersion = 1;

// The untraced calls' counts by name (summary key untraced_calls).
using UntracedByName = std::map<std::string, std::uint64_t>;
constexpr std::uint32_t kMaxFramePayload = 1u << 20;

enum class FrameKind : std::uint32_t {
  Record = 1,  // one ring-buffer record (struct wp_*_record of bpf/writepath.h)
  Lost = 2,    // LostCounts: records lost per hook since the previous Lost frame
  // The untraced calls counted, once, at the end of the trace. Kind 3 held the counts of a
  // fixed list of seven calls (kLegacyUntracedCalls in trace_file.cpp) as raw u64s; kind 4
  // names each call, so the list can change without old files misreading: per counted call
  // a u8 name length, the name, and its u64 count.
  UntracedFixed = 3,
  Untraced = 4,
  // A cgroup id the records name (wp_cgroup_record) and its path under the cgroup2 root, once
  // per id, before the first record naming it: a u64 id, then the path ("/a/b", not
  // NUL-terminated, at most kMaxCgroupPath bytes).
  CgroupName = 6,
  // A kernel text address the records' stacks hold (wp_offcpu_record) and its name on the
  // recording machine ("ext4_sync_file+0x3f [ext4]", "(hidden)" where kptr_restrict hid
  // kallsyms), once per address, before the first record holding it: a u64 address, then the
  // name (not NUL-terminated, at most kMaxKernelSymbolName bytes).
  KernelSymbol = 7,
  // Once, at the end of a filtered trace: what each disk did for the write requests the kernel
  // kept out (they carried only other processes' files, or flushed a disk none of the traced
  // files is on), per disk a u32 dev_t, a u32 zero, and u64 write requests, their bytes and
  // flush requests. The disks' totals count them.
  FilteredRequests = 8,
  // What the recording host said of a container cgroup (common/container.h ContainerNames),
  // once per cgroup id, after its CgroupName frame: a u64 id, then the container's name, its
  // pod's name and namespace and its hostname, each followed by a NUL (each at most
  // kMaxContainerName bytes). The id and runtime are the path's; these are what a report on
  // another machine, or after the container is gone, could not read.
  ContainerNames = 9,
  // Once, at the end of a trace: the disks that showed no write request in flight once the
  // hooks were detached, on a kernel where that means every write request's completion event
  // had fired (WriteIdleDisks): a u64 time (the records' clock), then per disk a u32 dev_t.
  WriteIdleDisks = 10,
  // Once, at the end of a filtered trace: the data bios the kernel kept out of disks traced
  // files live on (a bystander's), by owner: per entry a u32 disk, u32 tgid, u64 cgroup id,
  // u64 ino, u32 file dev_t, u32 zero, u64 bytes, u64 bios and a 16-byte comm (FilteredIo).
  // Each owner's bytes over the trace count them.
  FilteredIo = 11,
};

// The disks a trace's end found with no write request in flight, and when: a write request
// the trace saw begin there and not complete completed unseen, no later than `at`.
struct WriteIdleDisks {
  Nanos at = 0;
  std::vector<DevT> disks;
  bool operator==(const WriteIdleDisks&) const = default;
};

// Write requests the kernel kept out of a filtered trace, per disk.
struct FilteredRequestTotals {
  std::uint64_t write_requests = 0;
  std::uint64_t write_bytes = 0;
  std::uint64_t flush_requests = 0;
  bool operator==(const FilteredRequestTotals&) const = default;
};
using FilteredRequestsByDisk = std::map<DevT, FilteredRequestTotals>;

constexpr std::size_t kMaxKernelSymbolName = 512;
struct KernelSymbolName {
  std::uint64_t address = 0;
  std::string name;
};

constexpr std::size_t kMaxCgroupPath = 4096;
struct CgroupName {
  std::uint64_t id = 0;
  std::string path;
};

constexpr std::size_t kMaxContainerName = 256;
struct CgroupContainerNames {
  std::uint64_t id = 0;  // the cgroup's
  ContainerNames names;
};

// A Lost frame holds one u64 per hook (enum wp_hook) the recorder knew of: hooks are only
// appended, so a file from before a hook was added has fewer counters (8 until the discard
// hook), and the missing ones are zero.
constexpr std::uint32_t kMinLostFramePayload = 8 * sizeof(std::uint64_t);
bool lost_frame_length_ok(std::uint32_t length);
LostCounts lost_counts_of(std::span<const std::byte> payload);

// What the header says about the recording.
struct TraceFileHeader {
  std::string writepath_version;
  std::string kernel;                // uname -r of the recording machine
  std::uint32_t record_version = 0;  // WP_RECORD_VERSION of the records
  std::string clock = "CLOCK_MONOTONIC";
  // CLOCK_REALTIME − clock and CLOCK_BOOTTIME − clock when the recording started (header key
  // "clock_offsets": {"realtime_ns","boottime_ns"}); older files lack it.
  std::optional<ClockOffsets> clock_offsets;
  std::vector<std::string> hooks;  // "tp_btf block:block_rq_issue", …
  std::vector<DeviceInfo> devices;
  // File systems whose superblock device is not a block device (btrfs), with their disks.
  // Written only when there are some; older files lack it.
  std::vector<FileSystemInfo> file_systems;
  std::vector<std::string> command;  // `-- CMD …`, if one was traced
  // record --min-latency: the threshold the recording was made for (0: none). The report
  // applies it unless given its own. Written only when set; older files lack it.
  Nanos min_latency_ns = 0;
  // log2 of the recording kernel's page size: the records' page indexes count such pages.
  // Files from before it was written were all made with 4 KiB pages (12).
  unsigned page_shift = 12;
  // The bio records flag a kernel thread's bios (WP_BIO_KTHREAD) and dirtier records name who
  // dirtied each file: the neighbours of syncs can be told. Older files lack it (false).
  bool io_owners = false;
};

// Writes a trace file: created mode 0600 (traces reveal file and process activity).
// Frames are gathered in one buffer allocated up front and written out whole when it is full
// or on flush(): no allocation and no system call per record, so the recorder keeps up with
// the ring buffer. Only whole frames reach the file, so a killed recorder leaves whole frames.
class TraceFileWriter {
 public:
  static constexpr std::size_t kDefaultBufferBytes = 4u << 20;

  // Throws std::runtime_error with a one-line reason.
  TraceFileWriter(const std::string& path, const TraceFileHeader& header,
                  std::size_t buffer_bytes = kDefaultBufferBytes);
  ~TraceFileWriter();
  TraceFileWriter(const TraceFileWriter&) = delete;
  TraceFileWriter& operator=(const TraceFileWriter&) = delete;

  void record(std::span<const std::byte> bytes);
  void lost(const LostCounts& delta);
  void untraced(const UntracedByName& counts);
  void cgroup_name(const CgroupName& name);
  // Nothing for names that are all empty, or a field longer than kMaxContainerName.
  void container_names(const CgroupContainerNames& names);
  void kernel_symbol(const KernelSymbolName& symbol);
  void filtered_requests(const FilteredRequestsByDisk& totals);
  void filtered_io(const std::vector<FilteredIo>& owners);
  void write_idle_disks(const WriteIdleDisks& idle);
  // Writes out what is buffered.
  void flush();
  // False once a write failed; error() then says why (strerror text). Later frames are dropped.
  bool ok() const { return error_ == 0; }
  std::string error() const;
  std::uint64_t records() const { return records_; }
  std::uint64_t bytes_written() const { return written_; }

 private:
  void frame(FrameKind kind, const void* payload, std::uint32_t size);
  void write_out(const std::byte* data, std::size_t size);

  int fd_ = -1;
  int error_ = 0;  // errno of the first failed write
  std::vector<std::byte> buffer_;
  std::size_t used_ = 0;
  std::uint64_t records_ = 0;
  std::uint64_t written_ = 0;
};

// One frame as read back.
struct Frame {
  FrameKind kind;
  std::span<const std::byte> payload;
};

// The name a CgroupName frame holds; nullopt for a malformed payload or another kind of frame.
std::optional<CgroupName> cgroup_name_of(const Frame& frame);

// The names a ContainerNames frame holds; nullopt for a malformed payload or another kind.
std::optional<CgroupContainerNames> container_names_of(const Frame& frame);

// The address and name a KernelSymbol frame holds; nullopt for a malformed payload or another
// kind of frame.
std::optional<KernelSymbolName> kernel_symbol_of(const Frame& frame);

// The totals of a FilteredRequests frame; nullopt for a malformed payload or another kind.
std::optional<FilteredRequestsByDisk> filtered_requests_of(const Frame& frame);
// The owners of a FilteredIo frame; nullopt for a malformed payload or another kind.
std::optional<std::vector<FilteredIo>> filtered_io_of(const Frame& frame);
// The disks of a WriteIdleDisks frame; nullopt for a malformed payload or another kind.
std::optional<WriteIdleDisks> write_idle_disks_of(const Frame& frame);

// The untraced calls of an Untraced or UntracedFixed frame, by name (the counted ones, zeros
// included); nullopt for a malformed payload or another kind of frame.
std::optional<UntracedByName> untraced_counts_of(const Frame& frame);

// Reads a trace file frame by frame, in constant memory whatever its length (a buffer of a
// few MiB, refilled as frames are taken). Never throws on bad content: a foreign or corrupt file
// gives `error` (and no frames); a damaged or cut-short tail ends the frames early and gives a
// `warning`.
class TraceFileReader {
 public:
  static TraceFileReader open(const std::string& path);           // reads the header
  static TraceFileReader parse(std::span<const std::byte> data);  // from memory (fuzzing)

  TraceFileReader(TraceFileReader&&) = default;
  TraceFileReader& operator=(TraceFileReader&&) = default;
  TraceFileReader(const TraceFileReader&) = delete;
  TraceFileReader& operator=(const TraceFileReader&) = delete;

  const std::string& error() const { return error_; }
  // Set once next() has met a damaged or cut-short tail.
  const std::string& warning() const { return warning_; }
  const TraceFileHeader& header() const { return header_; }
  // The next frame, or nullopt at the end of the frames. Its payload stays valid until the
  // next call.
  std::optional<Frame> next();
  std::uint64_t frames_read() const { return frames_read_; }

 private:
  TraceFileReader() = default;
  void read_header();
  // Makes at least `bytes` bytes available from the current position; false if the file
  // ends (or fails) first.
  bool have(std::size_t bytes);

  std::ifstream file_;  // not open when parsing from memory
  std::string path_;
  std::vector<std::byte> buffer_;
  std::size_t begin_ = 0;     // first unread byte in buffer_
  std::size_t end_ = 0;       // one past the last valid byte in buffer_
  std::uint64_t offset_ = 0;  // file offset of buffer_[begin_]
  bool done_ = false;
  std::string error_;
  std::string warning_;
  TraceFileHeader header_;
  std::uint64_t frames_read_ = 0;
};

}  // namespace wp
