// SPDX-License-Identifier: Apache-2.0
// JSON Lines sink: one object per finished item, one line each, flushed per line so a consumer
// tailing the stream sees items as they finish. Keys follow the JSON Lines contract of
// docs/reference/json-lines.md; absent stages are JSON null.
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

#include "common/wall_clock.h"
#include "sinks/sink.h"

namespace wp {

// What an item's object says besides the item: its wall-clock `time` (the call's return) when
// the clock offsets are known (else null), and, in the live stream (`--format json --live`),
// its `event` ("returned", "written", or the state it ended in) and whether it is the item's
// last object (`final`).
struct JsonItemLine {
  std::optional<ClockOffsets> clock;
  const char* event = nullptr;  // null: one complete object per item, no event keys
  bool final = true;
};
// The event of a complete item in the live stream: its state ("durable", "discarded", "dirty"
// or "written" at the end of the trace, "failed"); "returned" for a sync, complete on return.
const char* final_event_name(const Timeline& item);

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
  std::string_view timeline(const Timeline& item, const JsonItemLine& line);
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
  // `live`: the early/update stream (an object per event of an item, keyed by its id).
  JsonSink(std::ostream& out, bool live = false, std::optional<ClockOffsets> clock = {})
      : out_(out), live_(live), clock_(clock) {}
  void timeline(const Timeline& item) override;
  void progress(ItemProgress progress, const Timeline& item) override;
  void clock(const ClockOffsets& offsets) override { clock_ = offsets; }
  void summary(const TraceSummary& totals) override;
  void flush() override;

 private:
  void emit(std::string_view line);

  std::ostream& out_;
  bool live_;
  std::optional<ClockOffsets> clock_;
  JsonLineFormatter formatter_;
};

}  // namespace wp
