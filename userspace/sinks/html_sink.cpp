#include "sinks/html_sink.h"

#include <algorithm>
#include <ctime>
#include <string_view>
#include <variant>

#include "sinks/html_template.h"
#include "sinks/json_sink.h"

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
  return item;
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
  std::string_view page = kHtmlTemplate;
  constexpr std::string_view kSlot = "@@WRITEPATH_DATA@@";
  std::size_t slot = page.find(kSlot);
  std::string out;
  out.reserve(page.size() + escaped.size());
  out.append(page.substr(0, slot));
  out.append(escaped);
  out.append(page.substr(slot + kSlot.size()));
  return out;
}

void HtmlSink::keep(std::vector<Kept>& heap, std::size_t cap, Kept kept) {
  if (cap == 0) return;
  auto fastest_on_top = [](const Kept& a, const Kept& b) { return slower(a, b); };
  if (heap.size() == cap) {
    if (!slower(kept, heap.front())) return;
    std::pop_heap(heap.begin(), heap.end(), fastest_on_top);
    heap.pop_back();
  }
  heap.push_back(std::move(kept));
  std::push_heap(heap.begin(), heap.end(), fastest_on_top);
}

void HtmlSink::count_call(const SyscallEvent& call, bool is_write) {
  if (first_start_ns_ == 0 || call.start_ns < first_start_ns_) first_start_ns_ = call.start_ns;
  last_end_ns_ = std::max(last_end_ns_, call_end(call));
  auto process = items_by_process_.find({call.pid, call.comm});
  if (process != items_by_process_.end())
    ++process->second;
  else if (items_by_process_.size() < kMaxTallied)
    items_by_process_.emplace(std::make_pair(call.pid, call.comm), 1);
  if (call.ino == 0 && call.dev == 0) return;  // sync(2): no file
  auto file = items_by_file_.find({call.dev, call.ino});
  if (file == items_by_file_.end()) {
    if (items_by_file_.size() >= kMaxTallied) return;
    file = items_by_file_.emplace(std::make_pair(call.dev, call.ino), FileCounts{}).first;
  }
  ++(is_write ? file->second.writes : file->second.syncs);
}

void HtmlSink::timeline(const Timeline& item) {
  const std::uint64_t order = arrivals_++;
  if (const auto* write = std::get_if<WriteTimeline>(&item)) {
    ++writes_seen_;
    ++writes_by_state_[write_state_name(write->state)];
    count_call(write->call, true);
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
    keep(writes_, options_.max_writes, {latency, order, slim(write_json(*write), {"requests"})});
  } else {
    const auto& sync = std::get<SyncTimeline>(item);
    ++syncs_seen_;
    count_call(sync.call, false);
    const SyscallEvent& call = sync.call;
    const Nanos latency = latency_ns(call);
    keep(syncs_, options_.max_syncs,
         {latency, order, slim(sync_json(sync), {"requests", "flushes", "journal_commits"})});
  }
}

json HtmlSink::page_data(const TraceSummary& totals) const {
  auto in_order = [](const std::vector<Kept>& heap) {
    std::vector<const Kept*> sorted;
    for (const Kept& kept : heap) sorted.push_back(&kept);
    std::sort(sorted.begin(), sorted.end(),
              [](const Kept* a, const Kept* b) { return a->order < b->order; });
    json out = json::array();
    for (const Kept* kept : sorted) out.push_back(kept->item);
    return out;
  };

  json processes = json::array();
  for (auto it : busiest(items_by_process_, [](auto a, auto b) { return a->second > b->second; }))
    processes.push_back(
        {{"pid", it->first.first}, {"comm", it->first.second}, {"items", it->second}});
  json files = json::array();
  for (auto it : busiest(items_by_file_, [](auto a, auto b) {
         return a->second.writes + a->second.syncs > b->second.writes + b->second.syncs;
       }))
    files.push_back({{"dev", dev_string(it->first.first)},
                     {"ino", it->first.second},
                     {"writes", it->second.writes},
                     {"syncs", it->second.syncs}});

  json phases = json::array();
  for (const SyncPhaseInfo& phase : kSyncPhases)
    phases.push_back({phase.name, phase.title, phase.about});

  return json{
      {"generated_at", options_.generated_at},
      {"phases", std::move(phases)},
      {"summary", summary_json(totals)},
      {"first_start_ns", first_start_ns_},
      {"last_end_ns", last_end_ns_},
      {"writes_seen", writes_seen_},
      {"syncs_seen", syncs_seen_},
      {"writes_by_state", writes_by_state_},
      {"processes", std::move(processes)},
      {"process_count", items_by_process_.size()},
      {"files", std::move(files)},
      {"file_count", items_by_file_.size()},
      {"limits",
       {{"writes", options_.max_writes},
        {"syncs", options_.max_syncs},
        {"throttle_pauses", options_.max_throttle_pauses}}},
      {"writes", in_order(writes_)},
      {"syncs", in_order(syncs_)},
      {"throttle_pauses", throttle_pauses_},
      {"throttle_pauses_seen", pauses_seen_},
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
