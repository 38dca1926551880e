// SPDX-License-Identifier: Apache-2.0
// The golden cases' Perfetto check: a trace decoded into a summary a person can read and diff,
// instead of the raw text protobuf (interned ids, random uuids and flow ids, a packet per slice
// end). It keeps what the Perfetto sink decides and the importer shows: the clock snapshot, the
// tracks and their parents, each track's slices as the importer nests them, their debug
// annotations, the flows between slices, and any packet that breaks the format's rules (a
// wrong sequence or clock, an unresolved or redefined interned name, an unbalanced slice).
#pragma once

#include <string>

namespace wp::perfetto {
class Trace;
}

namespace wp::golden {

// One line per clock snapshot, track, slice, flow and broken rule; see perfetto_summary.cpp
// for the lines' format.
std::string perfetto_summary(const perfetto::Trace& trace);

}  // namespace wp::golden
