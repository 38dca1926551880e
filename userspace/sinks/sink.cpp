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
    case OutputFormat::Json: return std::make_unique<JsonSink>(out);
    // The factory, not the sink, reads the clock: the page says when it was written.
    case OutputFormat::Html: {
      HtmlOptions html;
      html.generated_at = local_time_now();
      return std::make_unique<HtmlSink>(out, std::move(html));
    }
    case OutputFormat::Perfetto: return std::make_unique<PerfettoSink>(out, options.devices);
    case OutputFormat::Text: return std::make_unique<TextSink>(out, options);
  }
  return std::make_unique<TextSink>(out, options);
}

}  // namespace wp
