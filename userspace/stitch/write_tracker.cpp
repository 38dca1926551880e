// SPDX-License-Identifier: Apache-2.0
#include "stitch/write_tracker.h"

#include <algorithm>
#include <cstdint>
#include <tuple>

namespace wp::stitch {

// What a pending write costs is the point of Member: keep it from growing unnoticed.
static_assert(sizeof(void*) != 8 || sizeof(Member) <= 88);

void WriteTracker::request_durable(const Request& r) {
  const auto found = durable_waiters_.find(r.id);
  if (found == durable_waiters_.end()) return;
  const std::vector<MemberRef> waiters = std::move(found->second);
  durable_waiters_.erase(found);
  for (const MemberRef& ref : waiters) {
    auto it = batches_.find(ref.batch);
    if (it == batches_.end()) continue;
    Member& m = it->second.members[ref.index];
    if (m.emitted || m.state != WriteState::Written) continue;
    if (--m.not_durable == 0) {
      m.state = WriteState::Durable;
      emit_member(it, ref.index, Eviction::None);
    }
  }
}

// Adds request `r` to member `index` of `b` (once), returning nothing.
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
  SmallIndexList& list = b.members[index].requests;
  for (std::uint32_t i = list.size(); i-- > 0;) {
    if (list[i] == at) return;
  }
  list.push_back(at);
}

std::vector<BatchId> WriteTracker::take_direct_waiters(std::uint64_t bio_id) {
  const auto found = direct_waiters_.find(bio_id);
  if (found == direct_waiters_.end()) return {};
  std::vector<BatchId> waiting = std::move(found->second);
  direct_waiters_.erase(found);
  return waiting;
}

// A completed bio: its pages (buffered writes) and its O_DIRECT writers.
void WriteTracker::bio_written(const Bio& bio, const std::shared_ptr<const Request>& r) {
  for (BatchId id : take_direct_waiters(bio.id)) {
    auto it = batches_.find(id);
    if (it == batches_.end() || it->second.members.empty()) continue;
    Batch& b = it->second;
    add_request(b, 0, r);
    b.direct_pages_left -= std::min(b.direct_pages_left, bio_pages(bio.ev, page()));
    if (--b.direct_bios_left == 0 && b.members[0].state == WriteState::Dirty) {
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
      if (b.members[index].state == WriteState::Dirty) become_written(it, index);
    }
  }
}

// The pages of `bio`'s extents leave batch `it`'s pending set, carried by `r`: the members
// left with none are `done`, and every member holding one is `touched` (when asked). False
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
// when null): every member holding some of them loses them (each page leaves the batch's set
// once, so each member counts each page once); members left with none are `done`.
void WriteTracker::take_pages(Batch& b, std::uint64_t lo, std::uint64_t hi,
                              const std::shared_ptr<const Request>* written_by,
                              std::vector<std::uint32_t>& done,
                              std::vector<std::uint32_t>* touched) {
  // Members are ordered by first page; one overlapping [lo, hi] starts in
  // [lo - max_member_span, hi].
  const std::uint64_t from = lo > b.max_member_span ? lo - b.max_member_span : 0;
  auto begin = std::lower_bound(
      b.members.begin(), b.members.end(), from,
      [this](const Member& m, std::uint64_t index) { return m.first_page(page()) < index; });
  for (auto m = begin; m != b.members.end() && m->first_page(page()) <= hi; ++m) {
    if (m->emitted || m->state != WriteState::Dirty) continue;
    const std::uint64_t a = std::max(lo, m->first_page(page()));
    const std::uint64_t z = std::min(hi, m->last_page(page()));
    if (a > z) continue;
    const auto index = static_cast<std::uint32_t>(m - b.members.begin());
    if (written_by != nullptr) add_request(b, index, *written_by);
    if (touched != nullptr) touched->push_back(index);
    m->pages_left -= static_cast<std::uint32_t>(std::min<std::uint64_t>(m->pages_left, z - a + 1));
    if (m->pages_left == 0) done.push_back(index);
  }
}

// A failed request's pages were not written and are no longer dirty: the end of writeback
// cleared them (the kernel records the error in the mapping, for one sync to report). Every
// write with a page in it lost its data, whatever its other pages do.
void WriteTracker::bio_failed(const Bio& bio, const std::shared_ptr<const Request>& r, Nanos ts) {
  const Loss loss{ts, r->tl.error};
  for (BatchId id : take_direct_waiters(bio.id)) {
    auto it = batches_.find(id);
    if (it == batches_.end() || it->second.members.empty()) continue;
    add_request(it->second, 0, r);
    if (it->second.members[0].state == WriteState::Dirty) lose(it, 0, loss);
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
    // The batch is erased with its last live member: lose the highest index last.
    for (std::uint32_t index : touched) {
      auto again = batches_.find(id);
      if (again == batches_.end()) break;
      const Member& m = again->second.members[index];
      if (!m.emitted && m.state == WriteState::Dirty) lose(again, index, loss);
    }
  }
}

void WriteTracker::lose(BatchIt it, std::uint32_t index, const Loss& loss) {
  Member& m = it->second.members[index];
  m.state = WriteState::Lost;
  ++stats_.lost_writes;
  stats_.lost_bytes += static_cast<std::uint64_t>(std::max(0, m.ret));
  auto& file = lost_by_file_[InodeKey{it->second.dev, it->second.ino}];
  file.push_back(LostWrite{m.seq, loss.ts});
  if (file.size() > kMaxLostPerFile) file.pop_front();
  if (lost_by_file_.size() > kMaxFilesWithLosses) lost_by_file_.erase(lost_by_file_.begin());
  emit_member(it, index, Eviction::None, std::nullopt, loss);
}

std::vector<std::uint64_t> WriteTracker::take_lost(DevT dev, std::uint64_t ino, Nanos until) {
  std::vector<std::uint64_t> ids;
  auto it = lost_by_file_.find(InodeKey{dev, ino});
  if (it == lost_by_file_.end()) return ids;
  auto& file = it->second;
  while (!file.empty() && file.front().ts <= until) {
    ids.push_back(file.front().id);
    file.pop_front();
  }
  if (file.empty()) lost_by_file_.erase(it);
  return ids;
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
               // The batch is erased with its last live member, which can only be the last
               // one here.
               for (std::uint32_t index : done) {
                 Member& m = it->second.members[index];
                 if (m.emitted || m.state != WriteState::Dirty) continue;
                 m.state = WriteState::Discarded;
                 ++stats_.discarded;
                 emit_member(it, index, Eviction::None, ev.ts);
               }
             });
}

void WriteTracker::become_written(BatchIt it, std::uint32_t index) {
  Batch& b = it->second;
  Member& m = b.members[index];
  m.state = WriteState::Written;
  m.not_durable = 0;
  for (std::uint32_t i = 0; i < m.requests.size(); ++i) {
    const Request& r = *b.requests[m.requests[i]];
    if (r.tl.durable_ns) continue;
    durable_waiters_[r.id].push_back(MemberRef{it->first, index});
    ++m.not_durable;
  }
  if (m.not_durable == 0 && !m.requests.empty()) {
    m.state = WriteState::Durable;
    emit_member(it, index, Eviction::None);
    return;
  }
  if (progress_ && m.announced) progress_(ItemProgress::Written, timeline_of(b, m, true));
}

void WriteTracker::announce(MemberRef ref) {
  auto it = batches_.find(ref.batch);
  if (it == batches_.end() || ref.index >= it->second.members.size()) return;
  Member& m = it->second.members[ref.index];
  if (m.emitted) return;
  m.announced = true;
  progress_(ItemProgress::Returned, timeline_of(it->second, m, true));
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

// The timeline of member `index` as it stands, from its batch and its requests.
WriteTimeline WriteTracker::timeline_of(const Batch& b, Member& m, bool snapshot) const {
  WriteTimeline tl;
  tl.id = m.seq;
  tl.announced = m.announced;
  SyscallEvent& call = tl.call;
  call.start_ns = m.start_ns;
  call.end_ns = m.end_ns;
  call.pid = b.pid;
  call.tid = b.tid;
  call.comm = b.comm;
  call.path = b.path;
  call.ns_path = b.ns_path;
  call.mnt_ns = b.mnt_ns;
  call.syscall = m.syscall;
  call.via = m.via;
  call.fd = b.fd;
  call.dev = b.dev;
  call.ino = b.ino;
  call.view_dev = b.view_dev;
  call.view_ino = b.view_ino;
  call.cgroup_id = b.cgroup_id;
  call.file_flags = b.file_flags;
  call.call_flags = b.call_flags;
  call.ret = m.ret;
  call.pos = m.pos;
  call.count = m.count;
  call.pages_dirtied = m.pages_dirtied;
  call.dirty_folios = m.dirty_folios;
  if (m.extras) {
    call.throttle_ns = m.extras->throttle_ns;
    call.throttle_events = m.extras->throttle_events;
    call.writeback_waits = m.extras->writeback_waits;
  }
  tl.direct = b.file_flags & file_flag::kDirect;
  tl.sync = b.file_flags & (file_flag::kSync | file_flag::kDsync);
  tl.state = m.state;
  tl.incomplete = m.incomplete || (loss_.last() && *loss_.last() >= m.start_ns);
  if (b.call_flags & call_flag::kMmapStore) {
    tl.pages = b.mmap_pages;
    tl.pages_pending = m.pages_left;
    tl.store_faults = StoreFaults{m.dirty_folios, b.mmap_whole_folios};
  } else if (b.by_pages) {
    tl.pages = m.last_page(page()) - m.first_page(page()) + 1;
    tl.pages_pending = m.pages_left;
  } else {
    tl.pages = b.direct_pages;
    tl.pages_pending = b.direct_pages_left;
  }
  tl.requests.reserve(m.requests.size());
  Nanos written = 0;
  Nanos durable = 0;
  for (std::uint32_t i = 0; i < m.requests.size(); ++i) {
    const Request& r = *b.requests[m.requests[i]];
    tl.requests.push_back(r.tl);
    if (uncertain(r)) tl.incomplete = true;
    written = std::max(written, r.tl.complete_ns.value_or(0));
    if (r.tl.durable_ns && *r.tl.durable_ns >= durable) {
      durable = *r.tl.durable_ns;
      tl.durable_via = r.via;
    }
  }
  if (m.state == WriteState::Written || m.state == WriteState::Durable) tl.written_ns = written;
  if (m.state == WriteState::Durable) {
    tl.durable_ns = durable;
  } else {
    tl.durable_via = DurableVia::None;
  }
  if (b.inlined) {
    tl.inline_data = b.inlined->data;
    // Committed with none of the commit's FUA writes seen: on disk by the commit's end.
    if (m.state == WriteState::Durable && m.requests.empty() && b.inlined->data.committed_ns) {
      tl.written_ns = tl.durable_ns = b.inlined->data.committed_ns;
      tl.durable_via = DurableVia::Commit;
    }
  }
  if (m.extras) {
    tl.causes = m.extras->causes;
    tl.throttles = snapshot ? m.extras->throttles : std::move(m.extras->throttles);
  }
  return tl;
}

void WriteTracker::emit_member(BatchIt it, std::uint32_t index, Eviction eviction,
                               std::optional<Nanos> discarded_ns, std::optional<Loss> lost) {
  Batch& b = it->second;
  Member& m = b.members[index];
  if (m.emitted) return;
  WriteTimeline tl = timeline_of(b, m);
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
  m.emitted = true;
  m.extras.reset();
  --pending_writes_;
  if (b.call_flags & call_flag::kMmapStore) {
    auto open = open_mmap_.find(MmapKey{b.pid, InodeKey{b.dev, b.ino}});
    if (open != open_mmap_.end() && open->second == it->first) open_mmap_.erase(open);
  }
  while (b.first_live < b.members.size() && b.members[b.first_live].emitted) ++b.first_live;
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
  tl.id = take_id();
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

Member WriteTracker::member_of(const SyscallEvent& ev, CallExtras extras) {
  Member m;
  m.start_ns = ev.start_ns;
  m.end_ns = ev.end_ns;
  m.ret = static_cast<std::int32_t>(std::min<std::int64_t>(ev.ret, INT32_MAX));
  m.pos = ev.pos;
  m.count = ev.count;
  m.seq = next_write_seq_++;
  m.pages_dirtied = ev.pages_dirtied;
  m.dirty_folios = ev.dirty_folios;
  m.syscall = ev.syscall;
  m.via = ev.via;
  m.incomplete = loss_.within(ev.start_ns, ev.end_ns);
  extras.throttle_ns = ev.throttle_ns;
  extras.throttle_events = ev.throttle_events;
  extras.writeback_waits = ev.writeback_waits;
  if (extras.any()) m.extras = std::make_unique<CallExtras>(std::move(extras));
  return m;
}

WriteTracker::BatchIt WriteTracker::new_batch(const SyscallEvent& ev, Member m) {
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
  b.max_start = m.start_ns;
  b.members.push_back(std::move(m));
  b.live = 1;
  ++pending_writes_;
  last_added_ = MemberRef{id, 0};
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
  auto it = new_batch(ev, member_of(ev, std::move(extras)));
  Batch& b = it->second;
  std::vector<std::shared_ptr<Bio>> bios = direct_bios(ev);
  if (ev.syscall == Syscall::IoSubmit) bios = aio_share(ev, std::move(bios));
  if (!bios.empty()) {
    for (const auto& bio : bios) {
      const std::uint64_t pages = bio_pages(bio->ev, page());
      b.direct_pages += pages;
      const Request* r = bio->request.get();
      if (r != nullptr && uncertain(*r)) b.members[0].incomplete = true;
      if (r != nullptr && r->data_done && r->tl.complete_ns) {
        if (r->tl.error == 0) {
          add_request(b, 0, bio->request);
          continue;
        }
      } else {
        direct_waiters_[bio->id].push_back(it->first);
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
  if (b.members[0].extras) kept = std::move(*b.members[0].extras);
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
    if (b.open_at_bio != bio_seq || b.members.empty()) continue;
    if (b.members.back().first_page(page()) > first_page) continue;  // keep members ordered
    if (b.members.size() >= limits_.max_batch_writes || !b.same_writer(ev)) continue;
    return it;
  }
  return batches_.end();
}

void WriteTracker::track_buffered(const SyscallEvent& ev, CallExtras extras) {
  FileWrites& file = files_[InodeKey{ev.dev, ev.ino}];
  const InodeBios* history = history_.bios_of_inode(ev.dev, ev.ino);
  Member m = member_of(ev, std::move(extras));
  const std::uint64_t first = m.first_page(page());
  const std::uint64_t last = m.last_page(page());
  m.pages_left = static_cast<std::uint32_t>(last - first + 1);

  auto it = joinable_batch(file, history, ev);
  if (it != batches_.end()) {
    Batch& b = it->second;
    b.members.push_back(std::move(m));
    last_added_ = MemberRef{it->first, static_cast<std::uint32_t>(b.members.size() - 1)};
    ++b.live;
    ++pending_writes_;
    b.max_start = std::max(b.max_start, ev.start_ns);
    b.min_page = std::min(b.min_page, first);
    b.max_page = std::max(b.max_page, last);
    b.max_member_span = std::max(b.max_member_span, last - first);
    b.remaining.add(first, last);
    return;
  }

  it = new_batch(ev, std::move(m));
  Batch& b = it->second;
  b.by_pages = true;
  b.min_page = first;
  b.max_page = last;
  b.max_member_span = last - first;
  b.remaining.add(first, last);
  Member& w = b.members[0];
  // Bios that already completed (writeback during a long, throttled write).
  const std::deque<std::shared_ptr<Bio>> no_bios;
  const auto& file_bios = history != nullptr ? history->bios : no_bios;
  for (auto bio_it = file_bios.rbegin(); bio_it != file_bios.rend() && !b.remaining.empty();
       ++bio_it) {
    const Bio& bio = **bio_it;
    if (bio.ev.ts < ev.start_ns) break;  // ev.ts >= queued_ns: nothing older qualifies
    if (bio.queued_ns < ev.start_ns || !bio.request) continue;
    const Request& r = *bio.request;
    if (uncertain(r)) w.incomplete = true;
    if (!r.data_done || r.tl.error != 0) continue;
    for (std::size_t i = 0; i < bio.ev.nr_extents && i < kMaxBioExtents; ++i) {
      const Extent& e = bio.ev.extents[i];
      if (e.pages == 0) continue;
      const std::uint64_t removed = b.remaining.remove(e.index, e.index + e.pages - 1);
      if (removed == 0) continue;
      add_request(b, 0, bio.request);
      w.pages_left -= static_cast<std::uint32_t>(std::min<std::uint64_t>(w.pages_left, removed));
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
    const Member& m = b.members[b.first_live];
    const bool too_many = pending_writes_ > limits_.max_pending_writes;
    const bool too_old = m.end_ns + limits_.max_pending_age_ns < now;
    if (!too_many && !too_old) break;
    emit_member(it, static_cast<std::uint32_t>(b.first_live),
                too_old ? Eviction::AgedOut : Eviction::Evicted);
  }
  if (waiting_on() > 2 * pending_writes_ + kWaiterSlack) prune_waiters();
}

void WriteTracker::prune_waiters() {
  const auto live = [this](BatchId id, std::uint32_t index, WriteState waiting_in) {
    const auto it = batches_.find(id);
    if (it == batches_.end() || index >= it->second.members.size()) return false;
    const Member& m = it->second.members[index];
    return !m.emitted && m.state == waiting_in;
  };
  std::erase_if(direct_waiters_, [&](const auto& entry) {
    return std::none_of(entry.second.begin(), entry.second.end(),
                        [&](BatchId id) { return live(id, 0, WriteState::Dirty); });
  });
  std::erase_if(durable_waiters_, [&](const auto& entry) {
    return std::none_of(entry.second.begin(), entry.second.end(), [&](const MemberRef& ref) {
      return live(ref.batch, ref.index, WriteState::Written);
    });
  });
}

// End of trace: every pending write, in arrival order, with its last state.
bool WriteTracker::finish(std::size_t max_items) {
  if (!finishing_) {
    finishing_ = true;
    finish_order_.reserve(pending_writes_);
    for (const auto& [id, b] : batches_) {
      for (std::size_t i = b.first_live; i < b.members.size(); ++i) {
        if (!b.members[i].emitted) {
          finish_order_.emplace_back(b.members[i].seq, id, static_cast<std::uint32_t>(i));
        }
      }
    }
    std::sort(finish_order_.begin(), finish_order_.end());
  }
  for (std::size_t n = 0; n < max_items && finish_next_ < finish_order_.size(); ++n) {
    const auto& [seq, id, index] = finish_order_[finish_next_++];
    auto it = batches_.find(id);
    if (it != batches_.end()) emit_member(it, index, Eviction::None);
  }
  if (finish_next_ < finish_order_.size()) return false;
  finish_order_ = {};
  finish_next_ = 0;
  finishing_ = false;
  return true;
}

}  // namespace wp::stitch
