// SPDX-License-Identifier: Apache-2.0
// `writepath serve`: a long-running agent that exports write-path metrics on /metrics in the
// Prometheus text format, aggregated in the kernel where it can be (serve/write_metrics.h), and
// optionally writes each slow call as one JSON line (the object `trace --format json` writes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/nanos.h"

namespace wp {

// serve's ring buffer: plain writes are aggregated in the kernel, so far fewer records travel
// than under trace (syncs, 1 in --durability-sample writes, the block layer's). The buffer is
// mapped into the agent twice and every page of it is touched in time: 16 MiB keeps a day's RSS
// well under 100 MiB, where trace's 32 MiB alone took 64 MiB of it.
constexpr std::uint64_t kServeRingBytes = 16ull << 20;

struct ServeOptions {
  std::string listen = "127.0.0.1:9441";  // HOST:PORT of /metrics
  // Calls at least this slow are written to slow_log as JSON lines (0: none).
  Nanos slow_ns = 0;
  std::string slow_log;  // "" or "-": stdout
  // At most this many slow calls a second are written; the rest are counted.
  std::uint32_t slow_rate = 10;
  std::size_t max_cgroups = 20;  // cgroups with a label of their own; the rest are "other"
  bool comm_labels = false;      // label write and sync metrics by the caller's name too
  std::size_t max_comms = 20;
  // 1 in this many plain writes goes through the stitcher, for the time-to-durable histogram.
  std::uint32_t durability_sample = 16;
  std::uint64_t buffer_bytes = kServeRingBytes;  // ring buffer size (--buffer-size)
  std::optional<Nanos> duration_ns;  // stop after this long (tests); none: until SIGTERM/SIGINT
  bool stacks = true;                // with slow_ns: the kernel stacks of slow calls
  // Read bytes by source and major faults too: hooks every read syscall of the machine, so off
  // unless asked for (--reads).
  bool reads = false;
  // fentry/fexit where they attach (--no-fentry: the tracepoint plan, for comparing the two).
  bool fentry = true;
};

// HOST:PORT as --listen takes it: an IPv4 address or "localhost", and a port 1-65535; an IPv6
// address in brackets ("[::1]:9441"). Throws Failure (usage) with one line otherwise.
struct ListenAddress {
  std::string host;
  std::uint16_t port = 0;
  bool loopback = false;
};
ListenAddress parse_listen(const std::string& text);
// Why the address cannot be listened on (the kernel's words: "Address already in use"), ""
// when a socket binds and listens there.
std::string bind_error(const ListenAddress& address);

// Runs until SIGTERM/SIGINT (or the duration); SIGHUP reopens the slow-call log. Returns the
// exit code; throws Failure for bad usage and runtime failures.
int run_serve(const ServeOptions& options);

}  // namespace wp
