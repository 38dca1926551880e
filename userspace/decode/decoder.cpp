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

ReqOp to_op(std::uint32_t op) {
  switch (op) {
    case WP_OP_READ: return ReqOp::Read;
    case WP_OP_WRITE: return ReqOp::Write;
    case WP_OP_FLUSH: return ReqOp::Flush;
    case WP_OP_DISCARD: return ReqOp::Discard;
    case WP_OP_WRITE_ZEROES: return ReqOp::WriteZeroes;
  }
  return ReqOp::Other;
}

std::optional<Event> decode_syscall(std::span<const std::byte> bytes) {
  wp_syscall_record r;
  if (!read_record(bytes, r)) return std::nullopt;
  auto sys = syscall_from_record(r.syscall);
  if (!sys) return std::nullopt;
  SyscallEvent e;
  e.start_ns = r.start_ns;
  e.end_ns = r.h.ts_ns;
  e.pid = r.pid;
  e.tid = r.tid;
  e.comm = comm_string(r.comm);
  e.syscall = *sys;
  e.fd = r.fd;
  e.dev = r.dev;
  e.fs_dev = r.fs_dev;
  e.ino = r.ino;
  e.file_flags = r.file_flags;
  e.call_flags = r.call_flags & WP_CALL_FLAGS_MASK;
  if (e.syscall == Syscall::SyncFileRange) {
    const std::uint32_t sfr = (e.call_flags >> WP_CALL_SFR_SHIFT) & WP_CALL_SFR_MASK;
    e.call_flags = (sfr & 1 ? call_flag::kSfrWaitBefore : 0) |
                   (sfr & 2 ? call_flag::kSfrWrite : 0) | (sfr & 4 ? call_flag::kSfrWaitAfter : 0);
  }
  if (is_copy_up(e.syscall)) e.call_flags = call_flag::kCopyUp;
  e.via = static_cast<std::uint8_t>(r.call_flags >> WP_CALL_VIA_SHIFT);
  e.ret = r.ret;
  e.pos = r.pos;
  e.count = r.count;
  e.pages_dirtied = r.pages_dirtied;
  e.dirty_folios = r.dirty_folios;
  e.throttle_ns = r.throttle_ns;
  e.throttle_events = r.throttle_events;
  e.writeback_waits = r.writeback_waits;
  return e;
}

std::optional<Event> decode_bio(std::span<const std::byte> bytes) {
  wp_bio_record r;
  if (!read_record(bytes, r) || r.nr_extents > WP_BIO_MAX_EXTENTS) return std::nullopt;
  if (r.kind != WP_BIO_QUEUE && r.kind != WP_BIO_SPLIT) return std::nullopt;
  BioEvent e;
  e.ts = r.h.ts_ns;
  e.bio = r.bio;
  e.pid = r.pid;
  e.tid = r.tid;
  e.comm = comm_string(r.comm);
  e.bdev = r.bdev;
  e.disk = r.disk;
  e.sector = r.sector;
  e.bytes = r.bytes;
  e.op = to_op(r.op);
  e.flags = r.flags;
  e.kind = static_cast<BioKind>(r.kind);
  e.why = r.why <= WP_WHY_OTHER_WRITEBACK ? static_cast<SubmitWhy>(r.why) : SubmitWhy::Unknown;
  e.bio_flags = r.bio_flags;
  e.file_dev = r.file_dev;
  e.ino = r.ino;
  e.uring_tag = r.uring_tag;
  e.nr_extents = r.nr_extents;
  for (std::size_t i = 0; i < r.nr_extents; ++i)
    e.extents[i] = Extent{r.extents[i].index, r.extents[i].pages};
  return e;
}

std::optional<Event> decode_request(std::span<const std::byte> bytes) {
  wp_request_record r;
  if (!read_record(bytes, r)) return std::nullopt;
  if (r.event < WP_RQ_INSERT || r.event > WP_RQ_REQUEUE) return std::nullopt;
  RequestEvent e;
  e.kind = static_cast<RequestEventKind>(r.event);
  e.ts = r.h.ts_ns;
  e.rq = r.rq;
  e.disk = r.disk;
  e.op = to_op(r.op);
  e.flags = r.flags;
  e.bytes = r.bytes;
  e.sector = r.sector;
  e.error = r.error;
  e.tid = r.tid;
  return e;
}

std::optional<Event> decode_journal(std::span<const std::byte> bytes) {
  wp_journal_record r;
  if (!read_record(bytes, r)) return std::nullopt;
  if (r.phase < WP_JBD2_START || r.phase > WP_JBD2_END) return std::nullopt;
  JournalEvent e;
  e.phase = static_cast<JournalPhase>(r.phase);
  e.ts = r.h.ts_ns;
  e.dev = r.dev;
  e.transaction = r.transaction;
  e.tid = r.tid;
  return e;
}

std::optional<Event> decode_throttle(std::span<const std::byte> bytes) {
  wp_throttle_record r;
  if (!read_record(bytes, r)) return std::nullopt;
  ThrottleEvent e;
  e.ts = r.h.ts_ns;
  e.pid = r.pid;
  e.tid = r.tid;
  e.pause_ms = r.pause_ms;
  e.period_ms = r.period_ms;
  e.dirty = r.dirty;
  e.limit = r.limit;
  e.wb_dirty = r.wb_dirty;
  e.wb_setpoint = r.wb_setpoint;
  return e;
}

std::optional<Event> decode_nvme(std::span<const std::byte> bytes) {
  wp_nvme_record r;
  if (!read_record(bytes, r)) return std::nullopt;
  if (r.event != WP_NVME_SETUP && r.event != WP_NVME_COMPLETE) return std::nullopt;
  NvmeEvent e;
  e.kind = static_cast<NvmeEventKind>(r.event);
  e.ts = r.h.ts_ns;
  e.rq = r.rq;
  e.disk = r.disk;
  e.qid = r.qid;
  e.cid = r.cid;
  e.opcode = r.opcode;
  e.status = r.status;
  e.nsid = r.nsid;
  e.slba = r.slba;
  e.nlb = r.nlb;
  e.control = r.control;
  return e;
}

std::optional<Event> decode_causes(std::span<const std::byte> bytes) {
  wp_causes_record r;
  if (!read_record(bytes, r)) return std::nullopt;
  CausesEvent e;
  e.ts = r.h.ts_ns;
  e.start_ns = r.start_ns;
  e.tid = r.tid;
  e.throttle_ns = r.throttle_ns;
  e.writeback_wait_ns = r.writeback_wait_ns;
  e.blocked_ns = r.blocked_ns;
  e.runnable_ns = r.runnable_ns;
  return e;
}

std::optional<Event> decode_discard(std::span<const std::byte> bytes) {
  wp_discard_record r;
  if (!read_record(bytes, r) || r.pages == 0) return std::nullopt;
  DiscardEvent e;
  e.ts = r.h.ts_ns;
  e.dev = r.dev;
  e.ino = r.ino;
  e.index = r.index;
  e.pages = r.pages;
  return e;
}

std::optional<Event> decode_mmap_dirty(std::span<const std::byte> bytes) {
  wp_mmap_dirty_record r;
  if (!read_record(bytes, r) || r.pages == 0) return std::nullopt;
  MmapDirtyEvent e;
  e.ts = r.h.ts_ns;
  e.pid = r.pid;
  e.tid = r.tid;
  e.comm = comm_string(r.comm);
  e.dev = r.dev;
  e.ino = r.ino;
  e.index = r.index;
  e.pages = r.pages;
  return e;
}

std::optional<Event> decode_inline(std::span<const std::byte> bytes) {
  wp_inline_record r;
  if (!read_record(bytes, r) || r.len == 0) return std::nullopt;
  if (r.fs != WP_INLINE_BTRFS && r.fs != WP_INLINE_EXT4) return std::nullopt;
  InlineDataEvent e;
  e.ts = r.h.ts_ns;
  e.dev = r.dev;
  e.fs_dev = r.fs_dev;
  e.ino = r.ino;
  e.start = r.start;
  e.len = r.len;
  e.transaction = r.transaction;
  e.fs = static_cast<InlineFs>(r.fs);
  return e;
}

std::optional<Event> decode_fs_commit(std::span<const std::byte> bytes) {
  wp_fs_commit_record r;
  if (!read_record(bytes, r)) return std::nullopt;
  FsCommitEvent e;
  e.ts = r.h.ts_ns;
  e.fs_dev = r.fs_dev;
  e.transaction = r.transaction;
  e.start_ns = r.start_ns;
  e.tid = r.tid;
  return e;
}

std::optional<Event> decode_fs_log(std::span<const std::byte> bytes) {
  wp_fs_log_record r;
  if (!read_record(bytes, r)) return std::nullopt;
  if (r.event < WP_XFS_LOG_FORCE || r.event > WP_XFS_ICLOG_DONE) return std::nullopt;
  FsLogEvent e;
  e.ts = r.h.ts_ns;
  e.dev = r.dev;
  e.tid = r.tid;
  e.kind = static_cast<FsLogKind>(r.event);
  e.flags = r.flags;
  e.lsn = r.lsn;
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
  e.dev = r.dev;
  e.ino = r.ino;
  e.deleted = (r.flags & WP_PATH_DELETED) != 0;
  e.mnt_ns = r.mnt_ns;
  // Cut short: names hold the leaf end only. The writer's path is whole if the walk passed
  // its root before it stopped.
  const bool cut = (r.flags & WP_PATH_TRUNCATED) != 0;
  e.truncated = cut && !passed_root;
  e.path = joined_path(std::span(components).first(own), e.truncated, e.deleted);
  if (own != components.size()) e.ns_path = joined_path(components, cut, e.deleted);
  return e;
}

std::optional<Event> decode_file_view(std::span<const std::byte> bytes) {
  wp_file_view_record r;
  if (!read_record(bytes, r) || r.ino == 0 || r.view_dev == 0) return std::nullopt;
  return FileViewEvent{r.h.ts_ns, r.dev, r.ino, r.view_dev, r.view_ino};
}

std::optional<Event> decode_fuse(std::span<const std::byte> bytes) {
  wp_fuse_record r;
  if (!read_record(bytes, r) || r.tid == 0) return std::nullopt;
  return FuseReplyEvent{r.h.ts_ns,    r.tid,        r.start_ns,
                        r.unique,     r.opcode,     r.error,
                        r.daemon_pid, r.daemon_tid, comm_string(r.daemon_comm)};
}

// Variable-sized: the struct, then the names (wp_namespace_record's comment).
std::optional<Event> decode_namespace(std::span<const std::byte> bytes) {
  wp_namespace_record r;
  if (bytes.size() < sizeof(r)) return std::nullopt;
  std::memcpy(&r, bytes.data(), sizeof(r));
  const std::size_t names = std::size_t{r.name_len[0]} + r.name_len[1];
  if (r.h.size != bytes.size() || r.h.size < sizeof(r) + names ||
      r.h.size > sizeof(r) + WP_NS_NAMES_MAX + 8 || r.name_len[0] > WP_NS_NAME_BYTES ||
      r.name_len[1] > WP_NS_NAME_BYTES || r.op < WP_NS_RENAME || r.op > WP_NS_SEND)
    return std::nullopt;
  const auto syscall = namespace_call_from_record(r.syscall);
  if (!syscall) return std::nullopt;
  NamespaceEvent e;
  e.start_ns = r.start_ns;
  e.end_ns = r.h.ts_ns;
  e.pid = r.pid;
  e.tid = r.tid;
  e.comm = comm_string(r.comm);
  e.syscall = *syscall;
  e.op = static_cast<NamespaceOp>(r.op);
  e.flags = r.flags;
  e.ret = r.ret;
  if (r.flags & WP_NS_FD) e.fd = r.fd;
  const char* at = reinterpret_cast<const char*>(bytes.data()) + sizeof(r);
  for (std::size_t i = 0; i < 2; ++i) {
    // name_len counts the NUL; a name is what precedes its first NUL.
    e.names[i] = std::string(at, strnlen(at, r.name_len[i]));
    at += r.name_len[i];
    e.dir_dev[i] = r.dir_dev[i];
    e.dir_ino[i] = r.dir_ino[i];
  }
  e.dev = r.dev;
  e.ino = r.ino;
  return e;
}

std::optional<Event> decode_cgroup(std::span<const std::byte> bytes) {
  wp_cgroup_record r;
  if (!read_record(bytes, r) || r.cgroup_id == 0) return std::nullopt;
  return CgroupEvent{r.h.ts_ns, r.pid, r.tid, r.cgroup_id};
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
    case 1: return SleepFlag::DirtyThrottle;  // WP_OFFCPU_THROTTLE (bpf/maps.bpf.h)
    case 2: return SleepFlag::WritebackWait;  // WP_OFFCPU_WRITEBACK_WAIT
  }
  return SleepFlag::None;
}

std::optional<Event> decode_offcpu(std::span<const std::byte> bytes) {
  wp_offcpu_record r;
  if (!read_record(bytes, r) || r.nslots > WP_OFFCPU_SLOTS) return std::nullopt;
  OffCpuEvent e;
  e.ts = r.h.ts_ns;
  e.start_ns = r.start_ns;
  e.tid = r.tid;
  e.unslotted_ns = r.unslotted_ns;
  e.inode_lock_ns = r.inode_lock_ns;
  e.inode_lock_waits = r.inode_lock_waits;
  if (r.holder_pid)
    e.inode_lock_holder = LockHolder{r.holder_pid, r.holder_tid, comm_string(r.holder_comm)};
  e.direct_reclaim_ns = r.direct_reclaim_ns;
  e.memcg_reclaim_ns = r.memcg_reclaim_ns;
  e.compaction_ns = r.compaction_ns;
  e.blk_throttled = r.blk_throttled;
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
    case WP_HOOK_NAMESPACE: return "namespace";
    case WP_HOOK_INLINE: return "inline";
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
        case WP_REC_REQUEST: event = decode_request(bytes); break;
        case WP_REC_JOURNAL: event = decode_journal(bytes); break;
        case WP_REC_THROTTLE: event = decode_throttle(bytes); break;
        case WP_REC_NVME: event = decode_nvme(bytes); break;
        case WP_REC_CAUSES: event = decode_causes(bytes); break;
        case WP_REC_DISCARD: event = decode_discard(bytes); break;
        case WP_REC_MMAP_DIRTY: event = decode_mmap_dirty(bytes); break;
        case WP_REC_FS_LOG: event = decode_fs_log(bytes); break;
        case WP_REC_FILE_PATH: event = decode_file_path(bytes); break;
        case WP_REC_FILE_VIEW: event = decode_file_view(bytes); break;
        case WP_REC_FUSE: event = decode_fuse(bytes); break;
        case WP_REC_CGROUP: event = decode_cgroup(bytes); break;
        case WP_REC_OFFCPU: event = decode_offcpu(bytes); break;
        case WP_REC_NAMESPACE: event = decode_namespace(bytes); break;
        case WP_REC_INLINE: event = decode_inline(bytes); break;
        case WP_REC_FS_COMMIT: event = decode_fs_commit(bytes); break;
        default: break;
      }
    }
  }
  if (!event) ++stats_.malformed;
  return event;
}

}  // namespace wp
