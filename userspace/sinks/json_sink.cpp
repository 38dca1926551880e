// SPDX-License-Identifier: Apache-2.0
#include "sinks/json_sink.h"

#include <string>
#include <type_traits>
#include <variant>

#include "sinks/json_emitter.h"

namespace wp {

void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t size = text.size();
  std::size_t i = 0;
  while (i < size) {
    // Most text (process names, syscall and state names) is plain ASCII: copy runs of it whole.
    std::size_t plain = i;
    while (plain < size && bytes[plain] >= 0x20 && bytes[plain] < 0x80 && bytes[plain] != '"' &&
           bytes[plain] != '\\')
      ++plain;
    if (plain > i) {
      out.append(text.substr(i, plain - i));
      i = plain;
      continue;
    }
    const unsigned char c = bytes[i];
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\t': out += "\\t"; break;
        case '\n': out += "\\n"; break;
        case '\f': out += "\\f"; break;
        case '\r': out += "\\r"; break;
        default:
          if (c < 0x20) {
            out += "\\u00";
            out += kHex[c >> 4];
            out += kHex[c & 0xf];
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    // The well-formed multi-byte sequences (Unicode table 3-7): the lead byte fixes the length
    // and the range of the second byte (no overlongs, no surrogates, nothing past U+10FFFF).
    std::size_t length = 0;
    unsigned char second_low = 0x80, second_high = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) second_low = 0xA0;
      if (c == 0xED) second_high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) second_low = 0x90;
      if (c == 0xF4) second_high = 0x8F;
    } else {
      out += kReplacement;  // a byte that never starts a character
      ++i;
      continue;
    }
    std::size_t valid = 1;
    for (; valid < length && i + valid < size; ++valid) {
      const unsigned char next = bytes[i + valid];
      const unsigned char low = valid == 1 ? second_low : 0x80;
      const unsigned char high = valid == 1 ? second_high : 0xBF;
      if (next < low || next > high) break;
    }
    if (valid == length) {
      out.append(text.substr(i, length));
    } else {
      // One U+FFFD for the truncated sequence; the byte that broke it starts afresh, as
      // nlohmann::json's replace handler does.
      out += kReplacement;
    }
    i += valid;
  }
}

struct JsonLineFormatter::State {
  jsonl::Buffer buffer;
  jsonl::Writer writer{buffer};
  std::string scratch;  // one escaped string at a time

  // Writes `item` as a fresh line and returns its text.
  template <typename... Args>
  std::string_view format(const Args&... args) {
    buffer.Clear();
    writer.Reset(buffer);
    jsonl::Emitter emitter(writer, scratch);
    jsonl::write_json(emitter, args...);
    return {buffer.GetString(), buffer.GetSize()};
  }
};

JsonLineFormatter::JsonLineFormatter() : state_(std::make_unique<State>()) {}
JsonLineFormatter::~JsonLineFormatter() = default;

std::string_view JsonLineFormatter::write(const WriteTimeline& write) {
  return state_->format(write);
}

std::string_view JsonLineFormatter::sync(const SyncTimeline& sync) {
  return state_->format(sync);
}

std::string_view JsonLineFormatter::timeline(const Timeline& item) {
  return std::visit([this](const auto& timeline) { return state_->format(timeline); }, item);
}

std::string_view JsonLineFormatter::timeline(const Timeline& item, const JsonItemLine& line) {
  return std::visit([&](const auto& timeline) { return state_->format(timeline, line); }, item);
}

std::string_view JsonLineFormatter::summary(const TraceSummary& totals) {
  return state_->format(totals);
}

nlohmann::ordered_json write_json(const WriteTimeline& write) {
  return nlohmann::ordered_json::parse(JsonLineFormatter().write(write));
}

nlohmann::ordered_json sync_json(const SyncTimeline& sync) {
  return nlohmann::ordered_json::parse(JsonLineFormatter().sync(sync));
}

nlohmann::ordered_json timeline_json(const Timeline& item) {
  return nlohmann::ordered_json::parse(JsonLineFormatter().timeline(item));
}

nlohmann::ordered_json summary_json(const TraceSummary& totals) {
  return nlohmann::ordered_json::parse(JsonLineFormatter().summary(totals));
}

std::string json_line(const nlohmann::ordered_json& object) {
  return object.dump(-1, ' ', /*ensure_ascii=*/false,
                     nlohmann::ordered_json::error_handler_t::replace);
}

const char* final_event_name(const Timeline& item) {
  if (const auto* write = std::get_if<WriteTimeline>(&item)) return write_state_name(write->state);
  return "returned";
}

void JsonSink::timeline(const Timeline& item) {
  JsonItemLine line{.clock = clock_};
  if (live_) line.event = final_event_name(item);
  emit(formatter_.timeline(item, line));
}

void JsonSink::progress(ItemProgress progress, const Timeline& item) {
  if (!live_) return;
  emit(formatter_.timeline(
      item, JsonItemLine{.clock = clock_, .event = item_progress_name(progress), .final = false}));
}

void JsonSink::summary(const TraceSummary& totals) {
  emit(formatter_.summary(totals));
}

void JsonSink::flush() {
  out_.flush();
}

void JsonSink::emit(std::string_view line) {
  out_.write(line.data(), static_cast<std::streamsize>(line.size()));
  out_.put('\n');
  out_.flush();
}

}  // namespace wp
