// SPDX-License-Identifier: Apache-2.0
// Typed kernel events: what decode produces from ring-buffer records and what the stitcher
// consumes. Plain values, no kernel or BPF types, so the stitcher can be driven by synthetic
// sequences in unit tests. Flags and enumerators take their values from bpf/writepath.h, the
// records' own definitions, so the decoder copies or casts them and nothing can drift.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/container.h"
#include "common/nanos.h"
#include "decode/kinds.h"
#include "decode/record_fields.h"
#include "decode/syscalls.h"
#include "writepath.h"

namespace wp {

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

// A bio entering the block layer, in the submitter's context.
struct BioEvent {
  Nanos ts = 0;
  std::uint64_t bio = 0;  // kernel pointer
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::string comm{};
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

struct RequestEvent {
  Nanos ts = 0;  // the record's time
  WP_TABLE_EVENT_FIELDS(WP_REQUEST_FIELDS)
  bool operator==(const RequestEvent&) const = default;
};

struct JournalEvent {
  Nanos ts = 0;  // the record's time
  WP_TABLE_EVENT_FIELDS(WP_JOURNAL_FIELDS)
  bool operator==(const JournalEvent&) const = default;
};

struct FsLogEvent {
  Nanos ts = 0;  // the record's time
  WP_TABLE_EVENT_FIELDS(WP_FS_LOG_FIELDS)
  bool operator==(const FsLogEvent&) const = default;
};

struct ThrottleEvent {
  Nanos ts = 0;  // the record's time
  WP_TABLE_EVENT_FIELDS(WP_THROTTLE_FIELDS)
  bool operator==(const ThrottleEvent&) const = default;
};

struct NvmeEvent {
  Nanos ts = 0;  // the record's time
  WP_TABLE_EVENT_FIELDS(WP_NVME_FIELDS)
  bool operator==(const NvmeEvent&) const = default;
};

// Where a slow syscall's time went off CPU (only for calls over --min-latency). Arrives just
// before the SyscallEvent of the same tid and start_ns.
struct CausesEvent {
  Nanos ts = 0;  // the record's time
  WP_TABLE_EVENT_FIELDS(WP_CAUSES_FIELDS)
  bool operator==(const CausesEvent&) const = default;
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
  Nanos ts = 0;  // the record's time
  WP_TABLE_EVENT_FIELDS(WP_DISCARD_FIELDS)
  bool operator==(const DiscardEvent&) const = default;
};

// A traced thread dirtied a folio of a regular file outside any traced write: a store into a
// shared mapping (once per writeback cycle of the folio).
struct MmapDirtyEvent {
  Nanos ts = 0;  // the record's time
  WP_TABLE_EVENT_FIELDS(WP_MMAP_DIRTY_FIELDS)
  std::uint64_t cgroup_id = 0;  // the thread's cgroup, set by the stitcher as for a syscall
  bool operator==(const MmapDirtyEvent&) const = default;
};

// Bytes of a file that its file system stored inside its metadata, which no data request
// will carry: a btrfs inline extent (writeback copied the page into the subvolume's tree) or
// ext4's inline_data (the write copied them into the inode). They are on disk when the
// transaction that holds them commits: a btrfs transaction commit (FsCommitEvent) or log-tree
// sync of the file, a jbd2 commit (JournalEvent's end).
struct InlineDataEvent {
  Nanos ts = 0;  // the record's time
  WP_TABLE_EVENT_FIELDS(WP_INLINE_FIELDS)
  bool operator==(const InlineDataEvent&) const = default;
};

// A btrfs transaction committed (its superblocks written and waited for): what every
// transaction up to `transaction` holds is on disk.
struct FsCommitEvent {
  Nanos ts = 0;  // the record's time
  WP_TABLE_EVENT_FIELDS(WP_FS_COMMIT_FIELDS)
  bool operator==(const FsCommitEvent&) const = default;
};

// The cgroup (v2) a traced thread is in, sent before the first record of that thread that an
// item is made of and whenever it has changed since (a thread moved to another cgroup).
struct CgroupEvent {
  Nanos ts = 0;  // the record's time
  WP_TABLE_EVENT_FIELDS(WP_CGROUP_FIELDS)
  bool operator==(const CgroupEvent&) const = default;
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
  Nanos ts = 0;  // the record's time
  WP_TABLE_EVENT_FIELDS(WP_FILE_VIEW_FIELDS)
  bool operator==(const FileViewEvent&) const = default;
};

// A FUSE daemon answered the write or fsync request a traced call (tid, start_ns) sent it:
// arrives before the call's own record.
struct FuseReplyEvent {
  Nanos ts = 0;  // the record's time
  WP_TABLE_EVENT_FIELDS(WP_FUSE_FIELDS)
  bool operator==(const FuseReplyEvent&) const = default;
};

// A name-change call of a traced thread (rename, link, unlink, mkdir, a creating or truncating
// open, truncate, fallocate, the close of a file open for writing), complete: emitted at its
// exit.
struct NameChangeEvent {
  Nanos start_ns = 0;
  Nanos end_ns = 0;
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::string comm;
  Syscall syscall = Syscall::Rename;
  NameChangeOp op = NameChangeOp::Rename;
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
  // A file system whose files have no page cache (proc, sysfs, cgroup…: each read is made up
  // by the kernel when it is asked): its reads find and bring in no page.
  bool no_page_cache() const {
    static constexpr std::string_view kTypes[] = {
        "proc",   "sysfs",  "cgroup", "cgroup2", "debugfs",  "tracefs", "securityfs",  "configfs",
        "devpts", "pstore", "bpf",    "mqueue",  "efivarfs", "fusectl", "binfmt_misc", "nsfs"};
    return std::find(std::begin(kTypes), std::end(kTypes), type) != std::end(kTypes);
  }
};

// A read syscall of a traced thread on a file, complete (its wp_read_record, at the call's
// exit): the call as a write's is (thread, file, position, bytes asked and read; named and
// placed in its cgroup as a write's), and what the page cache did for it.
struct ReadEvent {
  SyscallEvent call;
  // The pages the call put in its file's page cache (the misses it filled and the readahead
  // it started), and those of them past its last byte.
  std::uint32_t pages_added = 0;
  std::uint32_t pages_added_beyond = 0;
  // The readaheads it ran, and the pages it still wanted as each began.
  std::uint16_t sync_ra = 0;
  std::uint16_t async_ra = 0;
  std::uint32_t sync_ra_pages = 0;
  std::uint32_t async_ra_pages = 0;
};

// A traced thread's page fault on a mapping of a regular file, sent at its next fault or its
// exit (ts): the fault's entry, its last page-cache event, the page, and what the page cache
// did for it (wp_fault_record).
struct FaultEvent {
  Nanos ts = 0;  // the record's time: the thread's next fault or exit
  WP_TABLE_EVENT_FIELDS(WP_FAULT_FIELDS)
  bool operator==(const FaultEvent&) const = default;
};

// A file turned dirty: `pid` (in cgroup `cgroup_id`) dirtied a page of (dev, ino) when it had
// none dirty, traced or not. The flusher's writeback of the file is charged to it.
struct DirtierEvent {
  Nanos ts = 0;  // the record's time
  WP_TABLE_EVENT_FIELDS(WP_DIRTIER_FIELDS)
  bool operator==(const DirtierEvent&) const = default;
};

// A bystander's data completed on a traced disk while a traced sync waited (its request kept
// out of the trace): `bytes` of request `rq`, owned by process `tgid` or, for a kernel thread's
// writeback (tgid 0), by the dirtier of file (file_dev, ino).
struct BystanderIoEvent {
  Nanos ts = 0;  // the completion's time
  WP_TABLE_EVENT_FIELDS(WP_BYSTANDER_IO_FIELDS)
  bool operator==(const BystanderIoEvent&) const = default;
};

// Data bios the kernel kept out of a traced disk (not an event: counted till the trace's end,
// read then), by owner: a process (`tgid` set, with its cgroup and comm) or, for a kernel
// thread's writeback, the file (`dev`, `ino`) whose dirtier owns it.
struct FilteredIo {
  DevT disk = 0;
  std::uint32_t tgid = 0;
  std::uint64_t cgroup_id = 0;
  DevT dev = 0;
  std::uint64_t ino = 0;
  std::string comm;
  std::uint64_t bytes = 0;
  std::uint64_t bios = 0;
  bool operator==(const FilteredIo&) const = default;
};
// An entry of the kernel's filtered_io map (bpf/block.bpf.c), as a trace file keeps it too.
FilteredIo filtered_io_entry(const wp_filtered_io_key& key, const wp_filtered_io& io);

using Event = std::variant<SyscallEvent, BioEvent, RequestEvent, JournalEvent, ThrottleEvent,
                           NvmeEvent, LostEvent, CausesEvent, DiscardEvent, MmapDirtyEvent,
                           FsLogEvent, FilePathEvent, FileViewEvent, CgroupEvent, OffCpuEvent,
                           FuseReplyEvent, NameChangeEvent, InlineDataEvent, FsCommitEvent,
                           ReadEvent, FaultEvent, DirtierEvent, BystanderIoEvent>;

}  // namespace wp
