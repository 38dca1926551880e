// SPDX-License-Identifier: Apache-2.0
// decode → stitch → sink, the one way data flows, shared by live tracing and `report`.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agent/summary_builder.h"
#include "analyze/hazards.h"
#include "common/container.h"
#include "common/units.h"
#include "decode/decoder.h"
#include "probe/host_paths.h"
#include "record/trace_file.h"
#include "sinks/sink.h"
#include "stitch/stitcher.h"
#include "writepath.h"

namespace wp {

struct PipelineOptions {
  Nanos min_latency_ns = 0;
  std::function<void(const Timeline&)> observer;  // sees what the sink gets
  bool live = true;  // records straight from the kernel (not from a trace file)
  // Hand the sink each pending write's snapshots as it progresses (live output), filtered by
  // min_latency_ns as complete items are.
  bool item_progress = false;
  // File systems on disks their superblock device is not (btrfs), for the syncs' flushes.
  std::vector<FileSystemInfo> file_systems = {};
  // A live trace's view of its writers' mount namespaces: items of a writer in another one
  // carry the host's path of their file too. Null: none (a trace file's report).
  std::shared_ptr<HostPaths> host_paths = {};
  // log2 of the page size the records count pages in: the running kernel's for a live trace,
  // the recording kernel's (its header) for a trace file.
  unsigned page_shift = running_page_shift();
  // Whether the records tell whose data each bio carries (TraceFileHeader::io_owners): a live
  // trace's do; without it no sync names neighbours.
  bool io_owners = true;
};

// What the end of a trace says about lost records: their share of all records
// (lost / (events + lost)) and what to do about it. Empty when nothing was lost.
struct LossReport {
  double share = 0;
  std::string advice;
  std::string warning;  // one line for stderr, without "writepath: "
};
// `suggest_record`: whether recording instead of tracing live is advice worth giving.
LossReport loss_report(std::uint64_t events, std::uint64_t lost, bool suggest_record);
// The warning on stderr, when there is one.
void warn_of_losses(const LossReport& loss);

class Pipeline {
 public:
  Pipeline(PipelineOptions options, const std::vector<DeviceInfo>& devices, Sink& sink);

  void on_record(std::span<const std::byte> record);
  // An event already decoded (an event script's, record/event_script.h): as on_record's.
  void on_event(const Event& event) {
    ++decoded_events_;
    feed(event);
  }
  // Records lost since the last call, per hook: the timelines pending now are marked.
  void add_lost(const LostCounts& delta);
  // The clock offsets as re-measured (live traces, about every second): to the sink.
  void set_clock(const ClockOffsets& offsets) { sink_.clock(offsets); }
  // The path under the cgroup2 root of a cgroup id the records name: items of that cgroup
  // carry it, and the container it is (read from the path here, once) with `names` (what the
  // host said of it), from now on (from the live host, or a trace file's names).
  void name_cgroup(std::uint64_t id, std::string path, const ContainerNames& names = {});
  // What the host said of a container cgroup named before (a trace file's names, which follow
  // its path): its items from now on carry them.
  void name_container(std::uint64_t id, const ContainerNames& names);
  // The name of a kernel text address the records' stacks hold (from the live host's
  // kallsyms, or a trace file's names): the frames of the off-CPU events fed from now on.
  void name_kernel_address(std::uint64_t address, std::string name) {
    kernel_names_[address] = std::move(name);
  }
  // The event with its stacks' frames named as told so far ("" for an address never named):
  // what the stitcher is fed for it.
  OffCpuEvent named_frames(OffCpuEvent event) const;
  // Ends the stream: pending timelines go to the sink, then the summary of the events,
  // completed with what `facts` collected. Returns the summary.
  TraceSummary finish(Nanos duration_ns, const SummaryBuilder& facts = {});
  const LostCounts& lost() const { return lost_; }

 private:
  void feed(const Event& event);
  // One finished item: filtered, counted into the summaries, handed to the sink.
  void emit(Timeline& item);
  // An item whose hazards are decided (HazardAuditor): counted, observed, handed to the sink.
  void deliver(Timeline& item);
  bool passes(const Timeline& item) const;
  // Sets the item's cgroup path and container from its cgroup id (cgroup_names_), and its
  // file's host path (options_.host_paths).
  void name_item_context(Timeline& item) const;
  // Sets an I/O owner's cgroup path and container from its cgroup id.
  void name_owner(IoOwner& owner) const;
  void name_stack(KernelStack& stack) const;

  PipelineOptions options_;
  Sink& sink_;
  Decoder decoder_;
  Stitcher stitcher_;
  Stitcher::Emit emit_;  // the stitcher's way to emit()
  LostCounts lost_{};
  std::uint64_t decoded_events_ = 0;  // handed over decoded (on_event): records all the same
  Nanos last_ts_ = 0;
  SyncPhaseSummary sync_phases_;
  NeighbourSummary neighbours_;
  DirectIoSummary direct_io_;
  ReadFileSummary read_files_;
  HazardAuditor auditor_;
  HazardAuditor::Out deliver_{[this](Timeline&& item) { deliver(item); }};
  HazardSummary hazards_;
  struct CgroupName {
    std::string path;
    std::shared_ptr<const Container> container;  // null: a host cgroup
  };
  std::unordered_map<std::uint64_t, CgroupName> cgroup_names_;
  std::unordered_map<std::uint64_t, std::string> kernel_names_;
};

}  // namespace wp
