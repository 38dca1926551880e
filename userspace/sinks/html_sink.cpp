// SPDX-License-Identifier: Apache-2.0
#include "sinks/html_sink.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <string_view>
#include <variant>

#include "common/units.h"
#include "sinks/html_why.h"
#include "sinks/json_sink.h"
#include "sinks/report_page.h"
#include "sinks/wait_text.h"

namespace wp {
namespace {

using json = nlohmann::ordered_json;

// Process and file tallies name what was traced in the page's header; a system-wide trace may
// touch many thousands of files, so past this many distinct keys the rest go uncounted.
constexpr std::size_t kMaxTallied = 4096;
// The header lists this many of the busiest processes and files.
constexpr std::size_t kListedInHeader = 8;

// The heap's order: the fastest (then the latest) item on top, the first to evict.
bool slower(const auto& a, const auto& b) {
  return a.latency_ns != b.latency_ns ? a.latency_ns > b.latency_ns : a.order < b.order;
}

// The page shows counts of requests, not the requests: a write can carry hundreds of them and
// the page must stay small enough to open.
json slim(json item, std::initializer_list<const char*> arrays) {
  for (const char* key : arrays) {
    auto found = item.find(key);
    if (found == item.end()) continue;
    std::size_t count = found->size();
    item.erase(found);
    item[std::string(key) + "_count"] = count;
  }
  // A slow call's stacks and named waits: only the slowest calls' are shown, in `why`.
  if (auto causes = item.find("causes"); causes != item.end() && causes->is_object()) {
    causes->erase("stacks");
    causes->erase("waits");
  }
  return item;
}

// The page shows durations and sizes as the text output does: formatted here, by units.h, into a
// `labels` object beside the numbers (which the page keeps for geometry), so there is one
// formatter and the page's script only lays labels out.
Nanos nanos_at(const json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_number() ? found->get<Nanos>() : 0;
}

// {"journal_ns": 2000000, …} → {"journal": "2.00ms", …}: every number named *_ns.
json duration_labels(const json& nanos) {
  json labels = json::object();
  constexpr std::string_view kSuffix = "_ns";
  for (const auto& [key, value] : nanos.items()) {
    if (!value.is_number() || !key.ends_with(kSuffix)) continue;
    labels[key.substr(0, key.size() - kSuffix.size())] = human_duration(value.get<Nanos>());
  }
  return labels;
}

std::string since(const json& object, const char* key, Nanos origin) {
  return human_offset(relative_ns(nanos_at(object, key), origin));
}

// A write's, sync's or read's labels; times are offsets from `origin`, the page's first call.
json item_labels(const json& item, Nanos origin) {
  json labels = {{"latency", human_duration(nanos_at(item, "latency_ns"))},
                 {"start", since(item, "start_ns", origin)}};
  if (item.contains("bytes")) {
    labels["bytes"] = human_bytes(item["bytes"].get<std::uint64_t>());
    labels["requested"] = human_bytes(item["requested"].get<std::uint64_t>());
  }
  if (item.contains("throttled_ns"))
    labels["throttled"] = human_duration(nanos_at(item, "throttled_ns"));
  if (auto durable = item.find("durable_ns"); durable != item.end() && durable->is_number()) {
    const Nanos end = nanos_at(item, "end_ns");
    labels["durable"] = since(item, "durable_ns", origin);
    labels["durable_after"] = human_duration(*durable > end ? durable->get<Nanos>() - end : 0);
  }
  if (auto discarded = item.find("discarded_ns");
      discarded != item.end() && discarded->is_number()) {
    labels["discarded"] = since(item, "discarded_ns", origin);
  }
  if (auto lost = item.find("lost_ns"); lost != item.end() && lost->is_number())
    labels["lost"] = since(item, "lost_ns", origin);
  for (const char* parts : {"phases", "causes"}) {  // causes is null unless --min-latency
    if (auto found = item.find(parts); found != item.end() && found->is_object())
      labels[parts] = duration_labels(*found);
  }
  // A sync's neighbours, as the text's "behind" line says them.
  if (auto found = item.find("neighbours"); found != item.end() && found->is_array()) {
    json rows = json::array();
    for (const json& n : *found)
      rows.push_back({{"bytes", human_bytes(n["bytes"].get<std::uint64_t>())},
                      {"share", fmt::format("{:.0f} %", 100.0 * n["share"].get<double>())},
                      {"delay", human_duration(nanos_at(n, "delay_ns"))}});
    labels["neighbours"] = std::move(rows);
  }
  return labels;
}

// The summary as the JSON sink writes it, with labels on the parts the page shows.
json labelled_summary(const TraceSummary& totals) {
  json summary = summary_json(totals);
  if (summary["fsync_phases"].is_object()) {
    for (auto& [phase, stats] : summary["fsync_phases"].items()) {
      json labels = json::object();
      for (const char* key : {"p50", "p99", "max", "total"})
        labels[key] = human_duration(nanos_at(stats, key));
      stats["labels"] = std::move(labels);
    }
  }
  for (json& row : summary["neighbours"])
    row["labels"] = {{"bytes", human_bytes(row["bytes"].get<std::uint64_t>())},
                     {"delay", human_duration(nanos_at(row, "delay_ns"))}};
  for (json& verdict : summary["direct_io"])
    verdict["labels"] = {
        {"bytes", human_bytes(verdict["bytes"].get<std::uint64_t>())},
        {"buffered_bytes", human_bytes(verdict["buffered_bytes"].get<std::uint64_t>())}};
  for (json& file : summary["read_files"]) {
    const json& hit = file["hit_ratio"];
    const auto requests = file["read_requests"].get<std::uint64_t>();
    const auto request_bytes = file["request_bytes"].get<std::uint64_t>();
    const auto device_ns = file["device_ns"].get<std::uint64_t>();
    file["labels"] = {
        {"requests", requests == 0 ? std::string("–")
                                   : fmt::format("{} of {}, {:.0f} % sequential", requests,
                                                 human_bytes(request_bytes / requests),
                                                 100.0 * file["sequential_requests"].get<double>() /
                                                     static_cast<double>(requests))},
        {"device_rate", device_ns == 0 ? std::string("–") : human_rate(request_bytes, device_ns)},
        {"bytes", human_bytes(file["bytes"].get<std::uint64_t>())},
        {"direct_bytes", human_bytes(file["direct_bytes"].get<std::uint64_t>())},
        {"latency", human_duration(file["latency_ns"].get<std::uint64_t>())},
        {"fault_time", human_duration(file["fault_ns"].get<std::uint64_t>())},
        {"hit_ratio", hit.is_null() ? "–" : fmt::format("{:.1f} %", 100.0 * hit.get<double>())}};
  }
  return summary;
}

template <typename Map, typename Less>
std::vector<typename Map::const_iterator> busiest(const Map& map, Less less) {
  std::vector<typename Map::const_iterator> out;
  for (auto it = map.begin(); it != map.end(); ++it) out.push_back(it);
  std::stable_sort(out.begin(), out.end(), less);
  if (out.size() > kListedInHeader) out.resize(kListedInHeader);
  return out;
}

}  // namespace

std::string local_time_now() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  if (!::localtime_r(&now, &local)) return "";
  char text[64];
  std::size_t n = std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S %z", &local);
  return std::string(text, n);
}

std::string render_html(const json& data) {
  std::string payload = json_line(data);
  std::string escaped;
  escaped.reserve(payload.size() + payload.size() / 16);
  // '<' only ever occurs inside JSON strings, where \u003c means the same character. Replacing
  // all of them (not only "</") also defuses "<!--", which would switch the HTML parser into a
  // state where "</script>" no longer ends the element.
  for (char c : payload) {
    if (c == '<')
      escaped += "\\u003c";
    else
      escaped += c;
  }
  std::string_view page = report_page();
  constexpr std::string_view kSlot = "@@WRITEPATH_DATA@@";
  std::size_t slot = page.find(kSlot);
  std::string out;
  out.reserve(page.size() + escaped.size());
  out.append(page.substr(0, slot));
  out.append(escaped);
  out.append(page.substr(slot + kSlot.size()));
  return out;
}

template <typename K>
void HtmlSink::keep(std::vector<K>& heap, std::size_t cap, K kept) {
  if (cap == 0) return;
  auto fastest_on_top = [](const K& a, const K& b) { return slower(a, b); };
  if (heap.size() == cap) {
    if (!slower(kept, heap.front())) return;
    std::pop_heap(heap.begin(), heap.end(), fastest_on_top);
    heap.pop_back();
  }
  heap.push_back(std::move(kept));
  std::push_heap(heap.begin(), heap.end(), fastest_on_top);
}

void HtmlSink::count_process_call(const SyscallEvent& call) {
  if (first_start_ns_ == 0 || call.start_ns < first_start_ns_) first_start_ns_ = call.start_ns;
  last_end_ns_ = std::max(last_end_ns_, call_end(call));
  auto process = items_by_process_.find({call.pid, call.comm});
  if (process != items_by_process_.end())
    ++process->second;
  else if (items_by_process_.size() < kMaxTallied)
    items_by_process_.emplace(std::make_pair(call.pid, call.comm), 1);
}

void HtmlSink::count_call(const SyscallEvent& call, bool is_write) {
  count_process_call(call);
  if (call.ino == 0 && call.dev == 0) return;  // sync(2): no file
  auto file = items_by_file_.find({call.dev, call.ino});
  if (file == items_by_file_.end()) {
    if (items_by_file_.size() >= kMaxTallied) return;
    file = items_by_file_.emplace(std::make_pair(call.dev, call.ino), FileCounts{}).first;
  }
  if (file->second.path.empty()) file->second.path = call.path;
  ++(is_write ? file->second.writes : file->second.syncs);
}

// How many containers the page tallies (a node runs tens, a busy one a few hundred).
constexpr std::size_t kMaxContainers = 256;

void HtmlSink::count_container(const SyscallEvent& call, bool is_write, bool durable,
                               bool incomplete) {
  if (!call.container) return;
  const Container& c = *call.container;
  auto it = items_by_container_.find(c.id);
  if (it == items_by_container_.end()) {
    if (items_by_container_.size() >= kMaxContainers) return;
    it = items_by_container_.emplace(c.id, ContainerCounts{}).first;
    it->second.label = std::string(c.label());
    it->second.runtime = container_runtime_name(c.runtime);
    it->second.pod = c.pod_name.empty() ? c.pod_uid : c.pod_name;
    if (!c.pod_namespace.empty()) it->second.pod = c.pod_namespace + "/" + it->second.pod;
  }
  ContainerCounts& counts = it->second;
  if (is_write) {
    ++counts.writes;
    counts.durable_writes += durable;
  } else {
    ++counts.syncs;
    counts.sync_latency->add(latency_ns(call));
  }
  counts.incomplete += incomplete;
  if (latency_ns(call) > counts.slowest_ns) {
    counts.slowest_ns = latency_ns(call);
    counts.slowest_call = fmt::format("{} by {} (pid {})", call_name(call), call.comm, call.pid);
  }
}

void HtmlSink::timeline(const Timeline& item) {
  const std::uint64_t order = arrivals_++;
  if (has_named_waits(item)) {
    const Nanos latency = latency_ns(call_of(item));
    if (why_.size() < kWhyCalls || latency > why_.front().latency_ns)
      keep(why_, kWhyCalls, KeptWhy{latency, order, item});
  }
  if (const auto* write = std::get_if<WriteTimeline>(&item)) {
    ++writes_seen_;
    ++writes_by_state_[write_state_name(write->state)];
    count_call(write->call, true);
    count_container(write->call, true, write->state == WriteState::Durable, write->incomplete);
    for (const ThrottlePause& pause : write->throttles) {
      ++pauses_seen_;
      if (throttle_pauses_.size() >= options_.max_throttle_pauses) continue;
      throttle_pauses_.push_back({{"ts", pause.ts},
                                  {"pause_ms", pause.pause_ms},
                                  {"dirty_pages", pause.dirty_pages},
                                  {"limit_pages", pause.limit_pages},
                                  {"tid", write->call.tid},
                                  {"comm", write->call.comm}});
    }
    const SyscallEvent& call = write->call;
    const Nanos latency = latency_ns(call);
    // Cheap test first: most writes of a long trace are fast and never make the cut.
    if (writes_.size() == options_.max_writes && !writes_.empty() &&
        latency <= writes_.front().latency_ns)
      return;
    keep(writes_, options_.max_writes,
         Kept{latency, order, slim(write_json(*write), {"requests"})});
  } else if (const auto* kept = std::get_if<SyncTimeline>(&item)) {
    const auto& sync = *kept;
    ++syncs_seen_;
    count_call(sync.call, false);
    count_container(sync.call, false, false, sync.incomplete);
    const SyscallEvent& call = sync.call;
    const Nanos latency = latency_ns(call);
    keep(syncs_, options_.max_syncs,
         Kept{latency, order, slim(sync_json(sync), {"requests", "flushes", "journal_commits"})});
  } else if (const auto* read = std::get_if<ReadTimeline>(&item)) {
    // On the timeline only: the per-file table is the summary's (read_files).
    ++reads_seen_;
    count_process_call(read->call);
    const Nanos latency = latency_ns(read->call);
    if (reads_.size() == options_.max_reads && !reads_.empty() &&
        latency <= reads_.front().latency_ns)
      return;
    keep(reads_, options_.max_reads, Kept{latency, order, slim(timeline_json(item), {"requests"})});
  }
}

json HtmlSink::page_data(const TraceSummary& totals) const {
  const Nanos origin = first_start_ns_;
  auto in_order = [origin](const std::vector<Kept>& heap) {
    std::vector<const Kept*> sorted;
    for (const Kept& kept : heap) sorted.push_back(&kept);
    std::sort(sorted.begin(), sorted.end(),
              [](const Kept* a, const Kept* b) { return a->order < b->order; });
    json out = json::array();
    for (const Kept* kept : sorted) {
      out.push_back(kept->item);
      out.back()["labels"] = item_labels(kept->item, origin);
    }
    return out;
  };
  std::vector<const KeptWhy*> slowest;
  for (const KeptWhy& kept : why_) slowest.push_back(&kept);
  std::sort(slowest.begin(), slowest.end(),
            [](const KeptWhy* a, const KeptWhy* b) { return slower(*a, *b); });
  json why = json::array();
  for (const KeptWhy* kept : slowest) why.push_back(why_entry(kept->item, origin));

  json pauses = json::array();
  Nanos asleep_ns = 0;
  for (const json& pause : throttle_pauses_) {
    const Nanos pause_ns =
        static_cast<Nanos>(std::max<std::int64_t>(0, pause["pause_ms"].get<std::int64_t>())) *
        1'000'000;
    asleep_ns += pause_ns;
    pauses.push_back(pause);
    pauses.back()["labels"] = {{"pause", human_duration(pause_ns)},
                               {"at", since(pause, "ts", origin)}};
  }

  json processes = json::array();
  for (auto it : busiest(items_by_process_, [](auto a, auto b) { return a->second > b->second; }))
    processes.push_back(
        {{"pid", it->first.first}, {"comm", it->first.second}, {"items", it->second}});
  json files = json::array();
  for (auto it : busiest(items_by_file_, [](auto a, auto b) {
         return a->second.writes + a->second.syncs > b->second.writes + b->second.syncs;
       })) {
    files.push_back({{"dev", dev_string(it->first.first)},
                     {"ino", it->first.second},
                     {"writes", it->second.writes},
                     {"syncs", it->second.syncs}});
    if (!it->second.path.empty()) files.back()["path"] = it->second.path;
  }

  // Busiest first.
  std::vector<const std::pair<const std::string, ContainerCounts>*> by_items;
  for (const auto& entry : items_by_container_) by_items.push_back(&entry);
  std::stable_sort(by_items.begin(), by_items.end(), [](auto a, auto b) {
    return a->second.writes + a->second.syncs > b->second.writes + b->second.syncs;
  });
  json containers = json::array();
  for (const auto* entry : by_items) {
    const ContainerCounts& c = entry->second;
    const Nanos p99 = c.sync_latency->quantile(0.99);
    containers.push_back({{"id", entry->first},
                          {"name", c.label},
                          {"runtime", c.runtime},
                          {"pod", c.pod},
                          {"writes", c.writes},
                          {"durable_writes", c.durable_writes},
                          {"syncs", c.syncs},
                          {"incomplete", c.incomplete},
                          {"sync_p99_ns", p99},
                          {"slowest_ns", c.slowest_ns},
                          {"slowest_call", c.slowest_call},
                          {"labels",
                           {{"sync_p99", c.syncs ? human_duration(p99) : std::string("–")},
                            {"slowest", human_duration(c.slowest_ns)},
                            {"durable", fmt::format("{} of {}", c.durable_writes, c.writes)}}}});
  }

  json phases = json::array();
  for (const SyncPhaseInfo& phase : kSyncPhases)
    phases.push_back({phase.name, phase.title, phase.about});

  return json{
      {"generated_at", options_.generated_at},
      {"phases", std::move(phases)},
      {"summary", labelled_summary(totals)},
      {"labels",
       {{"duration", human_duration(totals.duration_ns)},
        {"throttle_asleep", human_duration(asleep_ns)}}},
      {"first_start_ns", first_start_ns_},
      {"last_end_ns", last_end_ns_},
      {"writes_seen", writes_seen_},
      {"syncs_seen", syncs_seen_},
      {"reads_seen", reads_seen_},
      {"writes_by_state", writes_by_state_},
      {"processes", std::move(processes)},
      {"process_count", items_by_process_.size()},
      {"files", std::move(files)},
      {"containers", std::move(containers)},
      {"file_count", items_by_file_.size()},
      {"limits",
       {{"writes", options_.max_writes},
        {"syncs", options_.max_syncs},
        {"reads", options_.max_reads},
        {"throttle_pauses", options_.max_throttle_pauses}}},
      {"writes", in_order(writes_)},
      {"syncs", in_order(syncs_)},
      {"reads", in_order(reads_)},
      {"throttle_pauses", std::move(pauses)},
      {"throttle_pauses_seen", pauses_seen_},
      {"why", std::move(why)},
  };
}

void HtmlSink::summary(const TraceSummary& totals) {
  out_ << render_html(page_data(totals));
  out_.flush();
}

void HtmlSink::flush() {
  out_.flush();
}

}  // namespace wp
