// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>
#include <unistd.h>

#include "agent/explain/explain.h"
#include "agent/explain/lines.h"
#include "analyze/read_diagnosis.h"
#include "analyze/summaries.h"
#include "common/units.h"

namespace wp::explain {

namespace {

// The ways run in order (lazy, eager, prefetch), each from a cold cache: the lazy way faults
// the file in, the eager one reads it in its main thread, the prefetch one in threads named
// prefetch-N, then faults the tensor from the cache. An item of the file belongs to the way its
// kind and thread say, the ways the load did not run skipped.
enum Way : std::size_t { kLazy, kEager, kPrefetch, kWays };
constexpr const char* kWayNames[kWays] = {"lazy", "eager", "prefetch"};

// "lazy: 513 major, 0 minor faults, 513 pages brought in, 34.1ms in faults, 0 B read in
// calls; the load's own count: 513 major faults, 2.0 MiB from storage", then the way's
// diagnosis lines.
void explain_way(std::vector<std::string>& out, Way way, const ReadFileSummary& items,
                 const nlohmann::ordered_json& figures) {
  const std::vector<FileReads> files = items.files();
  if (files.empty()) {
    out.push_back(fmt::format("{}: the trace has no read or fault of the file", kWayNames[way]));
    return;
  }
  const FileReads& f = files.front();
  out.push_back(fmt::format(
      "{}: {} major, {} minor faults, {} in faults; {}, {} in calls; {} brought in; the "
      "load's own count: {} major faults, {} from storage",
      kWayNames[way], f.major_faults, f.minor_faults, human_duration(f.fault_ns),
      plural(f.reads, "read", "reads"), human_bytes(f.bytes),
      plural(f.pages_from_device + f.readahead_pages, "page", "pages"),
      figures.value("major_faults", std::uint64_t{0}),
      human_bytes(figures.value("read_bytes", std::uint64_t{0}))));
  // The load ran here, under this kernel: its page size is this machine's.
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  for (const ReadFinding& finding : diagnose_reads(files, page))
    out.push_back(fmt::format("  {}: {}", read_finding_name(finding.kind), finding.text));
}

}  // namespace

std::vector<std::string> explain_mmap_load(const loadgen::ScenarioResult& result,
                                           const std::vector<Timeline>& timelines) {
  std::vector<std::string> out;
  std::uint64_t writes = 0, bytes = 0, pages_dirtied = 0, durable = 0;
  for (const auto& item : timelines) {
    const auto* w = std::get_if<WriteTimeline>(&item);
    if (!w || !(w->call.file_flags & file_flag::kRegular)) continue;
    ++writes;
    bytes += bytes_written(w->call);
    pages_dirtied += w->call.pages_dirtied;
    durable += w->state == WriteState::Durable;
  }
  out.push_back(fmt::format(
      "generating the file: {} writes, {}, {} pages dirtied; {} of them durable by the end", writes,
      human_bytes(bytes), pages_dirtied, durable));
  for (const auto& item : timelines)
    if (const auto* sync = std::get_if<SyncTimeline>(&item);
        sync && sync->call.syscall == Syscall::Fsync) {
      out.push_back(fsync_phases_line(*sync));
      out.push_back(fmt::format("its {} data requests, {} cache flushes, {} journal commits",
                                sync->requests.size(), sync->flushes.size(), sync->commits.size()));
    }
  // The loads are reads and faults of the file the load names (its figure "file": through
  // FUSE, the mount's), held beside the load's own counters.
  const auto& f = result.figures;
  const std::string file = f.value("file", "");
  ReadFileSummary ways[kWays];
  std::size_t way = kLazy;
  while (way < kWays && !f.contains(kWayNames[way])) ++way;
  for (const auto& item : timelines) {
    const auto* read = std::get_if<ReadTimeline>(&item);
    if (!read || file.empty() || read->call.path != file || way == kWays) continue;
    const bool prefetcher = read->call.comm.starts_with("prefetch-");
    if (!read->fault && way == kLazy) way = f.contains("eager") ? kEager : kPrefetch;
    if (prefetcher) way = kPrefetch;
    ways[way].add(*read);
  }
  for (std::size_t w = kLazy; w < kWays; ++w)
    if (f.contains(kWayNames[w])) explain_way(out, static_cast<Way>(w), ways[w], f[kWayNames[w]]);
  return out;
}

}  // namespace wp::explain
