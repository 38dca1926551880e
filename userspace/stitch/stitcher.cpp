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

const char* sync_phase_name(SyncPhase p) {
  switch (p) {
    case SyncPhase::Flush: return "flush";
    case SyncPhase::Journal: return "journal";
    case SyncPhase::DataIo: return "data_io";
    case SyncPhase::Writeback: return "writeback";
    case SyncPhase::Other: return "other";
  }
  return "";
}

const char* sync_phase_label(SyncPhase p) {
  return p == SyncPhase::DataIo ? "data I/O" : sync_phase_name(p);
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

// Pending writes live in batches (see Batch); a write is a member of one.
using BatchId = std::uint64_t;
struct MemberRef {
  BatchId batch = 0;
  std::uint32_t index = 0;
};

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
  std::vector<BatchId> direct_writers;  // O_DIRECT writes waiting for it to complete
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
  std::vector<MemberRef> durable_waiters;  // written writes waiting for it to become durable
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
  std::uint64_t bio_count = 0;            // bios with its pages seen so far
  Nanos last_bio_ns = 0;                  // queue time of the newest of them
  std::vector<BatchId> batches;           // batches with pages not yet written
  std::vector<BatchId> open_batches;      // the ones new writes may still join
};

// A few indices stored inline: most writes are carried by one or two requests.
class SmallIndexList {
 public:
  void push_back(std::uint32_t v) {
    if (size_ < kInline) {
      inline_[size_++] = v;
      return;
    }
    if (!more_) more_ = std::make_unique<std::vector<std::uint32_t>>();
    more_->push_back(v);
    ++size_;
  }
  bool empty() const { return size_ == 0; }
  std::uint32_t size() const { return size_; }
  std::uint32_t operator[](std::uint32_t i) const {
    return i < kInline ? inline_[i] : (*more_)[i - kInline];
  }
  std::uint32_t back() const { return (*this)[size_ - 1]; }

 private:
  static constexpr std::uint32_t kInline = 2;
  std::array<std::uint32_t, kInline> inline_{};
  std::uint32_t size_ = 0;
  std::unique_ptr<std::vector<std::uint32_t>> more_;
};

// What only slow or throttled calls carry: kept out of line.
struct MemberExtras {
  std::optional<SlowCauses> causes;
  std::vector<ThrottlePause> throttles;
};

// One pending write: the fields of its call that are its own (the batch holds the rest).
struct Member {
  Nanos start_ns = 0;
  Nanos end_ns = 0;
  std::int64_t ret = 0;
  std::uint64_t pos = 0;
  std::uint64_t count = 0;
  std::uint64_t seq = 0;  // arrival order among all writes
  Nanos throttle_ns = 0;
  std::uint32_t pages_dirtied = 0;
  std::uint32_t dirty_folios = 0;
  std::uint32_t throttle_events = 0;
  std::uint32_t writeback_waits = 0;
  std::uint32_t pages_left = 0;  // buffered: its pages not yet seen written
  std::uint32_t not_durable = 0;
  Syscall syscall = Syscall::Write;
  WriteState state = WriteState::Dirty;
  bool incomplete = false;
  bool emitted = false;
  SmallIndexList requests;  // indices into its batch's requests
  std::unique_ptr<MemberExtras> extras;

  std::uint64_t first_page() const { return pos >> kPageShift; }
  std::uint64_t last_page() const {
    return (pos + static_cast<std::uint64_t>(ret) - 1) >> kPageShift;
  }
};

// Writes of one thread to one file, through one fd, waiting for the same writeback: their
// call identity, page set and requests are kept once. A buffered write joins the thread's
// open batch of the file if no bio with the file's pages was queued since the batch opened
// or since the write started, and it starts at or after the batch's last write's first page.
// Then every bio queued later was queued after every member started, so it carries their
// data for every page of the batch it holds: the page set can be shared. The first such bio
// closes the batch. Other writes (O_DIRECT, or writes that saw writeback during their call)
// are batches of one, with the same exact rules.
struct Batch {
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::string comm;
  int fd = -1;
  DevT dev = 0;
  std::uint64_t ino = 0;
  std::uint32_t file_flags = 0;
  bool by_pages = false;          // tracked by page range (buffered, or O_DIRECT fallen back to it)
  bool indexed = false;           // in its inode's batch list
  std::uint64_t open_at_bio = 0;  // the inode's bio count when it opened; ~0: closed
  Nanos max_start = 0;
  std::uint64_t min_page = ~0ull;
  std::uint64_t max_page = 0;
  std::uint64_t max_member_span = 0;  // largest last_page - first_page of a member
  PageSet remaining;                  // pages of its members not yet seen written
  std::vector<std::shared_ptr<Request>> requests;
  std::deque<Member>
      members;           // ordered by first page when by_pages (a deque: no copies as it grows)
  std::size_t live = 0;  // members not yet emitted
  std::size_t first_live = 0;  // no member before this one is live
  std::uint64_t direct_bios_left = 0;
  std::uint64_t direct_pages_left = 0;
  std::uint64_t direct_pages = 0;  // pages its O_DIRECT bios carry

  bool same_writer(const SyscallEvent& ev) const {
    return pid == ev.pid && tid == ev.tid && fd == ev.fd && dev == ev.dev && ino == ev.ino &&
           file_flags == ev.file_flags && comm == ev.comm;
  }
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

// Splits [start, end] among the categories by priority (index 0 highest, SyncPhase order);
// time covered by none is `other`. The segments tile [start, end], so the parts add up exactly.
void partition_phases(Nanos start, Nanos end,
                      const std::array<std::vector<std::pair<Nanos, Nanos>>, 4>& cats,
                      SyncPhases& phases, std::vector<PhaseSegment>& segments) {
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
  std::array<Nanos, kSyncPhaseCount> totals{};
  std::array<int, 4> active{};
  Nanos prev = start;
  auto account = [&](Nanos until) {
    if (until <= prev) return;
    int owner = static_cast<int>(SyncPhase::Other);
    for (int c = 0; c < 4; ++c) {
      if (active[c] > 0) {
        owner = c;
        break;
      }
    }
    totals[owner] += until - prev;
    const auto phase = static_cast<SyncPhase>(owner);
    if (!segments.empty() && segments.back().phase == phase) {
      segments.back().end_ns = until;
    } else {
      segments.push_back(PhaseSegment{phase, prev, until});
    }
    prev = until;
  };
  for (const Edge& e : edges) {
    account(e.at);
    active[e.cat] += e.delta;
  }
  account(end);
  phases.flush_ns = totals[static_cast<int>(SyncPhase::Flush)];
  phases.journal_ns = totals[static_cast<int>(SyncPhase::Journal)];
  phases.data_io_ns = totals[static_cast<int>(SyncPhase::DataIo)];
  phases.writeback_ns = totals[static_cast<int>(SyncPhase::Writeback)];
  phases.other_ns = totals[static_cast<int>(SyncPhase::Other)];
}

// Open batches a file keeps for new writes to join (one per writing thread, normally).
constexpr std::size_t kMaxOpenBatchesPerInode = 8;

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
  BatchId next_batch_id = 1;
  std::uint64_t next_write_seq = 1;
  std::size_t pending_writes = 0;  // live members of all batches
  std::optional<Nanos> last_lost;  // newest loss: pending writes older than it are incomplete

  std::unordered_map<DevT, Disk> disks;
  std::unordered_map<std::uint64_t, std::shared_ptr<Request>> active;  // rq pointer -> lifetime
  std::unordered_map<std::uint64_t, NvmeCommand> nvme_before_issue;    // rq pointer -> command
  std::unordered_map<std::uint32_t, CausesEvent> causes_by_tid;        // until its syscall's record
  std::unordered_map<std::uint32_t, std::deque<ThrottlePause>> throttles_by_tid;
  std::unordered_map<InodeKey, Inode, InodeKeyHash> inodes;
  std::unordered_map<std::uint32_t, std::deque<std::shared_ptr<Bio>>> bios_by_tid;
  std::map<BatchId, Batch> batches;  // pending writes, batches in creation order
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
      ++inode.bio_count;
      inode.last_bio_ns = std::max(inode.last_bio_ns, bio->queued_ns);
      inode.open_batches.clear();  // later writes must not share pages with earlier ones
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
    std::vector<MemberRef> waiters = std::move(r.durable_waiters);
    r.durable_waiters.clear();
    for (const MemberRef& ref : waiters) {
      auto it = batches.find(ref.batch);
      if (it == batches.end()) continue;
      Member& m = it->second.members[ref.index];
      if (m.emitted || m.state != WriteState::Written) continue;
      if (--m.not_durable == 0) {
        m.state = WriteState::Durable;
        emit_member(it, ref.index, Eviction::None);
      }
    }
  }

  // ---- writes ----

  enum class Eviction { None, AgedOut, Evicted };

  // Adds request `r` to member `index` of `b` (once), returning nothing.
  void add_request(Batch& b, std::uint32_t index, const std::shared_ptr<Request>& r) {
    std::uint32_t at = 0;
    if (!b.requests.empty() && b.requests.back() == r) {
      at = static_cast<std::uint32_t>(b.requests.size() - 1);
    } else {
      auto found = std::find(b.requests.begin(), b.requests.end(), r);
      at = static_cast<std::uint32_t>(found - b.requests.begin());
      if (found == b.requests.end()) b.requests.push_back(r);
    }
    SmallIndexList& list = b.members[index].requests;
    for (std::uint32_t i = list.size(); i-- > 0;) {
      if (list[i] == at) return;
    }
    list.push_back(at);
  }

  // A completed bio: its pages (buffered writes) and its O_DIRECT writers.
  void bio_written(Bio& bio, const std::shared_ptr<Request>& r) {
    for (BatchId id : bio.direct_writers) {
      auto it = batches.find(id);
      if (it == batches.end() || it->second.members.empty()) continue;
      Batch& b = it->second;
      add_request(b, 0, r);
      b.direct_pages_left -= std::min(b.direct_pages_left, bio_pages(bio.ev));
      if (--b.direct_bios_left == 0 && b.members[0].state == WriteState::Dirty) {
        become_written(it, 0);
      }
    }
    bio.direct_writers.clear();

    if (!has_file_pages(bio.ev)) return;
    auto inode_it = inodes.find(InodeKey{bio.ev.file_dev, bio.ev.ino});
    if (inode_it == inodes.end() || inode_it->second.batches.empty()) return;
    // Copied: becoming written unindexes batches from the inode's list.
    const std::vector<BatchId> candidates = inode_it->second.batches;
    for (BatchId id : candidates) {
      auto it = batches.find(id);
      if (it == batches.end()) continue;
      Batch& b = it->second;
      // Writeback queued before its writes started carried older contents.
      if (bio.queued_ns < b.max_start) continue;
      std::vector<std::uint32_t> done;
      for (std::size_t i = 0; i < bio.ev.nr_extents && i < kMaxBioExtents; ++i) {
        const Extent& e = bio.ev.extents[i];
        if (e.pages == 0) continue;
        const std::uint64_t first = e.index;
        const std::uint64_t last = e.index + e.pages - 1;
        if (last < b.min_page || first > b.max_page) continue;
        b.remaining.remove_each(first, last, [&](std::uint64_t lo, std::uint64_t hi) {
          pages_written(b, lo, hi, r, done);
        });
      }
      if (b.remaining.empty()) unindex(it->first, b);
      for (std::uint32_t index : done) {
        if (b.members[index].state == WriteState::Dirty) become_written(it, index);
      }
    }
  }

  // Pages [lo, hi] of batch `b` were written by `r`: every member holding some of them loses
  // them (each page leaves the batch's set once, so each member counts each page once).
  void pages_written(Batch& b, std::uint64_t lo, std::uint64_t hi,
                     const std::shared_ptr<Request>& r, std::vector<std::uint32_t>& done) {
    // Members are ordered by first page; one overlapping [lo, hi] starts in
    // [lo - max_member_span, hi].
    const std::uint64_t from = lo > b.max_member_span ? lo - b.max_member_span : 0;
    auto begin =
        std::lower_bound(b.members.begin(), b.members.end(), from,
                         [](const Member& m, std::uint64_t page) { return m.first_page() < page; });
    for (auto m = begin; m != b.members.end() && m->first_page() <= hi; ++m) {
      if (m->emitted || m->state != WriteState::Dirty) continue;
      const std::uint64_t a = std::max(lo, m->first_page());
      const std::uint64_t z = std::min(hi, m->last_page());
      if (a > z) continue;
      const auto index = static_cast<std::uint32_t>(m - b.members.begin());
      add_request(b, index, r);
      m->pages_left -=
          static_cast<std::uint32_t>(std::min<std::uint64_t>(m->pages_left, z - a + 1));
      if (m->pages_left == 0) done.push_back(index);
    }
  }

  void become_written(std::map<BatchId, Batch>::iterator it, std::uint32_t index) {
    Batch& b = it->second;
    Member& m = b.members[index];
    m.state = WriteState::Written;
    m.not_durable = 0;
    for (std::uint32_t i = 0; i < m.requests.size(); ++i) {
      Request& r = *b.requests[m.requests[i]];
      if (r.tl.durable_ns) continue;
      r.durable_waiters.push_back(MemberRef{it->first, index});
      ++m.not_durable;
    }
    if (m.not_durable == 0 && !m.requests.empty()) {
      m.state = WriteState::Durable;
      emit_member(it, index, Eviction::None);
    }
  }

  void unindex(BatchId id, Batch& b) {
    if (!b.indexed) return;
    b.indexed = false;
    auto inode_it = inodes.find(InodeKey{b.dev, b.ino});
    if (inode_it == inodes.end()) return;
    std::erase(inode_it->second.batches, id);
    std::erase(inode_it->second.open_batches, id);
  }

  // The timeline of member `index` as it stands, from its batch and its requests.
  WriteTimeline timeline_of(const Batch& b, Member& m) const {
    WriteTimeline tl;
    SyscallEvent& call = tl.call;
    call.start_ns = m.start_ns;
    call.end_ns = m.end_ns;
    call.pid = b.pid;
    call.tid = b.tid;
    call.comm = b.comm;
    call.syscall = m.syscall;
    call.fd = b.fd;
    call.dev = b.dev;
    call.ino = b.ino;
    call.file_flags = b.file_flags;
    call.ret = m.ret;
    call.pos = m.pos;
    call.count = m.count;
    call.pages_dirtied = m.pages_dirtied;
    call.dirty_folios = m.dirty_folios;
    call.throttle_ns = m.throttle_ns;
    call.throttle_events = m.throttle_events;
    call.writeback_waits = m.writeback_waits;
    tl.direct = b.file_flags & file_flag::kDirect;
    tl.sync = b.file_flags & (file_flag::kSync | file_flag::kDsync);
    tl.state = m.state;
    tl.incomplete = m.incomplete || (last_lost && *last_lost >= m.start_ns);
    if (b.by_pages) {
      tl.pages = m.last_page() - m.first_page() + 1;
      tl.pages_pending = m.pages_left;
    } else {
      tl.pages = b.direct_pages;
      tl.pages_pending = b.direct_pages_left;
    }
    tl.requests.reserve(m.requests.size());
    Nanos written = 0;
    Nanos durable = 0;
    for (std::uint32_t i = 0; i < m.requests.size(); ++i) {
      const Request& r = *b.requests[m.requests[i]];
      tl.requests.push_back(r.tl);
      if (r.lost_tracking) tl.incomplete = true;
      written = std::max(written, r.tl.complete_ns.value_or(0));
      if (r.tl.durable_ns && *r.tl.durable_ns >= durable) {
        durable = *r.tl.durable_ns;
        tl.durable_via = r.via;
      }
    }
    if (m.state == WriteState::Written || m.state == WriteState::Durable) tl.written_ns = written;
    if (m.state == WriteState::Durable) {
      tl.durable_ns = durable;
    } else {
      tl.durable_via = DurableVia::None;
    }
    if (m.extras) {
      tl.causes = m.extras->causes;
      tl.throttles = std::move(m.extras->throttles);
    }
    return tl;
  }

  void emit_member(std::map<BatchId, Batch>::iterator it, std::uint32_t index, Eviction eviction) {
    Batch& b = it->second;
    Member& m = b.members[index];
    if (m.emitted) return;
    WriteTimeline tl = timeline_of(b, m);
    if (eviction != Eviction::None) {
      tl.incomplete = true;
      ++(eviction == Eviction::AgedOut ? stats.aged_out : stats.evicted);
    }
    if (tl.incomplete) ++stats.incomplete;
    ++stats.writes;
    m.emitted = true;
    m.extras.reset();
    --pending_writes;
    while (b.first_live < b.members.size() && b.members[b.first_live].emitted) ++b.first_live;
    if (--b.live == 0) {
      unindex(it->first, b);
      batches.erase(it);
    }
    out->push_back(std::move(tl));
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

  Member member_of(const SyscallEvent& ev) {
    Member m;
    m.start_ns = ev.start_ns;
    m.end_ns = ev.end_ns;
    m.ret = ev.ret;
    m.pos = ev.pos;
    m.count = ev.count;
    m.seq = next_write_seq++;
    m.throttle_ns = ev.throttle_ns;
    m.pages_dirtied = ev.pages_dirtied;
    m.dirty_folios = ev.dirty_folios;
    m.throttle_events = ev.throttle_events;
    m.writeback_waits = ev.writeback_waits;
    m.syscall = ev.syscall;
    m.incomplete = lost_within(ev.start_ns, ev.end_ns);
    std::optional<SlowCauses> causes = take_causes(ev);
    std::vector<ThrottlePause> throttles = take_throttles(ev);
    if (causes || !throttles.empty()) {
      m.extras = std::make_unique<MemberExtras>();
      m.extras->causes = causes;
      m.extras->throttles = std::move(throttles);
    }
    return m;
  }

  std::map<BatchId, Batch>::iterator new_batch(const SyscallEvent& ev, Member m) {
    const BatchId id = next_batch_id++;
    Batch& b = batches[id];
    b.pid = ev.pid;
    b.tid = ev.tid;
    b.comm = ev.comm;
    b.fd = ev.fd;
    b.dev = ev.dev;
    b.ino = ev.ino;
    b.file_flags = ev.file_flags;
    b.open_at_bio = ~0ull;
    b.max_start = m.start_ns;
    b.members.push_back(std::move(m));
    b.live = 1;
    ++pending_writes;
    return batches.find(id);
  }

  void on_write(const SyscallEvent& ev) {
    if (ev.ret <= 0) {
      emit_failed(ev);
      return;
    }
    if (!(ev.file_flags & file_flag::kDirect)) {
      track_buffered(ev);
      return;
    }
    auto it = new_batch(ev, member_of(ev));
    Batch& b = it->second;
    std::vector<std::shared_ptr<Bio>> bios = direct_bios(ev);
    if (!bios.empty()) {
      for (const auto& bio : bios) {
        const std::uint64_t pages = bio_pages(bio->ev);
        b.direct_pages += pages;
        const Request* r = bio->request.get();
        if (r != nullptr && r->lost_tracking) b.members[0].incomplete = true;
        if (r != nullptr && r->data_done && r->tl.complete_ns) {
          if (r->tl.error == 0) {
            add_request(b, 0, bio->request);
            continue;
          }
        } else {
          bio->direct_writers.push_back(it->first);
        }
        ++b.direct_bios_left;
        b.direct_pages_left += pages;
      }
      if (b.direct_bios_left == 0) become_written(it, 0);
      return;
    }
    // No bio of its own: the filesystem fell back to buffered I/O, or records were lost.
    if (ev.pages_dirtied == 0) return;  // stays Dirty until finish()
    batches.erase(it);
    --pending_writes;
    track_buffered(ev);
  }

  // The open batch of `inode` that a buffered write `ev` may join, or batches.end().
  std::map<BatchId, Batch>::iterator joinable_batch(const Inode& inode, const SyscallEvent& ev) {
    // A bio of the file queued since the write started may carry part of its data: such a
    // write is tracked alone, with the exact per-bio rules.
    if (inode.bio_count > 0 && inode.last_bio_ns >= ev.start_ns) return batches.end();
    const std::uint64_t first_page = ev.pos >> kPageShift;
    for (BatchId id : inode.open_batches) {
      auto it = batches.find(id);
      if (it == batches.end()) continue;
      const Batch& b = it->second;
      if (b.open_at_bio != inode.bio_count || !b.same_writer(ev) || b.members.empty()) continue;
      if (b.members.back().first_page() > first_page) continue;  // keep members ordered
      if (b.members.size() >= limits.max_batch_writes) continue;
      return it;
    }
    return batches.end();
  }

  void track_buffered(const SyscallEvent& ev) {
    Inode& inode = inodes[InodeKey{ev.dev, ev.ino}];
    Member m = member_of(ev);
    const std::uint64_t first = m.first_page();
    const std::uint64_t last = m.last_page();
    m.pages_left = static_cast<std::uint32_t>(last - first + 1);

    auto it = joinable_batch(inode, ev);
    if (it != batches.end()) {
      Batch& b = it->second;
      b.members.push_back(std::move(m));
      ++b.live;
      ++pending_writes;
      b.max_start = std::max(b.max_start, ev.start_ns);
      b.min_page = std::min(b.min_page, first);
      b.max_page = std::max(b.max_page, last);
      b.max_member_span = std::max(b.max_member_span, last - first);
      b.remaining.add(first, last);
      return;
    }

    it = new_batch(ev, std::move(m));
    Batch& b = it->second;
    b.by_pages = true;
    b.min_page = first;
    b.max_page = last;
    b.max_member_span = last - first;
    b.remaining.add(first, last);
    Member& w = b.members[0];
    // Bios that already completed (writeback during a long, throttled write).
    for (auto bio_it = inode.bios.rbegin(); bio_it != inode.bios.rend() && !b.remaining.empty();
         ++bio_it) {
      const Bio& bio = **bio_it;
      if (bio.ev.ts < ev.start_ns) break;  // ev.ts >= queued_ns: nothing older qualifies
      if (bio.queued_ns < ev.start_ns || !bio.request) continue;
      const Request& r = *bio.request;
      if (r.lost_tracking) w.incomplete = true;
      if (!r.data_done || r.tl.error != 0) continue;
      for (std::size_t i = 0; i < bio.ev.nr_extents && i < kMaxBioExtents; ++i) {
        const Extent& e = bio.ev.extents[i];
        if (e.pages == 0) continue;
        const std::uint64_t removed = b.remaining.remove(e.index, e.index + e.pages - 1);
        if (removed == 0) continue;
        add_request(b, 0, bio.request);
        w.pages_left -= static_cast<std::uint32_t>(std::min<std::uint64_t>(w.pages_left, removed));
      }
    }
    if (b.remaining.empty()) {
      become_written(it, 0);
      return;
    }
    inode.batches.push_back(it->first);
    b.indexed = true;
    if (inode.bio_count == 0 || inode.last_bio_ns < ev.start_ns) {
      b.open_at_bio = inode.bio_count;
      inode.open_batches.push_back(it->first);
      if (inode.open_batches.size() > kMaxOpenBatchesPerInode) {
        inode.open_batches.erase(inode.open_batches.begin());
      }
    }
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

    partition_phases(start, end, cats, s.phases, s.segments);
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
    last_lost = std::max(last_lost.value_or(0), ev.ts);  // pending writes read it at emission
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
    while (!batches.empty()) {
      auto it = batches.begin();
      Batch& b = it->second;
      const Member& m = b.members[b.first_live];
      const bool too_many = pending_writes > limits.max_pending_writes;
      const bool too_old = m.end_ns + limits.max_pending_age_ns < now;
      if (!too_many && !too_old) break;
      emit_member(it, static_cast<std::uint32_t>(b.first_live),
                  too_old ? Eviction::AgedOut : Eviction::Evicted);
    }
  }

  // End of trace: every pending write, in arrival order, with its last state.
  void finish() {
    std::vector<std::tuple<std::uint64_t, BatchId, std::uint32_t>> order;
    order.reserve(pending_writes);
    for (const auto& [id, b] : batches) {
      for (std::size_t i = b.first_live; i < b.members.size(); ++i) {
        if (!b.members[i].emitted) order.emplace_back(b.members[i].seq, id, i);
      }
    }
    std::sort(order.begin(), order.end());
    for (const auto& [seq, id, index] : order) {
      auto it = batches.find(id);
      if (it != batches.end()) emit_member(it, index, Eviction::None);
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
      const bool unused = it->second.bios.empty() && it->second.batches.empty();
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
  state_->finish();
  state_->out = nullptr;
}

const StitchStats& Stitcher::stats() const {
  return state_->stats;
}

}  // namespace wp
