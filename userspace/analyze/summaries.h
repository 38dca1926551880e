// SPDX-License-Identifier: Apache-2.0
// End-of-trace summaries computed from the stitched timelines (pure: timelines in, figures
// out): the fsync phase breakdown, the O_DIRECT verdict and the reads of each file.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/histogram.h"
#include "stitch/timeline.h"

namespace wp {

struct PhaseStats {
  std::uint64_t count = 0;
  Nanos p50 = 0;  // within 1 % of exact (LogLinearHistogram)
  Nanos p99 = 0;
  Nanos max = 0;    // exact
  Nanos total = 0;  // exact
  Log2Histogram histogram;
};

// Per-phase figures of every sync call of the trace (fsync, fdatasync, …), in fixed memory: its
// latency and each of its phases (nearest-rank percentiles).
class SyncPhaseSummary {
 public:
  void add(const SyncTimeline& sync);
  std::uint64_t syncs() const { return latency_.count(); }
  PhaseStats latency() const;
  PhaseStats phase(SyncPhase p) const;

  // What the sinks print: the latency, then each phase in report order.
  struct Row {
    const char* name;      // "latency", "data_io"
    const char* json_key;  // "latency_ns", "data_io_ns"
    PhaseStats stats;
  };
  std::vector<Row> rows() const;

 private:
  LogLinearHistogram latency_;
  std::array<LogLinearHistogram, kSyncPhaseCount> phases_;  // indexed by SyncPhase
};

// Who delayed whom: every sync's neighbours (stitch/neighbours.h), summed per victim process
// and neighbour. A victim is a process (pid) whose syncs waited; a culprit a process and its
// cgroup. The time is each sync's share of latency charged to the neighbour (Neighbour::delay_ns).
class NeighbourSummary {
 public:
  void add(const SyncTimeline& sync);
  struct Row {
    IoOwner culprit;
    std::uint32_t victim_pid = 0;
    std::string victim_comm;
    std::string victim_cgroup;  // its path ("": not known)
    std::uint64_t syncs = 0;    // the victim's syncs that named the culprit
    std::uint64_t bytes = 0;    // the culprit's bytes the disk wrote inside them
    Nanos delay_ns = 0;         // their latency charged to the culprit
  };
  // Most delay first, at most `limit` rows.
  std::vector<Row> rows(std::size_t limit = 10) const;

 private:
  // (victim pid, culprit pid, culprit cgroup id) -> row
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>, Row> rows_;
};

// Does O_DIRECT really bypass the page cache? Per process and file.
struct DirectIoVerdict {
  std::uint32_t pid = 0;
  std::string comm;
  DevT dev = 0;
  std::uint64_t ino = 0;
  std::string path;          // the file's path (from its first write that had one), or empty
  std::uint64_t writes = 0;  // direct writes that wrote something
  std::uint64_t bytes = 0;
  std::uint64_t pages_dirtied = 0;   // expected 0
  std::uint64_t buffered_bytes = 0;  // bytes of direct writes that dirtied pages anyway
  std::uint64_t einval = 0;          // attempts refused for misalignment
  std::uint64_t other_errors = 0;
  bool bypassed() const { return pages_dirtied == 0 && buffered_bytes == 0; }
};

class DirectIoSummary {
 public:
  void add(const WriteTimeline& write);
  std::vector<DirectIoVerdict> verdicts() const;  // ordered by pid, then file

 private:
  std::map<std::tuple<std::uint32_t, DevT, std::uint64_t>, DirectIoVerdict> by_file_;
};

// Where a trace's reads of each file came from: the per-file load summary. The page-cache hit
// ratio has one definition: the share of the pages its buffered reads spanned that its traced
// reads did not bring in, 1 - (pages_from_device + readahead_pages) / pages, at least 0.
// Readahead counts as a miss whether or not a later read used it, as the insertions counted by
// cachestat(2)-style tools do: a cold sequential read scores 0 though most of its calls found
// their pages already brought in by the readahead of the one before, a warm one 1.
struct FileReads {
  DevT dev = 0;
  std::uint64_t ino = 0;
  std::string path;                     // from its first read that had one, or empty
  std::uint64_t reads = 0;              // read calls that returned, failed ones included (no fault)
  std::uint64_t failed = 0;             // of which failed (-errno)
  std::uint64_t bytes = 0;              // bytes the readers got
  std::uint64_t direct_bytes = 0;       // of which read with O_DIRECT, around the page cache
  std::uint64_t pages_from_device = 0;  // pages the buffered reads brought into the cache
  std::uint64_t pages_cached = 0;       // pages they found there
  std::uint64_t readahead_pages = 0;    // pages their readahead brought past what they read
  std::uint64_t sync_readaheads = 0;
  std::uint64_t async_readaheads = 0;
  Nanos latency_ns = 0;         // time in the read calls, summed
  std::uint64_t processes = 0;  // distinct readers (pids)
  // Page faults on mappings of the file, as the kernel counts them (FaultFacts::major); their
  // pages join the page counts above, their time (entry to last page-cache event) is fault_ns.
  std::uint64_t major_faults = 0;
  std::uint64_t minor_faults = 0;
  Nanos fault_ns = 0;
  std::uint64_t fault_pages_in = 0;  // pages the faults brought in: their own and readahead
  // What the items tell of single pages, where the file's pages are followed (the first
  // ReadFileSummary::kPagesFollowed pages of the trace's files): the distinct pages its reads
  // spanned and its faults faulted on, and how many times a page that had come from the device
  // came from it again (a fault that read its page in; a read that brought in every page it
  // spanned): the cache lost it in between. 0 and false where not followed.
  std::uint64_t pages_touched = 0;
  std::uint64_t pages_again = 0;
  bool pages_followed = false;
  // The read requests its reads and faults queued bios in (ReadTimeline::requests), as
  // biosize and biopattern count them: how many, their bytes, sizes in power-of-two buckets
  // (request_sizes[i]: up to 4 KiB << i, the last bucket everything larger), and how many began
  // at the sector where the file's previous request ended (sequential; the rest random, the
  // first request included). device_ns: time with one of them or more at the device (issue to
  // completion, overlaps counted once), so request_bytes / device_ns is what the device
  // delivered while it worked for these readers.
  static constexpr std::size_t kRequestSizeBuckets = 10;  // 4 KiB … 1 MiB, larger
  std::uint64_t read_requests = 0;
  std::uint64_t request_bytes = 0;
  std::uint64_t sequential_requests = 0;
  std::array<std::uint64_t, kRequestSizeBuckets> request_sizes{};
  Nanos device_ns = 0;
  // nullopt when no buffered read spanned a page.
  std::optional<double> hit_ratio() const {
    const std::uint64_t pages = pages_cached + pages_from_device;
    if (pages == 0) return std::nullopt;
    const std::uint64_t misses = std::min(pages, pages_from_device + readahead_pages);
    return 1.0 - static_cast<double>(misses) / static_cast<double>(pages);
  }
};

class ReadFileSummary {
 public:
  // Files kept apart; the reads of any file after them add up in one row of other files
  // (dev 0, ino 0), so that a trace of a walk over a whole tree holds bounded memory.
  static constexpr std::size_t kFilesKept = 4096;

  void add(const ReadTimeline& read);
  // Pages followed one by one (a byte each), over all files: 256 MiB of a 1 TiB load.
  static constexpr std::uint64_t kPagesFollowed = std::uint64_t{1} << 28;

  // Most bytes read first, a fault's pages counted as read (stable: then by device and
  // inode), the other files' row last.
  std::vector<FileReads> files() const;

 private:
  enum PageState : std::uint8_t { kTouched = 1, kFromDevice = 2 };
  // The pages [first, first + count) were touched; came from the device when `from_device`.
  void touch(FileReads& f, std::vector<std::uint8_t>& pages, std::uint64_t first,
             std::uint64_t count, bool from_device);
  // Where a file's last read request ended, when its device was last busy for it, and the
  // requests lately counted (two items share a request when two readers' bios merged).
  struct RequestCursor {
    DevT disk = 0;
    std::uint64_t end_sector = 0;
    Nanos busy_until = 0;
    std::deque<std::tuple<DevT, std::uint64_t, Nanos>> recent;  // (disk, sector, issue)
  };
  void count_requests(FileReads& f, RequestCursor& cursor, const ReadTimeline& read);

  std::map<std::pair<DevT, std::uint64_t>, FileReads> by_file_;
  std::map<std::pair<DevT, std::uint64_t>, std::vector<std::uint8_t>> pages_;  // PageState bits
  std::uint64_t pages_followed_ = 0;
  std::set<std::tuple<DevT, std::uint64_t, std::uint32_t>> readers_;  // (dev, ino, pid)
  std::optional<FileReads> others_;
  std::map<std::pair<DevT, std::uint64_t>, RequestCursor> cursors_;  // others_: key (0, 0)
};

}  // namespace wp
