// SPDX-License-Identifier: Apache-2.0
// Write tracker: each write from its record (at syscall exit) until its last state is known:
// failed at once; O_DIRECT written when its own bios complete; buffered written when every
// page it covers was carried by a bio queued after the write started; durable when every
// request that carried it is durable. Pending writes are kept compactly in batches.
// Rules: docs/reference/stitching-rules.md, "Writes"; tests: tests/unit/write_tracker_test.cpp.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "stitch/io_state.h"
#include "stitch/page_set.h"
#include "stitch/stitcher.h"

namespace wp::stitch {

// What a call's record brings besides the call itself (from CallContext).
struct CallExtras {
  std::optional<SlowCauses> causes;
  std::vector<ThrottlePause> throttles;
  std::optional<FuseDaemon> fuse;  // the FUSE daemon that answered the call's write
  // Dirty-throttling and writeback-wait figures of the call: zero for most writes, so a
  // pending write keeps them here, out of line, only when it has any.
  Nanos throttle_ns = 0;
  std::uint32_t throttle_events = 0;
  std::uint32_t writeback_waits = 0;
  bool any() const {
    return causes || !throttles.empty() || throttle_ns || throttle_events || writeback_waits;
  }
};

// Where records were lost: items pending across a loss are incomplete. The times are kept
// sorted (they come in time order; one that does not is put in its place), so whether a call
// spans a loss is a binary search, however many losses the history window holds.
class LossLog {
 public:
  void add(Nanos ts) {
    times_.insert(std::upper_bound(times_.begin(), times_.end(), ts), ts);
    last_ = std::max(last_.value_or(0), ts);
  }
  bool within(Nanos start, Nanos end) const {
    const auto first = std::lower_bound(times_.begin(), times_.end(), start);
    return first != times_.end() && *first <= end;
  }
  std::size_t size() const { return times_.size(); }
  const std::optional<Nanos>& last() const { return last_; }
  void sweep(Nanos horizon) {
    prune_older(times_, horizon, [](Nanos t) { return t; });
  }

 private:
  std::deque<Nanos> times_;
  std::optional<Nanos> last_;  // never swept: pending writes read it at emission
};

class SmallIndexList {
 public:
  void push_back(std::uint32_t v) {
    if (size_ < kInline) {
      inline_[size_++] = v;
      return;
    }
    if (!more_) more_ = std::make_unique<std::vector<std::uint32_t>>();
    more_->push_back(v);
    ++size_;
  }
  bool empty() const { return size_ == 0; }
  std::uint32_t size() const { return size_; }
  std::uint32_t operator[](std::uint32_t i) const {
    return i < kInline ? inline_[i] : (*more_)[i - kInline];
  }
  std::uint32_t back() const { return (*this)[size_ - 1]; }

 private:
  static constexpr std::uint32_t kInline = 1;
  std::array<std::uint32_t, kInline> inline_{};
  std::uint32_t size_ = 0;
  std::unique_ptr<std::vector<std::uint32_t>> more_;
};

// One pending write: the fields of its call that are its own (the batch holds the rest).
// 88 bytes: a pending write's whole cost, besides its share of its batch.
struct Member {
  Nanos start_ns = 0;
  Nanos end_ns = 0;
  std::uint64_t pos = 0;
  std::uint64_t count = 0;
  std::uint64_t seq = 0;  // arrival order among all items: the item's id
  // Bytes written: pending writes wrote something, and the kernel caps one call at
  // MAX_RW_COUNT (INT_MAX rounded down to a page), so 32 bits hold it.
  std::int32_t ret = 0;
  std::uint32_t pages_dirtied = 0;
  std::uint32_t dirty_folios = 0;
  std::uint32_t pages_left = 0;  // buffered: its pages not yet seen written
  std::uint32_t not_durable = 0;
  Syscall syscall = Syscall::Write;
  WriteState state = WriteState::Dirty;
  bool incomplete : 1 = false;
  bool emitted : 1 = false;
  bool announced : 1 = false;          // its Returned snapshot was handed out
  std::uint8_t via : 3 = 0;            // WP_VIA_* (three bits), packed with the flags above
  SmallIndexList requests;             // indices into its batch's requests
  std::unique_ptr<CallExtras> extras;  // only slow, throttled or waiting calls have any

  std::uint64_t first_page(PageGeometry page) const { return page.index(pos); }
  std::uint64_t last_page(PageGeometry page) const {
    return page.index(pos + static_cast<std::uint64_t>(ret) - 1);
  }
};

// Writes of one thread to one file, through one fd, waiting for the same writeback: their
// call identity, page set and requests are kept once. A buffered write joins the thread's
// open batch of the file if no bio with the file's pages was queued since the batch opened
// or since the write started, and it starts at or after the batch's last write's first page.
// Then every bio queued later was queued after every member started, so it carries their
// data for every page of the batch it holds: the page set can be shared. The first such bio
// closes the batch. Other writes (O_DIRECT, or writes that saw writeback during their call)
// are batches of one, with the same exact rules.
struct Batch {
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::string comm;
  std::string path;     // the file's path when its writes' records arrived (a rename: a new batch)
  std::string ns_path;  // and in the writer's namespace, if it differs (SyscallEvent::ns_path)
  std::uint32_t mnt_ns = 0;  // that namespace (SyscallEvent::mnt_ns)
  int fd = -1;
  DevT dev = 0;
  std::uint64_t ino = 0;
  DevT view_dev = 0;  // an overlay file's own, as its calls said (SyscallEvent::view_dev)
  std::uint64_t view_ino = 0;
  std::uint64_t cgroup_id = 0;
  std::uint32_t file_flags = 0;
  std::uint32_t call_flags = 0;  // call_flag::*; kMmapStore: a process's stores into a mapping
  std::uint64_t mmap_pages = 0;  // kMmapStore: the pages it dirtied (its span may have holes)
  std::uint32_t mmap_whole_folios = 0;  // kMmapStore: faults that made a large folio writable
  bool by_pages = false;          // tracked by page range (buffered, or O_DIRECT fallen back to it)
  bool indexed = false;           // in its inode's batch list
  std::uint64_t open_at_bio = 0;  // the inode's bio count when it opened; ~0: closed
  Nanos max_start = 0;
  std::uint64_t min_page = ~0ull;
  std::uint64_t max_page = 0;
  std::uint64_t max_member_span = 0;  // largest last_page - first_page of a member
  PageSet remaining;                  // pages of its members not yet seen written
  std::vector<std::shared_ptr<const Request>> requests;
  std::deque<Member>
      members;           // ordered by first page when by_pages (a deque: no copies as it grows)
  std::size_t live = 0;  // members not yet emitted
  std::size_t first_live = 0;  // no member before this one is live
  std::uint64_t direct_bios_left = 0;
  std::uint64_t direct_pages_left = 0;
  std::uint64_t direct_pages = 0;  // pages its O_DIRECT bios carry
  // Its members' data went into the file system's metadata (InlineDataEvent), all of it: a
  // file a file system stores so is one page at most. Out of line: few batches have it.
  struct Inlined {
    InlineData data;
    DevT fs_dev = 0;  // the file system's superblock device, which its commits name
  };
  std::unique_ptr<Inlined> inlined;

  bool same_writer(const SyscallEvent& ev) const {
    return pid == ev.pid && tid == ev.tid && fd == ev.fd && dev == ev.dev && ino == ev.ino &&
           file_flags == ev.file_flags && call_flags == ev.call_flags &&
           cgroup_id == ev.cgroup_id && comm == ev.comm && path == ev.path &&
           ns_path == ev.ns_path && mnt_ns == ev.mnt_ns && view_dev == ev.view_dev &&
           view_ino == ev.view_ino;
  }
};

class WriteTracker {
 public:
  using Emit = std::function<void(Timeline&&)>;
  // `history`: the bios queued so far (the block tracker's), which writes look back on.
  WriteTracker(const StitchLimits& limits, StitchStats& stats, const DeviceTable& devices,
               const BioHistory& history, const LossLog& loss, Emit emit)
      : limits_(limits),
        stats_(stats),
        devices_(devices),
        history_(history),
        loss_(loss),
        emit_(std::move(emit)) {}

  // Snapshots of pending writes as they progress (Stitcher::set_progress); none when unset.
  using Progress = std::function<void(ItemProgress, Timeline&&)>;
  void set_progress(Progress progress) { progress_ = std::move(progress); }
  // The next item id, for items that are not writes (syncs): one sequence for all items.
  std::uint64_t take_id() { return next_write_seq_++; }

  void on_write(const SyscallEvent& ev, CallExtras extras);
  // A traced thread dirtied file pages outside a write: they join its process's open mmap
  // item of the file, or open one (write_tracker_mmap.cpp).
  void on_mmap_dirty(const MmapDirtyEvent& ev);
  // A data request completed: `bio` is one of its bios.
  void bio_written(const Bio& bio, const std::shared_ptr<const Request>& r);
  // A data request failed: the writes whose pages (or O_DIRECT bios) `bio` carried are lost.
  void bio_failed(const Bio& bio, const std::shared_ptr<const Request>& r, Nanos ts);
  // The writes of file (dev, ino) lost by `until` that no sync was told of yet, by id: a sync
  // of the file takes them (errseq: one sync reports a writeback error).
  std::vector<std::uint64_t> take_lost(DevT dev, std::uint64_t ino, Nanos until);
  // A dirty folio left the page cache unwritten: writes whose pending pages it held lose them;
  // those left with none pending are discarded.
  void pages_discarded(const DiscardEvent& ev);
  // The file system copied a file's pages into its metadata (write_tracker_inline.cpp): the
  // writes whose pending pages they held lose them, as to a bio, and those left with none wait
  // for the transaction holding the copy to commit.
  void data_inlined(const InlineDataEvent& ev);
  // A transaction of a file system committed (a btrfs transaction, a jbd2 commit).
  struct MetadataCommit {
    InlineFs fs = InlineFs::Btrfs;
    DevT fs_dev = 0;
    std::uint64_t transaction = 0;
    Nanos ts = 0;           // when it was seen committed
    Nanos start_ns = 0;     // when its work began (0: not known)
    std::uint32_t tid = 0;  // the thread that committed it
  };
  void metadata_committed(const MetadataCommit& commit);
  // A sync call returned: a successful fsync of a btrfs file synced its log tree, which holds
  // the file's inline extents.
  void file_synced(const SyscallEvent& ev);
  // `r` became durable: its written writes may be too.
  void request_durable(const Request& r);
  // Emits pending writes over the age limit or the count cap, oldest first.
  void age_out(Nanos now);
  // End of trace: pending writes in arrival order with their last state, at most `max_items`
  // per call; returns true once none is left.
  bool finish(std::size_t max_items);
  std::size_t pending() const { return pending_writes_; }
  // Bios and requests it waits on for writes (entries of its waiter maps): bounded by the
  // pending writes, whatever becomes of the bios and requests they wait on.
  std::size_t waiting_on() const { return direct_waiters_.size() + durable_waiters_.size(); }

 private:
  enum class Eviction { None, AgedOut, Evicted };
  using BatchIt = std::map<BatchId, Batch>::iterator;
  // The batches of one file that still have pages to be written.
  struct FileWrites {
    std::vector<BatchId> batches;
    std::vector<BatchId> open_batches;  // the ones new writes may still join
  };
  // Open batches a file keeps for new writes to join (one per writing thread, normally).
  static constexpr std::size_t kMaxOpenBatchesPerFile = 8;

  void add_request(Batch& b, std::uint32_t index, const std::shared_ptr<const Request>& r);
  void take_pages(Batch& b, std::uint64_t lo, std::uint64_t hi,
                  const std::shared_ptr<const Request>* written_by,
                  std::vector<std::uint32_t>& done, std::vector<std::uint32_t>* touched = nullptr);
  bool take_bio_pages(BatchIt it, const Bio& bio, const std::shared_ptr<const Request>& r,
                      std::vector<std::uint32_t>& done, std::vector<std::uint32_t>* touched);
  struct Loss {
    Nanos ts = 0;
    int error = 0;
  };
  void lose(BatchIt it, std::uint32_t index, const Loss& loss);
  // Pages [first, last] of `file` left the pending sets at `ts` with no request (a discard, a
  // copy into metadata); a batch a member of which started after `ts` kept them (older
  // contents left, as with a bio queued then: a batch shares one page set, so its latest start
  // decides). For each batch that held some, `then` with the members left with none.
  void pages_gone(InodeKey file, std::uint64_t first, std::uint64_t last, Nanos ts,
                  const std::function<void(BatchIt, std::vector<std::uint32_t>&)>& then);
  void become_written(BatchIt it, std::uint32_t index);
  // The O_DIRECT writes waiting for bio `bio_id`, which stop waiting (its one completion).
  std::vector<BatchId> take_direct_waiters(std::uint64_t bio_id);
  // Drops waiter entries no live write needs any more (their bio or request never finished:
  // abandoned after a loss, swept), once there are many more of them than pending writes.
  void prune_waiters();
  void unindex(BatchId id, Batch& b);
  // `snapshot`: the member stays pending, so what it keeps (its throttle pauses) is copied.
  WriteTimeline timeline_of(const Batch& b, Member& m, bool snapshot = false) const;
  void track_write(const SyscallEvent& ev, CallExtras extras);
  void announce(MemberRef ref);
  void emit_member(BatchIt it, std::uint32_t index, Eviction eviction,
                   std::optional<Nanos> discarded_ns = std::nullopt,
                   std::optional<Loss> lost = std::nullopt);
  void emit_at_return(const SyscallEvent& ev, CallExtras extras, WriteState state);
  std::vector<std::shared_ptr<Bio>> direct_bios(const SyscallEvent& ev) const;
  std::vector<std::shared_ptr<Bio>> aio_share(const SyscallEvent& ev,
                                              std::vector<std::shared_ptr<Bio>> bios);
  bool join_mmap_item(BatchId id, const MmapDirtyEvent& ev, std::uint64_t bio_seq);
  // The FUA writes thread `tid` queued on the disks of file system `fs_dev` in [from, to]: a
  // btrfs commit's or log sync's superblocks, a jbd2 commit's commit block.
  std::vector<std::shared_ptr<const Request>> commit_writes(std::uint32_t tid, DevT fs_dev,
                                                            Nanos from, Nanos to) const;
  // Waiting members of inlined batch `id` are on disk: by `writes`, else at `committed_ns`.
  void commit_inlined(BatchId id, const std::vector<std::shared_ptr<const Request>>& writes,
                      Nanos committed_ns);
  Member member_of(const SyscallEvent& ev, CallExtras extras);
  BatchIt new_batch(const SyscallEvent& ev, Member m);
  BatchIt joinable_batch(const FileWrites& file, const InodeBios* history, const SyscallEvent& ev);
  void track_buffered(const SyscallEvent& ev, CallExtras extras);

  // The pages the records count in (the recording kernel's size).
  PageGeometry page() const { return PageGeometry{limits_.page_shift}; }

  const StitchLimits& limits_;
  StitchStats& stats_;
  const DeviceTable& devices_;
  const BioHistory& history_;
  const LossLog& loss_;
  Emit emit_;
  Progress progress_;
  BatchId next_batch_id_ = 1;
  std::uint64_t next_write_seq_ = 1;     // the next item id (writes and syncs)
  std::optional<MemberRef> last_added_;  // the member the current on_write() added
  std::size_t pending_writes_ = 0;       // live members of all batches
  std::map<BatchId, Batch> batches_;     // in creation order
  std::unordered_map<InodeKey, FileWrites, InodeKeyHash> files_;
  // What the writes wait on, by the block tracker's ids (Bio::id, Request::id): the O_DIRECT
  // writes waiting for a bio to complete, and the written writes waiting for a request to
  // become durable. Kept here, not on the bio or request: they are this tracker's state.
  std::unordered_map<std::uint64_t, std::vector<BatchId>> direct_waiters_;
  std::unordered_map<std::uint64_t, std::vector<MemberRef>> durable_waiters_;
  static constexpr std::size_t kWaiterSlack = 4096;  // entries allowed past 2 per pending write
  // The open mmap item of each (process, file), by batch.
  struct MmapKey {
    std::uint32_t pid = 0;
    InodeKey file;
    bool operator==(const MmapKey&) const = default;
  };
  struct MmapKeyHash {
    std::size_t operator()(const MmapKey& k) const {
      return InodeKeyHash()(k.file) ^ (std::size_t{k.pid} * 0x9e3779b97f4a7c15ull);
    }
  };
  std::unordered_map<MmapKey, BatchId, MmapKeyHash> open_mmap_;
  // Batches whose data went into metadata and still wait for its commit, in copy order.
  std::vector<BatchId> inlined_;
  // The last commit seen per file system: the next one's writes come after it (where the
  // kernel does not say when a commit began).
  std::unordered_map<DevT, Nanos> last_commit_;
  // The io_submit call whose O_DIRECT items are taking their bios: one record per iocb
  // arrives in a row, each with the call's window (aio_share).
  struct AioCall {
    std::uint32_t tid = 0;
    Nanos start_ns = 0;
    std::size_t bios_taken = 0;
  };
  AioCall aio_call_;
  // Lost writes per file, until a sync of the file takes them (bounded: the oldest go first).
  struct LostWrite {
    std::uint64_t id = 0;
    Nanos ts = 0;
  };
  std::unordered_map<InodeKey, std::deque<LostWrite>, InodeKeyHash> lost_by_file_;
  static constexpr std::size_t kMaxLostPerFile = 4096;
  static constexpr std::size_t kMaxFilesWithLosses = 1024;
  // finish(): the arrival order of what was pending when it was first called, and how far it got.
  std::vector<std::tuple<std::uint64_t, BatchId, std::uint32_t>> finish_order_;
  std::size_t finish_next_ = 0;
  bool finishing_ = false;
};

}  // namespace wp::stitch
