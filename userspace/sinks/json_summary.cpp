// SPDX-License-Identifier: Apache-2.0
// The JSON Lines object of the end-of-trace summary.
#include <fmt/format.h>

#include <string>

#include "sinks/json_emitter.h"

namespace wp::jsonl {
namespace {

// log2 buckets as {"lower bound ns": count}, non-empty ones only.
struct NonEmptyBuckets {
  const Log2Histogram& histogram;
};

void write_json(Emitter& e, const NonEmptyBuckets& b) {
  e.start_object();
  const auto& buckets = b.histogram.buckets;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    if (!buckets[i]) continue;
    e.key_text(std::to_string(i == 0 ? 0 : Nanos{1} << i));
    e.value(buckets[i]);
  }
  e.end_object();
}

// Per disk, what it completed: {"7:1": {"write_requests", "write_bytes", "flush_requests"}}.
struct DiskTotalsByDev {
  const std::map<DevT, DiskTotals>& disks;
};
void write_json(Emitter& e, const DiskTotalsByDev& d) {
  e.start_object();
  for (const auto& [dev, t] : d.disks) {
    e.key_text(fmt::format("{}:{}", dev_major(dev), dev_minor(dev)));
    e.object(field("write_requests", t.write_requests), field("write_bytes", t.write_bytes),
             field("flush_requests", t.flush_requests));
  }
  e.end_object();
}

// Counts by name: {"name": count} (records lost per hook, untraced calls per syscall).
struct CountsByName {
  const std::map<std::string, std::uint64_t>& counts;
};

void write_json(Emitter& e, const CountsByName& c) {
  e.start_object();
  for (const auto& [name, count] : c.counts) {
    e.key_text(name);
    e.value(count);
  }
  e.end_object();
}

}  // namespace

// Found by argument-dependent lookup through the Emitter, so in this namespace rather than
// the file's own.
void write_json(Emitter& e, const PhaseStats& s) {
  e.object(field("p50", s.p50), field("p99", s.p99), field("max", s.max), field("total", s.total),
           field("log2_histogram", NonEmptyBuckets{s.histogram}));
}

// The latency and each phase of every sync call, or null when there was none.
void write_json(Emitter& e, const SyncPhaseSummary& phases) {
  if (!phases.syncs()) return e.value(std::nullopt);
  e.start_object();
  for (const SyncPhaseSummary::Row& row : phases.rows()) {
    e.schema_key(row.json_key);
    e.value(row.stats);
  }
  e.end_object();
}

void write_json(Emitter& e, const DirectIoVerdict& v) {
  e.object(
      field("pid", v.pid), field("comm", v.comm), field("dev", Device{v.dev}), field("ino", v.ino),
      field("path", v.path.empty() ? std::nullopt : std::optional{v.path}),
      field("writes", v.writes), field("bytes", v.bytes), field("pages_dirtied", v.pages_dirtied),
      field("buffered_bytes", v.buffered_bytes), field("einval", v.einval),
      field("other_errors", v.other_errors), field("bypassed_page_cache", v.bypassed()));
}

// A file's reads: where their bytes came from. `dev` and `ino` 0 (and `path` null) for the
// row of the files past ReadFileSummary::kFilesKept.
void write_json(Emitter& e, const FileReads& f) {
  const std::optional<double> hit = f.hit_ratio();
  e.object(field("dev", Device{f.dev}), field("ino", f.ino),
           field("path", f.path.empty() ? std::nullopt : std::optional{f.path}),
           field("processes", f.processes), field("reads", f.reads), field("failed", f.failed),
           field("bytes", f.bytes), field("direct_bytes", f.direct_bytes),
           field("pages_from_device", f.pages_from_device), field("pages_cached", f.pages_cached),
           field("hit_ratio", hit ? std::optional<Fraction>(Fraction{*hit}) : std::nullopt),
           field("readahead_pages", f.readahead_pages), field("sync_readaheads", f.sync_readaheads),
           field("async_readaheads", f.async_readaheads), field("latency_ns", f.latency_ns),
           field("major_faults", f.major_faults), field("minor_faults", f.minor_faults),
           field("fault_ns", f.fault_ns), field("fault_pages_in", f.fault_pages_in),
           field("pages_touched", f.pages_followed ? std::optional{f.pages_touched} : std::nullopt),
           field("pages_again", f.pages_followed ? std::optional{f.pages_again} : std::nullopt),
           field("read_requests", f.read_requests), field("request_bytes", f.request_bytes),
           field("sequential_requests", f.sequential_requests),
           field("request_sizes",
                 std::vector<std::uint64_t>(f.request_sizes.begin(), f.request_sizes.end())),
           field("device_ns", f.device_ns));
}

// One finding of the read diagnosis (analyze/read_diagnosis.h).
void write_json(Emitter& e, const ReadFinding& f) {
  e.object(
      field("finding", read_finding_name(f.kind)), field("dev", Device{f.dev}), field("ino", f.ino),
      field("path", f.path.empty() ? std::nullopt : std::optional{f.path}), field("text", f.text));
}

// "bpf_cost": the programs' time in all, as a share of the machine's CPUs over the trace, per
// item traced, and per program (most time first).
struct BpfCostOf {
  const BpfCost& cost;
  const TraceSummary& totals;
};
struct ProgramCostJson {
  const ProgramCost& p;
};
void write_json(Emitter& e, const ProgramCostJson& c) {
  const std::uint64_t per_run = c.p.runs ? c.p.ns / c.p.runs : 0;
  e.object(field("name", c.p.name), field("runs", c.p.runs), field("ns", c.p.ns),
           field("ns_per_run", per_run));
}
// The programs' time per item traced, null without items. (A struct, not an optional: gcc 12
// took the optional's payload for uninitialized once the unity build inlined this.)
struct PerItem {
  Nanos total;
  std::uint64_t items;
};
void write_json(Emitter& e, const PerItem& p) {
  if (p.items == 0) return e.value(std::nullopt);
  e.value(p.total / p.items);
}
void write_json(Emitter& e, const BpfCostOf& c) {
  const Nanos total = c.cost.total_ns();
  const Nanos window = c.cost.share_window(c.totals.duration_ns);
  const double machine = static_cast<double>(window) * std::max(c.cost.cpus, 1u);
  const std::uint64_t items = c.totals.writes + c.totals.fsyncs + c.totals.reads + c.totals.faults;
  std::vector<ProgramCostJson> programs;
  for (const auto& p : c.cost.programs) programs.push_back({p});
  e.object(field("ns", total),
           field("cpu_share", Fraction{machine > 0 ? static_cast<double>(total) / machine : 0.0}),
           field("cpus", c.cost.cpus), field("window_ns", window),
           field("ns_per_item", PerItem{total, items}), field("programs", programs));
}

// A process whose data a disk wrote: {"pid", "comm", "cgroup", "container"} (the container's
// name or short id; null for a host process).
struct OwnerOf {
  const IoOwner& owner;
};

void write_json(Emitter& e, const OwnerOf& o) {
  const auto text_or_null = [](const std::string& text) {
    return text.empty() ? std::nullopt : std::optional<std::string_view>(text);
  };
  const std::optional<std::string_view> container =
      o.owner.container ? std::optional(o.owner.container->label()) : std::nullopt;
  e.object(field("pid", o.owner.pid), field("comm", o.owner.comm),
           field("cgroup", text_or_null(o.owner.cgroup)), field("container", container));
}

void write_json(Emitter& e, const NeighbourSummary::Row& r) {
  const auto victim_cgroup =
      r.victim_cgroup.empty() ? std::nullopt : std::optional<std::string_view>(r.victim_cgroup);
  e.object(field("culprit", OwnerOf{r.culprit}), field("victim_pid", r.victim_pid),
           field("victim_comm", r.victim_comm), field("victim_cgroup", victim_cgroup),
           field("syncs", r.syncs), field("bytes", r.bytes), field("delay_ns", r.delay_ns));
}

void write_json(Emitter& e, const OwnerIo& io) {
  e.object(field("owner", OwnerOf{io.owner}), field("disk", Device{io.disk}),
           field("bytes", io.bytes), field("requests", io.requests));
}

void write_json(Emitter& e, const TraceSummary& t) {
  const auto bpf_cost =
      t.bpf_cost ? std::optional<BpfCostOf>(BpfCostOf{*t.bpf_cost, t}) : std::nullopt;
  const auto advice = t.lost_advice.empty() ? std::nullopt : std::optional(t.lost_advice);
  const auto hint = t.hint.empty() ? std::nullopt : std::optional(t.hint);
  const auto slow_path =
      t.slow_syscall_path.empty() ? std::nullopt : std::optional(t.slow_syscall_path);
  e.object(field("type", "summary"), field("events", t.events), field("lost", t.lost),
           field("lost_by_hook", CountsByName{t.lost_by_hook}),
           field("missed_completions", t.missed_completions), field("writes", t.writes),
           field("fsyncs", t.fsyncs), field("namespace_calls", t.name_change_calls),
           field("reads", t.reads), field("faults", t.faults), field("incomplete", t.incomplete),
           field("aged_out", t.aged_out), field("evicted", t.evicted),
           field("discarded", t.discarded), field("memory_only", t.memory_only),
           field("lost_writes", t.lost_writes), field("lost_bytes", t.lost_bytes),
           field("disks", DiskTotalsByDev{t.disks}), field("lost_share", Fraction{t.lost_share}),
           field("lost_advice", advice), field("duration_ns", t.duration_ns),
           field("fsync_phases", t.sync_phases), field("neighbours", t.neighbours),
           field("io_by_process", t.io_by_process), field("direct_io", t.direct_io.verdicts()),
           field("read_files", t.read_files.files()), field("read_findings", t.read_findings),
           field("untraced_calls", CountsByName{t.untraced_calls}),
           field("hazards", CountsByName{t.hazards}),
           field("hazards_by_file", CountsByName{t.hazards_by_file}),
           field("hazards_by_process", CountsByName{t.hazards_by_process}), field("hint", hint),
           field("slow_syscall_path", slow_path), field("bpf_cost", bpf_cost));
}

}  // namespace wp::jsonl
