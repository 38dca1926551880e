// SPDX-License-Identifier: Apache-2.0
// The HTML report's page, built into the binary from sinks/report/ (report.html with its
// stylesheet and scripts inlined, by sinks/report/embed.cmake): one self-contained file, with
// @@WRITEPATH_DATA@@ where the trace's data goes. Nothing is read at run time. The data is
// HtmlSink::page_data's: the items (the JSON sink's objects, slimmed, with `labels`), the
// summary, and `why`, the slowest calls with named causes (html_why.h's entries).
#pragma once

#include <string_view>

namespace wp {

std::string_view report_page();

}  // namespace wp
