// SPDX-License-Identifier: Apache-2.0
#include "decode/decoder.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "writepath.h"

namespace wp {
namespace {

// The record types' sizes are pinned in writepath.h (WP_ASSERT_SIZE); this copies them.
template <typename Record>
bool read_record(std::span<const std::byte> bytes, Record& out) {
  static_assert(std::is_trivially_copyable_v<Record>);
  if (bytes.size() < sizeof(Record)) return false;
  std::memcpy(&out, bytes.data(), sizeof(Record));
  return out.h.size == sizeof(Record);
}

std::string comm_string(const char (&comm)[WP_COMM_LEN]) {
  return std::string(comm, strnlen(comm, WP_COMM_LEN));
}

// Every record's table's fields into an event (record_fields.h): one overload per record.
#define WP_DECODE_RECORD_(tag, TYPE, value, FIELDS, bytes)                  \
  template <typename Event>                                                 \
  bool decode_fields(const wp_##tag##_record& record_, Event& event_out_) { \
    bool ok_ = true;                                                        \
    FIELDS(WP_DECODE_FIELD_)                                                \
    return ok_;                                                             \
  }
WP_RECORD_TABLE(WP_DECODE_RECORD_)
#undef WP_DECODE_RECORD_

// What a record of each kind must hold besides well-formed fields: a folio of no page, a copy
// of no byte, a cgroup of id 0 are records the kernel side never sends.
bool valid(const DiscardEvent& e) {
  return e.pages != 0;
}
bool valid(const MmapDirtyEvent& e) {
  return e.pages != 0;
}
bool valid(const InlineDataEvent& e) {
  return e.len != 0;
}
bool valid(const FileViewEvent& e) {
  return e.ino != 0 && e.view_dev != 0;
}
bool valid(const FuseReplyEvent& e) {
  return e.tid != 0;
}
bool valid(const CgroupEvent& e) {
  return e.cgroup_id != 0;
}
bool valid(const FaultEvent& e) {
  return e.ino != 0 && e.last_ns >= e.start_ns;
}
bool valid(const DirtierEvent& e) {
  return e.ino != 0 && e.pid != 0;
}
bool valid(const BystanderIoEvent& e) {
  return e.rq != 0 && (e.tgid != 0 || e.ino != 0);
}
bool valid(const auto&) {
  return true;
}

// A record whose event holds exactly its table's fields, stamped with the record's time.
template <typename Record, typename E>
std::optional<Event> decode_plain(std::span<const std::byte> bytes) {
  Record r;
  if (!read_record(bytes, r)) return std::nullopt;
  E e;
  e.ts = r.h.ts_ns;
  if (!decode_fields(r, e) || !valid(e)) return std::nullopt;
  return e;
}

std::optional<Event> decode_syscall(std::span<const std::byte> bytes) {
  wp_syscall_record r;
  if (!read_record(bytes, r)) return std::nullopt;
  auto sys = syscall_from_record(r.syscall);
  if (!sys || is_read_syscall(*sys)) return std::nullopt;  // a read's record is a read record
  SyscallEvent e;
  if (!decode_fields(r, e)) return std::nullopt;
  e.end_ns = r.h.ts_ns;
  e.syscall = *sys;
  e.call_flags = r.call_flags & WP_CALL_FLAGS_MASK;
  if (e.syscall == Syscall::SyncFileRange) {
    const std::uint32_t sfr = (e.call_flags >> WP_CALL_SFR_SHIFT) & WP_CALL_SFR_MASK;
    e.call_flags = (sfr & 1 ? call_flag::kSfrWaitBefore : 0) |
                   (sfr & 2 ? call_flag::kSfrWrite : 0) | (sfr & 4 ? call_flag::kSfrWaitAfter : 0);
  }
  if (is_copy_up(e.syscall)) e.call_flags = call_flag::kCopyUp;
  e.via = static_cast<std::uint8_t>(r.call_flags >> WP_CALL_VIA_SHIFT);
  return e;
}

std::optional<Event> decode_read(std::span<const std::byte> bytes) {
  wp_read_record r;
  if (!read_record(bytes, r)) return std::nullopt;
  auto sys = syscall_from_record(r.syscall);
  if (!sys || !is_read_syscall(*sys)) return std::nullopt;
  ReadEvent e;
  if (!decode_fields(r, e.call) || !decode_fields(r, e)) return std::nullopt;
  e.call.end_ns = r.h.ts_ns;
  e.call.syscall = *sys;
  e.call.call_flags = r.call_flags & WP_CALL_FLAGS_MASK;
  e.call.via = static_cast<std::uint8_t>(r.call_flags >> WP_CALL_VIA_SHIFT);
  if (e.pages_added_beyond > e.pages_added) return std::nullopt;
  return e;
}

std::optional<Event> decode_bio(std::span<const std::byte> bytes) {
  wp_bio_record r;
  if (!read_record(bytes, r) || r.nr_extents > WP_BIO_MAX_EXTENTS) return std::nullopt;
  BioEvent e;
  e.ts = r.h.ts_ns;
  if (!decode_fields(r, e)) return std::nullopt;
  for (std::size_t i = 0; i < r.nr_extents; ++i)
    e.extents[i] = Extent{r.extents[i].index, r.extents[i].pages};
  return e;
}

// A path from its components, leaf first: "/" and the names root first, after "..." when the
// walk was cut short, with " (deleted)" after an unlinked file's, as /proc/PID/fd shows it.
std::string joined_path(std::span<const std::string_view> leaf_first, bool cut, bool deleted) {
  std::string path = cut ? "..." : "";
  for (auto it = leaf_first.rbegin(); it != leaf_first.rend(); ++it) {
    path += '/';
    path += *it;
  }
  if (path.empty()) path = "/";
  if (deleted) path += " (deleted)";
  return path;
}

std::optional<Event> decode_file_path(std::span<const std::byte> bytes) {
  wp_file_path_record r;
  if (!read_record(bytes, r) || r.len > WP_PATH_BYTES) return std::nullopt;
  // names[] holds the components leaf first, each NUL-terminated.
  std::vector<std::string_view> components;
  std::string_view names(r.names, r.len);
  while (!names.empty()) {
    const auto nul = names.find('\0');
    if (nul == std::string_view::npos) return std::nullopt;
    components.push_back(names.substr(0, nul));
    names.remove_prefix(nul + 1);
  }
  if (components.size() != r.components) return std::nullopt;
  // The walk passed the writer's root after the first root_components names: those are the
  // writer's path. Without the flag (an older trace, or a walk cut below the root) every name
  // is, as before.
  const bool passed_root = (r.flags & WP_PATH_PASSED_ROOT) != 0;
  if (passed_root && r.root_components > r.components) return std::nullopt;
  const std::size_t own = passed_root ? r.root_components : components.size();
  FilePathEvent e;
  e.ts = r.h.ts_ns;
  if (!decode_fields(r, e)) return std::nullopt;
  e.deleted = (r.flags & WP_PATH_DELETED) != 0;
  // Cut short: names hold the leaf end only. The writer's path is whole if the walk passed
  // its root before it stopped.
  const bool cut = (r.flags & WP_PATH_TRUNCATED) != 0;
  e.truncated = cut && !passed_root;
  e.path = joined_path(std::span(components).first(own), e.truncated, e.deleted);
  if (own != components.size()) e.ns_path = joined_path(components, cut, e.deleted);
  return e;
}

// Variable-sized: the struct, then the names (wp_name_change_record's comment).
std::optional<Event> decode_name_change(std::span<const std::byte> bytes) {
  wp_name_change_record r;
  if (bytes.size() < sizeof(r)) return std::nullopt;
  std::memcpy(&r, bytes.data(), sizeof(r));
  const std::size_t names = std::size_t{r.name_len[0]} + r.name_len[1];
  if (r.h.size != bytes.size() || r.h.size < sizeof(r) + names ||
      r.h.size > sizeof(r) + WP_NS_NAMES_MAX + 8 || r.name_len[0] > WP_NS_NAME_BYTES ||
      r.name_len[1] > WP_NS_NAME_BYTES || r.op < WP_NS_RENAME || r.op > WP_NS_SEND)
    return std::nullopt;
  const auto syscall = name_change_call_from_record(r.syscall);
  if (!syscall) return std::nullopt;
  NameChangeEvent e;
  if (!decode_fields(r, e)) return std::nullopt;
  e.end_ns = r.h.ts_ns;
  e.syscall = *syscall;
  e.fd = r.flags & WP_NS_FD ? r.fd : -1;
  const char* at = reinterpret_cast<const char*>(bytes.data()) + sizeof(r);
  for (std::size_t i = 0; i < 2; ++i) {
    // name_len counts the NUL; a name is what precedes its first NUL.
    e.names[i] = std::string(at, strnlen(at, r.name_len[i]));
    at += r.name_len[i];
  }
  return e;
}

// The return addresses of a stack; zeros (padding, or frames the kernel would not give) dropped.
KernelStack kernel_stack(const wp_u64* frames, unsigned nframes) {
  KernelStack stack;
  for (unsigned i = 0; i < nframes; ++i)
    if (frames[i]) stack.addrs.push_back(frames[i]);
  stack.frames.assign(stack.addrs.size(), std::string());
  return stack;
}

SleepFlag sleep_flag(std::uint8_t cause) {
  switch (cause) {
    case 1: return SleepFlag::DirtyThrottle;  // WP_OFFCPU_THROTTLE (bpf/task_state.bpf.h)
    case 2: return SleepFlag::WritebackWait;  // WP_OFFCPU_WRITEBACK_WAIT
  }
  return SleepFlag::None;
}

std::optional<Event> decode_offcpu(std::span<const std::byte> bytes) {
  wp_offcpu_record r;
  if (!read_record(bytes, r) || r.nslots > WP_OFFCPU_SLOTS) return std::nullopt;
  OffCpuEvent e;
  e.ts = r.h.ts_ns;
  if (!decode_fields(r, e)) return std::nullopt;
  if (r.holder_pid)
    e.inode_lock_holder = LockHolder{r.holder_pid, r.holder_tid, comm_string(r.holder_comm)};
  for (unsigned i = 0; i < r.nslots; ++i) {
    const wp_offcpu_slot& slot = r.slots[i];
    if (slot.nframes > WP_STACK_DEPTH || slot.waker_nframes > WP_STACK_DEPTH ||
        slot.longest_ns > slot.ns)
      return std::nullopt;
    if (slot.sleeps == 0) continue;
    OffCpuSleep sleep;
    sleep.ns = slot.ns;
    sleep.longest_ns = slot.longest_ns;
    sleep.sleeps = slot.sleeps;
    sleep.flag = sleep_flag(slot.cause);
    sleep.stack = kernel_stack(slot.frames, slot.nframes);
    if (slot.flags & WP_WAKER_KNOWN)
      sleep.waker = Waker{slot.waker_pid, slot.waker_tid, comm_string(slot.waker_comm),
                          (slot.flags & WP_WAKER_KTHREAD) != 0,
                          kernel_stack(slot.waker_frames, slot.waker_nframes)};
    e.sleeps.push_back(std::move(sleep));
  }
  std::stable_sort(e.sleeps.begin(), e.sleeps.end(),
                   [](const OffCpuSleep& a, const OffCpuSleep& b) { return a.ns > b.ns; });
  return e;
}

}  // namespace

namespace field {
bool req_op32::decode(ReqOp& out, const wp_t_req_op32& op) {
  switch (op) {
    case WP_OP_READ: out = ReqOp::Read; break;
    case WP_OP_WRITE: out = ReqOp::Write; break;
    case WP_OP_FLUSH: out = ReqOp::Flush; break;
    case WP_OP_DISCARD: out = ReqOp::Discard; break;
    case WP_OP_WRITE_ZEROES: out = ReqOp::WriteZeroes; break;
    default: out = ReqOp::Other;
  }
  return true;
}

bool why8::decode(SubmitWhy& out, const wp_t_why8& why) {
  out = why <= WP_WHY_FAULT ? static_cast<SubmitWhy>(why) : SubmitWhy::Unknown;
  return true;
}
}  // namespace field

const char* hook_counter_name(std::size_t hook) {
  switch (hook) {
    case WP_HOOK_SYSCALL: return "syscall";
    case WP_HOOK_BIO: return "bio";
    case WP_HOOK_REQUEST: return "request";
    case WP_HOOK_JOURNAL: return "journal";
    case WP_HOOK_THROTTLE: return "throttle";
    case WP_HOOK_NVME: return "nvme";
    case WP_HOOK_STATE: return "thread-state";
    case WP_HOOK_CAUSES: return "causes";
    case WP_HOOK_DISCARD: return "discard";
    case WP_HOOK_URING: return "io_uring";
    case WP_HOOK_MMAP_DIRTY: return "mmap";
    case WP_HOOK_FS_LOG: return "fs-log";
    case WP_HOOK_FILE_PATH: return "file-path";
    case WP_HOOK_CGROUP: return "cgroup";
    case WP_HOOK_OFFCPU: return "offcpu";
    case WP_HOOK_NAME_CHANGE: return "namespace";
    case WP_HOOK_INLINE: return "inline";
    case WP_HOOK_READ: return "read";
    case WP_HOOK_FAULT: return "fault";
    case WP_HOOK_DIRTIER: return "dirtier";
  }
  return "?";
}

std::optional<Event> Decoder::decode(std::span<const std::byte> record) {
  ++stats_.records;
  std::optional<Event> event;
  wp_record_header h;
  if (record.size() >= sizeof(h)) {
    std::memcpy(&h, record.data(), sizeof(h));
    if (h.version == WP_RECORD_VERSION && h.size <= record.size()) {
      auto bytes = record.first(h.size);
      switch (h.type) {
        case WP_REC_SYSCALL: event = decode_syscall(bytes); break;
        case WP_REC_BIO: event = decode_bio(bytes); break;
        case WP_REC_REQUEST: event = decode_plain<wp_request_record, RequestEvent>(bytes); break;
        case WP_REC_JOURNAL: event = decode_plain<wp_journal_record, JournalEvent>(bytes); break;
        case WP_REC_THROTTLE: event = decode_plain<wp_throttle_record, ThrottleEvent>(bytes); break;
        case WP_REC_NVME: event = decode_plain<wp_nvme_record, NvmeEvent>(bytes); break;
        case WP_REC_CAUSES: event = decode_plain<wp_causes_record, CausesEvent>(bytes); break;
        case WP_REC_DISCARD: event = decode_plain<wp_discard_record, DiscardEvent>(bytes); break;
        case WP_REC_MMAP_DIRTY:
          event = decode_plain<wp_mmap_dirty_record, MmapDirtyEvent>(bytes);
          break;
        case WP_REC_FS_LOG: event = decode_plain<wp_fs_log_record, FsLogEvent>(bytes); break;
        case WP_REC_FILE_PATH: event = decode_file_path(bytes); break;
        case WP_REC_FILE_VIEW:
          event = decode_plain<wp_file_view_record, FileViewEvent>(bytes);
          break;
        case WP_REC_FUSE: event = decode_plain<wp_fuse_record, FuseReplyEvent>(bytes); break;
        case WP_REC_CGROUP: event = decode_plain<wp_cgroup_record, CgroupEvent>(bytes); break;
        case WP_REC_OFFCPU: event = decode_offcpu(bytes); break;
        case WP_REC_NAME_CHANGE: event = decode_name_change(bytes); break;
        case WP_REC_INLINE: event = decode_plain<wp_inline_record, InlineDataEvent>(bytes); break;
        case WP_REC_FS_COMMIT:
          event = decode_plain<wp_fs_commit_record, FsCommitEvent>(bytes);
          break;
        case WP_REC_READ: event = decode_read(bytes); break;
        case WP_REC_FAULT: event = decode_plain<wp_fault_record, FaultEvent>(bytes); break;
        case WP_REC_DIRTIER: event = decode_plain<wp_dirtier_record, DirtierEvent>(bytes); break;
        case WP_REC_BYSTANDER_IO:
          event = decode_plain<wp_bystander_io_record, BystanderIoEvent>(bytes);
          break;
        default: break;
      }
    }
  }
  if (!event) ++stats_.malformed;
  return event;
}

}  // namespace wp
