// JSON Lines sink: one object per finished item, one line each, flushed per line so a consumer
// tailing the stream sees items as they finish. Keys follow DESIGN.md's "JSON Lines" contract;
// absent stages are JSON null. All escaping is nlohmann::json's.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "sinks/sink.h"

namespace wp {

// The objects the sink writes, exposed for other sinks (HTML embeds them) and for tests.
nlohmann::ordered_json request_json(const RequestTimeline& request);
nlohmann::ordered_json write_json(const WriteTimeline& write);
nlohmann::ordered_json sync_json(const SyncTimeline& sync);
nlohmann::ordered_json timeline_json(const Timeline& item);
nlohmann::ordered_json summary_json(const TraceSummary& totals);

// One line of JSON. Invalid UTF-8 (a comm cut mid-character at 15 bytes) becomes U+FFFD rather
// than an exception: a trace must never die on a process name.
std::string json_line(const nlohmann::ordered_json& object);

class JsonSink : public Sink {
 public:
  explicit JsonSink(std::ostream& out) : out_(out) {}
  void timeline(const Timeline& item) override;
  void summary(const TraceSummary& totals) override;
  void flush() override;

 private:
  void emit(const nlohmann::ordered_json& object);

  std::ostream& out_;
};

}  // namespace wp
