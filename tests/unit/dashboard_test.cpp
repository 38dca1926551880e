// SPDX-License-Identifier: Apache-2.0
// The Grafana dashboard (deploy/grafana/writepath.json) names only metrics `writepath serve`
// exports: every panel target's and templating variable's PromQL is read for metric names,
// each checked against metric_catalogue() (histograms with _bucket, _sum or _count), so a
// renamed family fails here and not as an empty panel. It also holds a panel for each of the
// figures an operator looks at first.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "serve/write_metrics.h"

namespace wp {
namespace {

using nlohmann::json;

// The metric names a PromQL expression selects: identifiers followed by `{`, `[` or `)`, once
// label matchers, strings, `by (...)`/`without (...)`, `on (...)`, `ignoring (...)` lists,
// label_values()'s label and Grafana's `$variables` are removed (labels, not metrics).
std::set<std::string> metric_names(std::string expr) {
  static const std::regex strings(R"("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')");
  static const std::regex matchers(R"(\{[^}]*\})");
  static const std::regex grouping(
      R"(\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\))");
  // Grafana's label_values(metric, label) and label_values(label): the label is not a metric.
  static const std::regex label_values(
      R"(label_values\(\s*(?:([^,()]*),\s*)?[A-Za-z_][A-Za-z0-9_]*\s*\))");
  static const std::regex variables(R"(\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)");
  static const std::regex name(R"((^|[^A-Za-z0-9_:.])([A-Za-z_:][A-Za-z0-9_:]*)\s*[\{\[\)])");
  // PromQL keywords and functions that can stand before `)` (e.g. `vector(1) or on() x`).
  static const std::set<std::string> keywords = {
      "by",  "without", "on",     "ignoring", "group_left", "group_right", "bool",   "offset",
      "and", "or",      "unless", "inf",      "nan",        "time",        "vector", "scalar"};
  expr = std::regex_replace(expr, strings, "\"\"");
  expr = std::regex_replace(expr, matchers, "{}");
  expr = std::regex_replace(expr, grouping, "");
  expr = std::regex_replace(expr, label_values, "label_values($1)");
  expr = std::regex_replace(expr, variables, "");
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(expr.begin(), expr.end(), name); it != std::sregex_iterator();
       ++it) {
    const std::string found = (*it)[2];
    if (!keywords.contains(found)) names.insert(found);
  }
  return names;
}

// Every name a query may use: each family, and a histogram's series.
std::set<std::string> exported_names() {
  std::set<std::string> names;
  for (const MetricInfo& info : metric_catalogue()) {
    names.insert(info.name);
    if (info.type == prometheus::MetricType::Histogram)
      for (const char* suffix : {"_bucket", "_sum", "_count"}) names.insert(info.name + suffix);
  }
  return names;
}

json load_dashboard() {
  std::ifstream in(WRITEPATH_DASHBOARD);
  if (!in) throw std::runtime_error("cannot open " WRITEPATH_DASHBOARD);
  return json::parse(in);  // throws on invalid JSON, failing the test with where
}

// Panels, those inside rows included.
void collect_panels(const json& panels, std::vector<json>& out) {
  for (const json& panel : panels) {
    out.push_back(panel);
    if (panel.contains("panels")) collect_panels(panel["panels"], out);
  }
}

struct Query {
  std::string where;  // "panel 'sync phase: flush'" or "variable device"
  std::string expr;
};

std::vector<Query> queries(const json& dashboard) {
  std::vector<Query> out;
  std::vector<json> panels;
  collect_panels(dashboard.at("panels"), panels);
  for (const json& panel : panels)
    for (const json& target : panel.value("targets", json::array()))
      out.push_back(
          {"panel '" + panel.value("title", "") + "'", target.at("expr").get<std::string>()});
  for (const json& variable : dashboard.at("templating").at("list")) {
    if (variable.value("type", "") != "query") continue;
    const json& query = variable.at("query");
    out.push_back(
        {"variable " + variable.value("name", ""),
         query.is_string() ? query.get<std::string>() : query.at("query").get<std::string>()});
  }
  return out;
}

TEST(Dashboard, MetricNamesAreFoundInPromQL) {
  EXPECT_EQ(metric_names("histogram_quantile(0.99, sum by (le, device) (rate("
                         "writepath_sync_phase_seconds_bucket{device=~\"$device\", "
                         "phase=\"flush\"}[$__rate_interval])))"),
            (std::set<std::string>{"writepath_sync_phase_seconds_bucket"}));
  EXPECT_EQ(metric_names("sum(writepath_agent_resident_memory_bytes) / on (instance) "
                         "group_left (job) up{job='x'} or vector(0)"),
            (std::set<std::string>{"writepath_agent_resident_memory_bytes", "up"}));
  EXPECT_EQ(metric_names("label_values(writepath_events_total, instance)"),
            (std::set<std::string>{"writepath_events_total"}));
  EXPECT_EQ(metric_names("label_values(writepath_write_latency_seconds_count{instance=~"
                         "\"$instance\"}, device)"),
            (std::set<std::string>{"writepath_write_latency_seconds_count"}));
  EXPECT_EQ(metric_names("label_values(device)"), (std::set<std::string>{}));
  EXPECT_EQ(metric_names("rate(x_total[5m] offset 1h)"), (std::set<std::string>{"x_total"}));
}

TEST(Dashboard, IsValidJsonWithItsDataSourceAsAnInput) {
  const json dashboard = load_dashboard();
  EXPECT_GE(dashboard.at("schemaVersion").get<int>(), 36);
  ASSERT_FALSE(dashboard.at("__inputs").empty());
  EXPECT_EQ(dashboard["__inputs"][0].at("name"), "DS_PROMETHEUS");
  std::set<std::string> variables;
  for (const json& variable : dashboard.at("templating").at("list"))
    variables.insert(variable.at("name").get<std::string>());
  for (const char* wanted : {"DS_PROMETHEUS", "instance", "device", "cgroup"})
    EXPECT_TRUE(variables.contains(wanted)) << "no templating variable " << wanted;
  std::vector<json> panels;
  collect_panels(dashboard.at("panels"), panels);
  std::set<int> ids;
  for (const json& panel : panels) {
    EXPECT_TRUE(ids.insert(panel.at("id").get<int>()).second) << "panel id repeated: " << panel;
    for (const json& target : panel.value("targets", json::array()))
      EXPECT_EQ(target.at("datasource").at("uid"), "${DS_PROMETHEUS}") << panel.value("title", "");
  }
}

TEST(Dashboard, NamesOnlyMetricsTheExporterExports) {
  const std::set<std::string> known = exported_names();
  const std::vector<Query> all = queries(load_dashboard());
  ASSERT_GT(all.size(), 20u);
  for (const Query& query : all) {
    const std::set<std::string> names = metric_names(query.expr);
    EXPECT_FALSE(names.empty()) << query.where << " names no metric: " << query.expr;
    for (const std::string& name : names)
      EXPECT_TRUE(known.contains(name))
          << query.where << " names " << name
          << ", which metric_catalogue() does not hold: " << query.expr;
  }
}

TEST(Dashboard, HasAPanelForEachFirstQuestion) {
  const json dashboard = load_dashboard();
  std::vector<json> panels;
  collect_panels(dashboard.at("panels"), panels);
  // A panel of `type` whose queries name `metric`.
  auto has_panel = [&](const std::string& type, const std::string& metric) {
    for (const json& panel : panels) {
      if (!type.empty() && panel.value("type", "") != type) continue;
      for (const json& target : panel.value("targets", json::array()))
        if (metric_names(target.at("expr").get<std::string>()).contains(metric)) return true;
    }
    return false;
  };
  EXPECT_TRUE(has_panel("heatmap", "writepath_sync_phase_seconds_bucket")) << "sync phases";
  EXPECT_TRUE(has_panel("", "writepath_write_durable_lag_seconds_bucket")) << "durability lag";
  EXPECT_TRUE(has_panel("", "writepath_dirty_throttle_pause_seconds_bucket") ||
              has_panel("", "writepath_dirty_throttle_pause_seconds_count"))
      << "throttling";
  EXPECT_TRUE(has_panel("stat", "writepath_direct_writes_dirtied_total")) << "O_DIRECT dirtied";
  EXPECT_TRUE(has_panel("", "writepath_lost_events_total")) << "lost events";

  // Every phase the fsync phase table names has its heatmap.
  for (const char* phase : {"writeback", "data_io", "journal", "flush", "other"}) {
    bool found = false;
    for (const json& panel : panels)
      if (panel.value("type", "") == "heatmap")
        for (const json& target : panel.value("targets", json::array()))
          found |= target.value("format", "") == "heatmap" &&
                   target.at("expr").get<std::string>().find("phase=\"" + std::string(phase) +
                                                             "\"") != std::string::npos;
    EXPECT_TRUE(found) << "no heatmap of phase " << phase;
  }
}

}  // namespace
}  // namespace wp
