// SPDX-License-Identifier: Apache-2.0
// Builders of the syscall events and timelines the unit tests hand to the stitcher and the
// sinks. A test names the facts it checks (times, sizes, who, which file); the builder fills in
// the rest consistently, so that every test file describes a write the same way.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "decode/events.h"
#include "stitch/timeline.h"

namespace wp::builders {

constexpr DevT kLoop0 = make_dev(7, 0);

// A record of bpf/writepath.h as the ring buffer hands it over: its bytes.
template <typename Record>
std::vector<std::byte> bytes_of(const Record& r) {
  std::vector<std::byte> out(sizeof(r));
  std::memcpy(out.data(), &r, sizeof(r));
  return out;
}
constexpr std::uint32_t kPageBytes = 4096;

// What a test says about one syscall; anything it leaves out is a plain 4 KiB pwrite64 of dd
// to fd 3 on loop0.
struct Call {
  Syscall syscall = Syscall::Pwrite64;
  Nanos start_ns = 0;
  Nanos end_ns = 0;
  std::uint32_t pid = 1234;
  std::uint32_t tid = 1235;
  std::string comm = "dd";
  int fd = 3;
  DevT dev = kLoop0;
  std::uint64_t ino = 12;
  std::uint64_t pos = 0;            // writes only
  std::int64_t ret = 4096;          // writes only: bytes written, or -errno
  std::uint32_t pages_dirtied = 1;  // writes only
};

// The event as the decoder delivers it. A write asked for what it wrote (a page when it
// failed) on a regular file; a sync call returns 0 and writes nothing itself.
inline SyscallEvent syscall_event(Call c) {
  SyscallEvent ev;
  ev.start_ns = c.start_ns;
  ev.end_ns = c.end_ns;
  ev.pid = c.pid;
  ev.tid = c.tid;
  ev.comm = std::move(c.comm);
  ev.syscall = c.syscall;
  ev.fd = c.fd;
  ev.dev = c.dev;
  ev.ino = c.ino;
  ev.file_flags = file_flag::kRegular;
  if (is_write_syscall(c.syscall)) {
    ev.ret = c.ret;
    ev.pos = c.pos;
    ev.count = c.ret > 0 ? static_cast<std::uint64_t>(c.ret) : kPageBytes;
    ev.pages_dirtied = c.pages_dirtied;
  }
  return ev;
}

// A data write request of one bio on `disk`, issued and completed.
inline RequestTimeline write_request(DevT disk, std::uint64_t sector, std::uint32_t bytes,
                                     Nanos issue_ns, Nanos complete_ns) {
  RequestTimeline request;
  request.disk = disk;
  request.sector = sector;
  request.bytes = bytes;
  request.op = ReqOp::Write;
  request.issue_ns = issue_ns;
  request.complete_ns = complete_ns;
  request.bios = 1;
  return request;
}

// An empty cache FLUSH request on `disk`.
inline RequestTimeline flush_request(DevT disk, Nanos issue_ns, Nanos complete_ns) {
  RequestTimeline flush;
  flush.disk = disk;
  flush.op = ReqOp::Flush;
  flush.flags = req_flag::kPreflush;
  flush.issue_ns = issue_ns;
  flush.complete_ns = complete_ns;
  return flush;
}

// A buffered write whose pages all went out in `request` (written when it completed), made
// durable by a cache flush at `durable_ns`.
inline WriteTimeline durable_write(SyscallEvent call, RequestTimeline request,
                                   std::optional<Nanos> durable_ns) {
  WriteTimeline write;
  write.call = std::move(call);
  write.state = WriteState::Durable;
  write.pages = (write.call.count + kPageBytes - 1) / kPageBytes;
  write.pages_pending = 0;
  write.written_ns = request.complete_ns;
  write.requests.push_back(std::move(request));
  write.durable_ns = durable_ns;
  write.durable_via = DurableVia::Flush;
  return write;
}

// A buffered write none of whose pages reached the disk before the trace ended.
inline WriteTimeline dirty_write(SyscallEvent call) {
  WriteTimeline write;
  write.call = std::move(call);
  write.state = WriteState::Dirty;
  write.pages = (write.call.count + kPageBytes - 1) / kPageBytes;
  write.pages_pending = write.pages;
  write.incomplete = true;
  return write;
}

// A sync call and how its latency divides into phases (nothing else: tests add requests,
// flushes, commits and segments as they need them).
inline SyncTimeline sync_timeline(SyscallEvent call, SyncPhases phases) {
  SyncTimeline sync;
  sync.call = std::move(call);
  sync.phases = phases;
  return sync;
}

}  // namespace wp::builders
