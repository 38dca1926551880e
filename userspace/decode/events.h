// SPDX-License-Identifier: Apache-2.0
// Typed kernel events: what decode produces from ring-buffer records and what the stitcher
// consumes. Plain values, no kernel or BPF types, so the stitcher can be driven by synthetic
// sequences in unit tests. Flags and enumerators take their values from bpf/writepath.h, the
// records' own definitions, so the decoder copies or casts them and nothing can drift.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "common/container.h"
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

// A write or sync syscall of a traced thread, complete (emitted at syscall exit).
struct SyscallEvent {
  Nanos start_ns = 0;
  Nanos end_ns = 0;
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::string comm;
  Syscall syscall = Syscall::Write;
  int fd = -1;
  DevT dev = 0;     // the file's device as stat() reports it (btrfs: its subvolume's)
  DevT fs_dev = 0;  // the file system's superblock device when it differs from dev, else 0
  std::uint64_t ino = 0;
  std::uint32_t file_flags = 0;  // file_flag::*
  std::uint32_t call_flags = 0;  // call_flag::*
  std::uint8_t via = 0;          // io_uring ops: WP_VIA_* (how issued); 0 for a syscall
  std::int64_t ret = 0;          // bytes written, or -errno
  std::uint64_t pos = 0;         // file offset of the first byte (writes)
  std::uint64_t count = 0;       // bytes asked for
  std::uint32_t pages_dirtied = 0;
  std::uint32_t dirty_folios = 0;
  Nanos throttle_ns = 0;
  std::uint32_t throttle_events = 0;
  std::uint32_t writeback_waits = 0;
  // A file reached through overlayfs: what stat() shows the application (the overlay's own
  // device and inode), while dev and ino are the upper file's, where its pages, requests and
  // journal are. Set by the stitcher from the FileViewEvent, like path; 0 for other files.
  DevT view_dev = 0;
  std::uint64_t view_ino = 0;
  // The file's path as the writer sees it ("/mnt/data/log", "… (deleted)"): never decoded from
  // this record, set by the stitcher from the FilePathEvent of (dev, ino) when the item is
  // handed out; empty when none arrived (lost, or a trace recorded before paths were).
  std::string path;
  // Set with path: the path in the writer's mount namespace when the writer's root is not the
  // namespace's (a chroot) and it differs (FilePathEvent::ns_path); "" otherwise; and that
  // namespace (FilePathEvent::mnt_ns; 0: not known). Not shown: the agent finds host_path
  // from them.
  std::string ns_path;
  std::uint32_t mnt_ns = 0;
  // Where that file is as the host names it, when the host names it otherwise than the writer:
  // a writer in another mount namespace (a container's root, a bind-mounted volume), or
  // chroot'ed: set by the agent of a live trace when the item is emitted
  // (probe/host_paths.h); "" otherwise.
  std::string host_path;
  // The thread's cgroup (v2) id when the call was made, from its CgroupEvent (set by the
  // stitcher; 0: not known), and that cgroup's path under the cgroup2 root (set by the agent
  // when the item is emitted; "" when the id has no known path).
  std::uint64_t cgroup_id = 0;
  std::string cgroup;
  // The container that cgroup is (common/container.h), read once per cgroup by the agent with
  // the path; null for a host cgroup or an unknown path. Shared: one per cgroup, not per item.
  std::shared_ptr<const Container> container;
};

// The device and inode stat() shows the caller for the call's file: an overlay file's own,
// else the file's (dev, ino).
inline DevT stat_dev(const SyscallEvent& call) {
  return call.view_dev ? call.view_dev : call.dev;
}
inline std::uint64_t stat_ino(const SyscallEvent& call) {
  return call.view_dev ? call.view_ino : call.ino;
}

// The pages a process stored into a shared mapping (call_flag::kMmapStore), not a call.
inline bool is_mmap_store(const SyscallEvent& call) {
  return (call.call_flags & call_flag::kMmapStore) != 0;
}

// What an item is called in the outputs: its syscall's name, or "mmap" for stores into a
// mapping.
inline const char* call_name(const SyscallEvent& call) {
  return is_mmap_store(call) ? "mmap" : syscall_name(call.syscall);
}

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
};
const char* submit_why_name(SubmitWhy why);  // "write", "fsync", "background", ...

namespace bio_flag {  // enum wp_bio_flags
constexpr std::uint8_t kAnon = WP_BIO_ANON;
constexpr std::uint8_t kNoFile = WP_BIO_NO_FILE;
constexpr std::uint8_t kMixed = WP_BIO_MIXED;
constexpr std::uint8_t kTruncated = WP_BIO_TRUNCATED;
}  // namespace bio_flag

constexpr std::size_t kMaxBioExtents = WP_BIO_MAX_EXTENTS;

// A bio entering the block layer, in the submitter's context.
struct BioEvent {
  Nanos ts = 0;
  std::uint64_t bio = 0;  // kernel pointer
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::string comm;
  DevT bdev = 0;  // partition or disk the bio was submitted to
  DevT disk = 0;  // whole disk (requests are per disk)
  std::uint64_t sector = 0;
  std::uint32_t bytes = 0;
  ReqOp op = ReqOp::Write;
  std::uint32_t flags = 0;  // req_flag::*
  BioKind kind = BioKind::Queue;
  SubmitWhy why = SubmitWhy::Unknown;
  std::uint8_t bio_flags = 0;  // bio_flag::*
  DevT file_dev = 0;           // superblock device of the pages' inode
  std::uint64_t ino = 0;
  // The io_uring op it was queued for: uring_tag_of() its record's start_ns; 0 for none.
  std::uint32_t uring_tag = 0;
  std::uint8_t nr_extents = 0;
  std::array<Extent, kMaxBioExtents> extents{};
};

enum class RequestEventKind : std::uint8_t {
  Insert = WP_RQ_INSERT,
  Issue = WP_RQ_ISSUE,
  Complete = WP_RQ_COMPLETE,
  BioFailed = WP_RQ_BIO_FAILED,  // `rq` is the bio's pointer: no request was involved, or was
                                 // but failed too (then the request's failure says it first)
  Requeue = WP_RQ_REQUEUE,       // handed back by the driver: issued again, as the same request
};

struct RequestEvent {
  Nanos ts = 0;
  std::uint64_t rq = 0;  // kernel pointer, reused: identity is pointer + lifetime
  DevT disk = 0;
  ReqOp op = ReqOp::Write;
  std::uint32_t flags = 0;  // req_flag::* of rq->cmd_flags at this event
  std::uint32_t bytes = 0;  // insert/issue: request size; complete: bytes completed now
  std::uint64_t sector = 0;
  std::int32_t error = 0;
  std::uint32_t tid = 0;
  RequestEventKind kind = RequestEventKind::Issue;
};

enum class JournalPhase : std::uint8_t {
  Start = WP_JBD2_START,
  Locking = WP_JBD2_LOCKING,
  Flushing = WP_JBD2_FLUSHING,
  Logging = WP_JBD2_LOGGING,
  End = WP_JBD2_END,
};

struct JournalEvent {
  Nanos ts = 0;
  DevT dev = 0;
  std::uint32_t transaction = 0;
  JournalPhase phase = JournalPhase::Start;
  std::uint32_t tid = 0;
};

// xfs's log: a sync's thread forcing it, an iclog (log write) issued and completed.
enum class FsLogKind : std::uint8_t {
  XfsForce = WP_XFS_LOG_FORCE,
  XfsIclogSync = WP_XFS_ICLOG_SYNC,
  XfsIclogDone = WP_XFS_ICLOG_DONE,
};

struct FsLogEvent {
  Nanos ts = 0;
  DevT dev = 0;  // the file system's superblock device
  std::uint32_t tid = 0;
  FsLogKind kind = FsLogKind::XfsForce;
  std::uint32_t flags = 0;  // WP_ICLOG_NEED_* of an iclog write
  std::uint64_t lsn = 0;
};

struct ThrottleEvent {
  Nanos ts = 0;
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::int64_t pause_ms = 0;
  std::uint64_t period_ms = 0;
  std::uint64_t dirty = 0;
  std::uint64_t limit = 0;
  std::uint64_t wb_dirty = 0;
  std::uint64_t wb_setpoint = 0;
};

enum class NvmeEventKind : std::uint8_t { Setup = WP_NVME_SETUP, Complete = WP_NVME_COMPLETE };

struct NvmeEvent {
  Nanos ts = 0;
  std::uint64_t rq = 0;
  DevT disk = 0;
  std::uint16_t qid = 0;
  std::uint16_t cid = 0;
  NvmeEventKind kind = NvmeEventKind::Setup;
  std::uint8_t opcode = 0;
  std::uint16_t status = 0;
  std::uint32_t nsid = 0;
  std::uint64_t slba = 0;
  std::uint32_t nlb = 0;
  std::uint32_t control = 0;
};

// Where a slow syscall's time went off CPU (only for calls over --min-latency). Arrives just
// before the SyscallEvent of the same tid and start_ns.
struct CausesEvent {
  Nanos ts = 0;
  Nanos start_ns = 0;
  std::uint32_t tid = 0;
  Nanos throttle_ns = 0;        // asleep in balance_dirty_pages
  Nanos writeback_wait_ns = 0;  // asleep on a page under writeback
  Nanos blocked_ns = 0;         // asleep for anything else
  Nanos runnable_ns = 0;        // preempted, waiting for a CPU
};

// A kernel stack, innermost frame first: the return addresses the kernel gave, and their names
// ("folio_wait_bit_common+0x1a2", "ext4_sync_file+0x3f [ext4]"), filled in before the
// stitcher sees the event (by the agent from /proc/kallsyms, or from a trace file's symbols).
// An address that could not be named keeps an empty name.
struct KernelStack {
  std::vector<std::uint64_t> addrs;
  std::vector<std::string> frames;  // frames[i] names addrs[i] once symbolized
};

// Where a wakeup came from, read from the waker's stack by the stitcher (stitch/wait_rules.h):
// from a task's own code, from an interrupt (a completion, a softirq) that happened to land on
// the waker — so the waker's comm says nothing of why —, or from a timer firing (a timed
// sleep's end: balance_dirty_pages' pause, a timeout).
enum class WakeContext : std::uint8_t { Task, Interrupt, Timer };

// Who woke a sleeping thread (sched_waking, the waker being the thread running then: for a
// wake from an interrupt, whatever the interrupt landed on, with the interrupt's frames on top
// of its stack).
struct Waker {
  std::uint32_t pid = 0;  // tgid
  std::uint32_t tid = 0;
  std::string comm;
  bool kernel_thread = false;  // jbd2/…, kworker/…: its stack says what it was doing
  KernelStack stack;
  WakeContext context = WakeContext::Task;
};

// The kind of sleep the page-cache hooks flagged before it began (enum wp_offcpu_cause).
enum class SleepFlag : std::uint8_t { None, DirtyThrottle, WritebackWait };

// One distinct kernel stack a slow call went to sleep with (a preemption is not a sleep),
// summed over its sleeps.
struct OffCpuSleep {
  Nanos ns = 0;
  Nanos longest_ns = 0;
  std::uint32_t sleeps = 0;
  SleepFlag flag = SleepFlag::None;
  KernelStack stack;
  std::optional<Waker> waker;  // of its longest sleep
};

// The holder of a contended lock, when the lock said who (a writer-owned rwsem).
struct LockHolder {
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::string comm;
};

// Where a slow call slept and what it waited on (only with --min-latency and stacks on).
// Arrives just before the CausesEvent of the same tid and start_ns.
struct OffCpuEvent {
  Nanos ts = 0;
  Nanos start_ns = 0;
  std::uint32_t tid = 0;
  std::vector<OffCpuSleep> sleeps;  // the longest distinct stacks, longest first
  Nanos unslotted_ns = 0;           // asleep with stacks that had no slot left
  Nanos inode_lock_ns = 0;          // contended on the file's i_rwsem (lock:contention_*)
  std::uint32_t inode_lock_waits = 0;
  std::optional<LockHolder> inode_lock_holder;
  Nanos direct_reclaim_ns = 0;      // vmscan direct reclaim inside the call (on CPU and off)
  Nanos memcg_reclaim_ns = 0;       // a memory cgroup's limit reclaim inside the call
  Nanos compaction_ns = 0;          // memory compaction inside the call
  std::uint32_t blk_throttled = 0;  // bios the call submitted went over a cgroup I/O limit
};

// A dirty folio left the page cache without being written back (truncate, hole punch,
// unlink): its pages will never reach the disk from this dirtying.
struct DiscardEvent {
  Nanos ts = 0;
  DevT dev = 0;  // the file's superblock device
  std::uint64_t ino = 0;
  std::uint64_t index = 0;  // first page index in the file
  std::uint32_t pages = 0;
};

// A traced thread dirtied a folio of a regular file outside any traced write: a store into a
// shared mapping (once per writeback cycle of the folio).
struct MmapDirtyEvent {
  Nanos ts = 0;
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::string comm;
  DevT dev = 0;  // the file's superblock device
  std::uint64_t ino = 0;
  std::uint64_t index = 0;  // first page index in the file
  std::uint32_t pages = 0;
  std::uint64_t cgroup_id = 0;  // the thread's cgroup, set by the stitcher as for a syscall
};

// Which file system keeps a file's data inside its metadata (InlineDataEvent).
enum class InlineFs : std::uint8_t { Btrfs = WP_INLINE_BTRFS, Ext4 = WP_INLINE_EXT4 };
const char* inline_fs_name(InlineFs fs);  // "btrfs", "ext4"

// Bytes of a file that its file system stored inside its metadata, which no data request
// will carry: a btrfs inline extent (writeback copied the page into the subvolume's tree) or
// ext4's inline_data (the write copied them into the inode). They are on disk when the
// transaction that holds them commits: a btrfs transaction commit (FsCommitEvent) or log-tree
// sync of the file, a jbd2 commit (JournalEvent's end).
struct InlineDataEvent {
  Nanos ts = 0;
  DevT dev = 0;     // the file's device, as its write items carry it
  DevT fs_dev = 0;  // the file system's superblock device
  std::uint64_t ino = 0;
  std::uint64_t start = 0;  // the bytes [start, start + len) of the file
  std::uint32_t len = 0;
  // That transaction, or a later one: btrfs's generation when the copy was made, ext4's jbd2
  // tid that last changed the inode.
  std::uint64_t transaction = 0;
  InlineFs fs = InlineFs::Btrfs;
};

// A btrfs transaction committed (its superblocks written and waited for): what every
// transaction up to `transaction` holds is on disk.
struct FsCommitEvent {
  Nanos ts = 0;
  DevT fs_dev = 0;
  std::uint64_t transaction = 0;
  Nanos start_ns = 0;     // when the commit's own work began; 0: not known
  std::uint32_t tid = 0;  // the thread that committed it and wrote its superblocks
};

// The cgroup (v2) a traced thread is in, sent before the first record of that thread that an
// item is made of and whenever it has changed since (a thread moved to another cgroup).
struct CgroupEvent {
  Nanos ts = 0;
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::uint64_t cgroup_id = 0;  // the cgroup2 directory's inode number
};

// The path of a file (dev, ino), sent once per file before the first record naming it (and
// again only when the kernel resolves it afresh: its cache evicted it, or the inode number
// was reused by a new file).
struct FilePathEvent {
  Nanos ts = 0;
  DevT dev = 0;
  std::uint64_t ino = 0;
  // As the writer sees it, from its own root (as /proc/PID/fd shows it): "/data/x" for a
  // writer chroot'ed into /srv/box. A path the kernel's walk could not finish (too deep or too
  // long) holds the components nearest the file, after "..."; an unlinked file's ends with
  // " (deleted)".
  std::string path;
  // The same file from the root of the writer's mount namespace when that is not the writer's
  // root and the path differs ("/srv/box/data/x"); "" when it is the same as `path` (no chroot,
  // pivot_root, a trace recorded before roots were noted). The host's path is found from it.
  std::string ns_path;
  // The writer's mount namespace (its nsfs inode, as stat() of /proc/PID/ns/mnt gives it),
  // shared by every writer the path names the file for (their root is a mount of it); 0 when
  // not known (an older trace).
  std::uint32_t mnt_ns = 0;
  bool deleted = false;
  bool truncated = false;  // `path` holds the leaf end only
};

// A file (dev, ino) that the application reaches through overlayfs as (view_dev, view_ino):
// sent right after the file's FilePathEvent, whose path is the one the application opened.
struct FileViewEvent {
  Nanos ts = 0;
  DevT dev = 0;  // the backing (upper) file, as the other records name it
  std::uint64_t ino = 0;
  DevT view_dev = 0;  // the overlay's, as stat() reports them
  std::uint64_t view_ino = 0;
};

// A FUSE daemon answered the write or fsync request a traced call (tid, start_ns) sent it:
// arrives before the call's own record.
struct FuseReplyEvent {
  Nanos ts = 0;
  std::uint32_t tid = 0;
  Nanos start_ns = 0;
  std::uint64_t unique = 0;
  std::uint32_t opcode = 0;  // FUSE_WRITE (16), FUSE_FSYNC (20)
  int error = 0;             // the daemon's answer: 0 or -errno
  std::uint32_t daemon_pid = 0;
  std::uint32_t daemon_tid = 0;
  std::string daemon_comm;
};

// What a namespace call did (WP_NAMESPACE_TABLE's op column).
enum class NamespaceOp : std::uint8_t {
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
const char* namespace_op_name(NamespaceOp op);  // "rename", "link", ...
// WP_NS_* flags by name: "create", "excl", "trunc", "noreplace", "exchange", "whiteout",
// "directory"; the name-cut flags as "name_cut", "new_name_cut".
std::vector<const char*> namespace_flag_names(std::uint32_t flags);

// A namespace call of a traced thread (rename, link, unlink, mkdir, a creating or truncating
// open, truncate, fallocate, the close of a file open for writing), complete: emitted at its
// exit.
struct NamespaceEvent {
  Nanos start_ns = 0;
  Nanos end_ns = 0;
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::string comm;
  Syscall syscall = Syscall::Rename;
  NamespaceOp op = NamespaceOp::Rename;
  std::uint32_t flags = 0;  // WP_NS_* (enum wp_ns_flags)
  std::int64_t ret = 0;     // 0 / the fd, or -errno
  int fd = -1;              // the fd argument (ftruncate, fallocate, close), else -1
  // The names as the caller passed them (rename's and link's old and new; one for the rest),
  // each with the directory it is relative to ((0, 0): absolute, or none).
  std::array<std::string, 2> names;
  std::array<DevT, 2> dir_dev{};
  std::array<std::uint64_t, 2> dir_ino{};
  // The file acted on through an fd (ftruncate, fallocate, close) or opened (open): (0, 0) if
  // none.
  DevT dev = 0;
  std::uint64_t ino = 0;
};

// Records were lost (ring buffer full) just before this point of the stream.
struct LostEvent {
  Nanos ts = 0;
  std::uint64_t count = 0;
};

// Static facts about a block device, read by the agent before tracing starts.
struct DeviceInfo {
  DevT dev = 0;   // the device itself (partition or disk)
  DevT disk = 0;  // its whole disk (== dev for a disk)
  std::string name;
  bool volatile_write_cache = true;  // /sys/block/X/queue/write_cache == "write back"
  bool fua = false;
};

// A mounted file system whose superblock device is not a block device (btrfs: an anonymous
// device, and every subvolume another) or a stacked one (device-mapper, md), with the disks
// its I/O reaches.
struct FileSystemInfo {
  DevT dev = 0;               // the superblock's device
  std::vector<DevT> aliases;  // other devices stat() reports for it (btrfs subvolumes)
  std::vector<DevT> disks;    // the whole disks its block devices are on
  std::string type;           // "btrfs", "ext4"…
  // A file system in memory only (tmpfs, /dev/shm, ramfs, hugetlbfs): its pages never reach a
  // disk and are gone at reboot.
  bool memory_only() const { return type == "tmpfs" || type == "ramfs" || type == "hugetlbfs"; }
  // A FUSE file system ("fuse", "fuse.sshfs"; not fuseblk, whose daemon writes a block
  // device the trace may follow): its writes are handed to its daemon.
  bool fuse() const { return type == "fuse" || type.rfind("fuse.", 0) == 0; }
};

using Event = std::variant<SyscallEvent, BioEvent, RequestEvent, JournalEvent, ThrottleEvent,
                           NvmeEvent, LostEvent, CausesEvent, DiscardEvent, MmapDirtyEvent,
                           FsLogEvent, FilePathEvent, FileViewEvent, CgroupEvent, OffCpuEvent,
                           FuseReplyEvent, NamespaceEvent, InlineDataEvent, FsCommitEvent>;

}  // namespace wp
