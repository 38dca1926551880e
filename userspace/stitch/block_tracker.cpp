// SPDX-License-Identifier: Apache-2.0
#include "stitch/block_tracker.h"

#include <algorithm>

namespace wp::stitch {

namespace {

// What diskstats counts as a write (STAT_WRITE): writes and write-zeroes; discards apart.
bool counts_as_write(ReqOp op) {
  return op == ReqOp::Write || op == ReqOp::WriteZeroes;
}

NvmeCommand nvme_command(const NvmeEvent& ev) {
  NvmeCommand cmd;
  cmd.qid = ev.qid;
  cmd.cid = ev.cid;
  cmd.opcode = ev.opcode;
  cmd.nsid = ev.nsid;
  cmd.fua = (ev.control >> 14) & 1u;
  return cmd;
}

void set_submitter(RequestTimeline& tl, const RequestSubmitter& s) {
  tl.submit_tid = s.tid;
  tl.submit_comm = s.comm;
  tl.submit_why = s.why;
}

// Lists `s` among the other submitters unless it is the submitter or already listed.
void add_other_submitter(RequestTimeline& tl, const RequestSubmitter& s) {
  auto same = [&](std::uint32_t tid, SubmitWhy why) { return tid == s.tid && why == s.why; };
  if (same(*tl.submit_tid, tl.submit_why)) return;
  for (const RequestSubmitter& o : tl.other_submitters)
    if (same(o.tid, o.why)) return;
  tl.other_submitters.push_back(s);
}

}  // namespace

BlockTracker::~BlockTracker() {
  // A request in flight and the bios it claimed point at each other (until its completion
  // releases them): break those cycles so that nothing outlives the tracker.
  for (auto& [ptr, request] : active_) request->bios.clear();
}

std::shared_ptr<Request> BlockTracker::new_request(std::uint64_t rq) {
  auto r = std::make_shared<Request>();
  r->id = ++request_ids_;
  r->rq = rq;
  return r;
}

void BlockTracker::on_bio(const BioEvent& ev) {
  ++stats_.bios;
  if (ev.op == ReqOp::Other) return;
  if (ev.op == ReqOp::Read) {
    if (auto bio = read_queue_.queue(ev)) recent_reads_.remember(bio);
    return;
  }
  if (is_flush_bio(ev) && ev.op == ReqOp::Write) ++empty_writes_[ev.disk].queued;
  if (auto bio = queue_.queue(ev)) recent_.remember(bio);
}

// ---- requests ----

// Ends a lifetime that will see no more events (pointer reused, or records lost).
void BlockTracker::abandon(Request& r) {
  if (!r.data_done) r.bios.clear();
}

std::shared_ptr<Request> BlockTracker::lifetime_for_submit(const RequestEvent& ev) {
  auto it = active_.find(ev.rq);
  if (it != active_.end()) {
    std::shared_ptr<Request> current = it->second;
    Request& r = *current;
    if (!r.data_done && r.tl.disk == ev.disk) {
      // Inserted, not yet issued (an insert then its issue), or handed back by the driver:
      // the same request goes on. Issued, not requeued, and submitted again: only a new
      // request on the pointer can be, so the old one completed unseen.
      if (!r.tl.issue_ns || r.requeued) {
        if (ev.kind == RequestEventKind::Issue) r.requeued = false;
        return current;
      }
      infer_completion(current, ev.ts);
    }
    if (r.counted_at_sequence_end) {
      // Its flush sequence ended before the kernel freed the request for reuse: that
      // zero-byte completion was not delivered.
      ++stats_.missed_completions;
      count_sequence_end(r);
    }
    abandon(r);
    active_.erase(ev.rq);
  }
  auto r = new_request(ev.rq);
  r->tl.disk = ev.disk;
  r->tl.op = ev.op;
  ++stats_.requests;
  active_.emplace(ev.rq, r);
  // The driver set up its command just before the block layer's issue event.
  if (auto cmd = nvme_before_issue_.find(ev.rq); cmd != nvme_before_issue_.end()) {
    r->tl.nvme = cmd->second;
    nvme_before_issue_.erase(cmd);
  }
  return r;
}

void BlockTracker::claim(const std::shared_ptr<Request>& request, const std::shared_ptr<Bio>& bio) {
  Request& r = *request;
  bio->request = request;
  r.bios.push_back(bio);
  ++r.tl.bios;
  r.tl.flags |= bio->ev.flags;
  // Bios of several threads merge into one request (a thread's bio back-merged into a request
  // another thread's bio started). Its submitter is the thread whose bio queued first, the one
  // its queue time is of: a bio claimed later (requests claim by sector) that queued earlier
  // takes over, and the rest are listed as other submitters.
  const RequestSubmitter by_bio{bio->ev.tid, bio->ev.comm, bio->ev.why};
  const bool earliest = !r.tl.queue_ns || bio->queued_ns < *r.tl.queue_ns;
  if (earliest) r.tl.queue_ns = bio->queued_ns;
  if (!r.tl.submit_tid) {
    set_submitter(r.tl, by_bio);
  } else if (earliest) {
    const RequestSubmitter was{*r.tl.submit_tid, r.tl.submit_comm, r.tl.submit_why};
    set_submitter(r.tl, by_bio);
    std::erase_if(r.tl.other_submitters, [&](const RequestSubmitter& s) {
      return s.tid == by_bio.tid && s.why == by_bio.why;
    });
    add_other_submitter(r.tl, was);
  } else {
    add_other_submitter(r.tl, by_bio);
  }
}

void BlockTracker::claim_data_bios(const std::shared_ptr<Request>& r) {
  BioQueue& queue = r->tl.op == ReqOp::Read ? read_queue_ : queue_;
  queue.take_data(r->tl.disk, r->tl.sector, r->tl.sector + sectors_of(r->tl.bytes),
                  [&](const std::shared_ptr<Bio>& bio) { claim(r, bio); });
}

void BlockTracker::claim_flush_bios(const std::shared_ptr<Request>& r, Nanos until) {
  queue_.take_flushes(r->tl.disk, until, [&](const std::shared_ptr<Bio>& bio) { claim(r, bio); });
}

// The kernel does not always run the completion hook: on 6.18 block_rq_complete events
// delivered in a softirq on top of some tasks reach no BPF program at all, and nothing counts
// them (tests/integration/app_oracle_test.cpp found it; ftrace of the same runs has them). A
// lifetime issued and never completed is then found out by its pointer's next use, or by the
// end of its flush sequence. It completed no later than that: it is completed then, marked
// (complete_inferred), counted (missed_completions, and in the disk's totals as diskstats
// counts it), and every item resting on it is incomplete. Later than the truth, never earlier:
// a write is never shown written or durable before it was.
void BlockTracker::infer_completion(const std::shared_ptr<Request>& r, Nanos at) {
  ++stats_.missed_completions;
  r->tl.complete_inferred = true;
  if (r->tl.op == ReqOp::Flush) {
    complete_flush(*r, at, 0);
    return;
  }
  complete_data(r, at);
}

// A missed completion is also found by the thread that waited for it. A call that writes its
// data and waits (fsync's and fdatasync's writeback, an O_DIRECT or O_SYNC write) goes on only
// once every bio it queued has ended, and a bio ends after its request's completion event
// fired: that event's record is in the ring buffer before anything the thread does next. So
// when the call's record arrives and a request holding only bios the thread queued in it is
// still open, its completion was not delivered. It completed before the thread queued its
// cache flush in the call (every file system's sync writes and waits for the data first, then
// flushes), else before the call returned. Requests other threads' bios share are left to the
// rules above: this thread did not wait for the others' parts.
//
// A successful fsync or fdatasync (`synced`: its file) also waited for the file's pages that
// were under writeback when it began, whoever queued them (a sync_file_range's, the flusher's):
// ext4 and xfs wait in file_write_and_wait_range(), btrfs in filemap_fdatawait_range() or for
// the ordered extents, all before their flush. A request still open that holds only the file's
// pages queued before the call completed unseen by the same bound. (PostgreSQL: a checkpoint's
// sync_file_range queues a relation's pages, its fsync later waits for them, AppOracle.)
void BlockTracker::waited_call_end(std::uint32_t tid, SubmitWhy why, Nanos start, Nanos end,
                                   std::optional<InodeKey> synced) {
  static const std::deque<std::shared_ptr<Bio>> kNoBios;
  const auto* known = recent_.bios_of_thread(tid);
  const std::deque<std::shared_ptr<Bio>>& bios = known ? *known : kNoBios;
  // The thread's bios arrive in the order it queued them: the call's are the newest, and the
  // walk stops at the first from before the call (the history holds thousands).
  auto first_in_call = bios.end();
  while (first_in_call != bios.begin() && (*std::prev(first_in_call))->ev.ts >= start)
    --first_in_call;
  auto in_call = [&](const Bio& b) { return b.ev.ts >= start && b.ev.ts <= end; };
  Nanos flushed = end;  // the thread's first cache flush in the call
  for (auto b = first_in_call; b != bios.end(); ++b)
    if (in_call(**b) && is_flush_bio((*b)->ev) && (*b)->ev.why == why)
      flushed = std::min(flushed, (*b)->ev.ts);
  auto still_open = [&](const std::shared_ptr<Request>& r) {
    if (r->data_done || r->lost_tracking || !is_data_op(r->tl.op)) return false;
    auto active = active_.find(r->rq);
    return active != active_.end() && active->second == r;  // else its lifetime ended
  };
  auto waited = [&](const Bio& b) {
    return b.ev.tid == tid && b.ev.why == why && b.ev.uring_tag == 0 && in_call(b);
  };
  for (auto b = first_in_call; b != bios.end(); ++b) {
    const Bio& bio = **b;
    if (!waited(bio) || is_flush_bio(bio.ev) || !bio.request) continue;
    const std::shared_ptr<Request> r = bio.request;
    if (!still_open(r) || !std::all_of(r->bios.begin(), r->bios.end(),
                                       [&](const auto& other) { return waited(*other); }))
      continue;
    infer_completion(r, bio.ev.ts < flushed ? flushed : end);
  }
  if (!synced) return;
  auto files_before_call = [&](const std::shared_ptr<Bio>& b) {
    return b->ev.ts < start && b->ev.file_dev == synced->dev && b->ev.ino == synced->ino &&
           b->ev.nr_extents > 0 && !is_flush_bio(b->ev);
  };
  std::vector<std::shared_ptr<Request>> found;  // infer_completion() changes active_
  for (const auto& [rq, r] : active_)
    if (still_open(r) && !r->bios.empty() &&
        std::all_of(r->bios.begin(), r->bios.end(), files_before_call))
      found.push_back(r);
  for (const auto& r : found) infer_completion(r, flushed);
}

// A FLUSH request done at `ts` (its lifetime ends: the caller drops its pointer entry).
void BlockTracker::complete_flush(Request& r, Nanos ts, std::int32_t error) {
  RequestTimeline& tl = r.tl;
  ++stats_.disks[tl.disk].flush_requests;
  tl.complete_ns = ts;
  tl.error = error;
  r.data_done = true;
  r.bios.clear();
  const Nanos start = tl.issue_ns ? *tl.issue_ns : tl.insert_ns ? *tl.insert_ns : ts;
  // A failed flush made nothing durable, but a sync waited for it (and likely failed by it):
  // it is reported for the syncs only, with its error.
  listener_.flush_completed(tl.disk, start, ts, tl, error == 0);
}

// The zero-byte completion ending a PREFLUSH/FUA data request's flush sequence, at `ts`.
void BlockTracker::end_flush_sequence(Request& r, Nanos ts) {
  r.flush_seq_done = true;
  count_sequence_end(r);
  if (r.tl.flags & req_flag::kFua) listener_.fua_sequence_done(r, ts);
  listener_.flush_completed(r.tl.disk, *r.tl.complete_ns, ts, r.tl, false);
}

void BlockTracker::on_request(const RequestEvent& ev) {
  if (ev.kind == RequestEventKind::Complete) {
    on_complete(ev);
    return;
  }
  if (ev.kind == RequestEventKind::Requeue) {
    if (auto it = active_.find(ev.rq); it != active_.end() && !it->second->data_done)
      it->second->requeued = true;
    return;
  }
  if (ev.kind == RequestEventKind::BioFailed) {
    on_bio_failed(ev);
    return;
  }
  std::shared_ptr<Request> r = lifetime_for_submit(ev);
  RequestTimeline& tl = r->tl;
  tl.op = ev.op;
  tl.sector = ev.sector;
  tl.bytes = ev.bytes;  // merges after insert grow the request: the latest size wins
  tl.flags |= ev.flags;
  if (ev.kind == RequestEventKind::Insert) {
    if (!tl.insert_ns) tl.insert_ns = ev.ts;
    return;
  }
  if (!tl.issue_ns) tl.issue_ns = ev.ts;
  if (ev.op == ReqOp::Flush) {
    claim_flush_bios(r, ev.ts);
  } else {
    if (ev.flags & req_flag::kFua) r->fua_at_issue = true;
    claim_data_bios(r);
  }
}

void BlockTracker::on_complete(const RequestEvent& ev) {
  auto it = active_.find(ev.rq);
  const bool matches = it != active_.end() && it->second->tl.disk == ev.disk;
  // A zero-byte write completing on a pointer whose last lifetime carried no PREFLUSH/FUA, or
  // whose flush sequence has already ended, cannot be that request's flush-sequence end: it is
  // an empty PREFLUSH write (what blkdev_issue_flush() submits) that the flush machinery
  // completed without ever issuing it, reusing the pointer of an older, finished request. A
  // lifetime whose data the kernel said completed inside a flush sequence is still in it.
  const bool empty_preflush_write =
      ev.op == ReqOp::Write && ev.bytes == 0 &&
      (!matches || (it->second->data_done && it->second->tl.op == ReqOp::Write &&
                    !it->second->counted_at_sequence_end &&
                    (!(it->second->tl.flags & (req_flag::kPreflush | req_flag::kFua)) ||
                     it->second->flush_seq_done)));
  if (empty_preflush_write) {
    // Its cache flush went out as an FF request of its own, already counted as a flush:
    // this completion only ends the old lifetime (whose flush sequence it is not). The disk
    // still counts it, as a write of no sectors.
    ++stats_.disks[ev.disk].write_requests;
    ++empty_writes_[ev.disk].completed;
    if (matches) active_.erase(it);
    return;
  }
  if (ev.op == ReqOp::Flush && (!matches || it->second->tl.op != ReqOp::Flush)) {
    // An empty flush to a device without write cache completes with no issue event.
    auto r = new_request(ev.rq);
    r->tl.disk = ev.disk;
    r->tl.op = ReqOp::Flush;
    r->tl.flags = ev.flags;
    r->tl.sector = ev.sector;
    r->tl.complete_ns = ev.ts;
    r->tl.error = ev.error;
    r->data_done = true;
    ++stats_.requests;
    ++stats_.disks[ev.disk].flush_requests;
    claim_flush_bios(r, ev.ts);
    r->bios.clear();
    if (ev.error == 0) listener_.flush_completed(ev.disk, ev.ts, ev.ts, r->tl, true);
    return;
  }
  if (!matches) {
    ++stats_.unmatched_completes;  // no lifetime: never guess which request it was
    // The disk completed it all the same (its issue record went before the trace, or its
    // pointer's lifetime was closed by a reuse): the totals count it.
    if (ev.op == ReqOp::Write || ev.op == ReqOp::WriteZeroes) {
      ++stats_.disks[ev.disk].write_requests;
      stats_.disks[ev.disk].write_bytes += ev.bytes;
    }
    return;
  }
  std::shared_ptr<Request> r = it->second;
  RequestTimeline& tl = r->tl;

  if (tl.op == ReqOp::Flush) {
    active_.erase(it);  // a flush request is done at its completion; the pointer gets reused
    complete_flush(*r, ev.ts, ev.error);
    return;
  }

  const bool in_flush_sequence = ev.flags & req_flag::kFlushSeq;
  if (!r->data_done) {
    if (ev.error != 0) {
      count_write(*r, in_flush_sequence);
      tl.error = ev.error;
      tl.complete_ns = ev.ts;
      r->data_done = true;
      std::vector<std::shared_ptr<Bio>> bios = std::move(r->bios);
      r->bios.clear();  // its pages were not written
      if (is_data_op(tl.op)) listener_.data_failed(r, bios, ev.ts);
      return;
    }
    if (ev.bytes == 0 && tl.bytes != 0) {
      // The zero-byte end of a PREFLUSH/FUA request's flush sequence comes only after its
      // data completed: that completion was not delivered.
      if (!(tl.flags & (req_flag::kPreflush | req_flag::kFua)) || !tl.issue_ns) {
        ++stats_.unmatched_completes;
        return;
      }
      infer_completion(r, ev.ts);
      end_flush_sequence(*r, ev.ts);
      return;
    }
    r->completed_bytes += ev.bytes;
    if (r->completed_bytes >= tl.bytes) complete_data(r, ev.ts, in_flush_sequence);
    return;
  }

  // Data already done, no new issue since: the zero-byte completion ending the flush
  // sequence of a PREFLUSH/FUA request (after its post-flush on devices without FUA), or of
  // one whose data failed in it (the sequence ends at once, with the error).
  if (ev.bytes == 0 && !r->flush_seq_done && tl.error == 0) {
    end_flush_sequence(*r, ev.ts);
    return;
  }
  if (ev.bytes == 0 && r->counted_at_sequence_end) {
    count_sequence_end(*r);
    return;
  }
  ++stats_.unmatched_completes;
}

// A write bio that failed while no request held it: a bio-based device (dm-flakey, the error
// target, md) failed it itself. Its pages are lost as a failed request's are, and the bio stands
// for "the request that failed" (its device, sector, size, error and submitter). A bio a
// request claimed is that request's: its failure, if any, came with the request's completion.
void BlockTracker::on_bio_failed(const RequestEvent& ev) {
  std::shared_ptr<Bio> bio = queue_.take_pending(ev.disk, ev.rq);
  if (!bio) return;
  auto r = new_request(ev.rq);
  r->tl.disk = ev.disk;
  r->tl.op = ev.op;
  r->tl.sector = bio->ev.sector;
  r->tl.bytes = bio->ev.bytes;
  r->tl.error = ev.error;
  r->tl.complete_ns = ev.ts;
  r->data_done = true;
  claim(r, bio);
  ++stats_.failed_bios;
  std::vector<std::shared_ptr<Bio>> bios = std::move(r->bios);
  r->bios.clear();  // the bio points at its request: no cycle outlives the failure
  listener_.data_failed(r, bios, ev.ts);
}

// diskstats' writes (STAT_WRITE: writes and write-zeroes; discards are counted apart): the
// bytes as the data completes, the request once, when the kernel ends it. A request the flush
// machinery runs (RQF_FLUSH_SEQ) ends at its sequence's end, after its post-flush: the
// kernel's accounting skips it until then (blk_account_io_done()), and a trace that ends in
// between must not count what diskstats does not yet.
void BlockTracker::count_write(Request& r, bool in_flush_sequence) {
  const RequestTimeline& tl = r.tl;
  if (!counts_as_write(tl.op)) return;
  DiskTotals& d = stats_.disks[tl.disk];
  d.write_bytes += tl.bytes;
  if (in_flush_sequence)
    r.counted_at_sequence_end = true;
  else
    ++d.write_requests;
}

void BlockTracker::count_sequence_end(Request& r) {
  if (!r.counted_at_sequence_end) return;
  r.counted_at_sequence_end = false;
  ++stats_.disks[r.tl.disk].write_requests;
}

void BlockTracker::complete_data(const std::shared_ptr<Request>& r, Nanos ts,
                                 bool in_flush_sequence) {
  count_write(*r, in_flush_sequence);
  r->data_done = true;
  r->tl.complete_ns = ts;
  std::vector<std::shared_ptr<Bio>> bios = std::move(r->bios);
  r->bios.clear();
  if (!is_data_op(r->tl.op)) return;
  listener_.data_completed(r, bios, ts);
}

void BlockTracker::on_nvme(const NvmeEvent& ev) {
  auto it = active_.find(ev.rq);
  // The driver builds its command (nvme_setup_cmd) before blk_mq_start_request() fires
  // block_rq_issue: a setup belongs to the pointer's next lifetime unless the current one
  // is still waiting to be issued (inserted, not yet issued) or in flight without one.
  const bool current_takes_setup = it != active_.end() && !it->second->data_done &&
                                   (!it->second->tl.issue_ns || !it->second->tl.nvme);
  if (ev.kind == NvmeEventKind::Setup) {
    NvmeCommand cmd = nvme_command(ev);
    cmd.submit_ns = ev.ts;
    if (current_takes_setup) {
      it->second->tl.nvme = cmd;
    } else {
      nvme_before_issue_[ev.rq] = cmd;
      trim_nvme_before_issue(ev.ts);
    }
    return;
  }
  if (it == active_.end() || it->second->data_done) return;  // completion of an unseen one
  RequestTimeline& tl = it->second->tl;
  if (!tl.nvme) tl.nvme = nvme_command(ev);
  tl.nvme->complete_ns = ev.ts;
  tl.nvme->status = ev.status;
}

// Setups whose issue never came (records lost, or a request the filter dropped) must not
// pile up: keep them for a second at most.
void BlockTracker::trim_nvme_before_issue(Nanos now) {
  if (nvme_before_issue_.size() < 1024) return;
  std::erase_if(nvme_before_issue_, [now](const auto& entry) {
    return entry.second.submit_ns && *entry.second.submit_ns + 1'000'000'000ull < now;
  });
}

void BlockTracker::write_idle_at_end(DevT disk, Nanos at) {
  if (ended_) return;
  std::vector<std::shared_ptr<Request>> open;
  for (const auto& [ptr, r] : active_) {
    if (r->tl.disk != disk || !counts_as_write(r->tl.op) || r->lost_tracking) continue;
    // Issued: a request only inserted may have been merged into another in the scheduler,
    // which ends it without a completion (and without counting it).
    if ((!r->data_done && r->tl.issue_ns) || r->counted_at_sequence_end) open.push_back(r);
  }
  // In the order they began, not the map's.
  std::sort(open.begin(), open.end(), [](const auto& a, const auto& b) { return a->id < b->id; });
  for (const std::shared_ptr<Request>& r : open) {
    if (!r->data_done) {
      infer_completion(r, at);
    } else {
      // Its data's completion came; its flush sequence's zero-byte end did not (as when its
      // pointer is reused first): the disk counted it at that end.
      ++stats_.missed_completions;
      count_sequence_end(*r);
    }
  }
}

// An empty PREFLUSH write is never issued (its FF flush is), so a missed completion of it
// leaves no open lifetime for the rules above to find: it is found by count instead. The
// kernel makes one request of each such bio (flush bios are never merged, and a device without
// a volatile cache completes them before they are queued, so those reach no hook), and
// diskstats counts each request as a write of no sectors. Bios queued before the trace whose
// completions came in it can only hide a miss, never invent one. A request whose flush
// sequence has not ended by now is not counted: diskstats has not counted it either.
void BlockTracker::end_of_trace() {
  if (ended_) return;
  ended_ = true;
  for (const auto& [dev, writes] : empty_writes_) {
    if (writes.queued <= writes.completed) continue;
    const std::uint64_t missed = writes.queued - writes.completed;
    stats_.disks[dev].write_requests += missed;
    stats_.missed_completions += missed;
  }
}

void BlockTracker::on_lost() {
  // A lifetime in flight may have lost its completion and been reused: a later completion
  // for its pointer could belong to another request. Abandon them all rather than guess.
  for (auto& [ptr, r] : active_) {
    count_sequence_end(*r);  // its sequence ends, delivered or not: the disk counts it
    r->lost_tracking = true;
    abandon(*r);
  }
  active_.clear();
}

void BlockTracker::sweep(Nanos horizon) {
  recent_.sweep(horizon);
  queue_.sweep(horizon);
  recent_reads_.sweep(horizon);
  read_queue_.sweep(horizon);
}

}  // namespace wp::stitch
