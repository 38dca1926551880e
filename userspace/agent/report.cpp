// SPDX-License-Identifier: Apache-2.0
#include "agent/report.h"

#include <fmt/format.h>

#include <csignal>
#include <cstring>
#include <iostream>
#include <memory>

#include "agent/output_stream.h"
#include "agent/pipeline.h"
#include "common/errors.h"
#include "record/trace_file.h"
#include "sinks/async_sink.h"

namespace wp {
namespace {

// Timestamp of a raw record, if it is long enough to have one.
std::optional<Nanos> record_time(std::span<const std::byte> payload) {
  wp_record_header h;
  if (payload.size() < sizeof(h)) return std::nullopt;
  std::memcpy(&h, payload.data(), sizeof(h));
  return h.ts_ns;
}

}  // namespace

int run_report(const ReportOptions& options) {
  TraceFileReader reader = TraceFileReader::open(options.path);
  if (!reader.error().empty()) throw Failure(kExitRuntime, reader.error());
  if (reader.header().record_version != WP_RECORD_VERSION)
    throw Failure(kExitRuntime,
                  fmt::format("{}: records of format {} (this writepath reads {})", options.path,
                              reader.header().record_version, WP_RECORD_VERSION));

  std::unique_ptr<OutputStream> output = open_output(options.output);
  auto drain = [&output] { output->drain_or_throw(); };
  // Formatting and writing run on the sink's own thread, beside decoding and stitching here;
  // only that thread touches the output from now on (the drain runs there too).
  // A recording from before the header kept the clock offsets has no wall-clock times.
  auto sink =
      std::make_unique<AsyncSink>(make_sink(options.format, output->stream(),
                                            SinkOptions{.devices = reader.header().devices,
                                                        .timestamps = options.timestamps,
                                                        .clock = reader.header().clock_offsets}),
                                  drain);
  // A recording made with --min-latency is reported at that threshold unless told otherwise.
  const Nanos min_latency =
      options.min_latency_ns ? options.min_latency_ns : reader.header().min_latency_ns;
  Pipeline pipeline(PipelineOptions{.min_latency_ns = min_latency,
                                    .observer = {},
                                    .live = false,
                                    .file_systems = reader.header().file_systems,
                                    .host_paths = {},
                                    .page_shift = reader.header().page_shift,
                                    .io_owners = reader.header().io_owners},
                    reader.header().devices, *sink);

  // The file's copies of the kernel's counts at the end of the trace.
  SummaryBuilder facts;
  // A closed pipe (report … | head) is an EPIPE write error, not a death.
  ::signal(SIGPIPE, SIG_IGN);
  Nanos first = 0, last = 0;
  constexpr std::size_t kDrainFrames = 1 << 16;  // a failed output is seen early
  std::size_t since_drain = 0;
  while (const auto next = reader.next()) {
    const Frame& frame = *next;
    if (frame.kind == FrameKind::Lost) {
      pipeline.add_lost(lost_counts_of(frame.payload));
      continue;
    }
    if (auto name = cgroup_name_of(frame)) {  // checked whole by the reader
      pipeline.name_cgroup(name->id, std::move(name->path));
      continue;
    }
    if (auto names = container_names_of(frame)) {  // checked whole by the reader
      pipeline.name_container(names->id, names->names);
      continue;
    }
    if (auto symbol = kernel_symbol_of(frame)) {  // checked whole by the reader
      pipeline.name_kernel_address(symbol->address, std::move(symbol->name));
      continue;
    }
    if (auto filtered = filtered_requests_of(frame)) {  // checked whole by the reader
      facts.add_filtered_requests(*filtered);
      continue;
    }
    if (auto owners = filtered_io_of(frame)) {  // checked whole by the reader
      facts.add_filtered_io(*owners);
      continue;
    }
    if (auto idle = write_idle_disks_of(frame)) {  // checked whole by the reader
      facts.set_write_idle_disks(std::move(*idle));
      continue;
    }
    if (const auto untraced = untraced_counts_of(frame)) {  // checked whole by the reader
      facts.set_untraced_calls(*untraced);
      continue;
    }
    if (auto ts = record_time(frame.payload)) {
      if (!first) first = *ts;
      last = std::max(last, *ts);
    }
    pipeline.on_record(frame.payload);
    if (++since_drain == kDrainFrames) {
      sink->flush();  // rethrows the sink thread's failure, if any
      since_drain = 0;
    }
  }
  // A damaged or cut-short tail is known once the frames before it were read.
  if (!reader.warning().empty())
    std::cerr << fmt::format("writepath: warning: {}: {}\n", options.path, reader.warning());
  const TraceSummary summary = pipeline.finish(last - first, facts);
  sink->wait();
  warn_of_losses(loss_report(summary.events, summary.lost, false));
  return 0;
}

}  // namespace wp
