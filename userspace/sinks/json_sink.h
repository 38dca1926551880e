// JSON Lines sink: one object per finished item, one line each, flushed per line so a consumer
// tailing the stream sees items as they finish. Keys follow the JSON Lines contract of
// docs/ARCHITECTURE.md; absent stages are JSON null.
//
// Lines are produced by a streaming writer (RapidJSON's SAX Writer) into a buffer reused from
// item to item: building a document tree per item cost several microseconds, and a trace can
// finish hundreds of thousands of items per second. Strings are escaped exactly as
// nlohmann::json's dump() with error_handler_t::replace does, so the text is the same as the
// tree-built one was, byte for byte.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

#include "sinks/sink.h"

namespace wp {

// Appends `text` escaped as the inside of a JSON string (no quotes). `"`, `\` and control
// characters are escaped (\b \t \n \f \r, others \u00xx); valid UTF-8 passes through as is;
// each ill-formed sequence becomes one U+FFFD (a comm cut mid-character at 15 bytes must never
// break a line or kill the trace).
void append_json_string(std::string& out, std::string_view text);

// Formats one item as one line of JSON (without the newline). The returned text lives in the
// formatter's buffer and stays valid until its next call.
class JsonLineFormatter {
 public:
  JsonLineFormatter();
  ~JsonLineFormatter();
  JsonLineFormatter(const JsonLineFormatter&) = delete;
  JsonLineFormatter& operator=(const JsonLineFormatter&) = delete;

  std::string_view write(const WriteTimeline& write);
  std::string_view sync(const SyncTimeline& sync);
  std::string_view timeline(const Timeline& item);
  std::string_view summary(const TraceSummary& totals);

 private:
  struct State;  // the writer and its buffer: RapidJSON stays out of this header
  std::unique_ptr<State> state_;
};

// The same objects as trees, for sinks that embed them in a bigger document (HTML) and for
// tests. Parsed back from the formatter's text, so the schema is written down once.
nlohmann::ordered_json write_json(const WriteTimeline& write);
nlohmann::ordered_json sync_json(const SyncTimeline& sync);
nlohmann::ordered_json timeline_json(const Timeline& item);
nlohmann::ordered_json summary_json(const TraceSummary& totals);

// One line of JSON from a tree. Invalid UTF-8 becomes U+FFFD rather than an exception.
std::string json_line(const nlohmann::ordered_json& object);

class JsonSink : public Sink {
 public:
  explicit JsonSink(std::ostream& out) : out_(out) {}
  void timeline(const Timeline& item) override;
  void summary(const TraceSummary& totals) override;
  void flush() override;

 private:
  void emit(std::string_view line);

  std::ostream& out_;
  JsonLineFormatter formatter_;
};

}  // namespace wp
