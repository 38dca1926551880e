// SPDX-License-Identifier: Apache-2.0
// Write tracker: each write from its record (at syscall exit) until its last state is known:
// failed at once; O_DIRECT written when its own bios complete; buffered written when every
// page it covers was carried by a bio queued after the write started; durable when every
// request that carried it is durable. Pending writes are kept compactly in batches.
// Rules: docs/reference/stitching-rules.md, "Writes"; tests: tests/unit/write_tracker_test.cpp
// and its neighbours by concern (write_tracker_*_test.cpp, write_progress_test.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "stitch/io_state.h"
#include "stitch/item_ids.h"
#include "stitch/loss_log.h"
#include "stitch/lost_writes.h"
#include "stitch/stitcher.h"
#include "stitch/write_batch.h"
#include "stitch/write_waiters.h"

namespace wp::stitch {

class WriteTracker {
 public:
  using Emit = std::function<void(Timeline&&)>;
  // `history`: the bios queued so far (the block tracker's), which writes look back on; `ids`:
  // the stitcher's item ids, of which each write takes one when its record arrives.
  WriteTracker(const StitchLimits& limits, StitchStats& stats, const DeviceTable& devices,
               const BioHistory& history, const LossLog& loss, ItemIds& ids, Emit emit)
      : limits_(limits),
        stats_(stats),
        devices_(devices),
        history_(history),
        loss_(loss),
        ids_(ids),
        emit_(std::move(emit)) {}

  // Snapshots of pending writes as they progress (Stitcher::set_progress); none when unset.
  using Progress = std::function<void(ItemProgress, Timeline&&)>;
  void set_progress(Progress progress) { progress_ = std::move(progress); }
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
  std::vector<std::uint64_t> take_lost(DevT dev, std::uint64_t ino, Nanos until) {
    return lost_.take(InodeKey{dev, ino}, until);
  }
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
  std::size_t waiting_on() const { return waiters_.size(); }

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
  // copy into metadata); a batch one of whose writes started after `ts` kept them (older
  // contents left, as with a bio queued then: a batch shares one page set, so its latest start
  // decides). For each batch that held some, `then` with the writes left with none.
  void pages_gone(InodeKey file, std::uint64_t first, std::uint64_t last, Nanos ts,
                  const std::function<void(BatchIt, std::vector<std::uint32_t>&)>& then);
  void become_written(BatchIt it, std::uint32_t index);
  // Drops the waiter entries no live write needs any more (WriteWaiters::crowded).
  void prune_waiters();
  void unindex(BatchId id, Batch& b);
  void track_write(const SyscallEvent& ev, CallExtras extras);
  void announce(PendingWriteRef ref);
  void emit_write(BatchIt it, std::uint32_t index, Eviction eviction,
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
  // Waiting writes of inlined batch `id` are on disk: by `fua_writes`, else at `committed_ns`.
  void commit_inlined(BatchId id, const std::vector<std::shared_ptr<const Request>>& fua_writes,
                      Nanos committed_ns);
  PendingWrite pending_write_of(const SyscallEvent& ev, CallExtras extras);
  BatchIt new_batch(const SyscallEvent& ev, PendingWrite w);
  BatchIt joinable_batch(const FileWrites& file, const InodeBios* history, const SyscallEvent& ev);
  void track_buffered(const SyscallEvent& ev, CallExtras extras);

  // The pages the records count in (the recording kernel's size).
  PageGeometry page() const { return PageGeometry{limits_.page_shift}; }

  const StitchLimits& limits_;
  StitchStats& stats_;
  const DeviceTable& devices_;
  const BioHistory& history_;
  const LossLog& loss_;
  ItemIds& ids_;
  Emit emit_;
  Progress progress_;
  BatchId next_batch_id_ = 1;
  std::optional<PendingWriteRef> last_added_;  // the write the current on_write() added
  std::size_t pending_writes_ = 0;             // live writes of all batches
  std::map<BatchId, Batch> batches_;           // in creation order
  std::unordered_map<InodeKey, FileWrites, InodeKeyHash> files_;
  WriteWaiters waiters_;  // the bios and requests pending writes wait on
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
  LostWrites lost_;  // until a sync of their file takes them
  // finish(): the arrival order of what was pending when it was first called, and how far it got.
  std::vector<std::tuple<std::uint64_t, BatchId, std::uint32_t>> finish_order_;
  std::size_t finish_next_ = 0;
  bool finishing_ = false;
};

}  // namespace wp::stitch
