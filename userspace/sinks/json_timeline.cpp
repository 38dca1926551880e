// SPDX-License-Identifier: Apache-2.0
// The JSON Lines objects of the timelines: a write, a sync, and the requests, NVMe commands,
// journal commits and causes they hold.
#include "sinks/json_emitter.h"
#include "sinks/wait_text.h"

namespace wp::jsonl {

void write_json(Emitter& e, const NvmeCommand& nvme) {
  e.object(field("qid", nvme.qid), field("cid", nvme.cid), field("opcode", nvme.opcode),
           field("nsid", nvme.nsid), field("fua", nvme.fua), field("submit_ns", nvme.submit_ns),
           field("complete_ns", nvme.complete_ns), field("status", nvme.status));
}

// Who submitted a request (its earliest-queued bio), or null when that is not known.
struct Submitter {
  const RequestTimeline& request;
};

void write_json(Emitter& e, const Submitter& s) {
  const RequestTimeline& r = s.request;
  if (!r.submit_tid) return e.value(std::nullopt);
  e.object(field("tid", *r.submit_tid), field("comm", r.submit_comm),
           field("why", submit_why_name(r.submit_why)));
}

void write_json(Emitter& e, const RequestSubmitter& s) {
  e.object(field("tid", s.tid), field("comm", s.comm), field("why", submit_why_name(s.why)));
}

void write_json(Emitter& e, const RequestTimeline& r) {
  // A cache flush has no sector (the kernel leaves it at -1).
  const auto sector = r.op == ReqOp::Flush ? std::nullopt : std::optional(r.sector);
  e.object(field("dev", Device{r.disk}), field("sector", sector), field("bytes", r.bytes),
           field("rwbs", rwbs(r.op, r.flags, r.bytes)),
           field("fua", (r.flags & req_flag::kFua) != 0), field("bios", r.bios),
           field("submitter", Submitter{r}), field("other_submitters", r.other_submitters),
           field("queue_ns", r.queue_ns), field("insert_ns", r.insert_ns),
           field("issue_ns", r.issue_ns), field("complete_ns", r.complete_ns),
           field("complete_inferred", r.complete_inferred), field("durable_ns", r.durable_ns),
           field("error", Errno{r.error}), field("nvme", r.nvme));
}

void write_json(Emitter& e, const JournalCommit& c) {
  e.object(field("dev", Device{c.dev}), field("transaction", c.transaction),
           field("start_ns", c.start_ns), field("locking_ns", c.locking_ns),
           field("flushing_ns", c.flushing_ns), field("logging_ns", c.logging_ns),
           field("end_ns", c.end_ns));
}

void write_json(Emitter& e, const Waker& w) {
  e.object(field("pid", w.pid), field("tid", w.tid), field("comm", w.comm),
           field("kernel_thread", w.kernel_thread), field("context", wake_context_name(w.context)),
           field("frames", frame_names(w.stack)));
}

void write_json(Emitter& e, const LockHolder& h) {
  e.object(field("pid", h.pid), field("tid", h.tid), field("comm", h.comm));
}

void write_json(Emitter& e, const OffCpuSleep& s) {
  e.object(field("ns", s.ns), field("longest_ns", s.longest_ns), field("sleeps", s.sleeps),
           field("flag", sleep_flag_name(s.flag)), field("frames", frame_names(s.stack)),
           field("waker", s.waker));
}

void write_json(Emitter& e, const WaitChain& c) {
  e.object(field("commit", c.commit), field("flushes", c.flushes));
}

void write_json(Emitter& e, const NamedWait& w) {
  e.object(field("cause", wait_cause_name(w.cause)), field("ns", w.ns), field("sleeps", w.sleeps),
           field("evidence", w.evidence), field("frames", w.frames), field("waker", w.waker),
           field("holder", w.holder), field("chain", w.chain));
}

// Where a slow call's time went (null when causes were not asked for: --min-latency), and with
// stacks its sleeps by stack and the causes named from them (empty arrays without stacks).
void write_json(Emitter& e, const SlowCauses& c) {
  e.object(field("on_cpu_ns", c.on_cpu_ns), field("throttled_ns", c.throttle_ns),
           field("writeback_wait_ns", c.writeback_wait_ns), field("blocked_ns", c.blocked_ns),
           field("runnable_ns", c.runnable_ns), field("stacks", c.sleeps),
           field("unslotted_ns", c.unslotted_ns), field("waits", c.waits));
}

void write_json(Emitter& e, const ThrottlePause& p) {
  e.object(field("ts", p.ts), field("pause_ms", p.pause_ms), field("dirty_pages", p.dirty_pages),
           field("limit_pages", p.limit_pages));
}

void write_json(Emitter& e, const Hazard& h) {
  e.object(field("rule", std::string_view(h.rule)), field("detail", std::string_view(h.detail)),
           field("related", h.related));
}

void write_json(Emitter& e, const PhaseSegment& s) {
  e.object(field("phase", sync_phase_name(s.phase)), field("start_ns", s.start_ns),
           field("end_ns", s.end_ns));
}

void write_json(Emitter& e, const SyncPhases& phases) {
  e.start_object();
  for (const SyncPhaseInfo& phase : kSyncPhases) {
    e.schema_key(phase.json_key);
    e.value(phases.*phase.total);
  }
  e.end_object();
}

// The FUSE daemon that answered: {"pid", "tid", "comm", "error"}.
// Data its file system kept in its metadata: {"fs","ns","transaction","committed_ns"}.
void write_json(Emitter& e, const InlineData& d) {
  e.object(field("fs", inline_fs_name(d.fs)), field("ns", d.ns),
           field("transaction", d.transaction), field("committed_ns", d.committed_ns));
}

void write_json(Emitter& e, const FuseDaemon& d) {
  e.object(field("pid", d.pid), field("tid", d.tid), field("comm", d.comm),
           field("error", Errno{d.error}));
}

namespace {

// A call's file descriptor, null for calls without one (sync(2)).
struct Fd {
  std::int32_t fd;
};

void write_json(Emitter& e, const Fd& f) {
  if (f.fd < 0) return e.value(std::nullopt);
  e.value(f.fd);
}

// The file under an overlay file: {"dev", "ino"} of the upper file its pages and requests are
// in; null for a file that is its own.
struct Backing {
  const SyscallEvent& call;
};

void write_json(Emitter& e, const Backing& b) {
  if (b.call.view_dev == 0) return e.value(std::nullopt);
  e.object(field("dev", Device{b.call.dev}), field("ino", b.call.ino));
}

// The container the call's cgroup is: {"id", "runtime", "name", "pod", "namespace", "pod_uid",
// "qos"} (names null when the runtime's state did not say; the pod's null outside Kubernetes);
// null for a host process or a cgroup whose path is not known.
struct ContainerOf {
  const std::shared_ptr<const Container>& container;
};

void write_json(Emitter& e, const ContainerOf& c) {
  if (!c.container) return e.value(std::nullopt);
  const Container& k = *c.container;
  const bool pod = !k.pod_uid.empty();
  const auto text_or_null = [](const std::string& text) {
    return text.empty() ? std::nullopt : std::optional<std::string_view>(text);
  };
  e.object(field("id", std::string_view(k.id)), field("runtime", container_runtime_name(k.runtime)),
           field("name", text_or_null(k.name)), field("pod", text_or_null(k.pod_name)),
           field("namespace", text_or_null(k.pod_namespace)),
           field("hostname", text_or_null(k.hostname)),
           field("pod_uid", pod ? std::optional<std::string_view>(k.pod_uid) : std::nullopt),
           field("qos", pod ? std::optional(pod_qos_name(k.qos)) : std::nullopt));
}

}  // namespace

// Another process whose data the disk wrote while the call waited: {"pid", "comm", "cgroup",
// "container", "disk", "bytes", "requests", "share", "delay_ns"}.
void write_json(Emitter& e, const Neighbour& n) {
  e.object(
      field("pid", n.owner.pid), field("comm", n.owner.comm),
      field("cgroup", n.owner.cgroup.empty() ? std::nullopt
                                             : std::optional<std::string_view>(n.owner.cgroup)),
      field("container", ContainerOf{n.owner.container}), field("disk", Device{n.disk}),
      field("bytes", n.bytes), field("requests", n.requests), field("share", Fraction{n.share}),
      field("delay_ns", n.delay_ns));
}

namespace {

// The byte range a sync_file_range(2) asked for: {"offset", "bytes"} (bytes 0: to the end of
// the file); null for the syncs that take the whole file.
struct SyncRange {
  const SyscallEvent& call;
};

void write_json(Emitter& e, const SyncRange& r) {
  if (r.call.syscall != Syscall::SyncFileRange) return e.value(std::nullopt);
  e.object(field("offset", r.call.pos), field("bytes", r.call.count));
}

// Who made the call, on which file (dev and ino as stat() shows them to the caller, and the
// backing file when that is another): the first keys of every syscall object, then the item's
// id (and, in the live stream, its event).
void call_identity(Emitter& e, const char* type, std::uint64_t id, const SyscallEvent& call,
                   const JsonItemLine& line) {
  e.fields(
      field("type", type), field("pid", call.pid), field("tid", call.tid), field("comm", call.comm),
      field("syscall", call_name(call)), field("io_uring", uring_issue_name(call.via)),
      field("fd", Fd{call.fd}), field("dev", DeviceOrNull{stat_dev(call)}),
      field("ino", stat_ino(call)),
      field("path", call.path.empty() ? std::nullopt : std::optional{call.path}),
      field("host_path", call.host_path.empty() ? std::nullopt : std::optional{call.host_path}),
      field("backing", Backing{call}),
      field("cgroup",
            call.cgroup.empty() ? std::nullopt : std::optional<std::string_view>(call.cgroup)),
      field("container", ContainerOf{call.container}), field("id", id));
  if (line.event) e.fields(field("event", line.event), field("final", line.final));
}

// `time`: when the call returned, on the wall clock (null without the clock offsets).
void call_times(Emitter& e, const SyscallEvent& call, const JsonItemLine& line) {
  std::optional<std::string> time;
  if (line.clock) time = rfc3339_utc(realtime_of(call_end(call), *line.clock));
  e.fields(field("start_ns", call.start_ns), field("end_ns", call.end_ns),
           field("latency_ns", latency_ns(call)), field("time", time));
}

}  // namespace

void write_json(Emitter& e, const WriteTimeline& write, const JsonItemLine& line) {
  const SyscallEvent& call = write.call;
  const auto via = write.durable_via == DurableVia::None
                       ? std::nullopt
                       : std::optional(durable_via_name(write.durable_via));
  e.start_object();
  call_identity(e, "write", write.id, call, line);
  e.fields(field("offset", call.pos), field("bytes", bytes_written(call)),
           field("requested", call.count), field("ret", call.ret), field("error", Errno{call.ret}),
           field("direct", write.direct), field("sync", write.sync),
           field("append", (call.file_flags & file_flag::kAppend) != 0),
           field("call_flags", call_flag_names(call.call_flags)));
  call_times(e, call, line);
  e.fields(
      field("pages_dirtied", call.pages_dirtied), field("throttled_ns", call.throttle_ns),
      field("throttle_events", call.throttle_events),
      field("writeback_waits", call.writeback_waits), field("state", write_state_name(write.state)),
      field("pages", write.pages), field("pages_pending", write.pages_pending),
      field("faults",
            write.store_faults ? std::optional(write.store_faults->faults) : std::nullopt),
      field("whole_folio_faults",
            write.store_faults ? std::optional(write.store_faults->whole_folio) : std::nullopt),
      field("inline", write.inline_data), field("requests", write.requests),
      field("written_ns", write.written_ns), field("durable_ns", write.durable_ns),
      field("durable_via", via), field("discarded_ns", write.discarded_ns),
      field("lost_ns", write.lost_ns), field("lost_error", Errno{write.lost_error}),
      field("fuse_daemon", write.fuse), field("incomplete", write.incomplete),
      field("causes", write.causes), field("throttle_pauses", write.throttles),
      field("hazards", write.hazards));
  e.end_object();
}

void write_json(Emitter& e, const SyncTimeline& sync, const JsonItemLine& line) {
  const SyscallEvent& call = sync.call;
  e.start_object();
  call_identity(e, "fsync", sync.id, call, line);
  call_times(e, call, line);
  // The segments say where each phase fell in time; the phases are their totals.
  e.fields(field("ret", call.ret), field("error", Errno{call.ret}),
           field("call_flags", call_flag_names(call.call_flags)), field("range", SyncRange{call}),
           field("phases", sync.phases), field("segments", sync.segments),
           field("requests", sync.requests), field("flushes", sync.flushes),
           field("journal_commits", sync.commits), field("incomplete", sync.incomplete),
           field("causes", sync.causes), field("journal_requests", sync.journal_requests),
           field("lost_writes", sync.lost_writes), field("loss_unreported", sync.loss_unreported),
           field("fuse_daemon", sync.fuse), field("hazards", sync.hazards),
           field("neighbours", sync.neighbours));
  e.end_object();
}

void write_json(Emitter& e, const NameChangeTimeline& item, const JsonItemLine& line) {
  const SyscallEvent& call = item.call;
  const auto text_or_null = [](const std::string& text) {
    return text.empty() ? std::nullopt : std::optional<std::string_view>(text);
  };
  const bool two = item.op == NameChangeOp::Rename || item.op == NameChangeOp::Link;
  e.start_object();
  call_identity(e, "namespace", item.id, call, line);
  call_times(e, call, line);
  e.fields(
      field("ret", call.ret), field("error", Errno{call.ret}),
      field("op", name_change_op_name(item.op)), field("flags", name_change_flag_names(item.flags)),
      field("name", text_or_null(item.names[0])), field("name_path", text_or_null(item.paths[0])),
      field("new_name", two ? text_or_null(item.names[1]) : std::nullopt),
      field("new_path", two ? text_or_null(item.paths[1]) : std::nullopt),
      field("incomplete", item.incomplete), field("hazards", item.hazards));
  e.end_object();
}

void write_json(Emitter& e, const ReadTimeline& item, const JsonItemLine& line) {
  const SyscallEvent& call = item.call;
  e.start_object();
  call_identity(e, item.fault ? "fault" : "read", item.id, call, line);
  e.fields(field("offset", call.pos), field("bytes", call.ret > 0 ? call.ret : 0),
           field("requested", call.count), field("ret", call.ret), field("error", Errno{call.ret}),
           field("direct", (call.file_flags & file_flag::kDirect) != 0));
  call_times(e, call, line);
  e.fields(field("pages", item.pages), field("pages_from_device", item.pages_from_device),
           field("pages_cached", item.pages_cached), field("readahead_pages", item.readahead_pages),
           field("sync_readaheads", item.sync_readaheads),
           field("async_readaheads", item.async_readaheads), field("requests", item.requests),
           field("incomplete", item.incomplete), field("causes", item.causes),
           field("hazards", item.hazards));
  if (item.fault) {
    e.key("fault");
    e.start_object();
    e.fields(field("address", item.fault->address), field("major", item.fault->major),
             field("write", item.fault->write), field("by_kernel", item.fault->kernel),
             field("mapped_pages", item.fault->mapped_pages),
             field("filemap_faults", item.fault->filemap_faults));
    e.end_object();
  }
  e.end_object();
}

}  // namespace wp::jsonl
