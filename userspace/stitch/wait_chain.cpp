// SPDX-License-Identifier: Apache-2.0
#include "stitch/wait_chain.h"

#include <algorithm>

namespace wp::stitch {

namespace {

bool waits_on_flush(const NamedWait& w) {
  return std::any_of(w.frames.begin(), w.frames.end(), [](const std::string& f) {
    return f.starts_with("blkdev_issue_flush+") || f == "blkdev_issue_flush";
  });
}

}  // namespace

std::vector<RequestTimeline> WaitChains::flushes_of(DevT fs_dev, Nanos start, Nanos end) const {
  std::vector<RequestTimeline> found;
  for (DevT disk : devices_.disks_of(fs_dev))
    for (const FlushRecord* f : durability_.flushes_within(disk, start, end))
      if (f->start >= start) found.push_back(f->request);
  return found;
}

void WaitChains::link(const SyscallEvent& call, std::vector<NamedWait>& waits) const {
  const DevT fs_dev = call.fs_dev != 0 ? call.fs_dev : call.dev;
  if (fs_dev == 0) return;
  const Nanos start = call.start_ns;
  const Nanos end = call_end(call);
  for (NamedWait& w : waits) {
    // The sleep began at or after the call's start and lasted longest_ns, so what woke it
    // ended no earlier than start + longest_ns (the records carry no sleep's own start).
    const Nanos earliest_wake = std::min(start + w.longest_ns, end);
    if (w.cause == WaitCause::JournalCommit || w.cause == WaitCause::JournalSpace) {
      // The commit it waited on: jbd2 wakes the waiters after the commit's end (the
      // jbd2_end_commit tracepoint comes first, then the wake_up, then the call returns), so
      // it is the last commit of the file's device to end inside the call; if none ended, the
      // one still running. A journal commits its transactions one at a time.
      const std::vector<JournalCommit> commits = journal_.overlapping(fs_dev, start, end);
      const JournalCommit* waited = nullptr;
      for (const JournalCommit& c : commits) {
        if (c.end_ns && *c.end_ns > end) continue;
        if (!c.end_ns) {
          if (!waited) waited = &c;
          continue;
        }
        if (!waited || !waited->end_ns || *waited->end_ns <= *c.end_ns) waited = &c;
      }
      if (waited) {
        w.chain.commit = *waited;
        const Nanos commit_start = first_known(*waited).value_or(start);
        w.chain.flushes = flushes_of(fs_dev, commit_start, waited->end_ns.value_or(end));
      }
    } else if (w.cause == WaitCause::DeviceIo && waits_on_flush(w)) {
      // Its own cache flush (blkdev_issue_flush → submit_bio_wait): among the flushes of its
      // disks issued inside the call and completing at or after the earliest wake, the one its
      // thread submitted, else the first.
      // Its own thread's flush when the flush says who submitted it.
      std::vector<RequestTimeline> candidates;
      for (RequestTimeline& f : flushes_of(fs_dev, start, end))
        if (!f.complete_ns || *f.complete_ns >= earliest_wake) candidates.push_back(std::move(f));
      auto own = std::find_if(candidates.begin(), candidates.end(),
                              [&](const RequestTimeline& f) { return f.submit_tid == call.tid; });
      if (own != candidates.end()) {
        w.chain.flushes.push_back(std::move(*own));
      } else if (!candidates.empty()) {
        w.chain.flushes.push_back(std::move(candidates.front()));
      }
    }
  }
}

}  // namespace wp::stitch
