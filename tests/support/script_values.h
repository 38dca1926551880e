// SPDX-License-Identifier: Apache-2.0
// How the event scripts write a value of each field type of the record tables
// (bpf/record_tables.h, decode/record_fields.h): ScriptValue<wp::field::token> reads a key's
// text into the event's member and writes it back, the one place both directions are said.
// Numbers are decimal or 0x-hex, counts that may be negative take -ENAME, times carry their
// unit (12us), devices are named by the script's `device` lines (or MAJ:MIN), kernel
// pointers by names the script makes up (b1, r1), flags and enumerations by their names.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "common/nanos.h"
#include "decode/events.h"

namespace wp::script {

// A line that cannot be read: its message, without the line number (added by the caller).
struct ScriptError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::uint64_t parse_number(std::string_view text, std::string_view what);
// A number that may be negative (a return value, an error): digits, or -ENAME.
std::int64_t parse_signed(std::string_view text, std::string_view what);
// "0", "250ns", "12us", "1.5ms", "2s": nanoseconds.
Nanos parse_duration(std::string_view text, std::string_view what);
// The shortest exact form parse_duration() reads back: "0", "250ns", "12us", "3ms", "2s".
std::string format_duration(Nanos ns);

// Names given to the script's devices, pointers and kernel symbols, both ways.
class Names {
 public:
  void add_device(const std::string& name, DevT dev) {
    devices_[name] = dev;
    device_names_.try_emplace(dev, name);
  }
  // A device by the name its `device` line gave it, or as MAJ:MIN.
  DevT device(std::string_view text) const;
  std::string device_name(DevT dev) const;
  // The pointer a name stands for: a number as written, else one of its own, the same for the
  // same name throughout the script (kernel addresses look alike; these only need to differ).
  std::uint64_t pointer(const std::string& name);
  // The address of a kernel function named in a stack; `fresh` is set the first time.
  std::uint64_t symbol(const std::string& name, bool& fresh);

 private:
  static constexpr std::uint64_t kFirstPointer = 0xffff888000001000ull;
  static constexpr std::uint64_t kFirstSymbol = 0xffffffff81000000ull;
  std::map<std::string, DevT, std::less<>> devices_;
  std::map<DevT, std::string> device_names_;
  std::map<std::string, std::uint64_t> pointers_;
  std::map<std::string, std::uint64_t> symbols_;
};

using NameTable = std::span<const std::pair<std::uint32_t, std::string_view>>;

// Bits by name: each comma-separated name one bit of `table`, or the whole as a number; and
// back, the names of the bits set (a number for bits no name has).
std::uint32_t parse_bits(std::string_view text, NameTable table, std::string_view what);
std::string format_bits(std::uint32_t bits, NameTable table);
// One value by its name.
std::uint32_t parse_choice(std::string_view text, NameTable table, std::string_view what);
std::string format_choice(std::uint32_t value, NameTable table);

// The names of each named field type's values, as the outputs print them.
NameTable names_of_file_flags();
NameTable names_of_request_flags();
NameTable names_of_iclog_flags();
NameTable names_of_fault_flags();
NameTable names_of_ops();
NameTable names_of_journal_phases();
NameTable names_of_request_events();
NameTable names_of_nvme_events();
NameTable names_of_fs_log_events();
NameTable names_of_inline_fs();

template <typename Token>
struct ScriptValue;  // one per field type a table-made event holds

template <typename T>
struct UnsignedValue {
  static void parse(std::string_view text, std::string_view key, Names&, T& out) {
    const std::uint64_t value = parse_number(text, key);
    if (value > std::numeric_limits<T>::max())
      throw ScriptError(fmt::format("{}: {} does not fit in {} bytes", key, value, sizeof(T)));
    out = static_cast<T>(value);
  }
  static std::string format(T value, const Names&) { return fmt::to_string(value); }
};
template <typename T>
struct SignedValue {
  static void parse(std::string_view text, std::string_view key, Names&, T& out) {
    const std::int64_t value = parse_signed(text, key);
    if (value < std::numeric_limits<T>::min() || value > std::numeric_limits<T>::max())
      throw ScriptError(fmt::format("{}: {} does not fit in {} bytes", key, value, sizeof(T)));
    out = static_cast<T>(value);
  }
  static std::string format(T value, const Names&) { return fmt::to_string(value); }
};
template <NameTable (*Table)(), bool Bits, typename T>
struct NamedValue {
  static NameTable table() { return Table(); }
  static void parse(std::string_view text, std::string_view key, Names&, T& out) {
    out = static_cast<T>(Bits ? parse_bits(text, Table(), key) : parse_choice(text, Table(), key));
  }
  static std::string format(T value, const Names&) {
    const auto raw = static_cast<std::uint32_t>(value);
    return Bits ? format_bits(raw, Table()) : format_choice(raw, Table());
  }
};

template <>
struct ScriptValue<field::u8> : UnsignedValue<std::uint8_t> {};
template <>
struct ScriptValue<field::u16> : UnsignedValue<std::uint16_t> {};
template <>
struct ScriptValue<field::u32> : UnsignedValue<std::uint32_t> {};
template <>
struct ScriptValue<field::u64> : UnsignedValue<std::uint64_t> {};
template <>
struct ScriptValue<field::s32> : SignedValue<std::int32_t> {};
template <>
struct ScriptValue<field::s64> : SignedValue<std::int64_t> {};
template <>
struct ScriptValue<field::ns> {
  static void parse(std::string_view text, std::string_view key, Names&, Nanos& out) {
    out = parse_duration(text, key);
  }
  static std::string format(Nanos value, const Names&) { return format_duration(value); }
};
template <>
struct ScriptValue<field::dev> {
  static void parse(std::string_view text, std::string_view, Names& names, DevT& out) {
    out = names.device(text);
  }
  static std::string format(DevT value, const Names& names) { return names.device_name(value); }
};
template <>
struct ScriptValue<field::ptr> {
  static void parse(std::string_view text, std::string_view, Names& names, std::uint64_t& out) {
    out = names.pointer(std::string(text));
  }
  static std::string format(std::uint64_t value, const Names&) {
    return fmt::format("{:#x}", value);
  }
};
template <>
struct ScriptValue<field::comm> {
  static void parse(std::string_view text, std::string_view, Names&, std::string& out) {
    out = text;
  }
  static std::string format(const std::string& value, const Names&) {
    return value.find_first_of(" \t#") == std::string::npos ? value : '"' + value + '"';
  }
};
template <>
struct ScriptValue<field::req_flags32> : NamedValue<names_of_request_flags, true, std::uint32_t> {};
template <>
struct ScriptValue<field::iclog_flags32> : NamedValue<names_of_iclog_flags, true, std::uint32_t> {};
template <>
struct ScriptValue<field::fault_flags16> : NamedValue<names_of_fault_flags, true, std::uint16_t> {};
template <>
struct ScriptValue<field::req_op32> : NamedValue<names_of_ops, false, ReqOp> {};
template <>
struct ScriptValue<field::jbd2_phase32> : NamedValue<names_of_journal_phases, false, JournalPhase> {
};
template <>
struct ScriptValue<field::rq_event8>
    : NamedValue<names_of_request_events, false, RequestEventKind> {};
template <>
struct ScriptValue<field::nvme_event8> : NamedValue<names_of_nvme_events, false, NvmeEventKind> {};
template <>
struct ScriptValue<field::fs_log32> : NamedValue<names_of_fs_log_events, false, FsLogKind> {};
template <>
struct ScriptValue<field::inline_fs8> : NamedValue<names_of_inline_fs, false, InlineFs> {};

// A field type a script never writes: padding, and bytes the decoder reads itself.
template <typename Token>
concept Unwritten = std::is_same_v<typename Token::type, field::Pad>;

}  // namespace wp::script
