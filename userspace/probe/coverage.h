// SPDX-License-Identifier: Apache-2.0
// What a trace stitches on this kernel, per way of writing a file and per file system: decided
// from the hook plan and the kernel's facts by rules defined once (coverage.cpp), printed by
// doctor and checked by tests/unit/coverage_test.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "decode/syscalls.h"
#include "probe/hook_plan.h"
#include "probe/kernel_facts.h"

namespace wp {

enum class CoverageStatus { Stitched, Partial, NotTraced };
// "stitched", "partial", "not traced".
const char* coverage_status_name(CoverageStatus status);

struct CoverageRow {
  std::string what;  // "pwrite64", "io_uring write/fsync ops", "ext4 (jbd2)"
  CoverageStatus status;
  std::string detail;  // how it is served, what is missing, or why it is not traced

  bool operator==(const CoverageRow&) const = default;
};

struct Coverage {
  std::vector<CoverageRow> write_paths;
  std::vector<CoverageRow> file_systems;
};

Coverage coverage_of(const HookPlan& plan, const KernelFacts& facts);

// The kernel's counts of the untraced calls, marked with the calls whose counter is in the
// plan (a count without its counter is not kept).
UntracedTally untraced_tally(const HookPlan& plan, const UntracedCounts& counts);

}  // namespace wp
