// SPDX-License-Identifier: Apache-2.0
// Read requests tracker: a read item (a read call or a page fault) holds the read requests its
// bios went in (ReadTimeline::requests). Its record comes at the call's end, or at the thread's
// next fault, often before the readahead it started has reached a request or completed: the item
// waits here until every bio its thread queued for it (by the bio's tag) is in a request that
// completed, or until kMaxWaitNs of event time have passed (a completion the kernel did not
// deliver), or the trace ends. An item with no bio leaves at once. Tests:
// tests/unit/read_requests_test.cpp.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "stitch/io_state.h"

namespace wp::stitch {

class ReadRequestTracker {
 public:
  using Out = std::function<void(ReadTimeline&&)>;
  // Readahead a read started goes to the device within milliseconds; a request still open this
  // long after its item's record had its completion event lost.
  static constexpr Nanos kMaxWaitNs = 2'000'000'000ull;

  explicit ReadRequestTracker(const BioHistory& reads) : reads_(reads) {}

  // `item`, whose record came at `now`, and whose bios its thread queued from `start` on with
  // the tag of `start`: out now if they are all in completed requests (or it has none), else
  // held.
  void add(ReadTimeline&& item, Nanos start, Nanos now, const Out& out);
  // Held items whose requests have all completed, or that waited kMaxWaitNs by `now`, go out
  // (items leave out of order, as writes do: a cached read never waits for another's readahead).
  // Call after a request event: only a completion settles an item.
  void progress(Nanos now, const Out& out);
  // Held items that waited kMaxWaitNs by `now` go out; a comparison when none is due, for
  // every event.
  void expire(Nanos now, const Out& out) {
    if (!held_.empty() && now >= held_.front().deadline) progress(now, out);
  }
  // The trace ended: every held item goes out as its requests are now.
  void finish(const Out& out);
  bool holding() const { return !held_.empty(); }

 private:
  struct Held {
    ReadTimeline item;
    std::vector<std::shared_ptr<Bio>> bios;
    Nanos deadline = 0;
  };
  static bool settled(const Held& h);
  static void take_requests(Held& h);

  const BioHistory& reads_;
  std::deque<Held> held_;
};

}  // namespace wp::stitch
