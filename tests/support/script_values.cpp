// SPDX-License-Identifier: Apache-2.0
#include "script_values.h"

#include <charconv>
#include <cmath>
#include <ranges>

#include "common/units.h"

namespace wp::script {

std::uint64_t parse_number(std::string_view text, std::string_view what) {
  std::uint64_t value = 0;
  int base = 10;
  if (text.starts_with("0x")) {
    text.remove_prefix(2);
    base = 16;
  }
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    throw ScriptError(fmt::format("{}: '{}' is not a number", what, text));
  return value;
}

std::int64_t parse_signed(std::string_view text, std::string_view what) {
  const bool negative = text.starts_with('-');
  if (negative) text.remove_prefix(1);
  if (text.starts_with('E')) {
    for (int err = 1; err < 200; ++err)
      if (errno_name(err) == text) return negative ? -err : err;
    throw ScriptError(fmt::format("{}: unknown errno '{}'", what, text));
  }
  const auto magnitude = static_cast<std::int64_t>(parse_number(text, what));
  return negative ? -magnitude : magnitude;
}

namespace {
constexpr std::pair<std::string_view, Nanos> kTimeUnits[] = {
    {"s", 1'000'000'000}, {"ms", 1'000'000}, {"us", 1'000}, {"ns", 1}};
}  // namespace

Nanos parse_duration(std::string_view text, std::string_view what) {
  // Two-letter units first: "1ms" also ends with "s".
  for (const auto& [unit, scale] : std::views::reverse(kTimeUnits)) {
    if (!text.ends_with(unit)) continue;
    const std::string_view number = text.substr(0, text.size() - unit.size());
    double value = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec != std::errc() || end != number.data() + number.size() || number.empty() || value < 0)
      break;
    return static_cast<Nanos>(std::llround(value * static_cast<double>(scale)));
  }
  if (text == "0") return 0;
  throw ScriptError(
      fmt::format("{}: '{}' is not a time (write 0, 250ns, 12us, 1.5ms or 2s)", what, text));
}

std::string format_duration(Nanos ns) {
  if (ns == 0) return "0";
  for (const auto& [unit, scale] : kTimeUnits)
    if (ns % scale == 0) return fmt::format("{}{}", ns / scale, unit);
  return fmt::format("{}ns", ns);
}

DevT Names::device(std::string_view text) const {
  if (const auto it = devices_.find(text); it != devices_.end()) return it->second;
  const auto colon = text.find(':');
  if (colon == std::string_view::npos)
    throw ScriptError(fmt::format(
        "no device named '{}' (declare it with a device line, or write MAJ:MIN)", text));
  return make_dev(static_cast<std::uint32_t>(parse_number(text.substr(0, colon), "major")),
                  static_cast<std::uint32_t>(parse_number(text.substr(colon + 1), "minor")));
}

std::string Names::device_name(DevT dev) const {
  const auto it = device_names_.find(dev);
  return it != device_names_.end() ? it->second : dev_string(dev);
}

std::uint64_t Names::pointer(const std::string& name) {
  if (!name.empty() && name[0] >= '0' && name[0] <= '9') return parse_number(name, "pointer");
  const auto [it, added] = pointers_.try_emplace(name, kFirstPointer + pointers_.size() * 0x100);
  return it->second;
}

std::uint64_t Names::symbol(const std::string& name, bool& fresh) {
  const auto [it, added] = symbols_.try_emplace(name, kFirstSymbol + symbols_.size() * 0x40);
  fresh = added;
  return it->second;
}

namespace {
std::string names_list(NameTable table) {
  std::string names;
  for (const auto& entry : table)
    names += fmt::format("{}{}", names.empty() ? "" : ", ", entry.second);
  return names;
}
}  // namespace

std::uint32_t parse_bits(std::string_view text, NameTable table, std::string_view what) {
  if (!text.empty() && text[0] >= '0' && text[0] <= '9')
    return static_cast<std::uint32_t>(parse_number(text, what));
  std::uint32_t bits = 0;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view name = text.substr(0, comma);
    bool known = false;
    for (const auto& [bit, bit_name] : table)
      if (bit_name == name) {
        bits |= bit;
        known = true;
      }
    if (!known)
      throw ScriptError(fmt::format("{}: unknown '{}' (one of {})", what, name, names_list(table)));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return bits;
}

std::string format_bits(std::uint32_t bits, NameTable table) {
  std::string text;
  std::uint32_t named = 0;
  for (const auto& [bit, name] : table)
    if ((bits & bit) == bit && (named & bit) != bit) {
      text += fmt::format("{}{}", text.empty() ? "" : ",", name);
      named |= bit;
    }
  if (named != bits) return fmt::format("{:#x}", bits);  // a bit no name has: all as a number
  return text.empty() ? "0" : text;
}

std::uint32_t parse_choice(std::string_view text, NameTable table, std::string_view what) {
  for (const auto& [value, name] : table)
    if (name == text) return value;
  throw ScriptError(fmt::format("{}: unknown '{}' (one of {})", what, text, names_list(table)));
}

std::string format_choice(std::uint32_t value, NameTable table) {
  for (const auto& [named, name] : table)
    if (named == value) return std::string(name);
  throw ScriptError(fmt::format("no name for value {}", value));
}

namespace {
constexpr std::pair<std::uint32_t, std::string_view> kFileFlags[] = {
    {file_flag::kRegular, "regular"}, {file_flag::kDirect, "direct"},
    {file_flag::kSync, "sync"},       {file_flag::kDsync, "dsync"},
    {file_flag::kAppend, "append"},   {file_flag::kBlockDev, "blockdev"}};
constexpr std::pair<std::uint32_t, std::string_view> kRequestFlags[] = {
    {req_flag::kFua, "fua"},
    {req_flag::kPreflush, "preflush"},
    {req_flag::kSync, "sync"},
    {req_flag::kMeta, "meta"},
    {req_flag::kFlushSeq, "flush_seq"}};
constexpr std::pair<std::uint32_t, std::string_view> kIclogFlags[] = {
    {WP_ICLOG_NEED_FLUSH, "need_flush"}, {WP_ICLOG_NEED_FUA, "need_fua"}};
constexpr std::pair<std::uint32_t, std::string_view> kFaultFlags[] = {
    {WP_FAULT_WRITE, "write"}, {WP_FAULT_KERNEL, "kernel"}, {WP_FAULT_FILLED, "filled"}};
constexpr std::pair<std::uint32_t, std::string_view> kOps[] = {
    {WP_OP_READ, "read"},
    {WP_OP_WRITE, "write"},
    {WP_OP_FLUSH, "flush"},
    {WP_OP_DISCARD, "discard"},
    {WP_OP_WRITE_ZEROES, "write_zeroes"}};
constexpr std::pair<std::uint32_t, std::string_view> kJournalPhases[] = {
    {WP_JBD2_START, "start"},
    {WP_JBD2_LOCKING, "locking"},
    {WP_JBD2_FLUSHING, "flushing"},
    {WP_JBD2_LOGGING, "logging"},
    {WP_JBD2_END, "end"}};
constexpr std::pair<std::uint32_t, std::string_view> kRequestEvents[] = {
    {WP_RQ_INSERT, "insert"},
    {WP_RQ_ISSUE, "issue"},
    {WP_RQ_COMPLETE, "complete"},
    {WP_RQ_BIO_FAILED, "bio_failed"},
    {WP_RQ_REQUEUE, "requeue"}};
constexpr std::pair<std::uint32_t, std::string_view> kNvmeEvents[] = {
    {WP_NVME_SETUP, "nvme_setup"}, {WP_NVME_COMPLETE, "nvme_complete"}};
constexpr std::pair<std::uint32_t, std::string_view> kFsLogEvents[] = {
    {WP_XFS_LOG_FORCE, "xfs_force"},
    {WP_XFS_ICLOG_SYNC, "iclog_sync"},
    {WP_XFS_ICLOG_DONE, "iclog_done"}};
constexpr std::pair<std::uint32_t, std::string_view> kInlineFs[] = {{WP_INLINE_BTRFS, "btrfs"},
                                                                    {WP_INLINE_EXT4, "ext4"}};
}  // namespace

NameTable names_of_file_flags() {
  return kFileFlags;
}
NameTable names_of_request_flags() {
  return kRequestFlags;
}
NameTable names_of_iclog_flags() {
  return kIclogFlags;
}
NameTable names_of_fault_flags() {
  return kFaultFlags;
}
NameTable names_of_ops() {
  return kOps;
}
NameTable names_of_journal_phases() {
  return kJournalPhases;
}
NameTable names_of_request_events() {
  return kRequestEvents;
}
NameTable names_of_nvme_events() {
  return kNvmeEvents;
}
NameTable names_of_fs_log_events() {
  return kFsLogEvents;
}
NameTable names_of_inline_fs() {
  return kInlineFs;
}

}  // namespace wp::script
