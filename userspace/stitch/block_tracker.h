// SPDX-License-Identifier: Apache-2.0
// Block tracker: bios and request lifetimes, with their NVMe commands. It pairs each bio with
// the request that carried it (by disk, sector and queue order, splits and merges included),
// ends request lifetimes on completion or pointer reuse, and keeps a bounded history of bios
// per thread and per file for the trackers above it. What a completion means for durability
// or for writes is not its business: it reports completions to its listener.
// Rules: docs/reference/stitching-rules.md, "Block"; tests: tests/unit/block_tracker_test.cpp,
// block_tracker_bios_test.cpp (claims, splits), block_tracker_missed_test.cpp (missed completions).
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "stitch/bio_queue.h"
#include "stitch/io_state.h"
#include "stitch/recent_bios.h"
#include "stitch/stitcher.h"

namespace wp::stitch {

class BlockListener {
 public:
  virtual ~BlockListener() = default;
  // The data transfer of data request `r` finished without error at `ts`; `bios` are the bios
  // it carried.
  virtual void data_completed(const std::shared_ptr<Request>& r,
                              const std::vector<std::shared_ptr<Bio>>& bios, Nanos ts) = 0;
  // Data request `r` completed with an error at `ts` (its tl.error): the pages `bios` carried
  // were not written, and the page cache no longer holds them dirty (writeback ended).
  virtual void data_failed(const std::shared_ptr<Request>& r,
                           const std::vector<std::shared_ptr<Bio>>& bios, Nanos ts) = 0;
  // A cache flush on `disk` completed. `covers_earlier`: a real FLUSH request, which makes
  // durable every data request that completed before it started; false: the post-flush of a
  // PREFLUSH/FUA data request `request`, or a FLUSH request that failed (its tl.error),
  // recorded for syncs only.
  virtual void flush_completed(DevT disk, Nanos start, Nanos end, const RequestTimeline& request,
                               bool covers_earlier) = 0;
  // The flush sequence of FUA request `r` ended at `ts`: it is durable.
  virtual void fua_sequence_done(Request& r, Nanos ts) = 0;
};

class BlockTracker {
 public:
  BlockTracker(const StitchLimits& limits, StitchStats& stats, BlockListener& listener)
      : stats_(stats),
        listener_(listener),
        queue_(limits, stats),
        recent_(limits),
        read_queue_(limits, stats),
        recent_reads_(limits) {}
  ~BlockTracker();
  BlockTracker(const BlockTracker&) = delete;
  BlockTracker& operator=(const BlockTracker&) = delete;

  void on_bio(const BioEvent& ev);
  void on_request(const RequestEvent& ev);
  void on_nvme(const NvmeEvent& ev);
  // Thread `tid` made a call from `start` to `end` that waited for the bios it queued in it
  // with `why` (an fsync's writeback, an O_DIRECT or O_SYNC write's data): a request still open
  // that holds only such bios completed unseen (BlockTracker::infer_completion), no later than
  // the cache flush the thread went on to queue in the call, or than the call's end. A
  // successful fsync or fdatasync of file `synced` waited as well for the file's pages queued
  // before it: a request holding only those completed unseen by the same bound.
  void waited_call_end(std::uint32_t tid, SubmitWhy why, Nanos start, Nanos end,
                       std::optional<InodeKey> synced = std::nullopt);
  // Records were lost: every lifetime in flight may have lost its completion. Abandons them
  // all (marked lost_tracking) rather than guess.
  void on_lost();
  // The trace's end found `disk` with no write request in flight at `at`, read once the hooks
  // were detached, on a kernel whose in-flight count drops only after a request's completion
  // event fired: every write lifetime still open there completed unseen, no later than `at`
  // (infer_completion), and a flush sequence still open ended. Call before end_of_trace().
  void write_idle_at_end(DevT disk, Nanos at);
  // The trace ended: requests whose completion was never delivered and that nothing else
  // found out are counted now (once).
  void end_of_trace();
  // Forgets bios and unclaimed state older than `horizon`.
  void sweep(Nanos horizon);

  // The bios queued so far, per thread and per file, for the trackers above.
  const BioHistory& history() const { return recent_; }
  // The read bios queued so far (a traced reader's, in a read call or a page fault: their
  // why and uring_tag say which), per thread and per file. Apart from the write bios: no
  // write, sync or flush rule ever takes a read for its own, nor a read request a write bio.
  const BioHistory& read_history() const { return recent_reads_; }

 private:
  // Empty PREFLUSH write bios a disk queued, and the zero-byte write completions that ended
  // their requests (end_of_trace(): one request each, which diskstats counts).
  struct EmptyWrites {
    std::uint64_t queued = 0;
    std::uint64_t completed = 0;
  };

  void abandon(Request& r);
  void infer_completion(const std::shared_ptr<Request>& r, Nanos at);
  void complete_flush(Request& r, Nanos ts, std::int32_t error);
  void end_flush_sequence(Request& r, Nanos ts);
  std::shared_ptr<Request> lifetime_for_submit(const RequestEvent& ev);
  void claim(const std::shared_ptr<Request>& request, const std::shared_ptr<Bio>& bio);
  // Request `r` claims the pending data bios inside it.
  void claim_data_bios(const std::shared_ptr<Request>& r);
  // Flush request `r` claims its disk's empty PREFLUSH bios queued by `until`.
  void claim_flush_bios(const std::shared_ptr<Request>& r, Nanos until);
  void on_complete(const RequestEvent& ev);
  void on_bio_failed(const RequestEvent& ev);
  void count_write(Request& r, bool in_flush_sequence);
  void count_sequence_end(Request& r);
  void complete_data(const std::shared_ptr<Request>& r, Nanos ts, bool in_flush_sequence = false);
  void trim_nvme_before_issue(Nanos now);
  // A new request lifetime of pointer `rq`, with its serial number.
  std::shared_ptr<Request> new_request(std::uint64_t rq);

  StitchStats& stats_;
  BlockListener& listener_;
  BioQueue queue_;           // bios no request has claimed yet
  RecentBios recent_;        // bios queued so far, for the trackers above
  BioQueue read_queue_;      // read bios no request has claimed yet
  RecentBios recent_reads_;  // read bios queued so far
  std::unordered_map<DevT, EmptyWrites> empty_writes_;
  bool ended_ = false;                                                  // end_of_trace() ran
  std::unordered_map<std::uint64_t, std::shared_ptr<Request>> active_;  // rq pointer -> lifetime
  std::unordered_map<std::uint64_t, NvmeCommand> nvme_before_issue_;    // rq pointer -> command
  std::uint64_t request_ids_ = 0;  // request lifetimes made (Request::id)
};

}  // namespace wp::stitch
