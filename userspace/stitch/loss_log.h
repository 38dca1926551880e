// SPDX-License-Identifier: Apache-2.0
// Where records were lost, as the dispatcher learns it from LostEvents: items pending across a
// loss are incomplete. The dispatcher owns it; the trackers that make items read it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <deque>
#include <optional>

#include "stitch/io_state.h"

namespace wp::stitch {

// The times are kept sorted (they come in time order; one that does not is put in its place),
// so whether a call spans a loss is a binary search, however many losses the history window
// holds.
class LossLog {
 public:
  void add(Nanos ts) {
    times_.insert(std::upper_bound(times_.begin(), times_.end(), ts), ts);
    last_ = std::max(last_.value_or(0), ts);
  }
  bool within(Nanos start, Nanos end) const {
    const auto first = std::lower_bound(times_.begin(), times_.end(), start);
    return first != times_.end() && *first <= end;
  }
  std::size_t size() const { return times_.size(); }
  const std::optional<Nanos>& last() const { return last_; }
  void sweep(Nanos horizon) {
    prune_older(times_, horizon, [](Nanos t) { return t; });
  }

 private:
  std::deque<Nanos> times_;
  std::optional<Nanos> last_;  // never swept: pending writes read it at emission
};

}  // namespace wp::stitch
