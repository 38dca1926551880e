#include "sinks/sink.h"

#include "sinks/json_sink.h"
#include "sinks/text_sink.h"

namespace wp {

Sink::~Sink() = default;

std::unique_ptr<Sink> make_sink(OutputFormat format, std::ostream& out,
                                const SinkOptions& options) {
  switch (format) {
    case OutputFormat::Json: return std::make_unique<JsonSink>(out);
    case OutputFormat::Text: return std::make_unique<TextSink>(out, options);
  }
  return std::make_unique<TextSink>(out, options);
}

}  // namespace wp
