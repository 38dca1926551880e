// SPDX-License-Identifier: Apache-2.0
// The golden cases' runner: an event script (record/event_script.h) through the pipeline that
// `writepath report` runs, printed in one format: json, text, perfetto as text protobuf (the
// binary trace parsed back with the generated classes, so a diff reads as fields), or
// perfetto-summary, the same trace decoded into lines a person reads (perfetto_summary.h). The
// Perfetto clock snapshot is pinned to zero and its ids drawn from a fixed seed, so every byte of
// every format comes from the script alone.
// Usage: script_report SCRIPT json|text|perfetto|perfetto-summary
#include <google/protobuf/text_format.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "agent/pipeline.h"
#include "event_script.h"
#include "perfetto_summary.h"
#include "sinks/perfetto.pb.h"
#include "sinks/perfetto_sink.h"

namespace {

constexpr std::uint64_t kIdSeed = 1;

int run(const std::string& path, const std::string& format) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "script_report: cannot read " << path << "\n";
    return 2;
  }
  const wp::ParsedScript parsed = wp::parse_event_script(in);
  if (!parsed.script) {
    std::cerr << path << ":" << parsed.error << "\n";
    return 1;
  }
  const wp::EventScript& script = *parsed.script;

  std::ostringstream rendered;
  const bool perfetto = format == "perfetto" || format == "perfetto-summary";
  std::unique_ptr<wp::Sink> sink;
  if (perfetto)
    sink =
        std::make_unique<wp::PerfettoSink>(rendered, script.devices, wp::ClockReadings{}, kIdSeed);
  else if (format == "json")
    sink = wp::make_sink(wp::OutputFormat::Json, rendered, {.devices = script.devices});
  else if (format == "text")
    sink = wp::make_sink(wp::OutputFormat::Text, rendered, {.devices = script.devices});
  else {
    std::cerr << "script_report: format is json, text, perfetto or perfetto-summary, not " << format
              << "\n";
    return 2;
  }

  wp::Pipeline pipeline(wp::PipelineOptions{.min_latency_ns = script.min_latency_ns,
                                            .observer = {},
                                            .live = false,
                                            .file_systems = script.file_systems,
                                            .host_paths = {},
                                            .page_shift = script.page_shift},
                        script.devices, *sink);
  wp::Nanos first = 0, last = 0;
  bool seen = false;
  for (const wp::ScriptStep& step : script.steps) {
    if (const auto* loss = std::get_if<wp::ScriptLoss>(&step)) {
      pipeline.add_lost(loss->counts);
    } else if (const auto* symbol = std::get_if<wp::ScriptSymbol>(&step)) {
      pipeline.name_kernel_address(symbol->address, symbol->name);
    } else {
      const auto& event = std::get<wp::Event>(step);
      const wp::Nanos ts = std::visit(
          [](const auto& e) -> wp::Nanos {
            if constexpr (requires { e.end_ns; })
              return e.end_ns;
            else if constexpr (requires { e.call.end_ns; })
              return e.call.end_ns;  // a read: its call's return
            else
              return e.ts;
          },
          event);
      if (!seen) first = ts;
      seen = true;
      last = std::max(last, ts);
      pipeline.on_event(event);
    }
  }
  pipeline.finish(last - first);
  sink->flush();
  sink.reset();

  if (!perfetto) {
    std::cout << rendered.str();
    return 0;
  }
  wp::perfetto::Trace trace;
  if (!trace.ParseFromString(rendered.str())) {
    std::cerr << "script_report: the Perfetto sink wrote an unreadable trace\n";
    return 1;
  }
  if (format == "perfetto-summary") {
    std::cout << wp::golden::perfetto_summary(trace);
    return 0;
  }
  std::string text;
  google::protobuf::TextFormat::PrintToString(trace, &text);
  std::cout << text;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: script_report SCRIPT json|text|perfetto|perfetto-summary\n";
    return 2;
  }
  return run(argv[1], argv[2]);
}
