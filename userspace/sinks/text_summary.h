// SPDX-License-Identifier: Apache-2.0
// The text sink's summary at the end of a trace, as blocks each ending in '\n' (empty when
// there is nothing to say). Exposed for tests.
#pragma once

#include <string>

#include "sinks/sink.h"

namespace wp {

std::string format_summary(const TraceSummary& totals, const SinkOptions& options);
std::string format_sync_phases(const SyncPhaseSummary& phases, const SinkOptions& options);
std::string format_neighbours(const TraceSummary& totals, const SinkOptions& options);
std::string format_bpf_cost(const BpfCost& cost, const TraceSummary& totals,
                            const SinkOptions& options);
std::string format_direct_io(const DirectIoSummary& direct, const SinkOptions& options);
std::string format_read_files(const ReadFileSummary& reads, const SinkOptions& options);
std::string format_read_findings(const std::vector<ReadFinding>& findings,
                                 const SinkOptions& options);

}  // namespace wp
