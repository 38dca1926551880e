// SPDX-License-Identifier: Apache-2.0
// State the stitcher's trackers share: bios and request lifetimes as the block tracker keeps
// them, and the small facts about events every tracker needs. Internal to stitch/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "decode/events.h"
#include "stitch/timeline.h"

namespace wp::stitch {

// The pages the records count in: the recording kernel's page size (4 KiB on x86-64; 16 or
// 64 KiB on some arm64 kernels). Page indexes of dirtied pages and bio extents are in these
// units, so byte positions are turned into them with the same size.
struct PageGeometry {
  unsigned shift = 12;
  std::uint64_t size() const { return std::uint64_t{1} << shift; }
  std::uint64_t index(std::uint64_t pos) const { return pos >> shift; }
  std::uint64_t bytes(std::uint64_t pages) const { return pages << shift; }
};
constexpr std::uint64_t kSectorSize = 512;

struct Request;

// A bio as the block tracker keeps it. Only the block tracker changes it; the trackers above
// read it, and key what they keep about it by `id`.
struct Bio {
  std::uint64_t id = 0;  // the block tracker's serial number: one per bio, never reused
  BioEvent ev;
  // When the data was handed to the block layer: the queue time of the original bio, also for
  // the pieces a split cut from it (ev.ts of a piece is the split time, kept for ordering).
  Nanos queued_ns = 0;
  std::shared_ptr<Request> request;  // the request lifetime that claimed it
  bool pending = false;              // still in its disk's pending set
  bool trimmed = false;              // a split took a piece of it; it is the remainder
  std::multimap<std::uint64_t, std::shared_ptr<Bio>>::iterator pending_it;
};

// One lifetime of a kernel request pointer. The block tracker makes it and ends it, the
// durability tracker says when it became durable; the trackers above read it, and key what
// they keep about it by `id`.
struct Request {
  std::uint64_t id = 0;  // the block tracker's serial number: one per lifetime, never reused
  std::uint64_t rq = 0;
  RequestTimeline tl;
  std::uint64_t completed_bytes = 0;
  bool data_done = false;       // transfer finished (successfully or with tl.error)
  bool fua_at_issue = false;    // the device does FUA natively
  bool flush_seq_done = false;  // the zero-byte completion ending its flush sequence was seen
  // Its data completed inside a flush sequence (RQF_FLUSH_SEQ): the disk's totals count the
  // request at the sequence's end, as diskstats does, and have not yet.
  bool counted_at_sequence_end = false;
  bool lost_tracking = false;  // records were lost while it was in flight: it was abandoned
  bool requeued = false;       // handed back by the driver: its next insert and issue are its own
  bool durable_inferred = false;  // made durable by a flush whose completion was inferred
  DurableVia via = DurableVia::None;
  // Bios it carries; cleared once it completes (or is abandoned), which also breaks the
  // Bio -> Request -> Bio ownership cycle.
  std::vector<std::shared_ptr<Bio>> bios;
};

// What a file's bios tell the write tracker.
struct InodeBios {
  std::deque<std::shared_ptr<Bio>> bios;  // bios carrying its pages, arrival order
  // Sequence number of its newest bio among all file bios: changes with every bio of the
  // file, never returns to an older value (even if the entry is swept and made anew).
  std::uint64_t last_seq = 0;
  Nanos last_queued_ns = 0;  // queue time of the newest of them
};

// The bios queued so far, per thread and per file, as the trackers above the block layer read
// them: the block tracker's bounded history (BlockTracker), or a test's.
class BioHistory {
 public:
  virtual ~BioHistory() = default;
  // Bios a thread submitted, in arrival order (bounded history), or null.
  virtual const std::deque<std::shared_ptr<Bio>>* bios_of_thread(std::uint32_t tid) const = 0;
  // What the file's bios were, or null when none was seen.
  virtual const InodeBios* bios_of_inode(DevT dev, std::uint64_t ino) const = 0;
};

// A verdict that rests on this request may be off: records were lost while it was in flight, or
// its completion event never came and its time is only an upper bound.
inline bool uncertain(const Request& r) {
  return r.lost_tracking || r.tl.complete_inferred || r.durable_inferred;
}

// A completed flush on a disk as syncs see it: a flush request, or the post-flush of a
// PREFLUSH/FUA data request (from its data completion to its zero-byte completion).
struct FlushRecord {
  Nanos start = 0;
  Nanos end = 0;
  RequestTimeline request;
  bool covers_earlier = false;  // a FLUSH request (not a PREFLUSH/FUA request's post-flush)
};

struct InodeKey {
  DevT dev = 0;
  std::uint64_t ino = 0;
  bool operator==(const InodeKey&) const = default;
};

struct InodeKeyHash {
  std::size_t operator()(const InodeKey& k) const {
    return std::hash<std::uint64_t>()(k.ino * 0x9e3779b97f4a7c15ull ^ k.dev);
  }
};

// Static device facts: which disk a partition is on, and whether that disk has a volatile
// write cache (data is durable only after a FLUSH) or not.
class DeviceTable {
 public:
  void add(const DeviceInfo& info);
  // A file system whose superblock device is no block device (btrfs), under its device and
  // every alias stat() reports for it.
  void add_file_system(const FileSystemInfo& fs);
  DevT disk_of(DevT dev) const;
  // The disks a file system's (or block device's) data reaches: a file system's own list,
  // else the one disk_of() names.
  std::vector<DevT> disks_of(DevT dev) const;
  bool volatile_cache(DevT disk) const;
  // A file system kept in memory only (FileSystemInfo::memory_only).
  bool memory_only(DevT dev) const { return memory_only_.contains(dev); }
  // A FUSE file system (FileSystemInfo::fuse): its writes go to its daemon.
  bool fuse(DevT dev) const { return fuse_.contains(dev); }
  // A file system without a page cache (FileSystemInfo::no_page_cache): proc, sysfs…
  bool no_page_cache(DevT dev) const { return no_page_cache_.contains(dev); }

 private:
  std::unordered_set<DevT> memory_only_;
  std::unordered_set<DevT> fuse_;
  std::unordered_set<DevT> no_page_cache_;
  std::unordered_map<DevT, DeviceInfo> devices_;
  std::unordered_map<DevT, std::vector<DevT>> fs_disks_;
  std::unordered_map<DevT, bool> disk_write_cache_;
};

inline bool is_data_op(ReqOp op) {
  return op == ReqOp::Write || op == ReqOp::Discard || op == ReqOp::WriteZeroes;
}

// An empty PREFLUSH bio (blkdev_issue_flush) or a REQ_OP_FLUSH bio.
inline bool is_flush_bio(const BioEvent& b) {
  return b.op == ReqOp::Flush || b.bytes == 0;
}

// The tag of the io_uring op whose record has `start_ns`, as its bios carry it.
inline std::uint32_t uring_tag_of(Nanos start_ns) {
  return WP_URING_TAG(start_ns);
}

// A bio queued for another io_uring op than `call` (one of the thread's ops in flight beside
// it) is not the call's. Syscalls keep every bio of their window: a thread's state can still
// name its last op after that op's inline issue ended.
inline bool bio_of_another_uring_op(const BioEvent& bio, const SyscallEvent& call) {
  return call.via != 0 && bio.uring_tag != 0 && bio.uring_tag != uring_tag_of(call.start_ns);
}

inline bool has_file_pages(const BioEvent& b) {
  return b.ino != 0 && b.nr_extents > 0 && !(b.bio_flags & (bio_flag::kAnon | bio_flag::kNoFile));
}

inline std::uint64_t sectors_of(std::uint64_t bytes) {
  return (bytes + kSectorSize - 1) / kSectorSize;
}

std::uint64_t bio_pages(const BioEvent& b, PageGeometry page);

template <typename T>
void trim_count(std::deque<T>& d, std::size_t max) {
  while (d.size() > max) d.pop_front();
}

template <typename T, typename TimeOf>
void prune_older(std::deque<T>& d, Nanos horizon, TimeOf time_of) {
  while (!d.empty() && time_of(d.front()) < horizon) d.pop_front();
}

}  // namespace wp::stitch
