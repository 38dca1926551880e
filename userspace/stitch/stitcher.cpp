#include "stitch/stitcher.h"

#include <algorithm>
#include <array>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>

#include "stitch/page_set.h"

namespace wp {

const char* write_state_name(WriteState s) {
  switch (s) {
    case WriteState::Failed: return "failed";
    case WriteState::Dirty: return "dirty";
    case WriteState::Written: return "written";
    case WriteState::Durable: return "durable";
  }
  return "";
}

const char* durable_via_name(DurableVia v) {
  switch (v) {
    case DurableVia::Flush: return "flush";
    case DurableVia::Fua: return "fua";
    case DurableVia::NoWriteCache: return "no-write-cache";
    case DurableVia::None: return "";
  }
  return "";
}

namespace {

constexpr unsigned kPageShift = 12;
constexpr std::uint64_t kPageSize = 1ull << kPageShift;
constexpr std::uint64_t kSectorSize = 512;

using WriteId = std::uint64_t;

struct Request;

struct Bio {
  BioEvent ev;
  // When the data was handed to the block layer: the queue time of the original bio, also for
  // the pieces a split cut from it (ev.ts of a piece is the split time, kept for ordering).
  Nanos queued_ns = 0;
  std::shared_ptr<Request> request;  // the request lifetime that claimed it
  bool pending = false;              // still in its disk's pending set
  bool trimmed = false;              // a split took a piece of it; it is the remainder
  std::multimap<std::uint64_t, std::shared_ptr<Bio>>::iterator pending_it;
  std::vector<WriteId> direct_writers;  // O_DIRECT writes waiting for it to complete
};

// One lifetime of a kernel request pointer.
struct Request {
  std::uint64_t rq = 0;
  RequestTimeline tl;
  std::uint64_t completed_bytes = 0;
  bool data_done = false;       // transfer finished (successfully or with tl.error)
  bool fua_at_issue = false;    // the device does FUA natively
  bool flush_seq_done = false;  // the zero-byte completion ending its flush sequence was seen
  bool lost_tracking = false;   // records were lost while it was in flight: it was abandoned
  DurableVia via = DurableVia::None;
  // Bios it carries; cleared once it completes (or is abandoned), which also breaks the
  // Bio -> Request -> Bio ownership cycle.
  std::vector<std::shared_ptr<Bio>> bios;
  std::vector<WriteId> durable_waiters;  // written writes waiting for it to become durable
};

// A completed flush on a disk as syncs see it: a flush request, or the post-flush of a
// PREFLUSH/FUA data request (from its data completion to its zero-byte completion).
struct FlushRecord {
  Nanos start = 0;
  Nanos end = 0;
  RequestTimeline request;
};

struct Disk {
  using PendingMap = std::multimap<std::uint64_t, std::shared_ptr<Bio>>;
  PendingMap pending;  // data bios not yet claimed, by sector; FIFO among equal sectors
  std::unordered_map<std::uint64_t, std::shared_ptr<Bio>> pending_by_ptr;
  std::deque<std::shared_ptr<Bio>> pending_order;       // queue order, to age out orphans
  std::deque<std::shared_ptr<Bio>> pending_flush_bios;  // empty PREFLUSH bios, queue order
  // Data requests completed but not yet durable, in completion order (so in time order).
  std::deque<std::shared_ptr<Request>> awaiting_flush;
  std::deque<FlushRecord> flushes;  // completion order
};

struct InodeKey {
  DevT dev = 0;
  std::uint64_t ino = 0;
  bool operator==(const InodeKey&) const = default;
};

struct InodeKeyHash {
  std::size_t operator()(const InodeKey& k) const {
    return std::hash<std::uint64_t>()(k.ino * 0x9e3779b97f4a7c15ull ^ k.dev);
  }
};

struct Inode {
  std::deque<std::shared_ptr<Bio>> bios;  // bios carrying its pages, arrival order
  // Pending buffered writes by first page. A write overlapping page p has first page in
  // [p - max_span, p], so lookups stay local.
  std::multimap<std::uint64_t, WriteId> writes;
  std::uint64_t max_span = 0;
};

struct PendingWrite {
  WriteTimeline tl;
  bool by_pages = false;  // tracked by page range (buffered, or O_DIRECT fallen back to it)
  bool indexed = false;   // in its inode's write index
  std::uint64_t first_page = 0;
  std::uint64_t last_page = 0;
  PageSet remaining;  // buffered: pages not yet seen written
  std::uint64_t direct_bios_left = 0;
  std::uint64_t direct_pages_left = 0;
  std::vector<std::shared_ptr<Request>> requests;
  std::unordered_set<const Request*> request_set;
  std::size_t not_durable = 0;
  Nanos durable_max = 0;
  DurableVia durable_via = DurableVia::None;
};

bool is_data_op(ReqOp op) {
  return op == ReqOp::Write || op == ReqOp::Discard || op == ReqOp::WriteZeroes;
}

// An empty PREFLUSH bio (blkdev_issue_flush) or a REQ_OP_FLUSH bio.
bool is_flush_bio(const BioEvent& b) {
  return b.op == ReqOp::Flush || b.bytes == 0;
}

bool has_file_pages(const BioEvent& b) {
  return b.ino != 0 && b.nr_extents > 0 && !(b.bio_flags & (bio_flag::kAnon | bio_flag::kNoFile));
}

std::uint64_t sectors_of(std::uint64_t bytes) {
  return (bytes + kSectorSize - 1) / kSectorSize;
}

std::uint64_t bio_pages(const BioEvent& b) {
  if (b.nr_extents > 0 && !(b.bio_flags & bio_flag::kTruncated)) {
    std::uint64_t pages = 0;
    for (std::size_t i = 0; i < b.nr_extents && i < kMaxBioExtents; ++i)
      pages += b.extents[i].pages;
    return pages;
  }
  return (b.bytes + kPageSize - 1) / kPageSize;
}

// The extents of the bytes [offset, offset + len) of `from`'s data. A page goes to the piece
// holding its last byte, so the pieces of a split partition the pages. Mixed bios interleave
// files, so positions do not map to their listed extents: the piece gets none.
void slice_extents(const BioEvent& from, std::uint64_t offset, std::uint64_t len, BioEvent& to) {
  to.nr_extents = 0;
  to.extents = {};
  if (from.bio_flags & bio_flag::kMixed) {
    to.bio_flags |= bio_flag::kMixed;
    return;
  }
  const std::uint64_t want_first = offset / kPageSize;
  const std::uint64_t want_end = (offset + len) / kPageSize;  // exclusive
  std::uint64_t position = 0;  // page position of the current extent in the bio's data
  for (std::size_t i = 0; i < from.nr_extents && i < kMaxBioExtents; ++i) {
    const Extent& e = from.extents[i];
    const std::uint64_t lo = std::max(position, want_first);
    const std::uint64_t hi = std::min(position + e.pages, want_end);
    if (lo < hi) {
      to.extents[to.nr_extents++] =
          Extent{e.index + (lo - position), static_cast<std::uint32_t>(hi - lo)};
    }
    position += e.pages;
  }
  to.file_dev = from.file_dev;
  to.ino = from.ino;
  to.bio_flags |= from.bio_flags & (bio_flag::kTruncated | bio_flag::kAnon | bio_flag::kNoFile);
}

Nanos first_known(const JournalCommit& c) {
  for (const auto& t : {c.start_ns, c.locking_ns, c.flushing_ns, c.logging_ns, c.end_ns}) {
    if (t) return *t;
  }
  return 0;
}

// Splits [start, end] among the categories by priority (index 0 highest); time covered by none
// is `other`. The segments tile [start, end], so the parts add up exactly.
SyncPhases partition_phases(Nanos start, Nanos end,
                            const std::array<std::vector<std::pair<Nanos, Nanos>>, 4>& cats) {
  struct Edge {
    Nanos at;
    int cat;
    int delta;
  };
  std::vector<Edge> edges;
  for (int c = 0; c < 4; ++c) {
    for (const auto& [lo_raw, hi_raw] : cats[c]) {
      const Nanos lo = std::max(lo_raw, start);
      const Nanos hi = std::min(hi_raw, end);
      if (lo >= hi) continue;
      edges.push_back({lo, c, +1});
      edges.push_back({hi, c, -1});
    }
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.at < b.at; });
  std::array<Nanos, 5> totals{};  // flush, journal, data_io, writeback, other
  std::array<int, 4> active{};
  Nanos prev = start;
  auto account = [&](Nanos until) {
    if (until <= prev) return;
    int owner = 4;
    for (int c = 0; c < 4; ++c) {
      if (active[c] > 0) {
        owner = c;
        break;
      }
    }
    totals[owner] += until - prev;
    prev = until;
  };
  for (const Edge& e : edges) {
    account(e.at);
    active[e.cat] += e.delta;
  }
  account(end);
  SyncPhases phases;
  phases.flush_ns = totals[0];
  phases.journal_ns = totals[1];
  phases.data_io_ns = totals[2];
  phases.writeback_ns = totals[3];
  phases.other_ns = totals[4];
  return phases;
}

template <typename T>
void trim_count(std::deque<T>& d, std::size_t max) {
  while (d.size() > max) d.pop_front();
}

}  // namespace

struct Stitcher::State {
  // A request in flight and the bios it claimed point at each other (until its completion
  // releases them): break those cycles so that nothing outlives the stitcher.
  ~State() {
    for (auto& [ptr, request] : active) request->bios.clear();
  }

  StitchLimits limits;
  StitchStats stats;
  std::unordered_map<DevT, DeviceInfo> devices;
  std::unordered_map<DevT, bool> disk_write_cache;

  Nanos now = 0;  // newest event time seen
  Nanos last_sweep = 0;
  WriteId next_write_id = 1;

  std::unordered_map<DevT, Disk> disks;
  std::unordered_map<std::uint64_t, std::shared_ptr<Request>> active;  // rq pointer -> lifetime
  std::unordered_map<std::uint64_t, NvmeCommand> nvme_before_issue;    // rq pointer -> command
  std::unordered_map<std::uint32_t, CausesEvent> causes_by_tid;        // until its syscall's record
  std::unordered_map<std::uint32_t, std::deque<ThrottlePause>> throttles_by_tid;
  std::unordered_map<InodeKey, Inode, InodeKeyHash> inodes;
  std::unordered_map<std::uint32_t, std::deque<std::shared_ptr<Bio>>> bios_by_tid;
  std::map<WriteId, PendingWrite> writes;  // pending, in arrival order
  std::unordered_map<std::uint64_t, std::shared_ptr<JournalCommit>> open_commits;
  std::unordered_map<DevT, std::deque<std::shared_ptr<JournalCommit>>> commits;
  std::deque<Nanos> lost;

  // Where finished timelines go during the current feed()/finish() call.
  std::vector<Timeline>* out = nullptr;

  explicit State(StitchLimits l) : limits(l) {}

  // ---- devices ----

  DevT disk_of(DevT dev) const {
    auto it = devices.find(dev);
    return it != devices.end() && it->second.disk != 0 ? it->second.disk : dev;
  }

  bool volatile_cache(DevT disk) const {
    auto it = disk_write_cache.find(disk);
    return it == disk_write_cache.end() || it->second;
  }

  bool expired(Nanos ts) const { return ts + limits.history_ns < now; }

  bool lost_within(Nanos start, Nanos end) const {
    return std::any_of(lost.begin(), lost.end(), [&](Nanos t) { return t >= start && t <= end; });
  }

  // ---- bios ----

  void remove_pending(Disk& disk, Bio& bio) {
    if (!bio.pending) return;
    disk.pending.erase(bio.pending_it);
    auto it = disk.pending_by_ptr.find(bio.ev.bio);
    if (it != disk.pending_by_ptr.end() && it->second.get() == &bio) disk.pending_by_ptr.erase(it);
    bio.pending = false;
  }

  // `index_pointer` false: keep an existing pointer entry (a split piece reported under its
  // parent's pointer must not hide the parent from the remainder's requeue).
  void add_pending(Disk& disk, const std::shared_ptr<Bio>& bio, bool index_pointer = true) {
    bio->pending_it = disk.pending.emplace(bio->ev.sector, bio);
    bio->pending = true;
    if (index_pointer) {
      disk.pending_by_ptr[bio->ev.bio] = bio;
    } else {
      disk.pending_by_ptr.emplace(bio->ev.bio, bio);
    }
    while (!disk.pending_order.empty() && !disk.pending_order.front()->pending) {
      disk.pending_order.pop_front();
    }
    disk.pending_order.push_back(bio);
  }

  void remember(const std::shared_ptr<Bio>& bio) {
    auto& by_tid = bios_by_tid[bio->ev.tid];
    by_tid.push_back(bio);
    trim_count(by_tid, limits.max_history_per_key);
    if (has_file_pages(bio->ev)) {
      auto& inode = inodes[InodeKey{bio->ev.file_dev, bio->ev.ino}];
      inode.bios.push_back(bio);
      trim_count(inode.bios, limits.max_history_per_key);
    }
  }

  // The pending bio a split cut a piece from: the same pointer, else one containing the piece.
  std::shared_ptr<Bio> split_parent(Disk& disk, const BioEvent& ev) {
    const std::uint64_t lo = ev.sector;
    const std::uint64_t hi = ev.sector + sectors_of(ev.bytes);
    auto contains = [&](const Bio& b) {
      return b.ev.sector <= lo && b.ev.sector + sectors_of(b.ev.bytes) >= hi;
    };
    if (auto it = disk.pending_by_ptr.find(ev.bio);
        it != disk.pending_by_ptr.end() && contains(*it->second)) {
      return it->second;
    }
    // Bounded backwards walk from the piece's sector: candidates start at or before it.
    auto it = disk.pending.upper_bound(lo);
    for (int steps = 0; steps < 64 && it != disk.pending.begin(); ++steps) {
      --it;
      if (contains(*it->second)) return it->second;
    }
    return nullptr;
  }

  void on_bio(const BioEvent& ev) {
    ++stats.bios;
    if (ev.op == ReqOp::Read || ev.op == ReqOp::Other) return;  // reads never matter here
    Disk& disk = disks[ev.disk];
    auto bio = std::make_shared<Bio>();
    bio->ev = ev;
    bio->queued_ns = ev.ts;

    if (is_flush_bio(ev)) {
      disk.pending_flush_bios.push_back(bio);
      remember(bio);
      return;
    }

    if (ev.kind == BioKind::Split) {
      if (auto parent = split_parent(disk, ev)) {
        Bio& p = *parent;
        const std::uint64_t offset = (ev.sector - p.ev.sector) * kSectorSize;
        bio->queued_ns = p.queued_ns;
        if (!has_file_pages(ev) && !(ev.bio_flags & bio_flag::kAnon)) {
          slice_extents(p.ev, offset, ev.bytes, bio->ev);
        }
        // The parent becomes the remainder (splits cut from the front; a piece from the back
        // is handled too; one from the middle leaves the parent as it is).
        const std::uint64_t parent_bytes = p.ev.bytes;
        if (offset == 0 || offset + ev.bytes == parent_bytes) {
          const std::uint64_t rest_offset = offset == 0 ? ev.bytes : 0;
          const std::uint64_t rest_len = parent_bytes - ev.bytes;
          BioEvent rest = p.ev;
          if (has_file_pages(p.ev) || (p.ev.bio_flags & bio_flag::kMixed)) {
            slice_extents(p.ev, rest_offset, rest_len, rest);
          }
          rest.sector = p.ev.sector + rest_offset / kSectorSize;
          rest.bytes = static_cast<std::uint32_t>(rest_len);
          remove_pending(disk, p);
          p.ev = rest;
          p.trimmed = true;
          if (rest_len > 0) {
            add_pending(disk, parent);
          }
        }
      }
      add_pending(disk, bio, false);
      remember(bio);
      return;
    }

    // A split remainder re-entering the queue under its own pointer: it is already pending,
    // with its share of the extents; only adopt the range the kernel reports.
    if (auto it = disk.pending_by_ptr.find(ev.bio); it != disk.pending_by_ptr.end()) {
      std::shared_ptr<Bio> existing = it->second;
      if (existing->trimmed) {
        remove_pending(disk, *existing);
        existing->ev.sector = ev.sector;
        existing->ev.bytes = ev.bytes;
        existing->ev.flags |= ev.flags;
        add_pending(disk, existing);
        return;
      }
      // Same pointer, never claimed: that bio's request was not seen. Drop it, never guess.
      remove_pending(disk, *existing);
      ++stats.orphan_bios;
    }
    add_pending(disk, bio);
    remember(bio);
  }

  // ---- requests ----

  // Ends a lifetime that will see no more events (pointer reused, or records lost).
  void abandon(Request& r) {
    if (!r.data_done) r.bios.clear();
  }

  std::shared_ptr<Request> lifetime_for_submit(const RequestEvent& ev) {
    auto it = active.find(ev.rq);
    if (it != active.end()) {
      Request& r = *it->second;
      if (!r.data_done && r.tl.disk == ev.disk) return it->second;
      abandon(r);
      active.erase(it);
    }
    auto r = std::make_shared<Request>();
    r->rq = ev.rq;
    r->tl.disk = ev.disk;
    r->tl.op = ev.op;
    ++stats.requests;
    active.emplace(ev.rq, r);
    // The driver set up its command just before the block layer's issue event.
    if (auto cmd = nvme_before_issue.find(ev.rq); cmd != nvme_before_issue.end()) {
      r->tl.nvme = cmd->second;
      nvme_before_issue.erase(cmd);
    }
    return r;
  }

  void claim(const std::shared_ptr<Request>& request, const std::shared_ptr<Bio>& bio) {
    Request& r = *request;
    bio->request = request;
    r.bios.push_back(bio);
    ++r.tl.bios;
    r.tl.flags |= bio->ev.flags;
    if (!r.tl.queue_ns || bio->queued_ns < *r.tl.queue_ns) r.tl.queue_ns = bio->queued_ns;
    if (!r.tl.submit_tid) {
      r.tl.submit_tid = bio->ev.tid;
      r.tl.submit_comm = bio->ev.comm;
      r.tl.submit_why = bio->ev.why;
    }
  }

  void claim_data_bios(const std::shared_ptr<Request>& r, Disk& disk) {
    const std::uint64_t lo = r->tl.sector;
    const std::uint64_t hi = r->tl.sector + sectors_of(r->tl.bytes);
    std::uint64_t cursor = lo;  // bios of one request never overlap: skip ones that would
    auto it = disk.pending.lower_bound(lo);
    while (it != disk.pending.end() && it->first < hi) {
      std::shared_ptr<Bio> bio = it->second;
      const std::uint64_t end = bio->ev.sector + sectors_of(bio->ev.bytes);
      if (it->first < cursor || end > hi) {
        ++it;
        continue;
      }
      cursor = end;
      ++it;  // remove_pending erases the current node
      remove_pending(disk, *bio);
      claim(r, bio);
    }
  }

  void claim_flush_bios(const std::shared_ptr<Request>& r, Disk& disk, Nanos until) {
    while (!disk.pending_flush_bios.empty() && disk.pending_flush_bios.front()->ev.ts <= until) {
      std::shared_ptr<Bio> bio = disk.pending_flush_bios.front();
      disk.pending_flush_bios.pop_front();
      claim(r, bio);
    }
  }

  void on_request(const RequestEvent& ev) {
    if (ev.kind == RequestEventKind::Complete) {
      on_complete(ev);
      return;
    }
    std::shared_ptr<Request> r = lifetime_for_submit(ev);
    RequestTimeline& tl = r->tl;
    tl.op = ev.op;
    tl.sector = ev.sector;
    tl.bytes = ev.bytes;  // merges after insert grow the request: the latest size wins
    tl.flags |= ev.flags;
    if (ev.kind == RequestEventKind::Insert) {
      if (!tl.insert_ns) tl.insert_ns = ev.ts;
      return;
    }
    if (!tl.issue_ns) tl.issue_ns = ev.ts;
    Disk& disk = disks[ev.disk];
    if (ev.op == ReqOp::Flush) {
      claim_flush_bios(r, disk, ev.ts);
    } else {
      if (ev.flags & req_flag::kFua) r->fua_at_issue = true;
      if (ev.op != ReqOp::Read) claim_data_bios(r, disk);
    }
  }

  void on_complete(const RequestEvent& ev) {
    auto it = active.find(ev.rq);
    const bool matches = it != active.end() && it->second->tl.disk == ev.disk;
    // A zero-byte write completing on a pointer whose last lifetime carried no PREFLUSH/FUA
    // cannot be that request's flush-sequence end: it is an empty PREFLUSH write (what
    // blkdev_issue_flush() submits) that the flush machinery completed without ever issuing
    // it, reusing the pointer of an older, finished request.
    const bool empty_preflush_write =
        ev.op == ReqOp::Write && ev.bytes == 0 &&
        (!matches || (it->second->data_done && it->second->tl.op == ReqOp::Write &&
                      !(it->second->tl.flags & (req_flag::kPreflush | req_flag::kFua))));
    if (empty_preflush_write) {
      // Its cache flush went out as an FF request of its own, already counted as a flush:
      // this completion only ends the old lifetime (whose flush sequence it is not).
      if (matches) active.erase(it);
      return;
    }
    if (ev.op == ReqOp::Flush && (!matches || it->second->tl.op != ReqOp::Flush)) {
      // An empty flush to a device without write cache completes with no issue event.
      auto r = std::make_shared<Request>();
      r->rq = ev.rq;
      r->tl.disk = ev.disk;
      r->tl.op = ReqOp::Flush;
      r->tl.flags = ev.flags;
      r->tl.sector = ev.sector;
      r->tl.complete_ns = ev.ts;
      r->tl.error = ev.error;
      r->data_done = true;
      ++stats.requests;
      Disk& disk = disks[ev.disk];
      claim_flush_bios(r, disk, ev.ts);
      r->bios.clear();
      if (ev.error == 0) flush_completed(ev.disk, ev.ts, ev.ts, r->tl, true);
      return;
    }
    if (!matches) {
      ++stats.unmatched_completes;  // no lifetime: never guess which request it was
      return;
    }
    std::shared_ptr<Request> r = it->second;
    RequestTimeline& tl = r->tl;

    if (tl.op == ReqOp::Flush) {
      active.erase(it);  // a flush request is done at its completion; the pointer gets reused
      tl.complete_ns = ev.ts;
      tl.error = ev.error;
      r->data_done = true;
      r->bios.clear();
      if (ev.error == 0) {
        const Nanos start = tl.issue_ns ? *tl.issue_ns : tl.insert_ns ? *tl.insert_ns : ev.ts;
        flush_completed(ev.disk, start, ev.ts, tl, true);
      }
      return;
    }

    if (!r->data_done) {
      if (ev.error != 0) {
        tl.error = ev.error;
        tl.complete_ns = ev.ts;
        r->data_done = true;
        r->bios.clear();  // its pages were not written
        return;
      }
      if (ev.bytes == 0 && tl.bytes != 0) {
        ++stats.unmatched_completes;
        return;
      }
      r->completed_bytes += ev.bytes;
      if (r->completed_bytes >= tl.bytes) complete_data(r, ev.ts);
      return;
    }

    // Data already done, no new issue since: the zero-byte completion ending the flush
    // sequence of a PREFLUSH/FUA request (after its post-flush on devices without FUA).
    if (ev.bytes == 0 && !r->flush_seq_done && tl.error == 0) {
      r->flush_seq_done = true;
      if (tl.flags & req_flag::kFua) make_durable(*r, ev.ts, DurableVia::Fua);
      flush_completed(ev.disk, *tl.complete_ns, ev.ts, tl, false);
      return;
    }
    ++stats.unmatched_completes;
  }

  void complete_data(const std::shared_ptr<Request>& r, Nanos ts) {
    r->data_done = true;
    r->tl.complete_ns = ts;
    std::vector<std::shared_ptr<Bio>> bios = std::move(r->bios);
    r->bios.clear();
    if (!is_data_op(r->tl.op)) return;
    if (r->fua_at_issue) {
      make_durable(*r, ts, DurableVia::Fua);
    } else if (!volatile_cache(r->tl.disk)) {
      make_durable(*r, ts, DurableVia::NoWriteCache);
    } else {
      disks[r->tl.disk].awaiting_flush.push_back(r);
    }
    for (const auto& bio : bios) bio_written(*bio, r);
  }

  // A completed cache flush on `disk`. `covers_earlier`: a real FLUSH request, which makes
  // durable every data request that completed before it started. A post-flush sequence end
  // is only recorded for syncs: its own FLUSH request shows up separately.
  void flush_completed(DevT disk_dev, Nanos start, Nanos end, const RequestTimeline& request,
                       bool covers_earlier) {
    Disk& disk = disks[disk_dev];
    disk.flushes.push_back(FlushRecord{start, end, request});
    trim_count(disk.flushes, limits.max_history_per_key);
    if (!covers_earlier) return;
    while (!disk.awaiting_flush.empty()) {
      std::shared_ptr<Request> r = disk.awaiting_flush.front();
      if (!r->tl.durable_ns) {
        // Data that completed after the flush started may not be in what it flushed.
        if (*r->tl.complete_ns > start) break;
        disk.awaiting_flush.pop_front();
        make_durable(*r, end, DurableVia::Flush);
      } else {
        disk.awaiting_flush.pop_front();
      }
    }
  }

  void make_durable(Request& r, Nanos ts, DurableVia via) {
    if (r.tl.durable_ns) return;
    r.tl.durable_ns = ts;
    r.via = via;
    std::vector<WriteId> waiters = std::move(r.durable_waiters);
    r.durable_waiters.clear();
    for (WriteId id : waiters) {
      auto it = writes.find(id);
      if (it == writes.end() || it->second.tl.state != WriteState::Written) continue;
      PendingWrite& w = it->second;
      if (ts >= w.durable_max) {
        w.durable_max = ts;
        w.durable_via = via;
      }
      if (--w.not_durable == 0) become_durable(it);
    }
  }

  // ---- writes ----

  void add_request(PendingWrite& w, const std::shared_ptr<Request>& r) {
    if (!w.request_set.insert(r.get()).second) return;
    w.requests.push_back(r);
    if (r->lost_tracking) w.tl.incomplete = true;
  }

  // A completed bio: its pages (buffered writes) and its O_DIRECT writers.
  void bio_written(Bio& bio, const std::shared_ptr<Request>& r) {
    std::vector<WriteId> done;
    for (WriteId id : bio.direct_writers) {
      auto it = writes.find(id);
      if (it == writes.end()) continue;
      PendingWrite& w = it->second;
      add_request(w, r);
      w.direct_pages_left -= std::min(w.direct_pages_left, bio_pages(bio.ev));
      if (--w.direct_bios_left == 0) done.push_back(id);
    }
    bio.direct_writers.clear();

    if (has_file_pages(bio.ev)) {
      auto inode_it = inodes.find(InodeKey{bio.ev.file_dev, bio.ev.ino});
      if (inode_it != inodes.end() && !inode_it->second.writes.empty()) {
        Inode& inode = inode_it->second;
        for (std::size_t i = 0; i < bio.ev.nr_extents && i < kMaxBioExtents; ++i) {
          const Extent& e = bio.ev.extents[i];
          if (e.pages == 0) continue;
          const std::uint64_t first = e.index;
          const std::uint64_t last = e.index + e.pages - 1;
          const std::uint64_t from = first > inode.max_span ? first - inode.max_span : 0;
          for (auto w_it = inode.writes.lower_bound(from);
               w_it != inode.writes.end() && w_it->first <= last; ++w_it) {
            auto it = writes.find(w_it->second);
            if (it == writes.end()) continue;
            PendingWrite& w = it->second;
            // Writeback queued before the write started carried older contents.
            if (w.last_page < first || bio.queued_ns < w.tl.call.start_ns) continue;
            if (w.remaining.remove(first, last) == 0) continue;
            add_request(w, r);
            if (w.remaining.empty()) done.push_back(w_it->second);
          }
        }
      }
    }
    for (WriteId id : done) {
      auto it = writes.find(id);
      if (it != writes.end() && it->second.tl.state == WriteState::Dirty) become_written(it);
    }
  }

  void become_written(std::map<WriteId, PendingWrite>::iterator it) {
    PendingWrite& w = it->second;
    w.tl.state = WriteState::Written;
    unindex(it->first, w);
    Nanos written = 0;
    for (const auto& r : w.requests) written = std::max(written, r->tl.complete_ns.value_or(0));
    w.tl.written_ns = written;
    w.not_durable = 0;
    for (const auto& r : w.requests) {
      if (r->tl.durable_ns) {
        if (*r->tl.durable_ns >= w.durable_max) {
          w.durable_max = *r->tl.durable_ns;
          w.durable_via = r->via;
        }
      } else {
        r->durable_waiters.push_back(it->first);
        ++w.not_durable;
      }
    }
    if (w.not_durable == 0 && !w.requests.empty()) become_durable(it);
  }

  void become_durable(std::map<WriteId, PendingWrite>::iterator it) {
    PendingWrite& w = it->second;
    w.tl.state = WriteState::Durable;
    w.tl.durable_ns = w.durable_max;
    w.tl.durable_via = w.durable_via;
    emit_write(it, false);
  }

  void unindex(WriteId id, PendingWrite& w) {
    if (!w.indexed) return;
    w.indexed = false;
    auto inode_it = inodes.find(InodeKey{w.tl.call.dev, w.tl.call.ino});
    if (inode_it == inodes.end()) return;
    auto [lo, hi] = inode_it->second.writes.equal_range(w.first_page);
    for (auto i = lo; i != hi; ++i) {
      if (i->second == id) {
        inode_it->second.writes.erase(i);
        break;
      }
    }
  }

  void emit_write(std::map<WriteId, PendingWrite>::iterator it, bool aged_out) {
    PendingWrite& w = it->second;
    unindex(it->first, w);
    WriteTimeline tl = std::move(w.tl);
    tl.pages_pending = w.by_pages ? w.remaining.size() : w.direct_pages_left;
    tl.requests.clear();
    tl.requests.reserve(w.requests.size());
    for (const auto& r : w.requests) tl.requests.push_back(r->tl);
    if (aged_out) {
      tl.incomplete = true;
      ++stats.aged_out;
    }
    if (tl.incomplete) ++stats.incomplete;
    ++stats.writes;
    writes.erase(it);
    out->push_back(std::move(tl));
  }

  // A throttling pause of a thread that is inside a write: the write's record comes at exit.
  void on_throttle(const ThrottleEvent& ev) {
    auto& pauses = throttles_by_tid[ev.tid];
    pauses.push_back(ThrottlePause{ev.ts, ev.pause_ms, ev.dirty, ev.limit});
    if (pauses.size() > 256) pauses.pop_front();
  }

  // The causes and throttling pauses recorded for this call, taken out of the per-thread
  // holding places (so a later call of the thread never sees them).
  std::optional<SlowCauses> take_causes(const SyscallEvent& ev) {
    auto it = causes_by_tid.find(ev.tid);
    if (it == causes_by_tid.end()) return std::nullopt;
    CausesEvent c = it->second;
    causes_by_tid.erase(it);
    if (c.start_ns != ev.start_ns) return std::nullopt;
    SlowCauses out;
    out.throttle_ns = c.throttle_ns;
    out.writeback_wait_ns = c.writeback_wait_ns;
    out.blocked_ns = c.blocked_ns;
    out.runnable_ns = c.runnable_ns;
    const Nanos latency = ev.end_ns > ev.start_ns ? ev.end_ns - ev.start_ns : 0;
    const Nanos off = c.throttle_ns + c.writeback_wait_ns + c.blocked_ns + c.runnable_ns;
    out.on_cpu_ns = latency > off ? latency - off : 0;
    return out;
  }

  std::vector<ThrottlePause> take_throttles(const SyscallEvent& ev) {
    std::vector<ThrottlePause> found;
    auto it = throttles_by_tid.find(ev.tid);
    if (it == throttles_by_tid.end()) return found;
    for (const auto& p : it->second)
      if (p.ts >= ev.start_ns && p.ts <= ev.end_ns) found.push_back(p);
    throttles_by_tid.erase(it);
    return found;
  }

  void emit_failed(const SyscallEvent& ev) {
    WriteTimeline tl;
    tl.call = ev;
    tl.causes = take_causes(ev);
    tl.throttles = take_throttles(ev);
    tl.direct = ev.file_flags & file_flag::kDirect;
    tl.sync = ev.file_flags & (file_flag::kSync | file_flag::kDsync);
    tl.state = WriteState::Failed;
    tl.incomplete = lost_within(ev.start_ns, ev.end_ns);
    if (tl.incomplete) ++stats.incomplete;
    ++stats.writes;
    out->push_back(std::move(tl));
  }

  // The write bios an O_DIRECT write's thread queued during the call on the file's device.
  std::vector<std::shared_ptr<Bio>> direct_bios(const SyscallEvent& ev) {
    std::vector<std::shared_ptr<Bio>> found;
    auto it = bios_by_tid.find(ev.tid);
    if (it == bios_by_tid.end()) return found;
    const DevT disk = disk_of(ev.dev);
    for (auto b = it->second.rbegin(); b != it->second.rend(); ++b) {
      const BioEvent& bio = (*b)->ev;
      if (bio.ts < ev.start_ns) break;
      if (bio.ts > ev.end_ns || is_flush_bio(bio) || !is_data_op(bio.op)) continue;
      if (bio.bdev != ev.dev && bio.disk != disk) continue;
      found.push_back(*b);
    }
    std::reverse(found.begin(), found.end());
    return found;
  }

  void on_write(const SyscallEvent& ev) {
    if (ev.ret <= 0) {
      emit_failed(ev);
      return;
    }
    const WriteId id = next_write_id++;
    auto it = writes.emplace(id, PendingWrite{}).first;
    PendingWrite& w = it->second;
    w.tl.call = ev;
    w.tl.causes = take_causes(ev);
    w.tl.throttles = take_throttles(ev);
    w.tl.direct = ev.file_flags & file_flag::kDirect;
    w.tl.sync = ev.file_flags & (file_flag::kSync | file_flag::kDsync);
    w.tl.state = WriteState::Dirty;
    w.tl.incomplete = lost_within(ev.start_ns, ev.end_ns);

    if (w.tl.direct) {
      std::vector<std::shared_ptr<Bio>> bios = direct_bios(ev);
      if (!bios.empty()) {
        for (const auto& bio : bios) {
          const std::uint64_t pages = bio_pages(bio->ev);
          w.tl.pages += pages;
          const Request* r = bio->request.get();
          if (r != nullptr && r->lost_tracking) w.tl.incomplete = true;
          if (r != nullptr && r->data_done && r->tl.complete_ns) {
            if (r->tl.error == 0) {
              add_request(w, bio->request);
              continue;
            }
          } else {
            bio->direct_writers.push_back(id);
          }
          ++w.direct_bios_left;
          w.direct_pages_left += pages;
        }
        if (w.direct_bios_left == 0) become_written(it);
        return;
      }
      // No bio of its own: the filesystem fell back to buffered I/O, or records were lost.
      if (ev.pages_dirtied == 0) return;  // stays Dirty until finish()
    }
    track_buffered(it);
  }

  void track_buffered(std::map<WriteId, PendingWrite>::iterator it) {
    PendingWrite& w = it->second;
    const SyscallEvent& ev = w.tl.call;
    w.first_page = ev.pos >> kPageShift;
    w.last_page = (ev.pos + static_cast<std::uint64_t>(ev.ret) - 1) >> kPageShift;
    w.tl.pages = w.last_page - w.first_page + 1;
    w.by_pages = true;
    w.remaining.add(w.first_page, w.last_page);

    Inode& inode = inodes[InodeKey{ev.dev, ev.ino}];
    // Bios that already completed (writeback during a long, throttled write).
    for (auto b = inode.bios.rbegin(); b != inode.bios.rend() && !w.remaining.empty(); ++b) {
      const Bio& bio = **b;
      if (bio.ev.ts < ev.start_ns) break;  // ev.ts >= queued_ns: nothing older qualifies
      if (bio.queued_ns < ev.start_ns || !bio.request) continue;
      const Request& r = *bio.request;
      if (r.lost_tracking) w.tl.incomplete = true;
      if (!r.data_done || r.tl.error != 0) continue;
      bool carried = false;
      for (std::size_t i = 0; i < bio.ev.nr_extents && i < kMaxBioExtents; ++i) {
        const Extent& e = bio.ev.extents[i];
        if (e.pages > 0 && w.remaining.remove(e.index, e.index + e.pages - 1) > 0) carried = true;
      }
      if (carried) add_request(w, bio.request);
    }
    if (w.remaining.empty()) {
      become_written(it);
    } else {
      inode.writes.emplace(w.first_page, it->first);
      inode.max_span = std::max(inode.max_span, w.last_page - w.first_page);
      w.indexed = true;
    }
  }

  // ---- syncs ----

  void on_sync(const SyscallEvent& ev) {
    SyncTimeline s;
    s.call = ev;
    s.causes = take_causes(ev);
    s.incomplete = lost_within(ev.start_ns, ev.end_ns);
    const Nanos start = ev.start_ns;
    const Nanos end = std::max(ev.end_ns, ev.start_ns);
    std::array<std::vector<std::pair<Nanos, Nanos>>, 4> cats;  // flush, journal, data, writeback

    // Its own bios: the data writeback it submitted.
    std::vector<std::shared_ptr<Request>> requests;
    std::unordered_set<const Request*> seen;
    std::optional<Nanos> last_bio;
    if (auto it = bios_by_tid.find(ev.tid); it != bios_by_tid.end()) {
      for (auto b = it->second.rbegin(); b != it->second.rend(); ++b) {
        const Bio& bio = **b;
        if (bio.ev.ts < start) break;
        if (bio.ev.ts > end || is_flush_bio(bio.ev)) continue;
        if (!last_bio || bio.ev.ts > *last_bio) last_bio = bio.ev.ts;
        if (bio.request && bio.request->tl.op != ReqOp::Flush &&
            seen.insert(bio.request.get()).second) {
          requests.push_back(bio.request);
          if (bio.request->lost_tracking) s.incomplete = true;
        }
      }
    }
    std::reverse(requests.begin(), requests.end());
    for (const auto& r : requests) {
      s.requests.push_back(r->tl);
      const RequestTimeline& tl = r->tl;
      const Nanos from = tl.issue_ns    ? *tl.issue_ns
                         : tl.insert_ns ? *tl.insert_ns
                                        : tl.queue_ns.value_or(start);
      cats[2].emplace_back(from, tl.complete_ns.value_or(end));
    }
    if (last_bio) cats[3].emplace_back(start, *last_bio);

    // Flushes on its device completing inside the call.
    std::vector<const FlushRecord*> flushes;
    auto collect_flushes = [&](const Disk& disk) {
      for (auto f = disk.flushes.rbegin(); f != disk.flushes.rend(); ++f) {
        if (f->end < start) break;
        if (f->end <= end) flushes.push_back(&*f);
      }
    };
    if (ev.dev == 0) {
      for (const auto& [dev, disk] : disks) collect_flushes(disk);
    } else if (auto it = disks.find(disk_of(ev.dev)); it != disks.end()) {
      collect_flushes(it->second);
    }
    std::sort(flushes.begin(), flushes.end(), [](const FlushRecord* a, const FlushRecord* b) {
      return a->end != b->end ? a->end < b->end : a->start < b->start;
    });
    for (const FlushRecord* f : flushes) {
      s.flushes.push_back(f->request);
      cats[0].emplace_back(f->start, f->end);
    }

    // Journal commits on its device overlapping the call.
    auto collect_commits = [&](const std::deque<std::shared_ptr<JournalCommit>>& list) {
      for (auto c = list.rbegin(); c != list.rend(); ++c) {
        const JournalCommit& commit = **c;
        if (commit.end_ns && *commit.end_ns < start) break;  // commits of a journal run in turn
        const Nanos from = first_known(commit);
        const Nanos to = commit.end_ns.value_or(end);
        if (from > end) continue;
        s.commits.push_back(commit);
        cats[1].emplace_back(from, to);
      }
    };
    if (ev.dev == 0) {
      for (const auto& [dev, list] : commits) collect_commits(list);
    } else if (auto it = commits.find(ev.dev); it != commits.end()) {
      collect_commits(it->second);
    }
    std::sort(s.commits.begin(), s.commits.end(),
              [](const JournalCommit& a, const JournalCommit& b) {
                return first_known(a) < first_known(b);
              });

    s.phases = partition_phases(start, end, cats);
    if (s.incomplete) ++stats.incomplete;
    ++stats.syncs;
    out->push_back(std::move(s));
  }

  // ---- journal, nvme, lost ----

  void on_journal(const JournalEvent& ev) {
    const std::uint64_t key = (static_cast<std::uint64_t>(ev.dev) << 32) | ev.transaction;
    std::shared_ptr<JournalCommit> commit;
    if (auto it = open_commits.find(key); it != open_commits.end()) commit = it->second;
    if (!commit || ev.phase == JournalPhase::Start) {
      commit = std::make_shared<JournalCommit>();
      commit->dev = ev.dev;
      commit->transaction = ev.transaction;
      open_commits[key] = commit;
      auto& list = commits[ev.dev];
      list.push_back(commit);
      trim_count(list, limits.max_history_per_key);
    }
    switch (ev.phase) {
      case JournalPhase::Start: commit->start_ns = ev.ts; break;
      case JournalPhase::Locking: commit->locking_ns = ev.ts; break;
      case JournalPhase::Flushing: commit->flushing_ns = ev.ts; break;
      case JournalPhase::Logging: commit->logging_ns = ev.ts; break;
      case JournalPhase::End:
        commit->end_ns = ev.ts;
        open_commits.erase(key);
        break;
    }
  }

  static NvmeCommand nvme_command(const NvmeEvent& ev) {
    NvmeCommand cmd;
    cmd.qid = ev.qid;
    cmd.cid = ev.cid;
    cmd.opcode = ev.opcode;
    cmd.nsid = ev.nsid;
    cmd.fua = (ev.control >> 14) & 1u;
    return cmd;
  }

  void on_nvme(const NvmeEvent& ev) {
    auto it = active.find(ev.rq);
    // The driver builds its command (nvme_setup_cmd) before blk_mq_start_request() fires
    // block_rq_issue: a setup belongs to the pointer's next lifetime unless the current one
    // is still waiting to be issued (inserted, not yet issued) or in flight without one.
    const bool current_takes_setup = it != active.end() && !it->second->data_done &&
                                     (!it->second->tl.issue_ns || !it->second->tl.nvme);
    if (ev.kind == NvmeEventKind::Setup) {
      NvmeCommand cmd = nvme_command(ev);
      cmd.submit_ns = ev.ts;
      if (current_takes_setup) {
        it->second->tl.nvme = cmd;
      } else {
        nvme_before_issue[ev.rq] = cmd;
        trim_nvme_before_issue(ev.ts);
      }
      return;
    }
    if (it == active.end() || it->second->data_done) return;  // completion of an unseen one
    RequestTimeline& tl = it->second->tl;
    if (!tl.nvme) tl.nvme = nvme_command(ev);
    tl.nvme->complete_ns = ev.ts;
    tl.nvme->status = ev.status;
  }

  // Setups whose issue never came (records lost, or a request the filter dropped) must not
  // pile up: keep them for a second at most.
  void trim_nvme_before_issue(Nanos now) {
    if (nvme_before_issue.size() < 1024) return;
    std::erase_if(nvme_before_issue, [now](const auto& entry) {
      return entry.second.submit_ns && *entry.second.submit_ns + 1'000'000'000ull < now;
    });
  }

  void on_lost(const LostEvent& ev) {
    lost.push_back(ev.ts);
    for (auto& [id, w] : writes) w.tl.incomplete = true;
    // A lifetime in flight may have lost its completion and been reused: a later completion
    // for its pointer could belong to another request. Abandon them all rather than guess.
    for (auto& [ptr, r] : active) {
      r->lost_tracking = true;
      abandon(*r);
    }
    active.clear();
  }

  // ---- bounds ----

  void age_out() {
    while (!writes.empty()) {
      auto it = writes.begin();
      const bool too_many = writes.size() > limits.max_pending_writes;
      const bool too_old = it->second.tl.call.end_ns + limits.max_pending_age_ns < now;
      if (!too_many && !too_old) break;
      emit_write(it, true);
    }
  }

  template <typename T, typename Ts>
  void prune_front(std::deque<T>& d, Ts ts_of) {
    while (!d.empty() && expired(ts_of(d.front()))) d.pop_front();
  }

  void sweep() {
    for (auto it = bios_by_tid.begin(); it != bios_by_tid.end();) {
      prune_front(it->second, [](const auto& b) { return b->ev.ts; });
      it = it->second.empty() ? bios_by_tid.erase(it) : std::next(it);
    }
    for (auto it = inodes.begin(); it != inodes.end();) {
      prune_front(it->second.bios, [](const auto& b) { return b->ev.ts; });
      const bool unused = it->second.bios.empty() && it->second.writes.empty();
      it = unused ? inodes.erase(it) : std::next(it);
    }
    for (auto& [dev, disk] : disks) {
      while (!disk.pending_order.empty()) {
        std::shared_ptr<Bio> bio = disk.pending_order.front();
        if (bio->pending && !expired(bio->ev.ts)) break;
        disk.pending_order.pop_front();
        if (bio->pending) {
          remove_pending(disk, *bio);
          ++stats.orphan_bios;
        }
      }
      while (!disk.pending_flush_bios.empty() && expired(disk.pending_flush_bios.front()->ev.ts)) {
        disk.pending_flush_bios.pop_front();
        ++stats.orphan_bios;
      }
      prune_front(disk.awaiting_flush, [](const auto& r) { return *r->tl.complete_ns; });
      prune_front(disk.flushes, [](const FlushRecord& f) { return f.end; });
    }
    for (auto it = commits.begin(); it != commits.end();) {
      prune_front(it->second, [](const auto& c) { return c->end_ns.value_or(first_known(*c)); });
      it = it->second.empty() ? commits.erase(it) : std::next(it);
    }
    for (auto it = open_commits.begin(); it != open_commits.end();) {
      it = expired(first_known(*it->second)) ? open_commits.erase(it) : std::next(it);
    }
    prune_front(lost, [](Nanos t) { return t; });
    last_sweep = now;
  }

  void maybe_sweep() {
    const Nanos period = std::max<Nanos>(limits.history_ns / 8, 1);
    if (now >= last_sweep + period) sweep();
  }

  void feed(const Event& event) {
    std::visit(
        [this](const auto& ev) {
          using T = std::decay_t<decltype(ev)>;
          if constexpr (std::is_same_v<T, SyscallEvent>) {
            now = std::max(now, ev.end_ns);
            if (is_write_syscall(ev.syscall)) {
              on_write(ev);
            } else {
              on_sync(ev);
            }
          } else {
            now = std::max(now, ev.ts);
            if constexpr (std::is_same_v<T, BioEvent>) on_bio(ev);
            if constexpr (std::is_same_v<T, RequestEvent>) on_request(ev);
            if constexpr (std::is_same_v<T, JournalEvent>) on_journal(ev);
            if constexpr (std::is_same_v<T, NvmeEvent>) on_nvme(ev);
            if constexpr (std::is_same_v<T, LostEvent>) on_lost(ev);
            if constexpr (std::is_same_v<T, CausesEvent>) causes_by_tid[ev.tid] = ev;
            if constexpr (std::is_same_v<T, ThrottleEvent>) on_throttle(ev);
          }
        },
        event);
    age_out();
    maybe_sweep();
  }
};

Stitcher::Stitcher(StitchLimits limits) : state_(std::make_unique<State>(limits)) {}

Stitcher::~Stitcher() = default;

void Stitcher::add_device(const DeviceInfo& info) {
  state_->devices[info.dev] = info;
  const DevT disk = info.disk != 0 ? info.disk : info.dev;
  // The disk's own entry decides; a partition's entry only fills in for a missing disk.
  if (info.dev == disk || !state_->disk_write_cache.contains(disk)) {
    state_->disk_write_cache[disk] = info.volatile_write_cache;
  }
}

void Stitcher::feed(const Event& event, std::vector<Timeline>& out) {
  state_->out = &out;
  state_->feed(event);
  state_->out = nullptr;
}

void Stitcher::finish(std::vector<Timeline>& out) {
  state_->out = &out;
  while (!state_->writes.empty()) state_->emit_write(state_->writes.begin(), false);
  state_->out = nullptr;
}

const StitchStats& Stitcher::stats() const {
  return state_->stats;
}

}  // namespace wp
