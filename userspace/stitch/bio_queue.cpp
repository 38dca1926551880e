// SPDX-License-Identifier: Apache-2.0
#include "stitch/bio_queue.h"

#include <algorithm>

namespace wp::stitch {

namespace {

// The extents of the bytes [offset, offset + len) of `from`'s data. A page goes to the piece
// holding its last byte, so the pieces of a split partition the pages. Mixed bios interleave
// files, so positions do not map to their listed extents: the piece gets none.
void slice_extents(const BioEvent& from, std::uint64_t offset, std::uint64_t len, PageGeometry page,
                   BioEvent& to) {
  to.nr_extents = 0;
  to.extents = {};
  if (from.bio_flags & bio_flag::kMixed) {
    to.bio_flags |= bio_flag::kMixed;
    return;
  }
  const std::uint64_t want_first = page.index(offset);
  const std::uint64_t want_end = page.index(offset + len);  // exclusive
  std::uint64_t position = 0;  // page position of the current extent in the bio's data
  for (std::size_t i = 0; i < from.nr_extents && i < kMaxBioExtents; ++i) {
    const Extent& e = from.extents[i];
    const std::uint64_t lo = std::max(position, want_first);
    const std::uint64_t hi = std::min(position + e.pages, want_end);
    if (lo < hi) {
      to.extents[to.nr_extents++] =
          Extent{e.index + (lo - position), static_cast<std::uint32_t>(hi - lo)};
    }
    position += e.pages;
  }
  to.file_dev = from.file_dev;
  to.ino = from.ino;
  to.bio_flags |= from.bio_flags & (bio_flag::kTruncated | bio_flag::kAnon | bio_flag::kNoFile);
}

}  // namespace

std::shared_ptr<Bio> BioQueue::queue(const BioEvent& ev) {
  Disk& disk = disks_[ev.disk];
  auto bio = std::make_shared<Bio>();
  bio->id = ++bio_ids_;
  bio->ev = ev;
  bio->queued_ns = ev.ts;

  if (is_flush_bio(ev)) {
    disk.pending_flush_bios.push_back(bio);
    return bio;
  }

  if (ev.kind == BioKind::Split) {
    if (auto parent = split_parent(disk, ev)) split(disk, ev, *bio, parent);
    add_pending(disk, bio, false);
    return bio;
  }

  // A split remainder re-entering the queue under its own pointer: it is already pending,
  // with its share of the extents; only adopt the range the kernel reports.
  if (auto it = disk.pending_by_ptr.find(ev.bio); it != disk.pending_by_ptr.end()) {
    std::shared_ptr<Bio> existing = it->second;
    if (existing->trimmed) {
      remove_pending(disk, *existing);
      existing->ev.sector = ev.sector;
      existing->ev.bytes = ev.bytes;
      existing->ev.flags |= ev.flags;
      add_pending(disk, existing);
      return nullptr;
    }
    // Same pointer, never claimed: that bio's request was not seen. Drop it, never guess.
    remove_pending(disk, *existing);
    ++stats_.orphan_bios;
  }
  add_pending(disk, bio);
  return bio;
}

void BioQueue::split(Disk& disk, const BioEvent& ev, Bio& bio, const std::shared_ptr<Bio>& parent) {
  Bio& p = *parent;
  const std::uint64_t offset = (ev.sector - p.ev.sector) * kSectorSize;
  bio.queued_ns = p.queued_ns;
  // The piece's own walk of its bvecs can stop short (a clone has no bvec count of its
  // own, so the kernel side bounds its walk): its parent's complete extent list, sliced,
  // is then the exact one.
  const bool piece_exact =
      has_file_pages(ev) && !(ev.bio_flags & (bio_flag::kTruncated | bio_flag::kMixed));
  const bool parent_exact =
      has_file_pages(p.ev) && !(p.ev.bio_flags & (bio_flag::kTruncated | bio_flag::kMixed));
  if ((!has_file_pages(ev) && !(ev.bio_flags & bio_flag::kAnon)) ||
      (!piece_exact && parent_exact)) {
    bio.ev.bio_flags &= static_cast<std::uint8_t>(~bio_flag::kTruncated);
    slice_extents(p.ev, offset, ev.bytes, PageGeometry{limits_.page_shift}, bio.ev);
  }
  // The parent becomes the remainder (splits cut from the front; a piece from the back
  // is handled too; one from the middle leaves the parent as it is).
  const std::uint64_t parent_bytes = p.ev.bytes;
  if (offset == 0 || offset + ev.bytes == parent_bytes) {
    const std::uint64_t rest_offset = offset == 0 ? ev.bytes : 0;
    const std::uint64_t rest_len = parent_bytes - ev.bytes;
    BioEvent rest = p.ev;
    if (has_file_pages(p.ev) || (p.ev.bio_flags & bio_flag::kMixed)) {
      slice_extents(p.ev, rest_offset, rest_len, PageGeometry{limits_.page_shift}, rest);
    }
    rest.sector = p.ev.sector + rest_offset / kSectorSize;
    rest.bytes = static_cast<std::uint32_t>(rest_len);
    remove_pending(disk, p);
    p.ev = rest;
    p.trimmed = true;
    if (rest_len > 0) {
      add_pending(disk, parent);
    }
  }
}

void BioQueue::remove_pending(Disk& disk, Bio& bio) {
  if (!bio.pending) return;
  disk.pending.erase(bio.pending_it);
  auto it = disk.pending_by_ptr.find(bio.ev.bio);
  if (it != disk.pending_by_ptr.end() && it->second.get() == &bio) disk.pending_by_ptr.erase(it);
  bio.pending = false;
}

// `index_pointer` false: keep an existing pointer entry (a split piece reported under its
// parent's pointer must not hide the parent from the remainder's requeue).
void BioQueue::add_pending(Disk& disk, const std::shared_ptr<Bio>& bio, bool index_pointer) {
  bio->pending_it = disk.pending.emplace(bio->ev.sector, bio);
  bio->pending = true;
  if (index_pointer) {
    disk.pending_by_ptr[bio->ev.bio] = bio;
  } else {
    disk.pending_by_ptr.emplace(bio->ev.bio, bio);
  }
  while (!disk.pending_order.empty() && !disk.pending_order.front()->pending) {
    disk.pending_order.pop_front();
  }
  disk.pending_order.push_back(bio);
}

// The pending bio a split cut a piece from: the same pointer, else one containing the piece.
std::shared_ptr<Bio> BioQueue::split_parent(Disk& disk, const BioEvent& ev) {
  const std::uint64_t lo = ev.sector;
  const std::uint64_t hi = ev.sector + sectors_of(ev.bytes);
  auto contains = [&](const Bio& b) {
    return b.ev.sector <= lo && b.ev.sector + sectors_of(b.ev.bytes) >= hi;
  };
  if (auto it = disk.pending_by_ptr.find(ev.bio);
      it != disk.pending_by_ptr.end() && contains(*it->second)) {
    return it->second;
  }
  // Bounded backwards walk from the piece's sector: candidates start at or before it.
  auto it = disk.pending.upper_bound(lo);
  for (int steps = 0; steps < 64 && it != disk.pending.begin(); ++steps) {
    --it;
    if (contains(*it->second)) return it->second;
  }
  return nullptr;
}

void BioQueue::take_data(DevT disk_dev, std::uint64_t lo, std::uint64_t hi, const Take& take) {
  auto disk_it = disks_.find(disk_dev);
  if (disk_it == disks_.end()) return;
  Disk& disk = disk_it->second;
  std::uint64_t cursor = lo;  // bios of one request never overlap: skip ones that would
  auto it = disk.pending.lower_bound(lo);
  while (it != disk.pending.end() && it->first < hi) {
    std::shared_ptr<Bio> bio = it->second;
    const std::uint64_t end = bio->ev.sector + sectors_of(bio->ev.bytes);
    if (it->first < cursor || end > hi) {
      ++it;
      continue;
    }
    cursor = end;
    ++it;  // remove_pending erases the current node
    remove_pending(disk, *bio);
    take(bio);
  }
}

void BioQueue::take_flushes(DevT disk_dev, Nanos until, const Take& take) {
  auto disk_it = disks_.find(disk_dev);
  if (disk_it == disks_.end()) return;
  auto& flush_bios = disk_it->second.pending_flush_bios;
  while (!flush_bios.empty() && flush_bios.front()->ev.ts <= until) {
    std::shared_ptr<Bio> bio = flush_bios.front();
    flush_bios.pop_front();
    take(bio);
  }
}

std::shared_ptr<Bio> BioQueue::take_pending(DevT disk_dev, std::uint64_t ptr) {
  auto disk_it = disks_.find(disk_dev);
  if (disk_it == disks_.end()) return nullptr;
  Disk& disk = disk_it->second;
  auto it = disk.pending_by_ptr.find(ptr);
  if (it == disk.pending_by_ptr.end()) return nullptr;
  std::shared_ptr<Bio> bio = it->second;
  remove_pending(disk, *bio);
  return bio;
}

void BioQueue::sweep(Nanos horizon) {
  for (auto& [dev, disk] : disks_) {
    while (!disk.pending_order.empty()) {
      std::shared_ptr<Bio> bio = disk.pending_order.front();
      if (bio->pending && bio->ev.ts >= horizon) break;
      disk.pending_order.pop_front();
      if (bio->pending) {
        remove_pending(disk, *bio);
        ++stats_.orphan_bios;
      }
    }
    while (!disk.pending_flush_bios.empty() && disk.pending_flush_bios.front()->ev.ts < horizon) {
      disk.pending_flush_bios.pop_front();
      ++stats_.orphan_bios;
    }
  }
}

}  // namespace wp::stitch
