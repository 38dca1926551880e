// SPDX-License-Identifier: Apache-2.0
// The block tracker's bios queued and not yet claimed by a request, per disk: by sector (a
// request claims those inside it), by pointer (a split remainder requeued, a bio failed before
// a request held it), in queue order (to find orphans); empty PREFLUSH bios apart, for the
// flush request that takes them. A split's piece gets its share of its parent's file pages and
// the parent becomes the remainder. Rules: docs/reference/stitching-rules.md, "Block"; tests:
// tests/unit/block_tracker_bios_test.cpp.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>

#include "stitch/io_state.h"
#include "stitch/stitcher.h"

namespace wp::stitch {

class BioQueue {
 public:
  BioQueue(const StitchLimits& limits, StitchStats& stats) : limits_(limits), stats_(stats) {}

  // The bio of write, flush or discard record `ev`, queued on its disk: a new bio, or a piece a
  // split cut from a pending one. Null when `ev` is a split remainder requeued under its own
  // pointer: the remainder already pending takes the range the kernel reports.
  std::shared_ptr<Bio> queue(const BioEvent& ev);

  using Take = std::function<void(const std::shared_ptr<Bio>&)>;
  // The data bios of `disk` pending inside sectors [lo, hi), in sector order (the older first
  // among equal sectors), never two overlapping, leave the queue through `take`.
  void take_data(DevT disk, std::uint64_t lo, std::uint64_t hi, const Take& take);
  // The empty PREFLUSH bios of `disk` queued by `until` leave the queue through `take`.
  void take_flushes(DevT disk, Nanos until, const Take& take);
  // The pending bio of `disk` with pointer `ptr`, which leaves the queue; null when none is.
  std::shared_ptr<Bio> take_pending(DevT disk, std::uint64_t ptr);
  // Bios queued before `horizon` that no request claimed are dropped, counted as orphans.
  void sweep(Nanos horizon);

 private:
  struct Disk {
    using PendingMap = std::multimap<std::uint64_t, std::shared_ptr<Bio>>;
    PendingMap pending;  // data bios not yet claimed, by sector; FIFO among equal sectors
    std::unordered_map<std::uint64_t, std::shared_ptr<Bio>> pending_by_ptr;
    std::deque<std::shared_ptr<Bio>> pending_order;       // queue order, to age out orphans
    std::deque<std::shared_ptr<Bio>> pending_flush_bios;  // empty PREFLUSH bios, queue order
  };

  void remove_pending(Disk& disk, Bio& bio);
  // `index_pointer` false: keep an existing pointer entry (a split piece reported under its
  // parent's pointer must not hide the parent from the remainder's requeue).
  void add_pending(Disk& disk, const std::shared_ptr<Bio>& bio, bool index_pointer = true);
  std::shared_ptr<Bio> split_parent(Disk& disk, const BioEvent& ev);
  // Piece `bio` of split record `ev` takes its share of `parent`, which becomes the remainder.
  void split(Disk& disk, const BioEvent& ev, Bio& bio, const std::shared_ptr<Bio>& parent);

  const StitchLimits& limits_;
  StitchStats& stats_;
  std::unordered_map<DevT, Disk> disks_;
  std::uint64_t bio_ids_ = 0;  // bios made (Bio::id)
};

}  // namespace wp::stitch
