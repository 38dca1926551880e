// Stitched timelines: what the stitcher hands to the sinks. Snapshots (plain values): a sink
// never sees the stitcher's internal state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "decode/events.h"

namespace wp {

struct NvmeCommand {
  std::uint16_t qid = 0;
  std::uint16_t cid = 0;
  std::uint8_t opcode = 0;
  std::uint32_t nsid = 0;
  bool fua = false;
  std::optional<Nanos> submit_ns;
  std::optional<Nanos> complete_ns;
  std::optional<std::uint16_t> status;
};

// One lifetime of a block request (a kernel request pointer between issue and final completion).
struct RequestTimeline {
  DevT disk = 0;
  std::uint64_t sector = 0;
  std::uint32_t bytes = 0;
  ReqOp op = ReqOp::Write;
  std::uint32_t flags = 0;        // req_flag::*, the union of its bios' flags and the request's own
  std::optional<Nanos> queue_ns;  // first bio queued (submission)
  std::optional<Nanos> insert_ns;
  std::optional<Nanos> issue_ns;
  std::optional<Nanos> complete_ns;  // data transfer done
  std::optional<Nanos> durable_ns;   // FUA post-flush done, or covered by a later FLUSH
  std::int32_t error = 0;
  std::uint32_t bios = 0;  // number of bios stitched into it
  // Who submitted it (its first bio): thread, command, and why (write, fsync, periodic…).
  std::optional<std::uint32_t> submit_tid;
  std::string submit_comm;
  SubmitWhy submit_why = SubmitWhy::Unknown;
  std::optional<NvmeCommand> nvme;
};

// Where a slow call's time went: these add up to its latency.
struct SlowCauses {
  Nanos on_cpu_ns = 0;
  Nanos throttle_ns = 0;        // asleep in dirty throttling (balance_dirty_pages)
  Nanos writeback_wait_ns = 0;  // asleep waiting for a page under writeback
  Nanos blocked_ns = 0;         // asleep for anything else: locks, the journal, I/O
  Nanos runnable_ns = 0;        // preempted, waiting for a CPU
};

// One dirty-throttling pause inside a write, with the dirty state that caused it.
struct ThrottlePause {
  Nanos ts = 0;
  std::int64_t pause_ms = 0;
  std::uint64_t dirty_pages = 0;  // globally dirty at that moment
  std::uint64_t limit_pages = 0;  // the global dirty limit
};

enum class WriteState : std::uint8_t { Failed, Dirty, Written, Durable };
const char* write_state_name(WriteState s);

enum class DurableVia : std::uint8_t { None, Flush, Fua, NoWriteCache };
const char* durable_via_name(DurableVia v);  // "flush", "fua", "no-write-cache", "" for None

struct WriteTimeline {
  SyscallEvent call;
  bool direct = false;
  bool sync = false;  // O_SYNC/O_DSYNC
  WriteState state = WriteState::Dirty;
  std::uint64_t pages = 0;  // pages the write covers (buffered) or carried by its bios (direct)
  std::uint64_t pages_pending = 0;  // pages not yet seen completing in a request
  std::vector<RequestTimeline> requests;
  std::optional<Nanos> written_ns;
  std::optional<Nanos> durable_ns;
  DurableVia durable_via = DurableVia::None;
  bool incomplete = false;           // records were lost or the item aged out while pending
  std::optional<SlowCauses> causes;  // with --min-latency, for calls that slow
  std::vector<ThrottlePause> throttles;
};

struct JournalCommit {
  DevT dev = 0;
  std::uint32_t transaction = 0;
  std::optional<Nanos> start_ns;
  std::optional<Nanos> locking_ns;
  std::optional<Nanos> flushing_ns;
  std::optional<Nanos> logging_ns;
  std::optional<Nanos> end_ns;
};
// The earliest phase time a commit has (its start, unless that record was not seen).
Nanos first_known(const JournalCommit& c);

// The phases of a sync call, in the order they take precedence when they overlap (a flush in
// flight outranks a journal commit, which outranks data I/O, then writeback submission).
enum class SyncPhase : std::uint8_t { Flush, Journal, DataIo, Writeback, Other };
inline constexpr std::size_t kSyncPhaseCount = 5;
const char* sync_phase_name(SyncPhase p);   // "flush", "journal", "data_io", "writeback", "other"
const char* sync_phase_label(SyncPhase p);  // "flush", "journal", "data I/O", "writeback", "other"

// One stretch of a sync call spent in one phase. A sync's segments tile [start_ns, end_ns] in
// time order with no gaps, adjacent segments of one phase merged: sinks draw them as they are.
struct PhaseSegment {
  SyncPhase phase = SyncPhase::Other;
  Nanos start_ns = 0;
  Nanos end_ns = 0;
};

// Partition of an fsync's latency: these add up to end_ns - start_ns exactly.
struct SyncPhases {
  Nanos writeback_ns = 0;  // the caller submitting data writeback
  Nanos data_io_ns = 0;    // its data requests in flight
  Nanos journal_ns = 0;    // a journal commit on the device running
  Nanos flush_ns = 0;      // a cache FLUSH (or FUA post-flush) in flight
  Nanos other_ns = 0;
};

struct SyncTimeline {
  SyscallEvent call;
  SyncPhases phases;
  std::vector<PhaseSegment> segments;     // where each phase fell (phases are their totals)
  std::vector<RequestTimeline> requests;  // data requests carrying bios the caller submitted
  std::vector<RequestTimeline> flushes;   // flushes on the device completing inside the call
  std::vector<JournalCommit> commits;     // journal commits on the device overlapping the call
  bool incomplete = false;
  std::optional<SlowCauses> causes;  // with --min-latency, for calls that slow
};

using Timeline = std::variant<WriteTimeline, SyncTimeline>;

// When a request started: issue, else insert, else its first bio's queue time.
inline std::optional<Nanos> request_start(const RequestTimeline& r) {
  if (r.issue_ns) return r.issue_ns;
  if (r.insert_ns) return r.insert_ns;
  return r.queue_ns;
}

}  // namespace wp
