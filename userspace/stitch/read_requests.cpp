// SPDX-License-Identifier: Apache-2.0
#include "stitch/read_requests.h"

#include <algorithm>

namespace wp::stitch {

void ReadRequestTracker::add(ReadTimeline&& item, Nanos start, Nanos now, const Out& out) {
  Held h{std::move(item), {}, now + kMaxWaitNs};
  if (const auto* bios = reads_.bios_of_thread(h.item.call.tid)) {
    const std::uint32_t tag = uring_tag_of(start);
    // The thread's read bios are in queue order: the item's are from `start` on.
    auto first = bios->end();
    while (first != bios->begin() && (*std::prev(first))->ev.ts >= start) --first;
    for (auto b = first; b != bios->end(); ++b)
      if ((*b)->ev.uring_tag == tag) h.bios.push_back(*b);
  }
  if (h.bios.empty()) {
    out(std::move(h.item));
    return;
  }
  if (settled(h)) {
    take_requests(h);
    out(std::move(h.item));
    return;
  }
  held_.push_back(std::move(h));
}

void ReadRequestTracker::progress(Nanos now, const Out& out) {
  // Each goes out as soon as its own requests are done: an item never waits for another's.
  // Deadlines grow in arrival order, so the front's is the earliest (expire()).
  for (auto it = held_.begin(); it != held_.end();) {
    if (!settled(*it) && now < it->deadline) {
      ++it;
      continue;
    }
    Held h = std::move(*it);
    it = held_.erase(it);
    take_requests(h);
    out(std::move(h.item));
  }
}

void ReadRequestTracker::finish(const Out& out) {
  while (!held_.empty()) {
    Held h = std::move(held_.front());
    held_.pop_front();
    take_requests(h);
    out(std::move(h.item));
  }
}

// Every bio is in a request whose transfer ended (or whose lifetime was given up: records
// were lost around it).
bool ReadRequestTracker::settled(const Held& h) {
  return std::all_of(h.bios.begin(), h.bios.end(), [](const std::shared_ptr<Bio>& b) {
    return b->request && (b->request->data_done || b->request->lost_tracking);
  });
}

// The requests of the item's bios, each once, in the order they were issued.
void ReadRequestTracker::take_requests(Held& h) {
  std::vector<const Request*> seen;
  for (const std::shared_ptr<Bio>& b : h.bios) {
    const Request* r = b->request.get();
    if (!r || std::find(seen.begin(), seen.end(), r) != seen.end()) continue;
    seen.push_back(r);
    h.item.requests.push_back(r->tl);
  }
  std::stable_sort(h.item.requests.begin(), h.item.requests.end(),
                   [](const RequestTimeline& a, const RequestTimeline& b) {
                     return a.issue_ns.value_or(0) < b.issue_ns.value_or(0);
                   });
  h.bios.clear();
}

}  // namespace wp::stitch
