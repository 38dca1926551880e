// SPDX-License-Identifier: Apache-2.0
#include "stitch/write_batch.h"

#include <algorithm>

namespace wp::stitch {

WriteTimeline timeline_of(const Batch& b, PendingWrite& w, const LossLog& loss, PageGeometry page,
                          bool snapshot) {
  WriteTimeline tl;
  tl.id = w.seq;
  tl.announced = w.announced;
  SyscallEvent& call = tl.call;
  call.start_ns = w.start_ns;
  call.end_ns = w.end_ns;
  call.pid = b.pid;
  call.tid = b.tid;
  call.comm = b.comm;
  call.path = b.path;
  call.ns_path = b.ns_path;
  call.mnt_ns = b.mnt_ns;
  call.syscall = w.syscall;
  call.via = w.via;
  call.fd = b.fd;
  call.dev = b.dev;
  call.ino = b.ino;
  call.view_dev = b.view_dev;
  call.view_ino = b.view_ino;
  call.cgroup_id = b.cgroup_id;
  call.file_flags = b.file_flags;
  call.call_flags = b.call_flags;
  call.ret = w.ret;
  call.pos = w.pos;
  call.count = w.count;
  call.pages_dirtied = w.pages_dirtied;
  call.dirty_folios = w.dirty_folios;
  if (w.extras) {
    call.throttle_ns = w.extras->throttle_ns;
    call.throttle_events = w.extras->throttle_events;
    call.writeback_waits = w.extras->writeback_waits;
  }
  tl.direct = b.file_flags & file_flag::kDirect;
  tl.sync = b.file_flags & (file_flag::kSync | file_flag::kDsync);
  tl.state = w.state;
  tl.incomplete = w.incomplete || (loss.last() && *loss.last() >= w.start_ns);
  if (b.call_flags & call_flag::kMmapStore) {
    tl.pages = b.mmap_pages;
    tl.pages_pending = w.pages_left;
    tl.store_faults = StoreFaults{w.dirty_folios, b.mmap_whole_folios};
  } else if (b.by_pages) {
    tl.pages = w.last_page(page) - w.first_page(page) + 1;
    tl.pages_pending = w.pages_left;
  } else {
    tl.pages = b.direct_pages;
    tl.pages_pending = b.direct_pages_left;
  }
  tl.requests.reserve(w.requests.size());
  Nanos written = 0;
  Nanos durable = 0;
  for (std::uint32_t i = 0; i < w.requests.size(); ++i) {
    const Request& r = *b.requests[w.requests[i]];
    tl.requests.push_back(r.tl);
    if (uncertain(r)) tl.incomplete = true;
    written = std::max(written, r.tl.complete_ns.value_or(0));
    if (r.tl.durable_ns && *r.tl.durable_ns >= durable) {
      durable = *r.tl.durable_ns;
      tl.durable_via = r.via;
    }
  }
  if (w.state == WriteState::Written || w.state == WriteState::Durable) tl.written_ns = written;
  if (w.state == WriteState::Durable) {
    tl.durable_ns = durable;
  } else {
    tl.durable_via = DurableVia::None;
  }
  if (b.inlined) {
    tl.inline_data = b.inlined->data;
    // Committed with none of the commit's FUA writes seen: on disk by the commit's end.
    if (w.state == WriteState::Durable && w.requests.empty() && b.inlined->data.committed_ns) {
      tl.written_ns = tl.durable_ns = b.inlined->data.committed_ns;
      tl.durable_via = DurableVia::Commit;
    }
  }
  if (w.extras) {
    tl.causes = w.extras->causes;
    tl.throttles = snapshot ? w.extras->throttles : std::move(w.extras->throttles);
  }
  return tl;
}

}  // namespace wp::stitch
