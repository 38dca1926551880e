// SPDX-License-Identifier: Apache-2.0
// The JSON Lines sink's writer: keys and values over a SAX writer, one call per field. Objects
// are written as lists of fields, `e.object(field("qid", nvme.qid), …)`, and a value is written
// by its type: numbers, strings, booleans, optionals (null when empty), vectors (arrays), the
// wrappers below, and any type with a `write_json(Emitter&, const T&)` overload in this
// namespace (the sink's object writers). Everything is inlined into the same calls on the writer
// a hand-written sequence of keys and values would make.
#pragma once

#include <rapidjson/rapidjson.h>
// After rapidjson.h, which defines the namespace macros it uses.
#include <rapidjson/internal/dtoa.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/units.h"
#include "decode/events.h"
#include "sinks/json_sink.h"

namespace wp::jsonl {

// One line's text.
class Buffer {
 public:
  void Clear() { text_.clear(); }
  const char* GetString() const { return text_.data(); }
  std::size_t GetSize() const { return text_.size(); }

 private:
  friend class Writer;
  std::string text_;
};

// The part of rapidjson::Writer the Emitter uses, writing the same bytes: its separators (a
// comma between an array's values and an object's members, a colon after a key), its numbers
// and its doubles (RapidJSON's own dtoa). Every value the Emitter writes arrives whole (keys
// and strings already quoted and escaped), so each is one append to the line, where RapidJSON's
// writer puts it a character at a time; that was a fifth of `report --format json`.
class Writer {
 public:
  static constexpr int kDefaultMaxDecimalPlaces = 324;  // rapidjson::Writer's

  explicit Writer(Buffer& buffer) { Reset(buffer); }
  // Starts a fresh line in `buffer` (its text is the caller's to clear).
  void Reset(Buffer& buffer) {
    out_ = &buffer.text_;
    levels_.clear();
  }
  void SetMaxDecimalPlaces(int places) { max_decimal_places_ = places; }

  void StartObject() { start('{', false); }
  void EndObject() { end('}'); }
  void StartArray() { start('[', true); }
  void EndArray() { end(']'); }
  // A key or a string, quoted and escaped by the caller, or any JSON text.
  void RawValue(const char* json, std::size_t length) {
    prefix();
    out_->append(json, length);
  }
  void Null() { RawValue("null", 4); }
  void Bool(bool b) { b ? RawValue("true", 4) : RawValue("false", 5); }
  void Uint(std::uint32_t u) { number(u); }
  void Uint64(std::uint64_t u) { number(u); }
  void Int(std::int32_t i) { number(i); }
  void Int64(std::int64_t i) { number(i); }
  // As rapidjson::Writer::Double without kWriteNanAndInfFlag: NaN and infinities write nothing
  // after the separator (the Emitter's fractions are shares in [0, 1]).
  void Double(double d) {
    prefix();
    if (rapidjson::internal::Double(d).IsNanOrInf()) return;
    char text[25];
    const char* end = rapidjson::internal::dtoa(d, text, max_decimal_places_);
    out_->append(text, static_cast<std::size_t>(end - text));
  }

 private:
  struct Level {
    std::uint32_t values = 0;  // values written in it, an object's keys included
    bool in_array = false;
  };
  // rapidjson::Writer::Prefix: nothing at the root; inside a container a comma before every
  // value but the first, except that an object's odd values (those after a key) get a colon.
  void prefix() {
    if (levels_.empty()) return;
    Level& level = levels_.back();
    if (level.values > 0) out_->push_back(level.in_array || level.values % 2 == 0 ? ',' : ':');
    ++level.values;
  }
  void start(char open, bool in_array) {
    prefix();
    levels_.push_back({0, in_array});
    out_->push_back(open);
  }
  void end(char close) {
    levels_.pop_back();
    out_->push_back(close);
  }
  template <typename N>
  void number(N n) {
    prefix();
    char text[24];
    const auto end = std::to_chars(text, text + sizeof(text), n).ptr;
    out_->append(text, static_cast<std::size_t>(end - text));
  }

  std::string* out_ = nullptr;
  std::vector<Level> levels_;
  int max_decimal_places_ = kDefaultMaxDecimalPlaces;
};

// A device as "7:0". Device 0 (major 0, minor 0) is never a real device (the anonymous-dev
// allocator starts at minor 1); the stitcher leaves it 0 when a call has no file (sync(2)), and
// DeviceOrNull writes it as null.
struct Device {
  DevT dev;
};
struct DeviceOrNull {
  DevT dev;
};
// A negative errno as its name ("ENOSPC"); 0 and up (success) as null.
struct Errno {
  std::int64_t negative_errno;
};
// A share in [0, 1], to four decimals (enough for "0.0123": 1.23 %).
struct Fraction {
  double value;
};

// One key and its value. Keys of the schema are literals of plain ASCII; the value is held by
// reference, so a field lives only as long as the call it is written in.
template <std::size_t N, typename V>
struct Field {
  const char (&key)[N];
  const V& value;
};
template <std::size_t N, typename V>
Field<N, V> field(const char (&key)[N], const V& value) {
  return {key, value};
}

class Emitter {
 public:
  Emitter(Writer& writer, std::string& scratch) : writer_(writer), scratch_(scratch) {}

  template <typename... Fields>
  void object(const Fields&... fields) {
    writer_.StartObject();
    (put(fields), ...);
    writer_.EndObject();
  }
  // Fields of an object the caller opened (a part shared by several objects).
  template <typename... Fields>
  void fields(const Fields&... fields) {
    (put(fields), ...);
  }
  template <std::size_t N, typename V>
  void put(const Field<N, V>& f) {
    key(f.key);
    value(f.value);
  }

  // The quotes are added here rather than by Writer::Key, which would scan the name for
  // characters to escape: schema keys have none.
  template <std::size_t N>
  void key(const char (&name)[N]) {
    std::array<char, N + 1> quoted;
    quoted.front() = '"';
    std::copy_n(name, N - 1, quoted.begin() + 1);
    quoted.back() = '"';
    writer_.RawValue(quoted.data(), quoted.size());
  }
  // A schema key from a table (a phase's), plain ASCII like the literals.
  void schema_key(std::string_view name) {
    scratch_.assign(1, '"');
    scratch_ += name;
    scratch_ += '"';
    writer_.RawValue(scratch_.data(), scratch_.size());
  }
  // A key that is data (a hook name, a histogram bound): escaped like any string.
  void key_text(std::string_view name) { quoted(name); }

  void value(bool v) { writer_.Bool(v); }
  void value(std::uint64_t v) { writer_.Uint64(v); }
  void value(std::uint32_t v) { writer_.Uint(v); }
  void value(std::uint16_t v) { writer_.Uint(v); }
  void value(std::uint8_t v) { writer_.Uint(v); }
  void value(std::int64_t v) { writer_.Int64(v); }
  void value(std::int32_t v) { writer_.Int(v); }
  void value(std::string_view text) { quoted(text); }
  void value(const std::string& text) { quoted(text); }
  void value(const char* text) { quoted(text); }
  void value(std::nullopt_t) { null(); }
  void value(Device d) { device(d.dev); }
  void value(DeviceOrNull d) {
    if (d.dev == 0) return null();
    device(d.dev);
  }
  void value(Errno e) {
    if (e.negative_errno >= 0) return null();
    quoted(errno_name(static_cast<int>(e.negative_errno)));
  }
  void value(Fraction f) {
    writer_.SetMaxDecimalPlaces(4);
    writer_.Double(f.value);
    writer_.SetMaxDecimalPlaces(Writer::kDefaultMaxDecimalPlaces);
  }
  template <typename T>
  void value(const std::optional<T>& v) {
    if (!v) return null();
    value(*v);
  }
  template <typename T>
  void value(const std::vector<T>& items) {
    writer_.StartArray();
    for (const T& item : items) value(item);
    writer_.EndArray();
  }
  // An object of the schema: found by argument-dependent lookup on the Emitter.
  template <typename T>
  requires requires(Emitter& e, const T& v) { write_json(e, v); }
  void value(const T& v) { write_json(*this, v); }

  void start_object() { writer_.StartObject(); }
  void end_object() { writer_.EndObject(); }

 private:
  void null() { writer_.Null(); }
  void device(DevT dev) {
    std::array<char, 24> text{};
    char* end = text.data();
    *end++ = '"';
    end = std::to_chars(end, text.data() + text.size(), dev_major(dev)).ptr;
    *end++ = ':';
    end = std::to_chars(end, text.data() + text.size(), dev_minor(dev)).ptr;
    *end++ = '"';
    writer_.RawValue(text.data(), static_cast<std::size_t>(end - text.data()));
  }

  // Every string value goes through append_json_string, so that escaping and UTF-8 repair are
  // nlohmann::json's. Keys and values alike: to the writer both are strings.
  void quoted(std::string_view text) {
    scratch_.clear();
    scratch_ += '"';
    append_json_string(scratch_, text);
    scratch_ += '"';
    writer_.RawValue(scratch_.data(), scratch_.size());
  }

  Writer& writer_;
  std::string& scratch_;
};

// The objects of the schema, one line each.
void write_json(Emitter& e, const WriteTimeline& write, const JsonItemLine& line = {});
void write_json(Emitter& e, const SyncTimeline& sync, const JsonItemLine& line = {});
void write_json(Emitter& e, const NameChangeTimeline& item, const JsonItemLine& line = {});
void write_json(Emitter& e, const ReadTimeline& item, const JsonItemLine& line = {});
void write_json(Emitter& e, const TraceSummary& totals);

}  // namespace wp::jsonl
