// SPDX-License-Identifier: Apache-2.0
// What the kernel records' values mean to the agent: devices, flag sets and enumerations, each
// taking its values from bpf/writepath.h so the decoder copies or casts them and nothing can
// drift. The records' fields (record_fields.h) and the events (events.h) are made of these.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/nanos.h"
#include "decode/syscalls.h"
#include "writepath.h"

namespace wp {

// Kernel dev_t encoding (MAJOR << 20 | MINOR), as the kernel's tracepoints use it.
using DevT = std::uint32_t;
constexpr DevT make_dev(std::uint32_t major, std::uint32_t minor) {
  return (major << 20) | minor;
}
constexpr std::uint32_t dev_major(DevT dev) {
  return dev >> 20;
}
constexpr std::uint32_t dev_minor(DevT dev) {
  return dev & 0xfffff;
}
std::string dev_string(DevT dev);  // "253:0"

// Syscall, syscall_name() and is_write_syscall(): decode/syscalls.h.

namespace file_flag {  // enum wp_file_flags
constexpr std::uint32_t kDirect = WP_FILE_DIRECT;
constexpr std::uint32_t kSync = WP_FILE_SYNC;
constexpr std::uint32_t kDsync = WP_FILE_DSYNC;
constexpr std::uint32_t kAppend = WP_FILE_APPEND;
constexpr std::uint32_t kRegular = WP_FILE_REGULAR;
constexpr std::uint32_t kBlockDev = WP_FILE_BLOCKDEV;
}  // namespace file_flag

namespace call_flag {  // enum wp_call_flags: a call's own flags argument
constexpr std::uint32_t kRwfHipri = WP_CALL_RWF_HIPRI;
constexpr std::uint32_t kRwfDsync = WP_CALL_RWF_DSYNC;
constexpr std::uint32_t kRwfSync = WP_CALL_RWF_SYNC;
constexpr std::uint32_t kRwfNowait = WP_CALL_RWF_NOWAIT;
constexpr std::uint32_t kRwfAppend = WP_CALL_RWF_APPEND;
constexpr std::uint32_t kRwfNoappend = WP_CALL_RWF_NOAPPEND;
constexpr std::uint32_t kRwfAtomic = WP_CALL_RWF_ATOMIC;
constexpr std::uint32_t kRwfDontcache = WP_CALL_RWF_DONTCACHE;
constexpr std::uint32_t kMsAsync = WP_CALL_MS_ASYNC;
constexpr std::uint32_t kMsInvalidate = WP_CALL_MS_INVALIDATE;
constexpr std::uint32_t kMsSync = WP_CALL_MS_SYNC;
constexpr std::uint32_t kAioVectored = WP_CALL_AIO_VECTORED;
constexpr std::uint32_t kAioPastBound = WP_CALL_AIO_PAST_BOUND;
// sync_file_range's SYNC_FILE_RANGE_*, set by the decoder from the record's MS_* bits (which
// carry them for that syscall, WP_CALL_SFR_SHIFT): above the 16 bits a record carries.
constexpr std::uint32_t kSfrWaitBefore = 1u << 17;
constexpr std::uint32_t kSfrWrite = 1u << 18;
constexpr std::uint32_t kSfrWaitAfter = 1u << 19;
// Set by the stitcher, never by the kernel (records carry 16 bits): the item is the pages a
// process dirtied by storing into a shared mapping, not a syscall.
constexpr std::uint32_t kMmapStore = 1u << 16;
// Set by the decoder for an open's record: the item is the copy-up of an overlay file that the
// open made (the copy's writes and sync, inside the call), not a write(2).
constexpr std::uint32_t kCopyUp = 1u << 20;
}  // namespace call_flag

// The names of a call's flags, in bit order: "RWF_DSYNC", "MS_SYNC", "aio_vectored", ...
std::vector<const char*> call_flag_names(std::uint32_t flags);

namespace req_flag {  // enum wp_req_flags
constexpr std::uint32_t kFua = WP_REQ_FUA;
constexpr std::uint32_t kPreflush = WP_REQ_PREFLUSH;
constexpr std::uint32_t kSync = WP_REQ_SYNC;
constexpr std::uint32_t kMeta = WP_REQ_META;
constexpr std::uint32_t kFlushSeq = WP_REQ_FLUSH_SEQ;  // a completion's only
}  // namespace req_flag

enum class ReqOp : std::uint8_t {
  Read = WP_OP_READ,
  Write = WP_OP_WRITE,
  Flush = WP_OP_FLUSH,
  Discard = WP_OP_DISCARD,
  WriteZeroes = WP_OP_WRITE_ZEROES,
  Other = 255  // any op the records do not name
};

// blktrace-style flags string: "W", "WS", "FF", "FWFS", ...
std::string rwbs(ReqOp op, std::uint32_t flags, std::uint32_t bytes);

struct Extent {
  std::uint64_t index = 0;  // page index in the file
  std::uint32_t pages = 0;
};

enum class BioKind : std::uint8_t { Queue = WP_BIO_QUEUE, Split = WP_BIO_SPLIT };

// Why a bio was submitted (the submitting thread's situation).
enum class SubmitWhy : std::uint8_t {
  Unknown = WP_WHY_UNKNOWN,
  WriteSyscall = WP_WHY_WRITE_SYSCALL,  // inside a write: O_DIRECT, or O_SYNC data
  SyncSyscall = WP_WHY_SYNC_SYSCALL,    // inside fsync/fdatasync/sync_file_range/sync
  Background = WP_WHY_BACKGROUND,       // flusher: over the background dirty threshold
  Periodic = WP_WHY_PERIODIC,           // flusher: dirty data expired
  Sync = WP_WHY_SYNC,                   // flusher working for sync(2)/syncfs(2)
  Vmscan = WP_WHY_VMSCAN,               // flusher woken by reclaim
  OtherWriteback = WP_WHY_OTHER_WRITEBACK,
  ReadCall = WP_WHY_READ_CALL,  // inside a read: its misses and the readahead it started
  Fault = WP_WHY_FAULT,         // in a page fault, for the faulting file's pages
};
const char* submit_why_name(SubmitWhy why);  // "write", "fsync", "background", ...

namespace bio_flag {  // enum wp_bio_flags
constexpr std::uint8_t kAnon = WP_BIO_ANON;
constexpr std::uint8_t kNoFile = WP_BIO_NO_FILE;
constexpr std::uint8_t kMixed = WP_BIO_MIXED;
constexpr std::uint8_t kTruncated = WP_BIO_TRUNCATED;
constexpr std::uint8_t kKernelThread = WP_BIO_KTHREAD;  // a flusher's, the journal's
}  // namespace bio_flag

constexpr std::size_t kMaxBioExtents = WP_BIO_MAX_EXTENTS;

enum class RequestEventKind : std::uint8_t {
  Insert = WP_RQ_INSERT,
  Issue = WP_RQ_ISSUE,
  Complete = WP_RQ_COMPLETE,
  BioFailed = WP_RQ_BIO_FAILED,  // `rq` is the bio's pointer: no request was involved, or was
                                 // but failed too (then the request's failure says it first)
  Requeue = WP_RQ_REQUEUE,       // handed back by the driver: issued again, as the same request
};

enum class JournalPhase : std::uint8_t {
  Start = WP_JBD2_START,
  Locking = WP_JBD2_LOCKING,
  Flushing = WP_JBD2_FLUSHING,
  Logging = WP_JBD2_LOGGING,
  End = WP_JBD2_END,
};

// xfs's log: a sync's thread forcing it, an iclog (log write) issued and completed.
enum class FsLogKind : std::uint8_t {
  XfsForce = WP_XFS_LOG_FORCE,
  XfsIclogSync = WP_XFS_ICLOG_SYNC,
  XfsIclogDone = WP_XFS_ICLOG_DONE,
};

enum class NvmeEventKind : std::uint8_t { Setup = WP_NVME_SETUP, Complete = WP_NVME_COMPLETE };

// Which file system keeps a file's data inside its metadata (InlineDataEvent).
enum class InlineFs : std::uint8_t { Btrfs = WP_INLINE_BTRFS, Ext4 = WP_INLINE_EXT4 };
const char* inline_fs_name(InlineFs fs);  // "btrfs", "ext4"

// What a name-change call did (WP_NAME_CHANGE_TABLE's op column).
enum class NameChangeOp : std::uint8_t {
  Rename = WP_NS_RENAME,
  Link = WP_NS_LINK,
  Unlink = WP_NS_UNLINK,
  Rmdir = WP_NS_RMDIR,
  Mkdir = WP_NS_MKDIR,
  Open = WP_NS_OPEN,  // with O_CREAT or O_TRUNC
  Truncate = WP_NS_TRUNCATE,
  Fallocate = WP_NS_FALLOCATE,
  Close = WP_NS_CLOSE,  // of a regular file open for writing
  Send = WP_NS_SEND,    // the first socket send after a name was made: a reply
};
const char* name_change_op_name(NameChangeOp op);  // "rename", "link", ...
// WP_NS_* flags by name: "create", "excl", "trunc", "noreplace", "exchange", "whiteout",
// "directory"; the name-cut flags as "name_cut", "new_name_cut".
std::vector<const char*> name_change_flag_names(std::uint32_t flags);

}  // namespace wp
