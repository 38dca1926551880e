// SPDX-License-Identifier: Apache-2.0
// The records' field tables of docs/reference/records.md, made from the record tables
// (bpf/record_tables.h): each record's fields with their offsets, types and meanings. A unit
// test holds the page to them (tests/unit/record_docs_test.cpp).
#pragma once

#include <string>
#include <string_view>

namespace wp {

// The section between the page's markers: one table per record, in WP_RECORD_TABLE's order.
std::string record_field_tables();

// `page` with the text between its markers replaced by `tables`; "" when it has no markers.
constexpr std::string_view kRecordFieldsBegin =
    "<!-- record fields: made from bpf/record_tables.h -->";
constexpr std::string_view kRecordFieldsEnd = "<!-- end of record fields -->";
std::string with_record_field_tables(std::string_view page, std::string_view tables);

}  // namespace wp
