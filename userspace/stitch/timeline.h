// SPDX-License-Identifier: Apache-2.0
// Stitched timelines: what the stitcher hands to the sinks. Snapshots (plain values): a sink
// never sees the stitcher's internal state.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "decode/events.h"
#include "stitch/sync_phase.h"

namespace wp {

struct NvmeCommand {
  std::uint16_t qid = 0;
  std::uint16_t cid = 0;
  std::uint8_t opcode = 0;
  std::uint32_t nsid = 0;
  bool fua = false;
  std::optional<Nanos> submit_ns;
  std::optional<Nanos> complete_ns;
  std::optional<std::uint16_t> status;
};

// One lifetime of a block request (a kernel request pointer between issue and final completion).
// A thread that submitted bios of a request, and why.
struct RequestSubmitter {
  std::uint32_t tid = 0;
  std::string comm;
  SubmitWhy why = SubmitWhy::Unknown;
};

struct RequestTimeline {
  DevT disk = 0;
  std::uint64_t sector = 0;
  std::uint32_t bytes = 0;
  ReqOp op = ReqOp::Write;
  std::uint32_t flags = 0;        // req_flag::*, the union of its bios' flags and the request's own
  std::optional<Nanos> queue_ns;  // first bio queued (submission)
  std::optional<Nanos> insert_ns;
  std::optional<Nanos> issue_ns;
  std::optional<Nanos> complete_ns;  // data transfer done
  // The kernel never delivered its completion event (a hook it skipped, see
  // BlockTracker::infer_completion): complete_ns is the latest it can have completed, the time
  // its pointer was next used.
  bool complete_inferred = false;
  std::optional<Nanos> durable_ns;  // FUA post-flush done, or covered by a later FLUSH
  std::int32_t error = 0;
  std::uint32_t bios = 0;  // number of bios stitched into it
  // Who submitted it: the thread of its earliest-queued bio (the one `queue_ns` is the queue
  // time of), its command, and why (write, fsync, periodic…).
  std::optional<std::uint32_t> submit_tid;
  std::string submit_comm;
  SubmitWhy submit_why = SubmitWhy::Unknown;
  // The other threads (or reasons) whose bios were merged into it, in the order they were
  // claimed; empty when one thread submitted it all.
  std::vector<RequestSubmitter> other_submitters;
  std::optional<NvmeCommand> nvme;
};

struct JournalCommit {
  DevT dev = 0;
  std::uint32_t transaction = 0;
  std::optional<Nanos> start_ns;
  std::optional<Nanos> locking_ns;
  std::optional<Nanos> flushing_ns;
  std::optional<Nanos> logging_ns;
  std::optional<Nanos> end_ns;
};

// What a slow call waited on, each decided by one documented rule from its sleeps' stacks and
// the tracepoints of the call (stitch/wait_rules.h). Other: a sleep no rule names ("blocked
// (other)"), shown with its stack, never guessed.
enum class WaitCause : std::uint8_t {
  JournalCommit,  // waiting for a jbd2 transaction to commit (fsync, or a full transaction)
  JournalSpace,   // waiting for room in the journal / for a running transaction to start
  InodeLock,      // the file's i_rwsem, held by another writer
  PageLock,       // a page/folio lock held by someone else (not writeback)
  WritebackWait,  // a page under writeback (folio_wait_writeback)
  DirtyThrottle,  // balance_dirty_pages
  DirectReclaim,  // freeing memory for an allocation (vmscan direct reclaim)
  MemcgReclaim,   // reclaim forced by a memory cgroup's limit
  Compaction,     // memory compaction for a high-order allocation
  BlockThrottle,  // blk-throttle: a cgroup io.max (v1 blkio.throttle) limit held its bios
  IoCost,         // iocost (io.cost.qos) made it wait for budget
  Wbt,            // writeback throttling (wbt) held it back
  RequestTag,     // no free request tag: the device queue was full
  DeviceIo,       // its own I/O being done by the device (submit_bio_wait, a dio's bios)
  Other,
};
// "journal-commit", "journal-space", "inode-lock", "page-lock", "writeback-wait",
// "dirty-throttle", "direct-reclaim", "memcg-reclaim", "compaction", "block-throttle",
// "iocost", "wbt", "request-tag", "device-io", "other".
const char* wait_cause_name(WaitCause c);

// A delay's own timeline further down, when a wait was for one: the journal commit the call
// waited on and the flushes that commit issued, with their device time.
struct WaitChain {
  std::optional<JournalCommit> commit;
  std::vector<RequestTimeline> flushes;
};

// One named cause of a slow call: the time its sleeps (or, for reclaim and compaction, its
// tracepoint-timed spans) spent on it.
struct NamedWait {
  WaitCause cause = WaitCause::Other;
  Nanos ns = 0;
  std::uint32_t sleeps = 0;
  Nanos longest_ns = 0;  // its longest sleep (0 for a tracepoint-timed cause without one)
  // The frame or tracepoint that decided it: "jbd2_log_wait_commit", "lock:contention_begin on
  // the file's i_rwsem", "vmscan:mm_vmscan_memcg_reclaim".
  std::string evidence;
  // The stack of its longest sleep from the first frame that is not the scheduler's own
  // (schedule, io_schedule, …), innermost first; empty for a tracepoint-timed cause.
  std::vector<std::string> frames;
  std::optional<Waker> waker;
  std::optional<LockHolder> holder;  // InodeLock: who held it
  WaitChain chain;
};

// Where a slow call's time went: these add up to its latency.
struct SlowCauses {
  Nanos on_cpu_ns = 0;
  Nanos throttle_ns = 0;        // asleep in dirty throttling (balance_dirty_pages)
  Nanos writeback_wait_ns = 0;  // asleep waiting for a page under writeback
  Nanos blocked_ns = 0;         // asleep for anything else: locks, the journal, I/O
  Nanos runnable_ns = 0;        // preempted, waiting for a CPU
  // With stacks (--min-latency without --no-stacks): its sleeps by stack, longest first, and
  // the causes named from them, longest first. Empty without stacks.
  std::vector<OffCpuSleep> sleeps = {};
  Nanos unslotted_ns = 0;
  std::vector<NamedWait> waits = {};
};

// One dirty-throttling pause inside a write, with the dirty state that caused it.
struct ThrottlePause {
  Nanos ts = 0;
  std::int64_t pause_ms = 0;
  std::uint64_t dirty_pages = 0;  // globally dirty at that moment
  std::uint64_t limit_pages = 0;  // the global dirty limit
};

// Discarded: the page cache dropped the write's pages before writeback (truncate, unlink);
// its data will never reach the disk.
// Memory: a write to a file system that lives in memory only (tmpfs, ramfs, hugetlbfs): its
// data is never written to a disk and is lost at reboot; the state is final at its return.
// Lost: writeback of its pages failed (a request completed with an error): its data will never
// reach the disk, and only one sync of the file will say so (errseq).
// Handed: a write to a FUSE file system: its data went to the file system's daemon (named in
// WriteTimeline::fuse when the kernel's FUSE tracepoints say which answered), and what becomes
// of it is the daemon's; final at its return.
enum class WriteState : std::uint8_t {
  Failed,
  Dirty,
  Written,
  Durable,
  Discarded,
  Memory,
  Lost,
  Handed
};
const char* write_state_name(WriteState s);

// Commit: the file system reported the transaction holding the write's data committed (its
// data lived in the metadata: WriteTimeline::inline_data), and none of that commit's FUA
// writes was seen.
enum class DurableVia : std::uint8_t { None, Flush, Fua, NoWriteCache, Commit };
// "flush", "fua", "no-write-cache", "commit", "" for None
const char* durable_via_name(DurableVia v);

// A write whose data its file system stored inside its metadata instead of data blocks (a
// btrfs inline extent, ext4's inline_data): no data request carries it, and it is on disk when
// the transaction holding it commits.
struct InlineData {
  InlineFs fs = InlineFs::Btrfs;
  Nanos ns = 0;                       // when the data went into the metadata
  std::uint64_t transaction = 0;      // the transaction holding it (or a later one)
  std::optional<Nanos> committed_ns;  // when that transaction was seen committed
  bool operator==(const InlineData&) const = default;
};

// The FUSE daemon thread that answered a call's request (its last one, for a call that sent
// several), and its answer.
struct FuseDaemon {
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::string comm;
  int error = 0;  // 0 or -errno
  bool operator==(const FuseDaemon&) const = default;
};

// A crash-consistency hazard an item shows: what could be lost or half-made if the machine
// crashed now. The rules and why each is a hazard: analyze/hazards.h.
struct Hazard {
  std::string rule;                    // "lost-but-acknowledged", "direct-not-durable"
  std::string detail;                  // the evidence, one sentence
  std::vector<std::uint64_t> related;  // ids of the other items it concerns
  bool operator==(const Hazard&) const = default;
};

// The write faults an mmap item (call_flag::kMmapStore) folds: one per MmapDirtyEvent. Of
// those, `whole_folio` made a large folio writable whole (a fault on a page not yet mapped,
// which 6.18 maps folio by folio; or the fault that dirtied a folio where the kernel reports
// only folios): the stores inside such a folio are not seen, so its pages are what
// writeback carries, an upper bound of what was stored there.
struct StoreFaults {
  std::uint32_t faults = 0;
  std::uint32_t whole_folio = 0;
  bool operator==(const StoreFaults&) const = default;
};

struct WriteTimeline {
  // The item's id, in arrival order among all items (writes and syncs) of the trace: the same
  // on its early `Returned`/`Written` snapshots and on the complete item.
  std::uint64_t id = 0;
  // A `Returned` snapshot of it was handed out (Stitcher::set_progress) before it completed.
  bool announced = false;
  SyscallEvent call;
  bool direct = false;
  bool sync = false;  // O_SYNC/O_DSYNC
  WriteState state = WriteState::Dirty;
  std::uint64_t pages = 0;  // pages the write covers (buffered) or carried by its bios (direct)
  std::uint64_t pages_pending = 0;  // pages not yet seen completing in a request
  std::optional<FuseDaemon> fuse;   // state Handed: the daemon that answered, when known
  std::vector<RequestTimeline> requests;
  std::optional<Nanos> written_ns;
  std::optional<Nanos> durable_ns;
  std::optional<Nanos> discarded_ns;  // state Discarded: when its last pending pages were dropped
  std::optional<Nanos> lost_ns;       // state Lost: when the request that failed completed
  int lost_error = 0;                 // state Lost: that request's error (-errno)
  DurableVia durable_via = DurableVia::None;
  bool incomplete = false;           // records were lost or the item aged out while pending
  std::optional<SlowCauses> causes;  // with --min-latency, for calls that slow
  std::vector<ThrottlePause> throttles;
  std::vector<Hazard> hazards;              // set as the item is emitted (analyze/hazards.h)
  std::optional<StoreFaults> store_faults;  // mmap items only
  std::optional<InlineData> inline_data;    // its data went into the file system's metadata
};

// Whose data a disk request carried: the process that dirtied the pages a kernel thread (a
// flusher) wrote back, or the one that queued its own bios (its fsync's writeback, O_DIRECT),
// with its cgroup (v2) id; the agent names the cgroup and its container.
struct IoOwner {
  std::uint32_t pid = 0;
  std::string comm;
  std::uint64_t cgroup_id = 0;
  std::string cgroup;                          // its path under the cgroup2 root ("": unknown)
  std::shared_ptr<const Container> container;  // null: a host cgroup or unknown
};

// Another process whose data the disk wrote while a call waited on it: a neighbour of the call
// (stitch/neighbours.h). Its bytes are those of its requests that completed inside the call;
// `share` is their part of every byte the disk wrote then, the call's own and the journal's
// included; `delay_ns` the call's latency times that share, the time its I/O is charged with.
struct Neighbour {
  IoOwner owner;
  DevT disk = 0;
  std::uint64_t bytes = 0;
  std::uint64_t requests = 0;  // requests that carried them
  double share = 0;
  Nanos delay_ns = 0;
};

// One owner's data written to one disk over a trace (the summary's ranking of neighbours).
struct OwnerIo {
  IoOwner owner;
  DevT disk = 0;
  std::uint64_t bytes = 0;
  std::uint64_t requests = 0;
};

struct SyncTimeline {
  std::uint64_t id = 0;  // as WriteTimeline::id; a sync is complete when its call returns
  SyscallEvent call;
  SyncPhases phases;
  std::vector<PhaseSegment> segments;     // where each phase fell (phases are their totals)
  std::vector<RequestTimeline> requests;  // data requests carrying bios the caller submitted
  // Metadata requests (REQ_META) carrying bios the caller submitted: the file system's log or
  // journal written by the sync itself (an xfs iclog, btrfs log tree blocks and superblocks).
  std::vector<RequestTimeline> journal_requests;
  std::vector<RequestTimeline> flushes;  // flushes on the device completing inside the call
  std::vector<JournalCommit> commits;    // journal commits on the device overlapping the call
  // The file's writes whose writeback failed before the call ended and that no earlier sync of
  // the file was told of, by id: a failed sync reported their loss; one that returned 0 did
  // not (errseq: the error went to another sync, another file description, or nowhere).
  std::vector<std::uint64_t> lost_writes;
  bool loss_unreported = false;  // returned 0 with lost_writes
  // A sync of a FUSE file: the daemon that answered its FUSE_FSYNC (it syncs, or not, itself).
  std::optional<FuseDaemon> fuse;
  bool incomplete = false;
  std::optional<SlowCauses> causes;  // with --min-latency, for calls that slow
  std::vector<Hazard> hazards;       // set as the item is emitted (analyze/hazards.h)
  // Other processes whose data the file's disk wrote while the call waited, most bytes first
  // (at most kMaxNeighbours).
  std::vector<Neighbour> neighbours;
};

// A name-change call (rename, link, unlink, mkdir, a creating or truncating open, truncate,
// fallocate): complete when it returns. What makes it durable (the directory's sync) and what
// it did to data not yet durable are the hazard rules' (analyze/hazards.h).
struct NameChangeTimeline {
  std::uint64_t id = 0;  // as WriteTimeline::id
  // The call: `syscall` the name-change call, `ret` its result; dev, ino and path the file it
  // acted on through an fd or opened (ftruncate, fallocate, open), else 0 and "".
  SyscallEvent call;
  NameChangeOp op = NameChangeOp::Rename;
  std::uint32_t flags = 0;  // WP_NS_* (enum wp_ns_flags)
  // The names as the caller passed them (rename's and link's old and new; one for the rest),
  // and each made whole from the path of the directory it is relative to ("" when that path
  // was not known, or the name was cut).
  std::array<std::string, 2> names;
  std::array<std::string, 2> paths;
  // The directory each name is relative to ((0, 0): absolute).
  struct Dir {
    DevT dev = 0;
    std::uint64_t ino = 0;
    bool operator==(const Dir&) const = default;
  };
  std::array<Dir, 2> dirs{};
  // The sync that made the name it made (rename's and link's new name, mkdir's, a creating
  // open's) durable: its directory's, the file's own, or sync/syncfs, by id; set with the
  // hazards (analyze/hazards.h), none when nothing synced it before the trace ended.
  std::optional<std::uint64_t> name_synced_by;
  bool incomplete = false;           // records were lost around it
  std::optional<SlowCauses> causes;  // never set: a name-change call is not followed off-CPU
  std::vector<Hazard> hazards;       // set as the item is emitted (analyze/hazards.h)
};

// A read of a traced thread on a file: complete when it returns. Where its bytes came from:
// the pages of [pos, pos + ret) the call found in the page cache, and the ones it had to bring
// in (the cache fills in its thread on its file, inside the byte range); what its readahead
// brought beyond them; and, with --min-latency, where its time went off CPU.
// A page fault on a file mapping, as a read item (ReadTimeline::fault; its call's syscall is
// Syscall::PageFault, its bytes the page it faulted on, its end the last page-cache event seen
// in it: the kernel has no hook at a fault's end).
struct FaultFacts {
  std::uint64_t address = 0;  // the faulting user address
  // As the kernel counts it (mm_account_fault: maj_flt): it found its page missing and read it
  // in (VM_FAULT_MAJOR), or was retried after dropping the mmap lock to wait for the page or
  // to start readahead (FAULT_FLAG_TRIED). Else minor: the page was cached and up to date.
  bool major = false;
  bool write = false;   // a store
  bool kernel = false;  // the kernel touched the user address for the thread, in a syscall
  std::uint32_t mapped_pages = 0;    // cached pages fault-around offered to map
  std::uint16_t filemap_faults = 0;  // filemap_fault calls: 0 when fault-around served it
};

struct ReadTimeline {
  std::uint64_t id = 0;  // as WriteTimeline::id
  SyscallEvent call;     // `ret`: the bytes read, or -errno
  // The file pages [pos, pos + ret) spans (0 when nothing was read), from first_page on.
  std::uint64_t pages = 0;
  std::uint64_t first_page = 0;
  // Of those, the ones it brought in (a miss filled by its own read or readahead); the rest
  // it found in the page cache. An O_DIRECT read goes around the cache: both are 0; so are
  // they for a file of a file system without one (proc, sysfs: page_cache false).
  std::uint64_t pages_from_device = 0;
  std::uint64_t pages_cached = 0;
  bool page_cache = true;
  // Readahead: pages added past the read's last byte, and the readaheads it ran.
  std::uint32_t readahead_pages = 0;
  std::uint16_t sync_readaheads = 0;
  std::uint16_t async_readaheads = 0;
  bool incomplete = false;           // records were lost around it
  std::optional<SlowCauses> causes;  // with --min-latency: its time off CPU
  std::vector<Hazard> hazards;       // none: reads make no crash-consistency hazard
  std::optional<FaultFacts> fault;   // a page fault rather than a read syscall
  // The read requests that carried the bios it queued (its misses, the readahead it started,
  // an O_DIRECT read's data), in the order they were issued, as they were when its record came:
  // a request not complete by then (complete_ns after call.end_ns, or none) is readahead the
  // call did not wait for. With --reads on a kernel whose block hooks attach.
  std::vector<RequestTimeline> requests;
};

using Timeline = std::variant<WriteTimeline, SyncTimeline, NameChangeTimeline, ReadTimeline>;

// The item's id (WriteTimeline::id).
inline std::uint64_t id_of(const Timeline& item) {
  return std::visit([](const auto& t) { return t.id; }, item);
}

// ---- small facts of the timelines, computed here once ----

// The syscall a timeline is of.
inline const SyscallEvent& call_of(const Timeline& item) {
  return std::visit([](const auto& t) -> const SyscallEvent& { return t.call; }, item);
}

// How long from `from` to `to`: 0 when `to` is not after `from` (clocks read on two CPUs, a
// record from another boot), never a wrapped-around unsigned difference.
constexpr Nanos elapsed_ns(Nanos from, Nanos to) {
  return to > from ? to - from : 0;
}
// The same between two times either of which may be unknown: none unless both are known and
// `to` is not before `from`.
constexpr std::optional<Nanos> elapsed_ns(const std::optional<Nanos>& from,
                                          const std::optional<Nanos>& to) {
  if (!from || !to || *to < *from) return std::nullopt;
  return *to - *from;
}

// A call's latency (0 if its end is recorded before its start).
constexpr Nanos latency_ns(const SyscallEvent& call) {
  return elapsed_ns(call.start_ns, call.end_ns);
}
// When a call ended, never before it started.
constexpr Nanos call_end(const SyscallEvent& call) {
  return call.end_ns > call.start_ns ? call.end_ns : call.start_ns;
}
// Bytes a write wrote (0 when it failed).
constexpr std::uint64_t bytes_written(const SyscallEvent& call) {
  return call.ret > 0 ? static_cast<std::uint64_t>(call.ret) : 0;
}

// When a request started: issue, else insert, else its first bio's queue time.
inline std::optional<Nanos> request_start(const RequestTimeline& r) {
  if (r.issue_ns) return r.issue_ns;
  if (r.insert_ns) return r.insert_ns;
  return r.queue_ns;
}
// The earliest time known of a request: its queueing, else insert, issue, completion.
inline std::optional<Nanos> request_first_known(const RequestTimeline& r) {
  for (const auto& t : {r.queue_ns, r.insert_ns, r.issue_ns, r.complete_ns})
    if (t) return t;
  return std::nullopt;
}

// The earliest phase time a commit has: its start, unless that record was not seen.
inline std::optional<Nanos> first_known(const JournalCommit& c) {
  for (const auto& t : {c.start_ns, c.locking_ns, c.flushing_ns, c.logging_ns, c.end_ns})
    if (t) return t;
  return std::nullopt;
}

}  // namespace wp
