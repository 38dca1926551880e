// SPDX-License-Identifier: Apache-2.0
// HTML report sink: one self-contained page (inline CSS, vanilla JS, inline SVG; nothing fetched,
// so it works offline and can be mailed around) that shows where the time went: a timeline of
// writes and syncs per thread, each sync's phases, slow-call causes, dirty-throttling pauses and
// the O_DIRECT verdicts. The sink gathers the items and writes the whole page at summary(); the
// data travels as JSON (the JSON sink's objects, slimmed) inside the page and the page's script
// draws it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "common/histogram.h"
#include "sinks/sink.h"

namespace wp {

struct HtmlOptions {
  // A trace can run for hours; the page keeps (and draws) only this many of the slowest items of
  // each kind, and says so when it dropped some.
  std::size_t max_writes = 2000;
  std::size_t max_syncs = 5000;
  std::size_t max_reads = 2000;  // with --reads
  std::size_t max_throttle_pauses = 10000;
  std::string generated_at;  // when the page was written, as the reader should see it; "" = unsaid
};

// The current local time as "2025-01-31 14:02:11 +0100", for HtmlOptions::generated_at. The sink
// itself never reads the clock (its output is a function of its input); make_sink stamps it.
std::string local_time_now();

// The page around `data` (the JSON the page's script reads). Every '<' in the JSON text becomes
// \u003c, so no string in it (a comm, say "</script><script>…") can end or re-open the script
// element. Exposed for tests.
std::string render_html(const nlohmann::ordered_json& data);

class HtmlSink : public Sink {
 public:
  HtmlSink(std::ostream& out, HtmlOptions options) : out_(out), options_(std::move(options)) {}
  void timeline(const Timeline& item) override;
  void summary(const TraceSummary& totals) override;  // writes the page
  void flush() override;

  // The JSON the page embeds, for these totals and the items seen so far. Exposed for tests.
  nlohmann::ordered_json page_data(const TraceSummary& totals) const;

 private:
  // An item kept for drawing; the heaps keep the slowest (the fastest on top, to evict).
  struct Kept {
    Nanos latency_ns = 0;
    std::uint64_t order = 0;  // arrival, to break ties and order the output stably
    nlohmann::ordered_json item;
  };
  struct FileCounts {
    std::string path;  // empty: no path record came for the file
    std::uint64_t writes = 0;
    std::uint64_t syncs = 0;
  };
  // A slow call with named causes, for the "why" list: the slowest few, kept whole until the
  // page's origin (its first call) is known.
  struct KeptWhy {
    Nanos latency_ns = 0;
    std::uint64_t order = 0;
    Timeline item;
  };
  template <typename K>
  static void keep(std::vector<K>& heap, std::size_t cap, K kept);
  // Widens the page's time span to hold `call` and counts it to its process.
  void count_process_call(const SyscallEvent& call);
  void count_call(const SyscallEvent& call, bool is_write);
  // The per-container table: a container's writes (durable or not), syncs and slowest call.
  void count_container(const SyscallEvent& call, bool is_write, bool durable, bool incomplete);
  struct ContainerCounts {
    std::string label, runtime, pod;
    std::uint64_t writes = 0, durable_writes = 0, syncs = 0, incomplete = 0;
    Nanos slowest_ns = 0;
    std::string slowest_call;
    std::unique_ptr<LogLinearHistogram> sync_latency = std::make_unique<LogLinearHistogram>();
  };

  std::ostream& out_;
  HtmlOptions options_;
  std::vector<Kept> writes_, syncs_, reads_;
  std::vector<KeptWhy> why_;
  std::vector<nlohmann::ordered_json> throttle_pauses_;
  std::uint64_t writes_seen_ = 0, syncs_seen_ = 0, reads_seen_ = 0, pauses_seen_ = 0, arrivals_ = 0;
  std::map<std::string, std::uint64_t> writes_by_state_;
  std::map<std::pair<std::uint32_t, std::string>, std::uint64_t> items_by_process_;
  std::map<std::string, ContainerCounts> items_by_container_;  // by container id
  std::map<std::pair<DevT, std::uint64_t>, FileCounts> items_by_file_;
  Nanos first_start_ns_ = 0, last_end_ns_ = 0;
};

}  // namespace wp
