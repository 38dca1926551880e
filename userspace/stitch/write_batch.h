// SPDX-License-Identifier: Apache-2.0
// The write tracker's pending writes: each kept compactly as a PendingWrite in a Batch that
// holds what the writes of one writer to one file share. Internal to the write tracker.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stitch/io_state.h"
#include "stitch/loss_log.h"
#include "stitch/page_set.h"

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

// A pending write's requests, as indices into its batch's: most have one, kept inline.
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
struct PendingWrite {
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
// What a pending write costs is the point of PendingWrite: keep it from growing unnoticed.
static_assert(sizeof(void*) != 8 || sizeof(PendingWrite) <= 88);

// Batches are kept by id, in creation order; a pending write is known by its batch and its
// place in it.
using BatchId = std::uint64_t;
struct PendingWriteRef {
  BatchId batch = 0;
  std::uint32_t index = 0;
};

// Writes of one thread to one file, through one fd, waiting for the same writeback: their
// call identity, page set and requests are kept once. A buffered write joins the thread's
// open batch of the file if no bio with the file's pages was queued since the batch opened
// or since the write started, and it starts at or after the batch's last write's first page.
// Then every bio queued later was queued after every write of it started, so it carries their
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
  std::uint64_t max_write_span = 0;  // largest last_page - first_page of one of its writes
  PageSet remaining;                 // pages of its writes not yet seen written
  std::vector<std::shared_ptr<const Request>> requests;
  std::deque<PendingWrite>
      writes;            // ordered by first page when by_pages (a deque: no copies as it grows)
  std::size_t live = 0;  // writes not yet emitted
  std::size_t first_live = 0;  // no write before this one is live
  std::uint64_t direct_bios_left = 0;
  std::uint64_t direct_pages_left = 0;
  std::uint64_t direct_pages = 0;  // pages its O_DIRECT bios carry
  // Its writes' data went into the file system's metadata (InlineDataEvent), all of it: a
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

// The timeline of pending write `w` of batch `b` as it stands, from the batch and its requests;
// incomplete when records were lost after it started. `snapshot`: the write stays pending, so
// what it keeps (its throttle pauses) is copied, not moved out.
WriteTimeline timeline_of(const Batch& b, PendingWrite& w, const LossLog& loss, PageGeometry page,
                          bool snapshot = false);

}  // namespace wp::stitch
