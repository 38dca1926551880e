// SPDX-License-Identifier: Apache-2.0
// The stitcher: events in, timelines out. Pure: no I/O, no clock, no BPF. A dispatcher over
// per-layer trackers (block, durability, journal, call context, writes, syncs); every rule of
// docs/reference/stitching-rules.md has a unit test in its tracker's test file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "decode/events.h"
#include "stitch/timeline.h"

namespace wp {

struct StitchLimits {
  // A pending item (a write not yet durable) older than this, in event time, is emitted with
  // its last state and marked incomplete. Dirty pages normally reach the disk within
  // vm.dirty_expire_centisecs (30 s) plus a writeback period.
  Nanos max_pending_age_ns = 120'000'000'000ull;
  std::size_t max_pending_writes = 1u << 20;
  // Writes one batch may hold (a batch shares one page set among writes to one file).
  std::size_t max_batch_writes = 1u << 16;
  // How long finished bios/requests/flushes/commits stay available for syscalls whose record
  // arrives later (records are emitted at syscall exit, after the I/O they caused).
  Nanos history_ns = 60'000'000'000ull;
  std::size_t max_history_per_key = 4096;
  // Not a limit: log2 of the page size the records count pages in (the recording kernel's;
  // 12 = 4 KiB). Byte positions become page indexes with it.
  unsigned page_shift = 12;
  // Not a limit: whether bio records say whose data they carry (a kernel thread's flag,
  // dirtier records). Without it, as in traces recorded before, syncs name no neighbours.
  bool io_owners = true;
};

// What one disk completed during the trace, counted as /proc/diskstats counts it: write
// requests (writes and write-zeroes, errors included), their bytes, and FLUSH requests.
struct DiskTotals {
  std::uint64_t write_requests = 0;
  std::uint64_t write_bytes = 0;
  std::uint64_t flush_requests = 0;
  bool operator==(const DiskTotals&) const = default;
};

struct StitchStats {
  std::uint64_t writes = 0;             // write timelines emitted
  std::uint64_t syncs = 0;              // sync timelines emitted
  std::uint64_t name_change_calls = 0;  // name-change timelines emitted
  std::uint64_t reads = 0;              // read timelines emitted (read syscalls)
  std::uint64_t faults = 0;             // read timelines of page faults on file mappings
  std::uint64_t incomplete = 0;         // timelines emitted incomplete
  std::uint64_t aged_out = 0;           // of which emitted early: pending longer than the age limit
  std::uint64_t evicted = 0;            // of which emitted early: over the pending-writes cap
  std::uint64_t discarded = 0;    // writes whose pending pages the page cache dropped unwritten
  std::uint64_t memory_only = 0;  // writes to a file system in memory only (tmpfs, ramfs)
  std::uint64_t lost_writes = 0;  // writes whose writeback failed
  std::uint64_t lost_bytes = 0;   // the bytes those writes wrote
  std::uint64_t bios = 0;
  std::uint64_t requests = 0;
  std::uint64_t orphan_bios = 0;  // bios no request claimed before they aged out
  std::uint64_t failed_bios = 0;  // write bios a bio-based device failed with no request
  // Completions that matched no request lifetime (e.g. its issue record was lost): not linked.
  std::uint64_t unmatched_completes = 0;
  // Request completions the kernel never delivered, inferred from the pointer's next use or
  // from the end of the request's flush sequence (BlockTracker::infer_completion).
  std::uint64_t missed_completions = 0;
  // Every request the block hooks saw complete, per disk, whether an item claimed it or not
  // (jbd2's checkpoints inside a rename, other processes' writeback on the traced disk).
  std::map<DevT, DiskTotals> disks;
};

// What happens to a write before it is complete, for output that shows items as they go:
// `Returned` when its call's record arrives and it is still pending (dirty, or O_DIRECT I/O
// in flight), `Written` when its data reached the device and it now waits to be durable.
enum class ItemProgress : std::uint8_t { Returned, Written };
const char* item_progress_name(ItemProgress p);  // "returned", "written"

class Stitcher {
 public:
  explicit Stitcher(StitchLimits limits = {});
  ~Stitcher();
  Stitcher(const Stitcher&) = delete;
  Stitcher& operator=(const Stitcher&) = delete;

  // Static device facts (write cache, partition → disk). Call before feeding events.
  void add_device(const DeviceInfo& info);
  // A file system on block devices its superblock device is not (btrfs): its syncs' flushes
  // are those of its disks. Call before feeding events.
  void add_file_system(const FileSystemInfo& fs);

  // Where finished timelines go, one at a time, as they finish: a flush that makes a hundred
  // thousand writes durable hands them over one by one rather than all at once.
  using Emit = std::function<void(Timeline&&)>;

  // Feeds one event in stream order; the timelines it finished go to `emit` (or are appended
  // to `out`).
  void feed(const Event& event, const Emit& emit);
  void feed(const Event& event, std::vector<Timeline>& out);

  // End of trace, before finish(): the disks that showed no write request in flight at `at`
  // (read once the hooks were detached; see BlockTracker::write_idle_at_end). A write request
  // still open on one of them completed unseen; the timelines that finishes go to `emit`.
  void disks_write_idle(const std::vector<DevT>& disks, Nanos at, const Emit& emit);

  // End of trace: every pending timeline is appended with its last state, in arrival order, at
  // most `max_items` per call; returns true once none is left.
  bool finish(const Emit& emit, std::size_t max_items = SIZE_MAX);
  bool finish(std::vector<Timeline>& out, std::size_t max_items = SIZE_MAX);

  // Optional: where snapshots of pending writes go as they progress (a snapshot is the item
  // as it stands, with its id; the complete item follows through `emit` later, with
  // `announced` set). Items complete at their call's return (syncs, failed writes, I/O done
  // inside the call) and stores into a mapping get no snapshot. Off when unset: tracing
  // without live output pays nothing.
  // The snapshot is the callee's to adjust (the agent names its cgroup before printing it).
  using Progress = std::function<void(ItemProgress, Timeline&)>;
  void set_progress(Progress progress);

  const StitchStats& stats() const;
  // Every process's data written to each disk so far, as the neighbours of syncs count it
  // (stitch/neighbours.h), most bytes first.
  std::vector<OwnerIo> io_by_owner() const;
  // Adds the data bios the kernel kept out of traced disks to their owners' bytes (at the end:
  // a kernel thread's bios go to their file's dirtier, told by the records).
  void add_filtered_io(const std::vector<FilteredIo>& owners);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace wp
