// SPDX-License-Identifier: Apache-2.0
#include "sinks/text_sink.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <variant>
#include <vector>

#include "common/units.h"
#include "sinks/text_live.h"
#include "sinks/text_notes.h"
#include "sinks/text_painter.h"
#include "sinks/text_why.h"
#include "sinks/wait_text.h"

namespace wp {
namespace {

// Width of the relative-time column: fits "+999.99ms" and "-999.99ms".
constexpr int kTimeColumn = 9;
// Columns a body line's text may take in a 110-column line, after its indent and time column.
constexpr std::size_t kBodyWidth = 110 - 2 - kTimeColumn - 2;

// One or more body lines that sort as a unit (a request and its NVMe command stay together).
struct Stage {
  std::optional<Nanos> at;  // absent: untimed, printed first
  std::string lines;
};

class BlockBuilder {
 public:
  BlockBuilder(Nanos origin, const Painter& paint) : origin_(origin), paint_(paint) {}

  std::string offset(Nanos t) const { return human_offset(relative_ns(t, origin_)); }
  Nanos origin() const { return origin_; }

  // " label +t" when the stage happened, nothing otherwise: absent stages are simply not shown.
  std::string stage_time(std::string_view label, const std::optional<Nanos>& t) const {
    return t ? fmt::format("  {} {}", label, offset(*t)) : std::string();
  }

  std::string line(const std::optional<Nanos>& at, std::string_view text) const {
    return fmt::format("  {:>{}}  {}\n", at ? offset(*at) : std::string(), kTimeColumn, text);
  }

  void add(const std::optional<Nanos>& at, std::string lines) {
    stages_.push_back(Stage{at, std::move(lines)});
  }

  std::string finish(std::string header) {
    // Untimed lines first, then the journey in time order; stable so equal times keep the
    // stitcher's order.
    std::stable_sort(stages_.begin(), stages_.end(), [](const Stage& a, const Stage& b) {
      if (!a.at || !b.at) return !a.at && b.at;
      return *a.at < *b.at;
    });
    std::string block = std::move(header);
    block += '\n';
    for (const Stage& stage : stages_) block += stage.lines;
    return block;
  }

  const Painter& paint() const { return paint_; }

 private:
  Nanos origin_;
  const Painter& paint_;
  std::vector<Stage> stages_;
};

// "pwrite64 pid 1234/1235 (dd) fd 3 /mnt/data/log": what the call was and on which file; "dev
// 7:0 ino 12" when the file's path is not known; with `show_cgroup`, "(dd) cgroup
// /system.slice/x.service fd 3 …", or for a container's process its short id and runtime,
// as `docker ps` would name it: "(dd) container web (docker) fd 3 …", or by its short id
// ("3f9c1d2e4b5a") when its name is not known.
std::string call_identity(const SyscallEvent& call, const Painter& paint, bool show_cgroup) {
  std::string text = fmt::format("{} pid {}/{} ({})", paint.bold(call_name(call)), call.pid,
                                 call.tid, printable_comm(call.comm));
  if (show_cgroup && call.container)
    text += fmt::format(" container {} ({})", printable_comm(call.container->label()),
                        container_runtime_name(call.container->runtime));
  else if (show_cgroup && !call.cgroup.empty())
    text += fmt::format(" cgroup {}", printable_comm(call.cgroup));
  if (call.fd >= 0) text += fmt::format(" fd {}", call.fd);
  if (!call.path.empty()) {
    text += fmt::format(" {}", printable_comm(call.path));
    // A writer in another mount namespace (a container): where the host has the file.
    if (!call.host_path.empty()) text += fmt::format(" (host {})", printable_comm(call.host_path));
    // An overlay file: the disk sees its upper file.
    if (call.view_dev != 0)
      text += fmt::format(" (overlay {} over dev {} ino {})", dev_string(call.view_dev),
                          dev_string(call.dev), call.ino);
  } else {
    if (call.dev != 0) text += fmt::format(" dev {}", dev_string(call.dev));
    if (call.ino != 0) text += fmt::format(" ino {}", call.ino);
  }
  // The call's own flags (pwritev2's RWF_*, msync's MS_*), not the store marker.
  for (const char* flag : call_flag_names(call.call_flags)) text += fmt::format(" {}", flag);
  return text;
}

// `unfinished`: what a request without a completion is said to be.
void add_request(BlockBuilder& block, const RequestTimeline& request, std::string_view label,
                 std::string_view unfinished = "not completed") {
  const Painter& paint = block.paint();
  std::string text = fmt::format("{} {} {}", label, rwbs(request.op, request.flags, request.bytes),
                                 dev_string(request.disk));
  // A pure FLUSH carries no data: sector and size would be noise.
  if (request.bytes != 0) {
    text += fmt::format(" sector {} {}", request.sector, human_bytes(request.bytes));
  }
  if (request.submit_tid) {
    text += fmt::format(" by {}", printable_comm(request.submit_comm));
    if (request.submit_why != SubmitWhy::Unknown)
      text += fmt::format(" ({})", submit_why_name(request.submit_why));
    for (const RequestSubmitter& other : request.other_submitters)
      text += fmt::format(" + {} [{}] ({})", printable_comm(other.comm), other.tid,
                          submit_why_name(other.why));
  }
  text += block.stage_time("queue", request.queue_ns);
  text += block.stage_time("insert", request.insert_ns);
  text += block.stage_time("issue", request.issue_ns);
  // An inferred completion is an upper bound: the kernel did not deliver the event.
  text +=
      block.stage_time(request.complete_inferred ? "complete by" : "complete", request.complete_ns);
  if (request.complete_inferred) text += paint.yellow(" (event not delivered)");
  if (!request.complete_ns) text += paint.yellow(fmt::format("  {}", unfinished));
  // FUA data is durable on completion; only a later durable point is news.
  if (request.durable_ns && request.durable_ns != request.complete_ns) {
    text += block.stage_time("durable", request.durable_ns);
  }
  if (request.error != 0) text += paint.red(fmt::format("  error {}", errno_name(request.error)));

  const std::optional<Nanos> at = request_first_known(request);
  std::string lines = block.line(at, text);
  if (request.nvme) {
    const NvmeCommand& nvme = *request.nvme;
    std::string nvme_text =
        fmt::format("  nvme qid {} cid {} opcode {:#04x}", nvme.qid, nvme.cid, nvme.opcode);
    nvme_text += block.stage_time("submit", nvme.submit_ns);
    nvme_text += block.stage_time("complete", nvme.complete_ns);
    if (nvme.status) {
      const std::string status = fmt::format("  status {:#x}", *nvme.status);
      nvme_text += *nvme.status == 0 ? status : paint.red(status);
    }
    lines += block.line(std::nullopt, nvme_text);
  }
  block.add(at, std::move(lines));
}

}  // namespace

std::string fuse_daemon_text(const std::optional<FuseDaemon>& daemon) {
  if (!daemon) return "";
  std::string text =
      fmt::format(" {} (pid {}/{})", printable_comm(daemon->comm), daemon->pid, daemon->tid);
  if (daemon->error != 0) text += fmt::format(", which answered {}", errno_name(daemon->error));
  return text;
}

namespace {

std::string write_verdict(const WriteTimeline& write, BlockBuilder& block) {
  const Painter& paint = block.paint();
  switch (write.state) {
    case WriteState::Failed:
      return paint.red(fmt::format("FAILED {}", errno_name(static_cast<int>(write.call.ret))));
    case WriteState::Durable: {
      std::string verdict = "DURABLE";
      if (write.durable_ns) verdict += " " + block.offset(*write.durable_ns);
      if (write.durable_via != DurableVia::None) {
        verdict += fmt::format(" via {}", durable_via_name(write.durable_via));
      }
      return paint.green(verdict);
    }
    case WriteState::Written: {
      std::string verdict = "WRITTEN";
      if (write.written_ns) verdict += " " + block.offset(*write.written_ns);
      return paint.yellow(verdict + ", not durable");
    }
    case WriteState::Dirty:
      if (const auto& d = write.inline_data; d && write.pages_pending == 0) {
        return paint.yellow(fmt::format("DIRTY in {} metadata, transaction {} not committed",
                                        inline_fs_name(d->fs), d->transaction));
      }
      return paint.yellow(
          fmt::format("DIRTY {}/{} pages pending", write.pages_pending, write.pages));
    case WriteState::Discarded: {
      std::string verdict = "DISCARDED";
      if (write.discarded_ns) verdict += " " + block.offset(*write.discarded_ns);
      return paint.red(verdict + ", never written");
    }
    case WriteState::Memory:
      return paint.yellow("MEMORY ONLY, never reaches a disk (lost at reboot)");
    case WriteState::Handed:
      return paint.yellow("HANDED to the FUSE daemon" + fuse_daemon_text(write.fuse) +
                          ", which decides where it goes");
    case WriteState::Lost: {
      std::string verdict = "LOST";
      if (write.lost_ns) verdict += " " + block.offset(*write.lost_ns);
      return paint.red(verdict + fmt::format(": writeback failed ({}), never written",
                                             errno_name(write.lost_error)));
    }
  }
  return write_state_name(write.state);
}

// "causes  on-CPU 0.10ms  throttled 310ms  writeback wait 0  blocked 2.0ms  runnable 0.1ms":
// where a slow call's time went; zero causes are left out.
void add_causes(BlockBuilder& block, const std::optional<SlowCauses>& causes) {
  if (!causes) return;
  std::string text = "causes";
  for (const auto& [name, ns] :
       {std::pair{"on-CPU", causes->on_cpu_ns}, std::pair{"throttled", causes->throttle_ns},
        std::pair{"writeback-wait", causes->writeback_wait_ns},
        std::pair{"blocked", causes->blocked_ns}, std::pair{"runnable", causes->runnable_ns}}) {
    if (ns != 0) text += fmt::format("  {} {}", name, human_duration(ns));
  }
  // The why lines stay under it: one untimed stage, and untimed stages keep their order.
  std::string lines = block.line(std::nullopt, text);
  for (const std::string& why : why_lines(*causes, block.origin(), kBodyWidth))
    lines += block.line(std::nullopt, why);
  block.add(std::nullopt, std::move(lines));
}

void add_throttles(BlockBuilder& block, const std::vector<ThrottlePause>& pauses) {
  for (const auto& p : pauses) {
    block.add(
        p.ts,
        block.line(p.ts, fmt::format("dirty throttling: pause {}ms, {} of {} pages "
                                     "dirty ({:.0f}% of the limit)",
                                     p.pause_ms, p.dirty_pages, p.limit_pages,
                                     p.limit_pages ? 100.0 * p.dirty_pages / p.limit_pages : 0.0)));
  }
}

// One untimed line per hazard, last: what a crash now could cost and why (analyze/hazards.h).
void add_hazard_lines(BlockBuilder& block, const std::vector<Hazard>& hazards,
                      const Painter& paint) {
  for (const Hazard& h : hazards) {
    std::string text = paint.red("HAZARD " + h.rule) + ": " + h.detail;
    if (!h.related.empty()) text += fmt::format(" (#{})", fmt::join(h.related, ", #"));
    block.add(std::nullopt, block.line(std::nullopt, text));
  }
}

std::string format_write(const WriteTimeline& write, const Painter& paint, bool show_cgroup) {
  const SyscallEvent& call = write.call;
  BlockBuilder block(call.start_ns, paint);

  std::string header = call_identity(call, paint, show_cgroup);
  if (call.ret < 0) {
    header += fmt::format(" off {} {}", call.pos, human_bytes(call.count));  // what it asked for
  } else {
    const std::uint64_t written = bytes_written(call);
    header += fmt::format(" off {} {}", call.pos, human_bytes(written));
    if (written != call.count) header += fmt::format(" of {}", human_bytes(call.count));  // short
  }
  if (write.direct) header += " direct";
  if (call.file_flags & file_flag::kSync) {
    header += " O_SYNC";
  } else if (call.file_flags & file_flag::kDsync) {
    header += " O_DSYNC";
  } else if (write.sync) {
    header += " sync";
  }
  if (call.file_flags & file_flag::kAppend) header += " append";
  header += fmt::format("  latency {}  {}", human_duration(latency_ns(call)),
                        write_verdict(write, block));
  if (write.incomplete) header += " " + paint.magenta("(incomplete)");

  if (call.pages_dirtied != 0 || call.throttle_ns != 0 || call.writeback_waits != 0) {
    std::vector<std::string> parts;
    if (call.pages_dirtied != 0) {
      std::string dirtied = "dirtied " + plural(call.pages_dirtied, "page", "pages");
      if (const auto& f = write.store_faults) {
        dirtied += fmt::format(" in {}", plural(f->faults, "fault", "faults"));
        if (f->whole_folio != 0)
          dirtied += fmt::format(" ({} whole)", plural(f->whole_folio, "folio", "folios"));
      }
      parts.push_back(std::move(dirtied));
    }
    if (call.throttle_ns != 0 || call.throttle_events != 0) {
      parts.push_back(fmt::format("throttled {} ({})", human_duration(call.throttle_ns),
                                  plural(call.throttle_events, "pause", "pauses")));
    }
    if (call.writeback_waits != 0) {
      parts.push_back(fmt::format("waited on writeback {}x", call.writeback_waits));
    }
    // These happen inside the call; the call's start is the honest anchor.
    block.add(call.start_ns, block.line(call.start_ns, fmt::format("{}", fmt::join(parts, "  "))));
  }
  if (const auto& d = write.inline_data) {
    block.add(d->ns, block.line(d->ns, fmt::format("stored inline in {} metadata, transaction {}",
                                                   inline_fs_name(d->fs), d->transaction)));
    if (d->committed_ns) {
      block.add(
          *d->committed_ns,
          block.line(*d->committed_ns, fmt::format("transaction {} committed", d->transaction)));
    }
  }
  for (const RequestTimeline& request : write.requests) add_request(block, request, "request");
  if (write.written_ns) {
    block.add(write.written_ns,
              block.line(write.written_ns, "written " + plural(write.pages, "page", "pages")));
  }
  if (write.durable_ns) {
    std::string text = "durable";
    if (write.durable_via != DurableVia::None) {
      text += fmt::format(" ({})", durable_via_name(write.durable_via));
    }
    block.add(write.durable_ns, block.line(write.durable_ns, paint.green(text)));
  }
  add_causes(block, write.causes);
  add_throttles(block, write.throttles);
  add_hazard_lines(block, write.hazards, paint);
  return block.finish(std::move(header));
}

void add_commit(BlockBuilder& block, const JournalCommit& commit) {
  std::string text =
      fmt::format("journal commit {} dev {}", commit.transaction, dev_string(commit.dev));
  const std::string start = commit.start_ns ? block.offset(*commit.start_ns) : "?";
  const std::string end = commit.end_ns ? block.offset(*commit.end_ns) : "(not ended)";
  text += fmt::format("  {}..{}", start, end);
  if (const auto ran = elapsed_ns(commit.start_ns, commit.end_ns)) {
    text += fmt::format("  ran {}", human_duration(*ran));
  }
  const std::optional<Nanos> at = first_known(commit);
  block.add(at, block.line(at, text));
}

// "renameat2 pid 7/7 (save) /data/f.tmp -> /data/f  latency 12us": what the call did to which
// names, as made whole from the directory they are relative to (else as the caller passed them).
std::string format_name_change(const NameChangeTimeline& item, const Painter& paint,
                               bool show_cgroup) {
  const SyscallEvent& call = item.call;
  BlockBuilder block(call.start_ns, paint);
  std::string header = call_identity(call, paint, show_cgroup);
  const auto shown = [&](std::size_t i) {
    return printable_comm(item.paths[i].empty() ? item.names[i] : item.paths[i]);
  };
  if (call.path.empty() && !item.names[0].empty()) header += " " + shown(0);
  if (item.op == NameChangeOp::Rename || item.op == NameChangeOp::Link)
    header += fmt::format(" -> {}", shown(1));
  for (const char* flag : name_change_flag_names(item.flags)) header += fmt::format(" {}", flag);
  header += fmt::format("  latency {}", human_duration(latency_ns(call)));
  if (call.ret < 0)
    header += "  " + paint.red(fmt::format("FAILED {}", errno_name(static_cast<int>(call.ret))));
  if (item.name_synced_by) header += fmt::format("  name synced by #{}", *item.name_synced_by);
  if (item.incomplete) header += " " + paint.magenta("(incomplete)");
  add_hazard_lines(block, item.hazards, paint);
  return block.finish(std::move(header));
}

// The read requests an item's bios went in, a line each up to kShown, then one for the rest. A
// read's request not complete by its end carried readahead it did not wait for; a fault's end is
// only a lower bound (its last page-cache event), so each of its requests is simply a request.
// One without a completion had it lost (ReadRequestTracker::kMaxWaitNs) or was cut by the end.
void add_read_requests(BlockBuilder& block, const ReadTimeline& item) {
  constexpr std::size_t kShown = 16;
  std::uint64_t rest_bytes = 0;
  for (std::size_t i = 0; i < item.requests.size(); ++i) {
    const RequestTimeline& request = item.requests[i];
    if (i >= kShown) {
      rest_bytes += request.bytes;
      continue;
    }
    const bool waited =
        item.fault || (request.complete_ns && *request.complete_ns <= call_end(item.call));
    add_request(block, request, waited ? "request" : "readahead (not waited for)",
                "completion not seen");
  }
  if (item.requests.size() > kShown)
    block.add(std::nullopt,
              block.line(std::nullopt,
                         fmt::format("and {} more, {}",
                                     plural(item.requests.size() - kShown, "request", "requests"),
                                     human_bytes(rest_bytes))));
}

// "read(3) /data/m.bin off 0 4.0 MiB  latency 12 ms  1024 pages: 1000 from the device, 24
// cached", with the readahead it ran and its time off CPU.
// "page_fault pid 7/7 (python3) /data/m.bin off 8192 major  at least 3.1 ms  from the device",
// with the readahead it brought and the cached pages fault-around offered.
std::string format_fault(const ReadTimeline& item, const Painter& paint, bool show_cgroup) {
  const SyscallEvent& call = item.call;
  const FaultFacts& fault = *item.fault;
  BlockBuilder block(call.start_ns, paint);
  std::string header = call_identity(call, paint, show_cgroup);
  header += fmt::format(" off {} {}{}{}", call.pos, fault.major ? "major" : "minor",
                        fault.write ? " write" : "", fault.kernel ? " by the kernel" : "");
  // Its end is its last page-cache event: the kernel has no hook where a fault returns.
  header += fmt::format("  at least {}", human_duration(latency_ns(call)));
  if (item.pages_from_device != 0)
    header += "  its page from the device";
  else if (fault.major)
    header += "  waited for its page";
  else
    header += "  its page cached";
  if (item.incomplete) header += " " + paint.magenta("(incomplete)");
  if (item.readahead_pages != 0)
    block.add(
        call.start_ns,
        block.line(call.start_ns, fmt::format("readahead: {} around the fault",
                                              plural(item.readahead_pages, "page", "pages"))));
  if (fault.mapped_pages != 0)
    block.add(call.start_ns,
              block.line(call.start_ns, fmt::format("fault-around: {} offered from the page cache",
                                                    plural(fault.mapped_pages, "page", "pages"))));
  add_read_requests(block, item);
  return block.finish(std::move(header));
}

std::string format_read(const ReadTimeline& item, const Painter& paint, bool show_cgroup) {
  if (item.fault) return format_fault(item, paint, show_cgroup);
  const SyscallEvent& call = item.call;
  BlockBuilder block(call.start_ns, paint);
  std::string header = call_identity(call, paint, show_cgroup);
  if (call.ret < 0) {
    header += fmt::format(" off {} {}", call.pos, human_bytes(call.count));
  } else {
    const auto got = static_cast<std::uint64_t>(call.ret);
    header += fmt::format(" off {} {}", call.pos, human_bytes(got));
    if (got != call.count) header += fmt::format(" of {}", human_bytes(call.count));
  }
  if (call.file_flags & file_flag::kDirect) header += " direct";
  header += fmt::format("  latency {}", human_duration(latency_ns(call)));
  if (call.ret < 0) {
    header += "  " + paint.red(fmt::format("FAILED {}", errno_name(static_cast<int>(call.ret))));
  } else if (call.file_flags & file_flag::kDirect) {
    header += "  from the device, around the page cache";
  } else if (!item.page_cache) {
    header += "  made by the kernel: its file system has no page cache";
  } else if (item.pages != 0) {
    header +=
        fmt::format("  {}: {} from the device, {} cached", plural(item.pages, "page", "pages"),
                    item.pages_from_device, item.pages_cached);
  }
  if (item.incomplete) header += " " + paint.magenta("(incomplete)");
  if (item.readahead_pages != 0 || item.sync_readaheads != 0 || item.async_readaheads != 0) {
    block.add(
        call.start_ns,
        block.line(call.start_ns, fmt::format("readahead: {} sync, {} async, {} past the read",
                                              item.sync_readaheads, item.async_readaheads,
                                              plural(item.readahead_pages, "page", "pages"))));
  }
  add_read_requests(block, item);
  return block.finish(std::move(header));
}

}  // namespace

// "dd (pid 4211, container batch (docker))", "dd (pid 4211, cgroup /batch.slice)", "dd (pid
// 4211)": a process whose data a disk wrote, with where it runs when that is known.
std::string owner_text(const IoOwner& owner) {
  std::string where;
  if (owner.container)
    where = fmt::format(", container {} ({})", printable_comm(owner.container->label()),
                        container_runtime_name(owner.container->runtime));
  else if (!owner.cgroup.empty() && owner.cgroup != "/")
    where = fmt::format(", cgroup {}", printable_comm(owner.cgroup));
  return fmt::format("{} (pid {}{})", printable_comm(owner.comm), owner.pid, where);
}

namespace {

// "behind  dd (pid 4211, cgroup /batch): 412 MiB on 7:0 during this call, 96 % of the bytes
// the disk wrote then (20.3ms of the call)": one line per neighbour.
void add_neighbours(BlockBuilder& block, const SyscallEvent& call,
                    const std::vector<Neighbour>& neighbours) {
  for (const Neighbour& n : neighbours)
    block.add(std::nullopt,
              block.line(std::nullopt,
                         fmt::format("behind  {}: {} on {} during this call, {:.0f} % of the "
                                     "bytes the disk wrote then ({} of the call)",
                                     owner_text(n.owner), human_bytes(n.bytes), dev_string(n.disk),
                                     n.share * 100,
                                     human_duration(std::min(n.delay_ns, latency_ns(call))))));
}

std::string format_sync(const SyncTimeline& sync, const Painter& paint, bool show_cgroup) {
  const SyscallEvent& call = sync.call;
  BlockBuilder block(call.start_ns, paint);

  std::string header = call_identity(call, paint, show_cgroup);
  header += fmt::format("  latency {}", human_duration(latency_ns(call)));
  // Since Linux 2.6.19 dirty shared pages are tracked by the page cache itself: MS_ASYNC
  // starts no writeback at all (the flusher writes them later).
  if ((call.call_flags & call_flag::kMsAsync) && !(call.call_flags & call_flag::kMsSync)) {
    header += "  (MS_ASYNC: no I/O, the flusher writes the pages later)";
  }
  if (call.ret < 0) {
    header += "  " + paint.red(fmt::format("FAILED {}", errno_name(static_cast<int>(call.ret))));
  }
  if (sync.incomplete) header += " " + paint.magenta("(incomplete)");

  std::string phase_text;
  // Zero phases are left out: the line answers "where did the time go" at a glance. Phases
  // that ran at the same time say so: their figures share that time out, once.
  const PhaseOverlaps overlaps = phase_overlaps(sync);
  for (const SyncPhaseInfo& phase : kSyncPhases) {
    const Nanos ns = sync.phases.*phase.total;
    if (ns == 0) continue;
    phase_text += fmt::format("  {} {}", phase.text_name, human_duration(ns));
    std::vector<const char*> with;
    for (SyncPhase other : overlaps[static_cast<std::size_t>(phase.phase)])
      with.push_back(sync_phase_info(other).text_name);
    if (!with.empty()) phase_text += fmt::format(" (overlaps {})", fmt::join(with, ", "));
  }
  if (!phase_text.empty()) block.add(std::nullopt, block.line(std::nullopt, "phases" + phase_text));
  // A FUSE file's sync is the daemon's to do: the kernel only asked it.
  if (sync.fuse)
    block.add(std::nullopt,
              block.line(std::nullopt, "handed to the FUSE daemon" + fuse_daemon_text(sync.fuse) +
                                           ", which syncs (or not) on its own"));

  for (const RequestTimeline& request : sync.requests) add_request(block, request, "request");
  for (const RequestTimeline& request : sync.journal_requests)
    add_request(block, request, "journal");
  for (const RequestTimeline& flush : sync.flushes) add_request(block, flush, "flush");
  for (const JournalCommit& commit : sync.commits) add_commit(block, commit);
  add_causes(block, sync.causes);
  add_neighbours(block, call, sync.neighbours);
  add_hazard_lines(block, sync.hazards, paint);
  return block.finish(std::move(header));
}

}  // namespace

std::string printable_comm(std::string_view comm) {
  std::string out;
  out.reserve(comm.size());
  for (std::size_t i = 0; i < comm.size(); ++i) {
    const auto byte = static_cast<unsigned char>(comm[i]);
    const bool c1 = byte == 0xc2 && i + 1 < comm.size() &&
                    static_cast<unsigned char>(comm[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(comm[i + 1]) <= 0x9f;
    if (byte == '\\') {
      out += "\\\\";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else if (c1) {
      out += fmt::format("\\xc2\\x{:02x}", static_cast<unsigned char>(comm[++i]));
    } else {
      out += static_cast<char>(byte);
    }
  }
  return out;
}

std::string format_timeline(const Timeline& item, const SinkOptions& options) {
  const Painter paint(options.color);
  return std::visit(
      [&](const auto& timeline) -> std::string {
        using T = std::decay_t<decltype(timeline)>;
        if constexpr (std::is_same_v<T, WriteTimeline>) {
          return format_write(timeline, paint, options.cgroups);
        } else if constexpr (std::is_same_v<T, NameChangeTimeline>) {
          return format_name_change(timeline, paint, options.cgroups);
        } else if constexpr (std::is_same_v<T, ReadTimeline>) {
          return format_read(timeline, paint, options.cgroups);
        } else {
          return format_sync(timeline, paint, options.cgroups);
        }
      },
      item);
}

void TextSink::note_cgroup(const Timeline& item) {
  const std::string& cgroup = call_of(item).cgroup;
  if (cgroup.empty() || options_.cgroups) return;
  if (first_cgroup_.empty())
    first_cgroup_ = cgroup;
  else if (cgroup != first_cgroup_)
    options_.cgroups = true;
}

void TextSink::show_legend_for(const Timeline& item, bool block, bool why) {
  if (block && !legend_shown_ && needs_legend(item)) {
    out_ << format_legend(options_);
    legend_shown_ = true;
  }
  if (why && !why_legend_shown_ && has_named_waits(item)) {
    out_ << format_why_legend();
    why_legend_shown_ = true;
  }
}

void TextSink::timeline(const Timeline& item) {
  note_cgroup(item);
  // In live output an announced write's block (why lines included) was printed at its
  // return: now only its update line follows, which needs no legend.
  const auto* write = std::get_if<WriteTimeline>(&item);
  const bool block = !(options_.live && write != nullptr && write->announced);
  show_legend_for(item, block, block);
  if (options_.live)
    out_ << format_live_complete(item, options_, clock_);
  else
    out_ << with_clock_column(format_timeline(item, options_), call_end(call_of(item)), clock_);
  // Per block, so a live trace piped to less or tee shows items as they finish.
  out_.flush();
}

void TextSink::progress(ItemProgress progress, const Timeline& item) {
  if (!options_.live) return;
  note_cgroup(item);
  if (progress == ItemProgress::Returned) show_legend_for(item, true, true);
  out_ << format_live_progress(progress, item, options_, clock_);
  out_.flush();
}

void TextSink::summary(const TraceSummary& totals) {
  out_ << format_summary(totals, options_);
  out_.flush();
}

void TextSink::flush() {
  out_.flush();
}

}  // namespace wp
