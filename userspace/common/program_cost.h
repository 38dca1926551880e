// SPDX-License-Identifier: Apache-2.0
// What the trace's BPF programs cost the machine, from the kernel's own counters: each
// program's runs and the time spent in it, which the kernel keeps while
// kernel.bpf_stats_enabled is 1 (what bpftop shows). The agent reads them at the end of a
// trace; the summary shows them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/nanos.h"

namespace wp {

struct ProgramCost {
  std::string name;
  std::uint64_t runs = 0;
  Nanos ns = 0;  // time inside the program, its helpers included
};

struct BpfCost {
  std::vector<ProgramCost> programs;  // those that ran, most time first
  unsigned cpus = 0;                  // online CPUs, for the share of the machine
  // From the programs' attach to the read of their counters: the time they ran in, which is
  // longer than the trace (attaching takes seconds on a busy machine, and every program runs
  // for every process from its attach on). 0: not known, the trace's duration stands in.
  Nanos window_ns = 0;
  Nanos share_window(Nanos trace_duration) const { return window_ns ? window_ns : trace_duration; }
  Nanos total_ns() const {
    Nanos total = 0;
    for (const auto& p : programs) total += p.ns;
    return total;
  }
};

}  // namespace wp
