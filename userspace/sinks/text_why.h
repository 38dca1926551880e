// SPDX-License-Identifier: Apache-2.0
// The text output's `why` lines: under a slow call's `causes` line, one line per cause the
// stitcher named (stitch/timeline.h NamedWait), the top frames of its longest sleep, and for a
// wait on a journal commit the commit and its flushes' device time.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sinks/sink.h"

namespace wp {

// The lines for `causes` (none without named waits), without the block's indent; `origin` is
// the call's start (times are offsets from it); each line fits in `width` columns where its
// parts allow (a single name longer than that is not cut).
std::vector<std::string> why_lines(const SlowCauses& causes, Nanos origin, std::size_t width);

// What the why lines say, for the legend: printed once per output, before the first of them.
std::string format_why_legend();

}  // namespace wp
