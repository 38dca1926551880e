// SPDX-License-Identifier: Apache-2.0
// Where a load's time went, in the chapter's terms ("a slow model load: where to look"): one
// finding per line, each with its evidence, from the per-file read summary alone (pure).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/summaries.h"

namespace wp {

enum class ReadFindingKind : std::uint8_t {
  // Storage: what a file's cold pages cost, bytes from the device over the time its readers
  // spent reading and faulting.
  ColdStorage,
  // Faults each of which brought in about one page: the storage answered every fault alone,
  // as mmap over FUSE or network storage does when its readahead is a page.
  PagePerPageFaults,
  // Pages that came from the device again after an earlier read had brought them in.
  ReadAgain,
  // Readahead brought in pages no read touched by the trace's end.
  ReadaheadUnused,
};

// Its name in the outputs: "cold-storage", "page-per-page-faults", "read-again",
// "readahead-unused".
const char* read_finding_name(ReadFindingKind kind);

struct ReadFinding {
  ReadFindingKind kind;
  DevT dev = 0;
  std::uint64_t ino = 0;
  std::string path;  // empty when no record named the file
  std::string text;  // the finding and its evidence, one sentence: "512 major faults brought…"
};

// The findings of `files` (ReadFileSummary::files(): the other files' row is skipped), in
// their order, a file's in ReadFindingKind order. `page_bytes`: the traced kernel's page size.
std::vector<ReadFinding> diagnose_reads(const std::vector<FileReads>& files,
                                        std::uint64_t page_bytes);

}  // namespace wp
