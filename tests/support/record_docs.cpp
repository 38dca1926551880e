// SPDX-License-Identifier: Apache-2.0
#include "record_docs.h"

#include <fmt/format.h>

#include <cstddef>

#include "decode/record_fields.h"
#include "writepath.h"

namespace wp {
namespace {

// A table's rows: offset, size, name, the field type's name for people, and its meaning.
#define WP_DOC_ROW_(token, name, meaning)                                      \
  out += fmt::format("| {} | {} | `{}` | {} | {} |\n", offsetof(Record, name), \
                     sizeof(Record::name), #name, ::wp::field::token::doc, cell(meaning));

// A meaning as a table cell: its pipes escaped.
std::string cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

template <typename Record>
void header(std::string& out, std::string_view title, std::size_t bytes) {
  out += fmt::format("\n#### `{}` ({} bytes)\n\n", title, bytes);
  out += "| offset | bytes | field | type | meaning |\n|---|---|---|---|---|\n";
  if constexpr (requires { Record::h; })
    out += fmt::format(
        "| 0 | {} | `h` | struct wp_record_header | type, size, version, cpu, "
        "timestamp |\n",
        sizeof(wp_record_header));
}

}  // namespace

std::string record_field_tables() {
  std::string out;
#define WP_DOC_RECORD_(tag, TYPE, value, FIELDS, bytes)                                     \
  {                                                                                         \
    using Record = wp_##tag##_record;                                                       \
    header<Record>(out, fmt::format("wp_{}_record", #tag) + ", WP_REC_" #TYPE " = " #value, \
                   sizeof(Record));                                                         \
    FIELDS(WP_DOC_ROW_)                                                                     \
  }
  WP_RECORD_TABLE(WP_DOC_RECORD_)
#undef WP_DOC_RECORD_
  {
    using Record = wp_extent;
    header<Record>(out, "wp_extent", sizeof(Record));
    WP_EXTENT_FIELDS(WP_DOC_ROW_)
  }
  {
    using Record = wp_offcpu_slot;
    header<Record>(out, "wp_offcpu_slot", sizeof(Record));
    WP_OFFCPU_SLOT_FIELDS(WP_DOC_ROW_)
  }
  return out;
}

std::string with_record_field_tables(std::string_view page, std::string_view tables) {
  const auto begin = page.find(kRecordFieldsBegin);
  const auto end = page.find(kRecordFieldsEnd);
  if (begin == std::string_view::npos || end == std::string_view::npos || end < begin) return {};
  const auto after_begin = begin + kRecordFieldsBegin.size();
  return fmt::format("{}\n{}\n{}", page.substr(0, after_begin), tables, page.substr(end));
}

}  // namespace wp
