// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any bytes through the trace-file reader and the whole report pipeline
// (decode, stitch, JSON and text sinks). It must never crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <sstream>

#include "agent/pipeline.h"
#include "record/trace_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto reader = wp::TraceFileReader::parse(
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), size));
  if (!reader.error().empty()) return 0;
  for (auto format : {wp::OutputFormat::Json, wp::OutputFormat::Text}) {
    std::ostringstream out;
    auto sink = wp::make_sink(format, out, wp::SinkOptions{});
    wp::Pipeline pipeline(wp::PipelineOptions{}, reader.header().devices, *sink);
    wp::SummaryBuilder facts;
    auto frames = wp::TraceFileReader::parse(
        std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), size));
    while (const auto next = frames.next()) {
      const wp::Frame& frame = *next;
      if (frame.kind == wp::FrameKind::Lost) {
        pipeline.add_lost(wp::lost_counts_of(frame.payload));
      } else if (const auto untraced = wp::untraced_counts_of(frame)) {
        facts.set_untraced_calls(*untraced);
      } else {
        pipeline.on_record(frame.payload);
      }
    }
    pipeline.finish(0, facts);
  }
  return 0;
}
