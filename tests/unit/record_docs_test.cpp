// SPDX-License-Identifier: Apache-2.0
// docs/reference/records.md's field tables are the record tables (bpf/record_tables.h): a
// record changed there and not in the page fails here. To rewrite the page's tables after a
// change on purpose: WRITEPATH_UPDATE_DOCS=1 build/unit_tests --gtest_filter='RecordDocs.*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "record_docs.h"
#include "writepath.h"

namespace wp {
namespace {

const std::string kPage = std::string(WRITEPATH_SOURCE_DIR) + "/docs/reference/records.md";

std::string read_page() {
  std::ifstream in(kPage);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first line where the page and what it should be part, both ways: a whole page in a
// failure message hides the one line that moved.
std::string first_difference(const std::string& page, const std::string& expected) {
  std::istringstream a(page), b(expected);
  std::string line_a, line_b;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, line_a));
    const bool more_b = static_cast<bool>(std::getline(b, line_b));
    if (!more_a && !more_b) return "";
    if (line_a != line_b || more_a != more_b)
      return "at line " + std::to_string(line) + ":\n  page:   " + (more_a ? line_a : "(end)") +
             "\n  tables: " + (more_b ? line_b : "(end)") + "\n";
  }
}

TEST(RecordDocs, TheReferencesFieldTablesAreTheRecordTables) {
  const std::string page = read_page();
  ASSERT_FALSE(page.empty()) << kPage;
  const std::string expected = with_record_field_tables(page, record_field_tables());
  ASSERT_FALSE(expected.empty()) << kPage << " lacks the markers " << kRecordFieldsBegin << " and "
                                 << kRecordFieldsEnd;
  if (std::getenv("WRITEPATH_UPDATE_DOCS") && expected != page) {
    std::ofstream(kPage) << expected;
    GTEST_SKIP() << "rewrote " << kPage;
  }
  EXPECT_TRUE(page == expected) << kPage << "'s field tables differ from bpf/record_tables.h "
                                << first_difference(page, expected) << "; if on purpose: "
                                << "WRITEPATH_UPDATE_DOCS=1 build/unit_tests "
                                   "--gtest_filter='RecordDocs.*'";
}

// Every record is in the page, with its size: the tables name them all.
TEST(RecordDocs, EveryRecordHasATableWithItsSize) {
  const std::string tables = record_field_tables();
#define WP_EXPECT_TABLE_(tag, TYPE, value, FIELDS, bytes)                         \
  EXPECT_NE(tables.find("`wp_" #tag "_record, WP_REC_" #TYPE " = " #value "` (" + \
                        std::to_string(sizeof(wp_##tag##_record)) + " bytes)"),   \
            std::string::npos)                                                    \
      << #tag;
  WP_RECORD_TABLE(WP_EXPECT_TABLE_)
#undef WP_EXPECT_TABLE_
}

}  // namespace
}  // namespace wp
