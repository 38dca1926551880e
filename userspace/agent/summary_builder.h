// SPDX-License-Identifier: Apache-2.0
// What a trace's summary says that no event carries: the kernel's counts read once the hooks
// are detached (write requests and bystanders' data the filters kept out, untraced calls, what
// the programs cost, the disks with no write in flight), or a trace file's copies of them, and
// the hint a command draws from what it saw. The session collects them here; the pipeline
// completes the summary of its events with them at its end.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/program_cost.h"
#include "record/trace_file.h"
#include "sinks/sink.h"

namespace wp {

class SummaryBuilder {
 public:
  // Write requests the kernel kept out of a filtered trace: the disks' totals count them.
  void add_filtered_requests(const FilteredRequestsByDisk& totals) {
    for (const auto& [dev, t] : totals) add(filtered_requests_[dev], t);
  }
  // Data bios the kernel kept out of traced disks, by owner: each owner's bytes count them.
  void add_filtered_io(const std::vector<FilteredIo>& owners) {
    filtered_io_.insert(filtered_io_.end(), owners.begin(), owners.end());
  }
  const std::vector<FilteredIo>& filtered_io() const { return filtered_io_; }
  // The untraced calls the kernel counted, by name.
  void set_untraced_calls(std::map<std::string, std::uint64_t> counts) {
    untraced_calls_ = std::move(counts);
  }
  // What the BPF programs cost, as the kernel counted it.
  void set_bpf_cost(BpfCost cost) { bpf_cost_ = std::move(cost); }
  // What the trace likely missed and how to see it ("" for nothing).
  void set_hint(std::string hint) { hint_ = std::move(hint); }
  // What the plan's syscall tracepoints cost the machine ("" for a plan without them).
  void set_slow_syscall_path(std::string text) { slow_syscall_path_ = std::move(text); }
  // The disks found with no write request in flight once the hooks were detached: the
  // pipeline's stitcher completes the write requests still open there before its end.
  void set_write_idle_disks(WriteIdleDisks idle) { write_idle_disks_ = std::move(idle); }
  const std::optional<WriteIdleDisks>& write_idle_disks() const { return write_idle_disks_; }

  // Adds these facts to the summary of the events.
  void complete(TraceSummary& summary) const {
    for (const auto& [dev, t] : filtered_requests_) add(summary.disks[dev], t);
    summary.untraced_calls = untraced_calls_;
    summary.bpf_cost = bpf_cost_;
    summary.hint = hint_;
    summary.slow_syscall_path = slow_syscall_path_;
  }

 private:
  // A disk's totals (DiskTotals, FilteredRequestTotals) plus the requests kept out of it.
  static void add(auto& totals, const FilteredRequestTotals& kept_out) {
    totals.write_requests += kept_out.write_requests;
    totals.write_bytes += kept_out.write_bytes;
    totals.flush_requests += kept_out.flush_requests;
  }

  FilteredRequestsByDisk filtered_requests_;
  std::vector<FilteredIo> filtered_io_;
  std::map<std::string, std::uint64_t> untraced_calls_;
  std::optional<BpfCost> bpf_cost_;
  std::string hint_;
  std::string slow_syscall_path_;
  std::optional<WriteIdleDisks> write_idle_disks_;
};

}  // namespace wp
