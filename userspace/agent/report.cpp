#include "agent/report.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <iostream>

#include "agent/errors.h"
#include "agent/pipeline.h"
#include "record/trace_file.h"

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
  if (!reader.warning().empty())
    std::cerr << fmt::format("writepath: warning: {}: {}\n", options.path, reader.warning());

  std::ofstream file;
  std::ostream* out = &std::cout;
  if (!options.output.empty()) {
    file.open(options.output, std::ios::out | std::ios::trunc);
    if (!file)
      throw Failure(kExitRuntime,
                    fmt::format("cannot write {}: {}", options.output, std::strerror(errno)));
    out = &file;
  }
  auto sink = make_sink(options.format, *out, SinkOptions{.devices = reader.header().devices});
  Pipeline pipeline(PipelineOptions{options.min_latency_ns, {}}, reader.header().devices, *sink);

  Nanos first = 0, last = 0;
  for (const Frame& frame : reader.frames()) {
    if (frame.kind == FrameKind::Lost) {
      LostCounts delta{};
      std::memcpy(delta.data(), frame.payload.data(), sizeof(delta));
      pipeline.add_lost(delta);
      continue;
    }
    if (auto ts = record_time(frame.payload)) {
      if (!first) first = *ts;
      last = std::max(last, *ts);
    }
    pipeline.on_record(frame.payload);
  }
  pipeline.finish(last - first);
  if (!options.output.empty() && !file)
    throw Failure(kExitRuntime, fmt::format("writing {} failed", options.output));
  return 0;
}

}  // namespace wp
