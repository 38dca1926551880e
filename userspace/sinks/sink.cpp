// SPDX-License-Identifier: Apache-2.0
#include "sinks/sink.h"

#include "sinks/html_sink.h"
#include "sinks/json_sink.h"
#include "sinks/perfetto_sink.h"
#include "sinks/text_sink.h"

namespace wp {

Sink::~Sink() = default;

std::unique_ptr<Sink> make_sink(OutputFormat format, std::ostream& out,
                                const SinkOptions& options) {
  switch (format) {
    case OutputFormat::Json: return std::make_unique<JsonSink>(out, options.live, options.clock);
    // The factory, not the sink, reads the clock: the page says when it was written.
    case OutputFormat::Html: {
      HtmlOptions html;
      html.generated_at = local_time_now();
      return std::make_unique<HtmlSink>(out, std::move(html));
    }
    case OutputFormat::Perfetto: {
      // The snapshot's REALTIME and BOOTTIME from the offsets measured with a tight bracket
      // (a recording's: those of the machine and moment it was made on).
      ClockReadings clocks = read_clocks();
      if (options.clock) {
        const auto mono = static_cast<std::int64_t>(clocks.monotonic);
        clocks.realtime = static_cast<Nanos>(mono + options.clock->realtime_ns);
        clocks.boottime = static_cast<Nanos>(mono + options.clock->boottime_ns);
      }
      return std::make_unique<PerfettoSink>(out, options.devices, clocks);
    }
    case OutputFormat::Text: return std::make_unique<TextSink>(out, options);
  }
  return std::make_unique<TextSink>(out, options);
}

}  // namespace wp
