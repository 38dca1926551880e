// SPDX-License-Identifier: Apache-2.0
#include "stitch/write_tracker.h"

#include <algorithm>
#include <cstdint>
#include <tuple>

namespace wp::stitch {

void WriteTracker::request_durable(const Request& r) {
  for (const PendingWriteRef& ref : waiters_.take_durable(r.id)) {
    auto it = batches_.find(ref.batch);
    if (it == batches_.end()) continue;
    PendingWrite& w = it->second.writes[ref.index];
    if (w.emitted || w.state != WriteState::Written) continue;
    if (--w.not_durable == 0) {
      w.state = WriteState::Durable;
      emit_write(it, ref.index, Eviction::None);
    }
  }
}

// Adds request `r` to write `index` of `b` (once), returning nothing.
void WriteTracker::add_request(Batch& b, std::uint32_t index,
                               const std::shared_ptr<const Request>& r) {
  std::uint32_t at = 0;
  if (!b.requests.empty() && b.requests.back() == r) {
    at = static_cast<std::uint32_t>(b.requests.size() - 1);
  } else {
    auto found = std::find(b.requests.begin(), b.requests.end(), r);
    at = static_cast<std::uint32_t>(found - b.requests.begin());
    if (found == b.requests.end()) b.requests.push_back(r);
  }
  SmallIndexList& list = b.writes[index].requests;
  for (std::uint32_t i = list.size(); i-- > 0;) {
    if (list[i] == at) return;
  }
  list.push_back(at);
}

// A completed bio: its pages (buffered writes) and its O_DIRECT writers.
void WriteTracker::bio_written(const Bio& bio, const std::shared_ptr<const Request>& r) {
  for (BatchId id : waiters_.take_bio(bio.id)) {
    auto it = batches_.find(id);
    if (it == batches_.end() || it->second.writes.empty()) continue;
    Batch& b = it->second;
    add_request(b, 0, r);
    b.direct_pages_left -= std::min(b.direct_pages_left, bio_pages(bio.ev, page()));
    if (--b.direct_bios_left == 0 && b.writes[0].state == WriteState::Dirty) {
      become_written(it, 0);
    }
  }

  if (!has_file_pages(bio.ev)) return;
  auto file_it = files_.find(InodeKey{bio.ev.file_dev, bio.ev.ino});
  if (file_it == files_.end() || file_it->second.batches.empty()) return;
  // Copied: becoming written unindexes batches from the file's list.
  const std::vector<BatchId> candidates = file_it->second.batches;
  for (BatchId id : candidates) {
    auto it = batches_.find(id);
    if (it == batches_.end()) continue;
    std::vector<std::uint32_t> done;
    if (!take_bio_pages(it, bio, r, done, nullptr)) continue;
    Batch& b = it->second;
    for (std::uint32_t index : done) {
      if (b.writes[index].state == WriteState::Dirty) become_written(it, index);
    }
  }
}

// The pages of `bio`'s extents leave batch `it`'s pending set, carried by `r`: the writes
// left with none are `done`, and every write holding one is `touched` (when asked). False
// when the bio cannot carry the batch's data: queued before its latest write started, it
// carried older contents.
bool WriteTracker::take_bio_pages(BatchIt it, const Bio& bio,
                                  const std::shared_ptr<const Request>& r,
                                  std::vector<std::uint32_t>& done,
                                  std::vector<std::uint32_t>* touched) {
  Batch& b = it->second;
  if (bio.queued_ns < b.max_start) return false;
  for (std::size_t i = 0; i < bio.ev.nr_extents && i < kMaxBioExtents; ++i) {
    const Extent& e = bio.ev.extents[i];
    if (e.pages == 0) continue;
    const std::uint64_t first = e.index;
    const std::uint64_t last = e.index + e.pages - 1;
    if (last < b.min_page || first > b.max_page) continue;
    b.remaining.remove_each(first, last, [&](std::uint64_t lo, std::uint64_t hi) {
      take_pages(b, lo, hi, &r, done, touched);
    });
  }
  if (b.remaining.empty()) unindex(it->first, b);
  return true;
}

// Pages [lo, hi] of batch `b` left its pending set, written by `*written_by` (or discarded
// when null): every write holding some of them loses them (each page leaves the batch's set
// once, so each write counts each page once); writes left with none are `done`.
void WriteTracker::take_pages(Batch& b, std::uint64_t lo, std::uint64_t hi,
                              const std::shared_ptr<const Request>* written_by,
                              std::vector<std::uint32_t>& done,
                              std::vector<std::uint32_t>* touched) {
  // Writes are ordered by first page; one overlapping [lo, hi] starts in
  // [lo - max_write_span, hi].
  const std::uint64_t from = lo > b.max_write_span ? lo - b.max_write_span : 0;
  auto begin = std::lower_bound(
      b.writes.begin(), b.writes.end(), from,
      [this](const PendingWrite& w, std::uint64_t index) { return w.first_page(page()) < index; });
  for (auto w = begin; w != b.writes.end() && w->first_page(page()) <= hi; ++w) {
    if (w->emitted || w->state != WriteState::Dirty) continue;
    const std::uint64_t a = std::max(lo, w->first_page(page()));
    const std::uint64_t z = std::min(hi, w->last_page(page()));
    if (a > z) continue;
    const auto index = static_cast<std::uint32_t>(w - b.writes.begin());
    if (written_by != nullptr) add_request(b, index, *written_by);
    if (touched != nullptr) touched->push_back(index);
    w->pages_left -= static_cast<std::uint32_t>(std::min<std::uint64_t>(w->pages_left, z - a + 1));
    if (w->pages_left == 0) done.push_back(index);
  }
}

// A failed request's pages were not written and are no longer dirty: the end of writeback
// cleared them (the kernel records the error in the mapping, for one sync to report). Every
// write with a page in it lost its data, whatever its other pages do.
void WriteTracker::bio_failed(const Bio& bio, const std::shared_ptr<const Request>& r, Nanos ts) {
  const Loss loss{ts, r->tl.error};
  for (BatchId id : waiters_.take_bio(bio.id)) {
    auto it = batches_.find(id);
    if (it == batches_.end() || it->second.writes.empty()) continue;
    add_request(it->second, 0, r);
    if (it->second.writes[0].state == WriteState::Dirty) lose(it, 0, loss);
  }
  if (!has_file_pages(bio.ev)) return;
  auto file_it = files_.find(InodeKey{bio.ev.file_dev, bio.ev.ino});
  if (file_it == files_.end()) return;
  const std::vector<BatchId> candidates = file_it->second.batches;
  for (BatchId id : candidates) {
    auto it = batches_.find(id);
    if (it == batches_.end()) continue;
    std::vector<std::uint32_t> done, touched;
    if (!take_bio_pages(it, bio, r, done, &touched)) continue;
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    // The batch is erased with its last live write: lose the highest index last.
    for (std::uint32_t index : touched) {
      auto again = batches_.find(id);
      if (again == batches_.end()) break;
      const PendingWrite& w = again->second.writes[index];
      if (!w.emitted && w.state == WriteState::Dirty) lose(again, index, loss);
    }
  }
}

void WriteTracker::lose(BatchIt it, std::uint32_t index, const Loss& loss) {
  PendingWrite& w = it->second.writes[index];
  w.state = WriteState::Lost;
  ++stats_.lost_writes;
  stats_.lost_bytes += static_cast<std::uint64_t>(std::max(0, w.ret));
  lost_.add(InodeKey{it->second.dev, it->second.ino}, w.seq, loss.ts);
  emit_write(it, index, Eviction::None, std::nullopt, loss);
}

void WriteTracker::pages_gone(
    InodeKey file, std::uint64_t first, std::uint64_t last, Nanos ts,
    const std::function<void(BatchIt, std::vector<std::uint32_t>&)>& then) {
  auto file_it = files_.find(file);
  if (file_it == files_.end()) return;
  // Copied: emitting and emptying batches unindexes them from the file's list.
  const std::vector<BatchId> candidates = file_it->second.batches;
  for (BatchId id : candidates) {
    auto it = batches_.find(id);
    if (it == batches_.end()) continue;
    Batch& b = it->second;
    if (ts < b.max_start || last < b.min_page || first > b.max_page) continue;
    std::vector<std::uint32_t> done;
    b.remaining.remove_each(first, last, [&](std::uint64_t lo, std::uint64_t hi) {
      take_pages(b, lo, hi, nullptr, done);
    });
    if (b.remaining.empty()) unindex(it->first, b);
    then(it, done);
  }
}

// A discard taking a write's last pending pages ends it: nothing it dirtied is left to write.
void WriteTracker::pages_discarded(const DiscardEvent& ev) {
  if (ev.pages == 0) return;
  pages_gone(InodeKey{ev.dev, ev.ino}, ev.index, ev.index + ev.pages - 1, ev.ts,
             [&](BatchIt it, std::vector<std::uint32_t>& done) {
               // The batch is erased with its last live write, which can only be the last
               // one here.
               for (std::uint32_t index : done) {
                 PendingWrite& w = it->second.writes[index];
                 if (w.emitted || w.state != WriteState::Dirty) continue;
                 w.state = WriteState::Discarded;
                 ++stats_.discarded;
                 emit_write(it, index, Eviction::None, ev.ts);
               }
             });
}

void WriteTracker::become_written(BatchIt it, std::uint32_t index) {
  Batch& b = it->second;
  PendingWrite& w = b.writes[index];
  w.state = WriteState::Written;
  w.not_durable = 0;
  for (std::uint32_t i = 0; i < w.requests.size(); ++i) {
    const Request& r = *b.requests[w.requests[i]];
    if (r.tl.durable_ns) continue;
    waiters_.wait_for_durable(r.id, PendingWriteRef{it->first, index});
    ++w.not_durable;
  }
  if (w.not_durable == 0 && !w.requests.empty()) {
    w.state = WriteState::Durable;
    emit_write(it, index, Eviction::None);
    return;
  }
  if (progress_ && w.announced)
    progress_(ItemProgress::Written, timeline_of(b, w, loss_, page(), true));
}

void WriteTracker::announce(PendingWriteRef ref) {
  auto it = batches_.find(ref.batch);
  if (it == batches_.end() || ref.index >= it->second.writes.size()) return;
  PendingWrite& w = it->second.writes[ref.index];
  if (w.emitted) return;
  w.announced = true;
  progress_(ItemProgress::Returned, timeline_of(it->second, w, loss_, page(), true));
}

void WriteTracker::unindex(BatchId id, Batch& b) {
  if (!b.indexed) return;
  b.indexed = false;
  auto file_it = files_.find(InodeKey{b.dev, b.ino});
  if (file_it == files_.end()) return;
  std::erase(file_it->second.batches, id);
  std::erase(file_it->second.open_batches, id);
  if (file_it->second.batches.empty()) files_.erase(file_it);
}

void WriteTracker::emit_write(BatchIt it, std::uint32_t index, Eviction eviction,
                              std::optional<Nanos> discarded_ns, std::optional<Loss> lost) {
  Batch& b = it->second;
  PendingWrite& w = b.writes[index];
  if (w.emitted) return;
  WriteTimeline tl = timeline_of(b, w, loss_, page());
  tl.discarded_ns = discarded_ns;
  if (lost) {
    tl.lost_ns = lost->ts;
    tl.lost_error = lost->error;
  }
  if (eviction != Eviction::None) {
    tl.incomplete = true;
    ++(eviction == Eviction::AgedOut ? stats_.aged_out : stats_.evicted);
  }
  if (tl.incomplete) ++stats_.incomplete;
  ++stats_.writes;
  w.emitted = true;
  w.extras.reset();
  --pending_writes_;
  if (b.call_flags & call_flag::kMmapStore) {
    auto open = open_mmap_.find(MmapKey{b.pid, InodeKey{b.dev, b.ino}});
    if (open != open_mmap_.end() && open->second == it->first) open_mmap_.erase(open);
  }
  while (b.first_live < b.writes.size() && b.writes[b.first_live].emitted) ++b.first_live;
  if (--b.live == 0) {
    unindex(it->first, b);
    batches_.erase(it);
  }
  emit_(std::move(tl));
}

// A write whose state is final at its return: failed, or to a file system in memory only
// (no bio will ever carry its pages: it is complete, and never dirty).
void WriteTracker::emit_at_return(const SyscallEvent& ev, CallExtras extras, WriteState state) {
  WriteTimeline tl;
  tl.id = ids_.take();
  tl.call = ev;
  tl.causes = std::move(extras.causes);
  tl.throttles = std::move(extras.throttles);
  tl.fuse = std::move(extras.fuse);
  tl.direct = ev.file_flags & file_flag::kDirect;
  tl.sync = ev.file_flags & (file_flag::kSync | file_flag::kDsync);
  tl.state = state;
  if (state == WriteState::Memory || state == WriteState::Handed) {
    tl.pages =
        page().index(ev.pos + static_cast<std::uint64_t>(ev.ret) - 1) - page().index(ev.pos) + 1;
    if (state == WriteState::Memory) ++stats_.memory_only;
  }
  tl.incomplete = loss_.within(ev.start_ns, ev.end_ns);
  if (tl.incomplete) ++stats_.incomplete;
  ++stats_.writes;
  emit_(std::move(tl));
}

// The write bios an O_DIRECT write's thread queued during the call on the file's device.
std::vector<std::shared_ptr<Bio>> WriteTracker::direct_bios(const SyscallEvent& ev) const {
  std::vector<std::shared_ptr<Bio>> found;
  const auto* bios = history_.bios_of_thread(ev.tid);
  if (bios == nullptr) return found;
  const DevT disk = devices_.disk_of(ev.fs_dev != 0 ? ev.fs_dev : ev.dev);
  for (auto b = bios->rbegin(); b != bios->rend(); ++b) {
    const BioEvent& bio = (*b)->ev;
    if (bio.ts < ev.start_ns) break;
    if (bio.ts > ev.end_ns || is_flush_bio(bio) || !is_data_op(bio.op)) continue;
    if (bio.bdev != ev.dev && bio.disk != disk) continue;
    if (bio_of_another_uring_op(bio, ev)) continue;
    found.push_back(*b);
  }
  std::reverse(found.begin(), found.end());
  return found;
}

PendingWrite WriteTracker::pending_write_of(const SyscallEvent& ev, CallExtras extras) {
  PendingWrite w;
  w.start_ns = ev.start_ns;
  w.end_ns = ev.end_ns;
  w.ret = static_cast<std::int32_t>(std::min<std::int64_t>(ev.ret, INT32_MAX));
  w.pos = ev.pos;
  w.count = ev.count;
  w.seq = ids_.take();
  w.pages_dirtied = ev.pages_dirtied;
  w.dirty_folios = ev.dirty_folios;
  w.syscall = ev.syscall;
  w.via = ev.via;
  w.incomplete = loss_.within(ev.start_ns, ev.end_ns);
  extras.throttle_ns = ev.throttle_ns;
  extras.throttle_events = ev.throttle_events;
  extras.writeback_waits = ev.writeback_waits;
  if (extras.any()) w.extras = std::make_unique<CallExtras>(std::move(extras));
  return w;
}

WriteTracker::BatchIt WriteTracker::new_batch(const SyscallEvent& ev, PendingWrite w) {
  const BatchId id = next_batch_id_++;
  Batch& b = batches_[id];
  b.pid = ev.pid;
  b.tid = ev.tid;
  b.comm = ev.comm;
  b.path = ev.path;
  b.ns_path = ev.ns_path;
  b.mnt_ns = ev.mnt_ns;
  b.fd = ev.fd;
  b.dev = ev.dev;
  b.ino = ev.ino;
  b.view_dev = ev.view_dev;
  b.view_ino = ev.view_ino;
  b.cgroup_id = ev.cgroup_id;
  b.file_flags = ev.file_flags;
  b.call_flags = ev.call_flags;
  b.open_at_bio = ~0ull;
  b.max_start = w.start_ns;
  b.writes.push_back(std::move(w));
  b.live = 1;
  ++pending_writes_;
  last_added_ = PendingWriteRef{id, 0};
  return batches_.find(id);
}

void WriteTracker::on_write(const SyscallEvent& ev, CallExtras extras) {
  last_added_.reset();
  track_write(ev, std::move(extras));
  if (progress_ && last_added_) announce(*last_added_);
}

void WriteTracker::track_write(const SyscallEvent& ev, CallExtras extras) {
  if (ev.ret <= 0) {
    emit_at_return(ev, std::move(extras), WriteState::Failed);
    return;
  }
  if (devices_.memory_only(ev.fs_dev != 0 ? ev.fs_dev : ev.dev)) {
    emit_at_return(ev, std::move(extras), WriteState::Memory);
    return;
  }
  // A FUSE daemon took the data (the kernel says which answered, or the file system is FUSE):
  // no page of it is the kernel's to write back.
  if (extras.fuse || devices_.fuse(ev.dev)) {
    emit_at_return(ev, std::move(extras), WriteState::Handed);
    return;
  }
  if (!(ev.file_flags & file_flag::kDirect)) {
    track_buffered(ev, std::move(extras));
    return;
  }
  auto it = new_batch(ev, pending_write_of(ev, std::move(extras)));
  Batch& b = it->second;
  std::vector<std::shared_ptr<Bio>> bios = direct_bios(ev);
  if (ev.syscall == Syscall::IoSubmit) bios = aio_share(ev, std::move(bios));
  if (!bios.empty()) {
    for (const auto& bio : bios) {
      const std::uint64_t pages = bio_pages(bio->ev, page());
      b.direct_pages += pages;
      const Request* r = bio->request.get();
      if (r != nullptr && uncertain(*r)) b.writes[0].incomplete = true;
      if (r != nullptr && r->data_done && r->tl.complete_ns) {
        if (r->tl.error == 0) {
          add_request(b, 0, bio->request);
          continue;
        }
      } else {
        waiters_.wait_for_bio(bio->id, it->first);
      }
      ++b.direct_bios_left;
      b.direct_pages_left += pages;
    }
    if (b.direct_bios_left == 0) become_written(it, 0);
    return;
  }
  // No bio of its own: the filesystem fell back to buffered I/O, or records were lost.
  if (ev.pages_dirtied == 0) return;  // stays Dirty until finish()
  CallExtras kept;
  if (b.writes[0].extras) kept = std::move(*b.writes[0].extras);
  batches_.erase(it);
  --pending_writes_;
  track_buffered(ev, std::move(kept));
}

// The open batch of the file that a buffered write `ev` may join, or batches_.end().
WriteTracker::BatchIt WriteTracker::joinable_batch(const FileWrites& file, const InodeBios* history,
                                                   const SyscallEvent& ev) {
  // A bio of the file queued since the write started may carry part of its data: such a
  // write is tracked alone, with the exact per-bio rules.
  if (history != nullptr && history->last_queued_ns >= ev.start_ns) return batches_.end();
  const std::uint64_t bio_seq = history != nullptr ? history->last_seq : 0;
  const std::uint64_t first_page = page().index(ev.pos);
  // Newest first: a writer going through the file joins the batch it last started, and the
  // cheap tests go before the writer's identity (two strings).
  for (auto id = file.open_batches.rbegin(); id != file.open_batches.rend(); ++id) {
    auto it = batches_.find(*id);
    if (it == batches_.end()) continue;
    const Batch& b = it->second;
    if (b.open_at_bio != bio_seq || b.writes.empty()) continue;
    if (b.writes.back().first_page(page()) > first_page) continue;  // keep writes ordered
    if (b.writes.size() >= limits_.max_batch_writes || !b.same_writer(ev)) continue;
    return it;
  }
  return batches_.end();
}

void WriteTracker::track_buffered(const SyscallEvent& ev, CallExtras extras) {
  FileWrites& file = files_[InodeKey{ev.dev, ev.ino}];
  const InodeBios* history = history_.bios_of_inode(ev.dev, ev.ino);
  PendingWrite w = pending_write_of(ev, std::move(extras));
  const std::uint64_t first = w.first_page(page());
  const std::uint64_t last = w.last_page(page());
  w.pages_left = static_cast<std::uint32_t>(last - first + 1);

  auto it = joinable_batch(file, history, ev);
  if (it != batches_.end()) {
    Batch& b = it->second;
    b.writes.push_back(std::move(w));
    last_added_ = PendingWriteRef{it->first, static_cast<std::uint32_t>(b.writes.size() - 1)};
    ++b.live;
    ++pending_writes_;
    b.max_start = std::max(b.max_start, ev.start_ns);
    b.min_page = std::min(b.min_page, first);
    b.max_page = std::max(b.max_page, last);
    b.max_write_span = std::max(b.max_write_span, last - first);
    b.remaining.add(first, last);
    return;
  }

  it = new_batch(ev, std::move(w));
  Batch& b = it->second;
  b.by_pages = true;
  b.min_page = first;
  b.max_page = last;
  b.max_write_span = last - first;
  b.remaining.add(first, last);
  PendingWrite& opening = b.writes[0];
  // Bios that already completed (writeback during a long, throttled write).
  const std::deque<std::shared_ptr<Bio>> no_bios;
  const auto& file_bios = history != nullptr ? history->bios : no_bios;
  for (auto bio_it = file_bios.rbegin(); bio_it != file_bios.rend() && !b.remaining.empty();
       ++bio_it) {
    const Bio& bio = **bio_it;
    if (bio.ev.ts < ev.start_ns) break;  // ev.ts >= queued_ns: nothing older qualifies
    if (bio.queued_ns < ev.start_ns || !bio.request) continue;
    const Request& r = *bio.request;
    if (uncertain(r)) opening.incomplete = true;
    if (!r.data_done || r.tl.error != 0) continue;
    for (std::size_t i = 0; i < bio.ev.nr_extents && i < kMaxBioExtents; ++i) {
      const Extent& e = bio.ev.extents[i];
      if (e.pages == 0) continue;
      const std::uint64_t removed = b.remaining.remove(e.index, e.index + e.pages - 1);
      if (removed == 0) continue;
      add_request(b, 0, bio.request);
      opening.pages_left -=
          static_cast<std::uint32_t>(std::min<std::uint64_t>(opening.pages_left, removed));
    }
  }
  if (b.remaining.empty()) {
    become_written(it, 0);
    return;
  }
  file.batches.push_back(it->first);
  b.indexed = true;
  if (history == nullptr || history->last_queued_ns < ev.start_ns) {
    b.open_at_bio = history != nullptr ? history->last_seq : 0;
    file.open_batches.push_back(it->first);
    if (file.open_batches.size() > kMaxOpenBatchesPerFile) {
      file.open_batches.erase(file.open_batches.begin());
    }
  }
}

void WriteTracker::age_out(Nanos now) {
  while (!batches_.empty()) {
    auto it = batches_.begin();
    Batch& b = it->second;
    const PendingWrite& w = b.writes[b.first_live];
    const bool too_many = pending_writes_ > limits_.max_pending_writes;
    const bool too_old = w.end_ns + limits_.max_pending_age_ns < now;
    if (!too_many && !too_old) break;
    emit_write(it, static_cast<std::uint32_t>(b.first_live),
               too_old ? Eviction::AgedOut : Eviction::Evicted);
  }
  if (waiters_.crowded(pending_writes_)) prune_waiters();
}

void WriteTracker::prune_waiters() {
  waiters_.prune([this](PendingWriteRef ref, WriteState waiting_in) {
    const auto it = batches_.find(ref.batch);
    if (it == batches_.end() || ref.index >= it->second.writes.size()) return false;
    const PendingWrite& w = it->second.writes[ref.index];
    return !w.emitted && w.state == waiting_in;
  });
}

// End of trace: every pending write, in arrival order, with its last state.
bool WriteTracker::finish(std::size_t max_items) {
  if (!finishing_) {
    finishing_ = true;
    finish_order_.reserve(pending_writes_);
    for (const auto& [id, b] : batches_) {
      for (std::size_t i = b.first_live; i < b.writes.size(); ++i) {
        if (!b.writes[i].emitted) {
          finish_order_.emplace_back(b.writes[i].seq, id, static_cast<std::uint32_t>(i));
        }
      }
    }
    std::sort(finish_order_.begin(), finish_order_.end());
  }
  for (std::size_t n = 0; n < max_items && finish_next_ < finish_order_.size(); ++n) {
    const auto& [seq, id, index] = finish_order_[finish_next_++];
    auto it = batches_.find(id);
    if (it != batches_.end()) emit_write(it, index, Eviction::None);
  }
  if (finish_next_ < finish_order_.size()) return false;
  finish_order_ = {};
  finish_next_ = 0;
  finishing_ = false;
  return true;
}

}  // namespace wp::stitch
