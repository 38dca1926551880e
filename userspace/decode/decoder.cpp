#include "decode/decoder.h"

#include <cstring>

#include "writepath.h"

namespace wp {
namespace {

template <typename Record>
bool read_record(std::span<const std::byte> bytes, Record& out) {
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

std::optional<Syscall> to_syscall(std::uint32_t sys) {
  switch (sys) {
    case WP_SYS_WRITE: return Syscall::Write;
    case WP_SYS_PWRITE64: return Syscall::Pwrite64;
    case WP_SYS_WRITEV: return Syscall::Writev;
    case WP_SYS_PWRITEV: return Syscall::Pwritev;
    case WP_SYS_PWRITEV2: return Syscall::Pwritev2;
    case WP_SYS_FSYNC: return Syscall::Fsync;
    case WP_SYS_FDATASYNC: return Syscall::Fdatasync;
    case WP_SYS_SYNC_FILE_RANGE: return Syscall::SyncFileRange;
    case WP_SYS_SYNCFS: return Syscall::Syncfs;
    case WP_SYS_SYNC: return Syscall::Sync;
  }
  return std::nullopt;
}

std::optional<Event> decode_syscall(std::span<const std::byte> bytes) {
  wp_syscall_record r;
  if (!read_record(bytes, r)) return std::nullopt;
  auto sys = to_syscall(r.syscall);
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
  e.ino = r.ino;
  e.file_flags = r.file_flags;
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
  e.kind = r.kind == WP_BIO_SPLIT ? BioKind::Split : BioKind::Queue;
  e.why = r.why <= WP_WHY_OTHER_WRITEBACK ? static_cast<SubmitWhy>(r.why) : SubmitWhy::Unknown;
  e.bio_flags = r.bio_flags;
  e.file_dev = r.file_dev;
  e.ino = r.ino;
  e.nr_extents = r.nr_extents;
  for (std::size_t i = 0; i < r.nr_extents; ++i)
    e.extents[i] = Extent{r.extents[i].index, r.extents[i].pages};
  return e;
}

std::optional<Event> decode_request(std::span<const std::byte> bytes) {
  wp_request_record r;
  if (!read_record(bytes, r)) return std::nullopt;
  RequestEvent e;
  switch (r.event) {
    case WP_RQ_INSERT: e.kind = RequestEventKind::Insert; break;
    case WP_RQ_ISSUE: e.kind = RequestEventKind::Issue; break;
    case WP_RQ_COMPLETE: e.kind = RequestEventKind::Complete; break;
    default: return std::nullopt;
  }
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
  JournalEvent e;
  switch (r.phase) {
    case WP_JBD2_START: e.phase = JournalPhase::Start; break;
    case WP_JBD2_LOCKING: e.phase = JournalPhase::Locking; break;
    case WP_JBD2_FLUSHING: e.phase = JournalPhase::Flushing; break;
    case WP_JBD2_LOGGING: e.phase = JournalPhase::Logging; break;
    case WP_JBD2_END: e.phase = JournalPhase::End; break;
    default: return std::nullopt;
  }
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
  NvmeEvent e;
  if (r.event != WP_NVME_SETUP && r.event != WP_NVME_COMPLETE) return std::nullopt;
  e.kind = r.event == WP_NVME_SETUP ? NvmeEventKind::Setup : NvmeEventKind::Complete;
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

}  // namespace

static_assert(std::tuple_size_v<LostCounts> == WP_HOOK_COUNT);

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
        default: break;
      }
    }
  }
  if (!event) ++stats_.malformed;
  return event;
}

}  // namespace wp
