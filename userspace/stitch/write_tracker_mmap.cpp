// SPDX-License-Identifier: Apache-2.0
// The write tracker's items that are not one syscall each: the pages a process stores into
// a shared mapping (one item per process, file and writeback cycle), and the O_DIRECT iocbs of
// one io_submit call (which share the call's window, so its bios are shared out in order).
// Rules: docs/reference/stitching-rules.md, "Writes"; tests: tests/unit/write_tracker_mmap_test.cpp
// and, for io_submit, tests/unit/write_tracker_direct_test.cpp.
#include <algorithm>
#include <cstdint>

#include "stitch/write_tracker.h"

namespace wp::stitch {

// An io_submit call's records arrive one per iocb, in submission order, all with the call's
// window; the kernel submits each iocb's bios before it reads the next iocb. So the call's
// bios are shared out in order: each item takes the bios after those of the items before it
// until they carry its bytes (split pieces go with their parent, whose bytes they hold).
std::vector<std::shared_ptr<Bio>> WriteTracker::aio_share(const SyscallEvent& ev,
                                                          std::vector<std::shared_ptr<Bio>> bios) {
  if (aio_call_.tid != ev.tid || aio_call_.start_ns != ev.start_ns) {
    aio_call_ = AioCall{ev.tid, ev.start_ns, 0};
  }
  std::vector<std::shared_ptr<Bio>> mine;
  std::uint64_t bytes = 0;
  std::size_t i = aio_call_.bios_taken;
  for (; i < bios.size(); ++i) {
    const BioEvent& bio = bios[i]->ev;
    if (bio.kind == BioKind::Queue) {
      if (bytes >= ev.count) break;
      bytes += bio.bytes;
    }
    mine.push_back(bios[i]);
  }
  aio_call_.bios_taken = i;
  return mine;
}

// Pages dirtied by `ev` join the mmap item `id` when it is still open: no bio with the file's
// pages was queued since it opened (as for a batch of buffered writes: then every bio queued
// later carries the data stored into every page it holds).
bool WriteTracker::join_mmap_item(BatchId id, const MmapDirtyEvent& ev, std::uint64_t bio_seq) {
  auto it = batches_.find(id);
  if (it == batches_.end()) return false;
  Batch& b = it->second;
  PendingWrite& w = b.writes[0];
  if (b.open_at_bio != bio_seq || w.emitted || w.state != WriteState::Dirty || !b.indexed) {
    return false;
  }
  const std::uint64_t first = ev.index;
  const std::uint64_t last = ev.index + ev.pages - 1;
  std::uint32_t added = 0;
  for (std::uint64_t page = first; page <= last; ++page) added += !b.remaining.contains(page);
  b.remaining.add(first, last);
  w.pages_left += added;
  b.mmap_pages += added;
  w.pages_dirtied += ev.pages;
  w.dirty_folios += 1;
  b.mmap_whole_folios += ev.pages > 1;
  w.end_ns = std::max(w.end_ns, ev.ts);
  const std::uint64_t lo = std::min(w.first_page(page()), first);
  const std::uint64_t hi = std::max(w.last_page(page()), last);
  w.pos = page().bytes(lo);
  w.count = page().bytes(hi - lo + 1);
  w.ret = static_cast<std::int32_t>(std::min<std::uint64_t>(w.count, INT32_MAX));
  b.min_page = std::min(b.min_page, first);
  b.max_page = std::max(b.max_page, last);
  b.max_write_span = hi - lo;
  return true;
}

// A store into a shared mapping dirtied a folio: the process's open mmap item of the file
// takes it, or a new item opens. The item starts at its first dirtying (a bio queued before
// carried older contents) and ends at its last; it is written when every page it dirtied was
// carried by a bio queued after it started (msync's, fsync's or the flusher's), durable when
// those requests are.
void WriteTracker::on_mmap_dirty(const MmapDirtyEvent& ev) {
  if (ev.pages == 0) return;
  const InodeKey file_key{ev.dev, ev.ino};
  const MmapKey key{ev.pid, file_key};
  const InodeBios* history = history_.bios_of_inode(ev.dev, ev.ino);
  const std::uint64_t bio_seq = history != nullptr ? history->last_seq : 0;
  if (auto open = open_mmap_.find(key); open != open_mmap_.end()) {
    if (join_mmap_item(open->second, ev, bio_seq)) return;
    open_mmap_.erase(open);
  }
  SyscallEvent call;
  call.start_ns = ev.ts;
  call.end_ns = ev.ts;
  call.pid = ev.pid;
  call.tid = ev.tid;
  call.comm = ev.comm;
  call.fd = -1;
  call.dev = ev.dev;
  call.ino = ev.ino;
  call.cgroup_id = ev.cgroup_id;
  call.file_flags = file_flag::kRegular;
  call.call_flags = call_flag::kMmapStore;
  call.pos = page().bytes(ev.index);
  call.count = page().bytes(ev.pages);
  call.ret = static_cast<std::int64_t>(call.count);
  call.pages_dirtied = ev.pages;
  call.dirty_folios = 1;
  PendingWrite w = pending_write_of(call, {});
  w.pages_left = ev.pages;
  auto it = new_batch(call, std::move(w));
  Batch& b = it->second;
  b.by_pages = true;
  b.mmap_pages = ev.pages;
  b.mmap_whole_folios = ev.pages > 1;
  b.min_page = ev.index;
  b.max_page = ev.index + ev.pages - 1;
  b.max_write_span = ev.pages - 1;
  b.remaining.add(b.min_page, b.max_page);
  b.open_at_bio = bio_seq;
  b.indexed = true;
  files_[file_key].batches.push_back(it->first);
  open_mmap_[key] = it->first;
}

}  // namespace wp::stitch
