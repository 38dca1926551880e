// SPDX-License-Identifier: Apache-2.0
#include "stitch/stitcher.h"

#include <algorithm>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>

#include "stitch/block_tracker.h"
#include "stitch/call_context.h"
#include "stitch/durability_tracker.h"
#include "stitch/file_names.h"
#include "stitch/item_ids.h"
#include "stitch/journal_tracker.h"
#include "stitch/loss_log.h"
#include "stitch/neighbours.h"
#include "stitch/read_requests.h"
#include "stitch/sync_assembler.h"
#include "stitch/wait_chain.h"
#include "stitch/write_tracker.h"

namespace wp {

const char* write_state_name(WriteState s) {
  switch (s) {
    case WriteState::Failed: return "failed";
    case WriteState::Dirty: return "dirty";
    case WriteState::Written: return "written";
    case WriteState::Durable: return "durable";
    case WriteState::Discarded: return "discarded";
    case WriteState::Memory: return "memory";
    case WriteState::Lost: return "lost";
    case WriteState::Handed: return "handed";
  }
  return "";
}

const char* item_progress_name(ItemProgress p) {
  switch (p) {
    case ItemProgress::Returned: return "returned";
    case ItemProgress::Written: return "written";
  }
  return "";
}

namespace {

// The calls that wait for every bio they queue before they return, and the reason those bios
// carry: fsync, fdatasync and msync(MS_SYNC) write the range out and wait for it; a plain
// write queues bios only for O_DIRECT data or an O_SYNC write-out, and waits for both.
// sync_file_range may queue without waiting, io_submit and io_uring ops complete later, and
// sync(2)'s bios are the flusher's.
std::optional<SubmitWhy> waits_for_its_bios(Syscall call) {
  switch (call) {
    case Syscall::Fsync:
    case Syscall::Fdatasync:
    case Syscall::Msync: return SubmitWhy::SyncSyscall;
    case Syscall::Write:
    case Syscall::Pwrite64:
    case Syscall::Writev:
    case Syscall::Pwritev:
    case Syscall::Pwritev2: return SubmitWhy::WriteSyscall;
    default: return std::nullopt;
  }
}

// The file a successful fsync or fdatasync made durable, whose writeback in flight it waited
// for; nullopt for any other call (msync and sync_file_range cover a range of it).
std::optional<stitch::InodeKey> synced_file(const SyscallEvent& ev) {
  const bool whole_file = ev.syscall == Syscall::Fsync || ev.syscall == Syscall::Fdatasync;
  if (!whole_file || ev.ret != 0 || ev.ino == 0) return std::nullopt;
  return stitch::InodeKey{ev.dev, ev.ino};
}

}  // namespace

const char* durable_via_name(DurableVia v) {
  switch (v) {
    case DurableVia::Flush: return "flush";
    case DurableVia::Fua: return "fua";
    case DurableVia::NoWriteCache: return "no-write-cache";
    case DurableVia::Commit: return "commit";
    case DurableVia::None: return "";
  }
  return "";
}

struct Stitcher::State : stitch::BlockListener {
  explicit State(StitchLimits l)
      : limits(l),
        block(limits, stats, *this),
        durability(limits, devices, [this](stitch::Request& r) { writes.request_durable(r); }),
        journal(limits),
        writes(limits, stats, devices, block.history(), loss, ids,
               [this](Timeline&& t) { hand_out(std::move(t)); }),
        syncs(devices, block.history(), durability, journal),
        chains(devices, durability, journal) {}

  // ---- BlockListener: what completions mean, above the block layer ----

  void data_completed(const std::shared_ptr<stitch::Request>& r,
                      const std::vector<std::shared_ptr<stitch::Bio>>& bios, Nanos ts) override {
    durability.data_completed(r, ts);
    if (limits.io_owners) neighbours.data_completed(*r, bios, ts);
    for (const auto& bio : bios) writes.bio_written(*bio, r);
  }
  void data_failed(const std::shared_ptr<stitch::Request>& r,
                   const std::vector<std::shared_ptr<stitch::Bio>>& bios, Nanos ts) override {
    for (const auto& bio : bios) writes.bio_failed(*bio, r, ts);
  }
  void flush_completed(DevT disk, Nanos start, Nanos end, const RequestTimeline& request,
                       bool covers_earlier) override {
    durability.flush_completed(disk, start, end, request, covers_earlier);
  }
  void fua_sequence_done(stitch::Request& r, Nanos ts) override {
    durability.make_durable(r, ts, DurableVia::Fua);
  }

  // ---- calls ----

  void on_syscall(const SyscallEvent& ev) {
    if (const auto why = waits_for_its_bios(ev.syscall))
      block.waited_call_end(ev.tid, *why, ev.start_ns, ev.end_ns, synced_file(ev));
    stitch::CallExtras extras{calls.take_causes(ev), {}, calls.take_fuse(ev)};
    if (extras.causes) chains.link(ev, extras.causes->waits);
    if (is_write_syscall(ev.syscall)) {
      extras.throttles = calls.take_throttles(ev);
      writes.on_write(ev, std::move(extras));
      return;
    }
    SyncTimeline s = syncs.assemble(ev);
    s.id = ids.take();
    writes.file_synced(ev);
    if (ev.ino != 0) {
      s.lost_writes = writes.take_lost(ev.dev, ev.ino, call_end(ev));
      s.loss_unreported = ev.ret == 0 && !s.lost_writes.empty();
    }
    s.causes = std::move(extras.causes);
    s.fuse = std::move(extras.fuse);
    s.neighbours = neighbours.of(ev, devices.disks_of(ev.dev));
    if (loss.within(ev.start_ns, ev.end_ns)) s.incomplete = true;
    if (s.incomplete) ++stats.incomplete;
    ++stats.syncs;
    hand_out(std::move(s));
  }

  // A read is whole at its record: what it asked for, got, and found in the page cache.
  void on_read(const ReadEvent& ev) {
    ReadTimeline r;
    r.id = ids.take();
    r.call = ev.call;
    r.call.cgroup_id = cgroup_of(ev.call.pid, ev.call.tid);
    if (ev.call.ret > 0) {
      const unsigned shift = limits.page_shift;
      const std::uint64_t first = ev.call.pos >> shift;
      const std::uint64_t last =
          (ev.call.pos + static_cast<std::uint64_t>(ev.call.ret) - 1) >> shift;
      r.pages = last - first + 1;
      r.first_page = first;
    }
    // Pages it added inside its range are misses it filled; the rest of its pages were there,
    // unless it went around the page cache (O_DIRECT) or its file has none (proc, sysfs).
    const std::uint64_t filled = ev.pages_added - ev.pages_added_beyond;
    r.pages_from_device = std::min<std::uint64_t>(filled, r.pages);
    r.page_cache = !devices.no_page_cache(r.call.dev);
    const bool around_cache = (r.call.file_flags & file_flag::kDirect) || !r.page_cache;
    r.pages_cached = around_cache ? 0 : r.pages - r.pages_from_device;
    r.readahead_pages = ev.pages_added_beyond;
    r.sync_readaheads = ev.sync_ra;
    r.async_readaheads = ev.async_ra;
    r.causes = calls.take_causes(r.call);
    if (loss.within(r.call.start_ns, r.call.end_ns)) r.incomplete = true;
    if (r.incomplete) ++stats.incomplete;
    ++stats.reads;
    const Nanos start = r.call.start_ns;
    read_requests.add(std::move(r), start, now, hand_out_read);
  }

  // The call an event without a syscall record of its own stands for: its thread, file and
  // times, in its thread's cgroup.
  SyscallEvent call_of(const auto& ev, Syscall syscall, Nanos start, Nanos end) {
    SyscallEvent call;
    call.syscall = syscall;
    call.start_ns = start;
    call.end_ns = end;
    call.pid = ev.pid;
    call.tid = ev.tid;
    call.comm = ev.comm;
    call.dev = ev.dev;
    call.ino = ev.ino;
    call.cgroup_id = cgroup_of(ev.pid, ev.tid);
    return call;
  }

  // A fault is whole at its record, like a read: the page it faulted on, from the device when
  // the fault inserted its folio; the other pages it inserted are readahead around it.
  void on_fault(const FaultEvent& ev) {
    ReadTimeline r;
    r.id = ids.take();
    r.call = call_of(ev, Syscall::PageFault, ev.start_ns, ev.last_ns);
    r.call.fd = -1;
    const std::uint64_t page_bytes = std::uint64_t{1} << limits.page_shift;
    r.call.pos = ev.index << limits.page_shift;
    r.call.count = page_bytes;
    r.call.ret = static_cast<std::int64_t>(page_bytes);
    r.pages = 1;
    r.first_page = ev.index;
    const bool filled = ev.flags & WP_FAULT_FILLED;
    r.pages_from_device = filled ? 1 : 0;
    r.pages_cached = 1 - r.pages_from_device;
    r.readahead_pages = ev.pages_added > r.pages_from_device
                            ? static_cast<std::uint32_t>(ev.pages_added - r.pages_from_device)
                            : 0;
    r.fault = FaultFacts{.address = ev.address,
                         .major = filled || ev.filemap_faults >= 2,
                         .write = (ev.flags & WP_FAULT_WRITE) != 0,
                         .kernel = (ev.flags & WP_FAULT_KERNEL) != 0,
                         .mapped_pages = ev.mapped_pages,
                         .filemap_faults = ev.filemap_faults};
    if (loss.within(r.call.start_ns, r.call.end_ns)) r.incomplete = true;
    if (r.incomplete) ++stats.incomplete;
    ++stats.faults;
    read_requests.add(std::move(r), ev.start_ns, now, hand_out_read);
  }

  void on_name_change(const NameChangeEvent& ev) {
    NameChangeTimeline n;
    n.id = ids.take();
    n.call = call_of(ev, ev.syscall, ev.start_ns, ev.end_ns);
    n.call.ret = ev.ret;
    n.call.fd = ev.fd;
    n.op = ev.op;
    n.flags = ev.flags;
    n.names = ev.names;
    for (std::size_t i = 0; i < 2; ++i) n.dirs[i] = {ev.dir_dev[i], ev.dir_ino[i]};
    constexpr std::uint32_t kCut[] = {WP_NS_NAME1_CUT, WP_NS_NAME2_CUT};
    for (std::size_t i = 0; i < 2; ++i)
      if (!(ev.flags & kCut[i]))
        n.paths[i] = names.resolve(ev.dir_dev[i], ev.dir_ino[i], ev.names[i]);
    // An open is named by the name it was called with (the kernel sends no path record for it:
    // the file's first write does).
    if (ev.op == NameChangeOp::Open && ev.ino != 0 && !n.paths[0].empty()) n.call.path = n.paths[0];
    if (loss.within(ev.start_ns, ev.end_ns)) n.incomplete = true;
    if (n.incomplete) ++stats.incomplete;
    ++stats.name_change_calls;
    hand_out(std::move(n));
  }

  // Every item leaves through here, named after its file's path record, if one came: the
  // path its call record arrived under, else (a mapping's stores) the latest.
  void hand_out(Timeline&& t) {
    name(t);
    (*emit)(std::move(t));
  }

  // Items and live snapshots alike carry their file's path.
  void name(Timeline& t) {
    std::visit([this](auto& item) { names.name(item.call); }, t);
  }

  // ---- cgroups ----

  // The kernel names a thread's cgroup once, before its first record an item is made of (and
  // again when it moves), so the latest CgroupEvent of a thread is its cgroup. A thread
  // without one (an io-wq worker issuing for its ring's owner) takes its process's: outside
  // cgroup v2's threaded mode every thread of a process is in one cgroup.
  void on_cgroup(const CgroupEvent& ev) {
    // Bounded by the threads and processes seen; past the bound the oldest knowledge goes
    // (threads that write again are named again only if they move, so their items fall back
    // to the process's, then to none).
    constexpr std::size_t kMaxKnown = 1u << 20;
    if (thread_cgroups.size() >= kMaxKnown) thread_cgroups.clear();
    if (process_cgroups.size() >= kMaxKnown) process_cgroups.clear();
    thread_cgroups[ev.tid] = ev.cgroup_id;
    process_cgroups[ev.pid] = ev.cgroup_id;
  }
  std::uint64_t cgroup_of(std::uint32_t pid, std::uint32_t tid) const {
    if (auto it = thread_cgroups.find(tid); it != thread_cgroups.end()) return it->second;
    if (auto it = process_cgroups.find(pid); it != process_cgroups.end()) return it->second;
    return 0;
  }

  // A jbd2 commit's end also commits the ext4 inline data its transaction holds.
  void on_journal(const JournalEvent& ev) {
    journal.on_journal(ev);
    if (ev.phase != JournalPhase::End) return;
    Nanos start = 0;
    for (const JournalCommit& c : journal.overlapping(ev.dev, ev.ts, ev.ts))
      if (c.transaction == ev.transaction) start = first_known(c).value_or(0);
    writes.metadata_committed({InlineFs::Ext4, ev.dev, ev.transaction, ev.ts, start, ev.tid});
  }

  void on_lost(const LostEvent& ev) {
    loss.add(ev.ts);
    block.on_lost();
  }

  // ---- bounds ----

  void maybe_sweep() {
    const Nanos period = std::max<Nanos>(limits.history_ns / 8, 1);
    if (now < last_sweep + period) return;
    const Nanos horizon = now > limits.history_ns ? now - limits.history_ns : 0;
    block.sweep(horizon);
    durability.sweep(horizon);
    journal.sweep(horizon);
    loss.sweep(horizon);
    neighbours.sweep(horizon);
    last_sweep = now;
  }

  void feed(const Event& event) {
    std::visit(
        [this](const auto& ev) {
          using T = std::decay_t<decltype(ev)>;
          if constexpr (std::is_same_v<T, NameChangeEvent>) {
            now = std::max(now, ev.end_ns);
            on_name_change(ev);
          } else if constexpr (std::is_same_v<T, ReadEvent>) {
            now = std::max(now, ev.call.end_ns);
            on_read(ev);
          } else if constexpr (std::is_same_v<T, FaultEvent>) {
            now = std::max(now, ev.ts);
            on_fault(ev);
          } else if constexpr (std::is_same_v<T, SyscallEvent>) {
            now = std::max(now, ev.end_ns);
            SyscallEvent call = ev;
            call.cgroup_id = cgroup_of(ev.pid, ev.tid);
            // Named as the file is called now: a write still pending after a rename keeps
            // the name it was written under.
            names.name(call);
            on_syscall(call);
          } else {
            now = std::max(now, ev.ts);
            if constexpr (std::is_same_v<T, BioEvent>) block.on_bio(ev);
            if constexpr (std::is_same_v<T, RequestEvent>) {
              block.on_request(ev);
              if (read_requests.holding()) read_requests.progress(now, hand_out_read);
            }
            if constexpr (std::is_same_v<T, JournalEvent>) on_journal(ev);
            if constexpr (std::is_same_v<T, FsLogEvent>) journal.on_fs_log(ev);
            if constexpr (std::is_same_v<T, NvmeEvent>) block.on_nvme(ev);
            if constexpr (std::is_same_v<T, LostEvent>) on_lost(ev);
            if constexpr (std::is_same_v<T, CausesEvent>) calls.on_causes(ev);
            if constexpr (std::is_same_v<T, OffCpuEvent>) calls.on_offcpu(ev);
            if constexpr (std::is_same_v<T, FuseReplyEvent>) calls.on_fuse(ev);
            if constexpr (std::is_same_v<T, ThrottleEvent>) calls.on_throttle(ev);
            if constexpr (std::is_same_v<T, DiscardEvent>) writes.pages_discarded(ev);
            if constexpr (std::is_same_v<T, InlineDataEvent>) writes.data_inlined(ev);
            if constexpr (std::is_same_v<T, FsCommitEvent>)
              writes.metadata_committed(
                  {InlineFs::Btrfs, ev.fs_dev, ev.transaction, ev.ts, ev.start_ns, ev.tid});
            if constexpr (std::is_same_v<T, MmapDirtyEvent>) {
              MmapDirtyEvent dirty = ev;
              dirty.cgroup_id = cgroup_of(ev.pid, ev.tid);
              writes.on_mmap_dirty(dirty);
            }
            if constexpr (std::is_same_v<T, CgroupEvent>) on_cgroup(ev);
            if constexpr (std::is_same_v<T, DirtierEvent>) neighbours.on_dirtier(ev);
            if constexpr (std::is_same_v<T, BystanderIoEvent>) neighbours.on_bystander_io(ev);
            if constexpr (std::is_same_v<T, FilePathEvent>) names.on_file_path(ev);
            if constexpr (std::is_same_v<T, FileViewEvent>) names.on_file_view(ev);
          }
        },
        event);
    writes.age_out(now);
    read_requests.expire(now, hand_out_read);
    maybe_sweep();
  }

  // Members are initialised in this order: trackers after the state they refer to.
  StitchLimits limits;
  StitchStats stats;
  stitch::DeviceTable devices;
  stitch::LossLog loss;
  stitch::ItemIds ids;
  stitch::CallContext calls;
  stitch::BlockTracker block;
  stitch::DurabilityTracker durability;
  stitch::JournalTracker journal;
  stitch::WriteTracker writes;
  stitch::SyncAssembler syncs;
  stitch::WaitChains chains;
  stitch::FileNames names;
  stitch::NeighbourTracker neighbours{
      [this](std::uint32_t pid, std::uint32_t tid) { return cgroup_of(pid, tid); }};
  stitch::ReadRequestTracker read_requests{block.read_history()};
  const stitch::ReadRequestTracker::Out hand_out_read = [this](ReadTimeline&& r) {
    hand_out(std::move(r));
  };
  std::unordered_map<std::uint32_t, std::uint64_t> thread_cgroups;   // tid → cgroup id
  std::unordered_map<std::uint32_t, std::uint64_t> process_cgroups;  // pid → cgroup id
  Nanos now = 0;                                                     // newest event time seen
  Nanos last_sweep = 0;
  // Where finished timelines go during the current feed()/finish() call.
  const Emit* emit = nullptr;
};

Stitcher::Stitcher(StitchLimits limits) : state_(std::make_unique<State>(limits)) {}

Stitcher::~Stitcher() = default;

void Stitcher::add_device(const DeviceInfo& info) {
  state_->devices.add(info);
}

void Stitcher::add_file_system(const FileSystemInfo& fs) {
  state_->devices.add_file_system(fs);
}

void Stitcher::feed(const Event& event, const Emit& emit) {
  state_->emit = &emit;
  state_->feed(event);
  state_->emit = nullptr;
}

void Stitcher::feed(const Event& event, std::vector<Timeline>& out) {
  feed(event, Emit([&out](Timeline&& t) { out.push_back(std::move(t)); }));
}

void Stitcher::disks_write_idle(const std::vector<DevT>& disks, Nanos at, const Emit& emit) {
  state_->emit = &emit;
  for (DevT disk : disks) state_->block.write_idle_at_end(disk, at);
  state_->emit = nullptr;
}

bool Stitcher::finish(const Emit& emit, std::size_t max_items) {
  state_->emit = &emit;
  state_->block.end_of_trace();  // before the items: what it finds makes none of them
  state_->read_requests.finish(state_->hand_out_read);
  const bool done = state_->writes.finish(max_items);
  state_->emit = nullptr;
  return done;
}

bool Stitcher::finish(std::vector<Timeline>& out, std::size_t max_items) {
  return finish(Emit([&out](Timeline&& t) { out.push_back(std::move(t)); }), max_items);
}

void Stitcher::set_progress(Progress progress) {
  if (!progress) {
    state_->writes.set_progress({});
    return;
  }
  // Snapshots are named after their file too: the early line is the one a live user reads.
  state_->writes.set_progress(
      [state = state_.get(), progress = std::move(progress)](ItemProgress p, Timeline&& t) {
        state->name(t);
        progress(p, t);
      });
}

const StitchStats& Stitcher::stats() const {
  return state_->stats;
}

std::vector<OwnerIo> Stitcher::io_by_owner() const {
  return state_->neighbours.totals();
}

void Stitcher::add_filtered_io(const std::vector<FilteredIo>& owners) {
  for (const FilteredIo& io : owners) state_->neighbours.add_filtered(io);
}

}  // namespace wp
