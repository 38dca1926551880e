// SPDX-License-Identifier: Apache-2.0
// The text sink's summary: the trace's counts and losses, the fsync phase table and its
// histograms, the O_DIRECT verdicts and what the BPF programs cost.
#include "sinks/text_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "common/units.h"
#include "sinks/text_painter.h"
#include "sinks/text_sink.h"  // printable_comm

namespace wp {
namespace {

// "name count, name count" of the non-zero counts, "" when there are none.
std::string nonzero_counts(const std::map<std::string, std::uint64_t>& counts) {
  std::vector<std::string> parts;
  for (const auto& [name, count] : counts)
    if (count != 0) parts.push_back(fmt::format("{} {}", name, count));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::string format_summary(const TraceSummary& totals, const SinkOptions& options) {
  const Painter paint(options.color);
  std::string first =
      fmt::format("{}  writes {}  fsyncs {}", paint.bold("summary"), totals.writes, totals.fsyncs);
  // Reads are items only where the trace asked for them: a write trace's line stays as it was.
  if (totals.reads != 0) first += fmt::format("  reads {}", totals.reads);
  if (totals.faults != 0) first += fmt::format("  faults {}", totals.faults);
  first += fmt::format("  incomplete {}", totals.incomplete);
  if (totals.discarded != 0) first += fmt::format("  discarded {}", totals.discarded);
  if (totals.memory_only != 0) first += fmt::format("  memory-only {}", totals.memory_only);
  if (totals.lost_writes != 0)
    first +=
        fmt::format("  LOST {} writes ({})", totals.lost_writes, human_bytes(totals.lost_bytes));
  if (totals.aged_out != 0 || totals.evicted != 0) {
    std::vector<std::string> early;
    if (totals.aged_out != 0) early.push_back(fmt::format("{} aged out", totals.aged_out));
    if (totals.evicted != 0) early.push_back(fmt::format("{} evicted", totals.evicted));
    first += fmt::format(" ({})", fmt::join(early, ", "));
  }
  first += fmt::format("  duration {}", human_duration(totals.duration_ns));

  std::string lost = fmt::format("lost {}", totals.lost);
  const std::string by_hook = nonzero_counts(totals.lost_by_hook);
  if (!by_hook.empty()) lost += fmt::format(" ({})", by_hook);
  if (totals.lost != 0) lost = paint.red(lost);
  if (totals.missed_completions != 0)
    lost += paint.red(
        fmt::format("  completions not delivered by the kernel {}", totals.missed_completions));
  // "records": what the kernel sent (calls, pages, bios, requests, commits), most of it
  // stitched into the items above; "lost": those the ring buffer had no room for.
  std::string text =
      fmt::format("{}\n         kernel records {}  {}\n", first, totals.events, lost);
  if (const std::string untraced = nonzero_counts(totals.untraced_calls); !untraced.empty())
    text += paint.red("not stitched: " + untraced) +
            " (calls that write by ways the trace does not follow; writepath doctor: coverage)\n";
  if (const std::string hazards = nonzero_counts(totals.hazards); !hazards.empty())
    text += paint.red("crash-consistency hazards: " + hazards) +
            " (the items' HAZARD lines say why; docs/guide/hazards.md)\n" +
            fmt::format("         by process: {}\n", nonzero_counts(totals.hazards_by_process)) +
            (totals.hazards_by_file.empty()
                 ? std::string()
                 : fmt::format("         by file: {}\n", nonzero_counts(totals.hazards_by_file)));
  text += format_sync_phases(totals.sync_phases, options);
  text += format_neighbours(totals, options);
  text += format_direct_io(totals.direct_io, options);
  text += format_read_files(totals.read_files, options);
  text += format_read_findings(totals.read_findings, options);
  if (totals.bpf_cost) text += format_bpf_cost(*totals.bpf_cost, totals, options);
  if (!totals.slow_syscall_path.empty())
    text += fmt::format("{} {}\n", paint.bold("syscall tracepoints:"), totals.slow_syscall_path);
  if (!totals.hint.empty()) text += fmt::format("{} {}\n", paint.bold("hint:"), totals.hint);
  return text;
}

// Who delayed whom: one line per victim and neighbour, most delay first, then what each
// process wrote to the disks (the neighbours' own totals, to hold against their counters).
// Nothing when no sync waited behind another process.
std::string format_neighbours(const TraceSummary& totals, const SinkOptions& options) {
  if (totals.neighbours.empty()) return "";
  const Painter paint(options.color);
  std::string text = paint.bold("who delayed whom") + " (the syncs' neighbours)\n";
  for (const NeighbourSummary::Row& row : totals.neighbours)
    text += fmt::format("  {} behind {} of {} (pid {}): {} during them, {} of their time\n",
                        owner_text(row.culprit),
                        row.syncs == 1 ? "1 sync" : fmt::format("{} syncs", row.syncs),
                        printable_comm(row.victim_comm), row.victim_pid, human_bytes(row.bytes),
                        human_duration(row.delay_ns));
  std::vector<std::string> by_process;
  for (const OwnerIo& io : totals.io_by_process)
    by_process.push_back(fmt::format("{} {} on {}", owner_text(io.owner), human_bytes(io.bytes),
                                     dev_string(io.disk)));
  if (!by_process.empty())
    text += fmt::format("  written by process: {}\n", fmt::join(by_process, "; "));
  return text;
}

// The programs' cost as the kernel counted it: in all, as a share of the machine, per item
// traced, and the three that took most.
std::string format_bpf_cost(const BpfCost& cost, const TraceSummary& totals,
                            const SinkOptions& options) {
  const Painter paint(options.color);
  const Nanos total = cost.total_ns();
  const double machine =
      static_cast<double>(cost.share_window(totals.duration_ns)) * std::max(cost.cpus, 1u);
  std::uint64_t runs = 0;
  for (const auto& p : cost.programs) runs += p.runs;
  std::string text = fmt::format(
      "{} {} in {} runs ({:.2f} % of {} CPUs)", paint.bold("bpf cost"), human_duration(total), runs,
      machine > 0 ? 100.0 * static_cast<double>(total) / machine : 0.0, cost.cpus);
  if (const std::uint64_t items = totals.writes + totals.fsyncs + totals.reads + totals.faults)
    text += fmt::format(", {} per item", human_duration(total / items));
  std::vector<std::string> top;
  for (std::size_t i = 0; i < cost.programs.size() && i < 3; ++i) {
    const auto& p = cost.programs[i];
    top.push_back(fmt::format("{} {}/run", p.name, human_duration(p.runs ? p.ns / p.runs : 0)));
  }
  if (!top.empty()) text += fmt::format("; most: {}", fmt::join(top, ", "));
  return text + "\n";
}

std::string format_sync_phases(const SyncPhaseSummary& phases, const SinkOptions& options) {
  if (phases.syncs() == 0) return "";
  const Painter paint(options.color);
  std::vector<SyncPhaseSummary::Row> rows = phases.rows();
  // A phase that took no time in any call (journal on a file system without one) is no row.
  std::erase_if(rows, [](const SyncPhaseSummary::Row& row) { return row.stats.max == 0; });
  if (phases.syncs() == 1) {
    // One call: its figures, not percentiles and histograms of one sample.
    std::string text = paint.bold("fsync phases") + " (1 call)";
    for (const auto& [name, json_key, s] : rows)
      text += fmt::format("  {} {}", name, human_duration(s.total));
    return text + "\n";
  }
  std::string text = fmt::format("{} ({} calls)\n", paint.bold("fsync phases"), phases.syncs());
  text += fmt::format("  {:<10} {:>10} {:>10} {:>10} {:>10}\n", "", "p50", "p99", "max", "total");
  for (const auto& [name, json_key, s] : rows) {
    text += fmt::format("  {:<10} {:>10} {:>10} {:>10} {:>10}\n", name, human_duration(s.p50),
                        human_duration(s.p99), human_duration(s.max), human_duration(s.total));
  }
  // One log2 histogram per phase, as biolatency draws them: only the buckets in use.
  for (const auto& [name, json_key, s] : rows) {
    const auto& buckets = s.histogram.buckets;
    std::size_t lo = buckets.size(), hi = 0;
    std::uint64_t peak = 0;
    for (std::size_t b = 0; b < buckets.size(); ++b)
      if (buckets[b]) {
        lo = std::min(lo, b);
        hi = b;
        peak = std::max(peak, buckets[b]);
      }
    if (lo > hi || s.histogram.count() < 2) continue;
    text += fmt::format("  {} histogram\n", name);
    for (std::size_t b = lo; b <= hi; ++b) {
      const Nanos from = b == 0 ? 0 : Nanos{1} << b;
      const Nanos to = b + 1 >= 64 ? ~Nanos{0} : (Nanos{1} << (b + 1)) - 1;
      const int width = static_cast<int>(30 * buckets[b] / peak);
      text += fmt::format("    {:>9} .. {:<9} {:>6} |{:<30}|\n", human_duration(from),
                          human_duration(to), buckets[b], std::string(width, '*'));
    }
  }
  return text;
}

std::string format_direct_io(const DirectIoSummary& direct, const SinkOptions& options) {
  auto verdicts = direct.verdicts();
  if (verdicts.empty()) return "";
  const Painter paint(options.color);
  std::string text = paint.bold("O_DIRECT") + "\n";
  for (const auto& v : verdicts) {
    std::string verdict =
        v.bypassed()
            ? paint.green("bypassed the page cache")
            : paint.red(fmt::format("{} through the page cache", human_bytes(v.buffered_bytes)));
    const std::string file = v.path.empty() ? fmt::format("dev {} ino {}", dev_string(v.dev), v.ino)
                                            : printable_comm(v.path);
    text += fmt::format("  pid {} ({}) {}: {} writes, {}, {} pages dirtied: {}", v.pid,
                        printable_comm(v.comm), file, v.writes, human_bytes(v.bytes),
                        v.pages_dirtied, verdict);
    if (v.einval) text += fmt::format("; {} refused with EINVAL (misaligned)", v.einval);
    if (v.other_errors) text += fmt::format("; {} other errors", v.other_errors);
    text += "\n";
  }
  return text;
}

// "diagnosis": one line per finding, "  /models/m.safetensors: page-per-page-faults: 4096 major
// faults brought in …".
std::string format_read_findings(const std::vector<ReadFinding>& findings,
                                 const SinkOptions& options) {
  if (findings.empty()) return "";
  const Painter paint(options.color);
  std::string text = paint.bold("diagnosis") + "\n";
  for (const ReadFinding& f : findings) {
    const std::string file = f.path.empty() ? fmt::format("dev {} ino {}", dev_string(f.dev), f.ino)
                                            : printable_comm(f.path);
    text += fmt::format("  {}: {}: {}\n", file, read_finding_name(f.kind), f.text);
  }
  return text;
}

// "reads by file": the files that gave most bytes, each with where its pages came from.
std::string format_read_files(const ReadFileSummary& reads, const SinkOptions& options) {
  constexpr std::size_t kShown = 10;
  const std::vector<FileReads> files = reads.files();
  if (files.empty()) return "";
  const Painter paint(options.color);
  std::string text = paint.bold("reads by file") + "\n";
  for (std::size_t i = 0; i < files.size() && i < kShown; ++i) {
    const FileReads& f = files[i];
    const std::string file = f.ino == 0 && f.dev == 0 ? std::string("(other files)")
                             : f.path.empty()
                                 ? fmt::format("dev {} ino {}", dev_string(f.dev), f.ino)
                                 : printable_comm(f.path);
    // A file only faulted on (a mapping) says so first; its reads, if any, as for any file.
    const bool faults = f.major_faults != 0 || f.minor_faults != 0;
    text += fmt::format("  {}: ", file);
    if (f.reads != 0 || !faults)
      text += fmt::format("{}, {}", plural(f.reads, "read", "reads"), human_bytes(f.bytes));
    else
      text += fmt::format("{} major, {} minor faults", f.major_faults, f.minor_faults);
    if (const std::optional<double> hit = f.hit_ratio())
      text +=
          fmt::format(": {} from the device, {} cached (hit {:.1f} %)",
                      plural(f.pages_from_device, "page", "pages"), f.pages_cached, 100.0 * *hit);
    if (f.direct_bytes != 0) text += fmt::format(", {} direct", human_bytes(f.direct_bytes));
    if (f.sync_readaheads != 0 || f.async_readaheads != 0)
      text += fmt::format("; readahead {} sync, {} async, {} past the reads", f.sync_readaheads,
                          f.async_readaheads, plural(f.readahead_pages, "page", "pages"));
    else if (f.readahead_pages != 0)
      text += fmt::format("; readahead {}", plural(f.readahead_pages, "page", "pages"));
    if (f.failed != 0) text += paint.red(fmt::format("; {} failed", f.failed));
    if (f.reads != 0 || !faults) text += fmt::format("; {} in reads", human_duration(f.latency_ns));
    if (faults && f.reads != 0)
      text += fmt::format("; faults {} major, {} minor", f.major_faults, f.minor_faults);
    if (faults) text += fmt::format("; at least {} in faults", human_duration(f.fault_ns));
    if (f.read_requests != 0) {
      text += fmt::format("; {} of {} on average, {:.0f} % sequential",
                          plural(f.read_requests, "request", "requests"),
                          human_bytes(f.request_bytes / f.read_requests),
                          100.0 * static_cast<double>(f.sequential_requests) /
                              static_cast<double>(f.read_requests));
      if (f.device_ns != 0)
        text +=
            fmt::format(", the device at {} while busy", human_rate(f.request_bytes, f.device_ns));
    }
    text += "\n";
  }
  if (const std::size_t more = files.size() > kShown ? files.size() - kShown : 0)
    text +=
        fmt::format("  and {} more {} (JSON: read_files)\n", more, more == 1 ? "file" : "files");
  return text;
}

}  // namespace wp
