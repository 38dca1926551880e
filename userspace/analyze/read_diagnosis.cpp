// SPDX-License-Identifier: Apache-2.0
#include "analyze/read_diagnosis.h"

#include <fmt/format.h>

#include "common/units.h"

namespace wp {
namespace {

// Below these a finding is noise: a library's few pages, a config file's one readahead.
constexpr std::uint64_t kColdPages = 256;          // 1 MiB of 4 KiB pages from the device
constexpr std::uint64_t kPagePerPageFaults = 64;   // major faults
constexpr std::uint64_t kPagesPerFaultAtMost = 2;  // pages brought in per major fault
constexpr std::uint64_t kReadAgainPages = 16;
constexpr std::uint64_t kUnusedPages = 256;

}  // namespace

const char* read_finding_name(ReadFindingKind kind) {
  switch (kind) {
    case ReadFindingKind::ColdStorage: return "cold-storage";
    case ReadFindingKind::PagePerPageFaults: return "page-per-page-faults";
    case ReadFindingKind::ReadAgain: return "read-again";
    case ReadFindingKind::ReadaheadUnused: return "readahead-unused";
  }
  return "?";
}

std::vector<ReadFinding> diagnose_reads(const std::vector<FileReads>& files,
                                        std::uint64_t page_bytes) {
  std::vector<ReadFinding> out;
  for (const FileReads& f : files) {
    if (f.dev == 0 && f.ino == 0) continue;  // the other files' row: no one file's finding
    const auto say = [&](ReadFindingKind kind, std::string text) {
      out.push_back({kind, f.dev, f.ino, f.path, std::move(text)});
    };
    const std::uint64_t brought_in = f.pages_from_device + f.readahead_pages;
    const Nanos waited = f.latency_ns + f.fault_ns;
    if (brought_in >= kColdPages && waited != 0) {
      std::string text =
          fmt::format("{} read from storage in {} of reads and faults: {} while its readers waited",
                      human_bytes(brought_in * page_bytes), human_duration(waited),
                      human_rate(brought_in * page_bytes, waited));
      // What the device did for them, from their requests: its rate while it worked for them
      // beside the readers' says whether the time went to the device or around it.
      if (f.read_requests != 0 && f.device_ns != 0)
        text += fmt::format("; its {} ({} on average, {:.0f} % sequential) ran at {} at the device",
                            plural(f.read_requests, "request", "requests"),
                            human_bytes(f.request_bytes / f.read_requests),
                            100.0 * static_cast<double>(f.sequential_requests) /
                                static_cast<double>(f.read_requests),
                            human_rate(f.request_bytes, f.device_ns));
      say(ReadFindingKind::ColdStorage, std::move(text));
    }
    if (f.major_faults >= kPagePerPageFaults &&
        f.fault_pages_in <= kPagesPerFaultAtMost * f.major_faults)
      say(ReadFindingKind::PagePerPageFaults,
          fmt::format("{} major faults brought in {} ({:.1f} per fault) in {}: the storage "
                      "answered each fault alone (mmap over FUSE or network storage without "
                      "readahead); read it whole (eager) or prefetch it before mapping",
                      f.major_faults, plural(f.fault_pages_in, "page", "pages"),
                      static_cast<double>(f.fault_pages_in) / static_cast<double>(f.major_faults),
                      human_duration(f.fault_ns)));
    if (f.pages_again >= kReadAgainPages)
      say(ReadFindingKind::ReadAgain,
          fmt::format("{} came from the device again after an earlier read had brought them "
                      "in: the page cache lost them in between (reclaim, drop_caches or "
                      "POSIX_FADV_DONTNEED)",
                      plural(f.pages_again, "page", "pages")));
    // Faults hide what fault-around mapped, so only a file read by calls alone tells which of
    // its pages were touched. At least: a page brought in twice is counted once.
    if (f.pages_followed && f.major_faults + f.minor_faults == 0) {
      const std::uint64_t once = brought_in > f.pages_again ? brought_in - f.pages_again : 0;
      const std::uint64_t unused = once > f.pages_touched ? once - f.pages_touched : 0;
      if (unused >= kUnusedPages && unused * 4 >= brought_in)
        say(ReadFindingKind::ReadaheadUnused,
            fmt::format("at least {} of the {} brought in ({}) were never read by the trace's "
                        "end: readahead past what the readers wanted (read_ahead_kb, "
                        "POSIX_FADV_RANDOM for random readers)",
                        plural(unused, "page", "pages"), brought_in,
                        human_bytes(unused * page_bytes)));
    }
  }
  return out;
}

}  // namespace wp
