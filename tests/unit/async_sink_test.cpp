// SPDX-License-Identifier: Apache-2.0
#include "sinks/async_sink.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sinks/sink.h"

namespace wp {
namespace {

// A sink that writes down every call it gets, as one line each.
class CallLog : public Sink {
 public:
  explicit CallLog(std::vector<std::string>& calls) : calls_(calls) {}
  void timeline(const Timeline& item) override {
    calls_.push_back("item " + std::to_string(id_of(item)));
  }
  void take(Timeline&& item) override {
    calls_.push_back("item " + std::to_string(id_of(item)));  // rendered as timeline() would
    if (const auto* sync = std::get_if<SyncTimeline>(&item))
      taken_segments.push_back(sync->segments.data());
  }
  void progress(ItemProgress p, const Timeline& item) override {
    calls_.push_back(std::string("progress ") + item_progress_name(p) + " " +
                     std::to_string(id_of(item)));
  }
  void clock(const ClockOffsets& offsets) override {
    calls_.push_back("clock " + std::to_string(offsets.realtime_ns));
  }
  void summary(const TraceSummary& totals) override {
    calls_.push_back("summary " + std::to_string(totals.writes));
  }
  void flush() override { calls_.push_back("flush"); }

  std::vector<const PhaseSegment*> taken_segments;  // where each taken sync's segments lived

 private:
  std::vector<std::string>& calls_;
};

Timeline write_item(std::uint64_t id) {
  WriteTimeline w;
  w.id = id;
  return w;
}

// Whatever the mix of calls, the wrapped sink sees the same calls in the same order as a sink
// called directly: items handed over and taken, item snapshots, clock readings, the summary and
// the flushes between them, but for a flush with nothing new since the last one (random mixes,
// the seed printed).
TEST(AsyncSink, TheWrappedSinkSeesEveryCallInTheOrderMade) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::vector<std::string> direct_calls, async_calls;
  CallLog direct(direct_calls);
  {
    AsyncSink async(std::make_unique<CallLog>(async_calls));
    std::uint64_t next_id = 1;
    bool since_flush = false;  // a call other than flush() since the last flush
    for (int i = 0; i < 20'000; ++i) {
      const unsigned what = rng() % 100;
      since_flush |= what < 96;
      if (what < 80) {  // mostly items, so that batches fill and go over whole
        async.take(write_item(next_id));
        direct.take(write_item(next_id));
        ++next_id;
      } else if (what < 88) {
        direct.timeline(write_item(next_id));
        async.timeline(write_item(next_id));
        ++next_id;
      } else if (what < 93) {
        direct.progress(ItemProgress::Returned, write_item(next_id));
        async.progress(ItemProgress::Returned, write_item(next_id));
      } else if (what < 96) {
        direct.clock(ClockOffsets{.realtime_ns = i, .boottime_ns = 0});
        async.clock(ClockOffsets{.realtime_ns = i, .boottime_ns = 0});
      } else {
        if (std::exchange(since_flush, false)) direct.flush();
        async.flush();
        if (rng() % 2) async.flush();  // again, with nothing new
      }
    }
    TraceSummary totals;
    totals.writes = next_id - 1;
    direct.summary(totals);
    async.summary(totals);
    async.wait();
    // Everything queued has run by now, without the destructor's help.
    EXPECT_EQ(async_calls.size(), direct_calls.size());
  }
  EXPECT_EQ(async_calls, direct_calls);
}

// An idle session loop flushes every look: a flush with nothing handed over since the last one
// neither reaches the wrapped sink nor runs the drain (no wake-up of the sink's thread).
TEST(AsyncSink, AFlushWithNothingNewSinceTheLastIsNotPassedOn) {
  std::vector<std::string> calls;
  int drains = 0;
  AsyncSink async(std::make_unique<CallLog>(calls), [&drains] { ++drains; });
  async.flush();  // nothing at all yet
  async.take(write_item(1));
  async.flush();
  async.flush();
  async.flush();
  async.clock(ClockOffsets{.realtime_ns = 7, .boottime_ns = 0});
  async.flush();
  async.flush();
  async.wait();
  EXPECT_EQ(calls, (std::vector<std::string>{"item 1", "flush", "clock 7", "flush"}));
  EXPECT_EQ(drains, 2);
}

// take() hands the item itself over: the wrapped sink gets the very vectors the caller built,
// not copies of them.
TEST(AsyncSink, TakenItemsAreMovedNotCopied) {
  std::vector<std::string> calls;
  auto log = std::make_unique<CallLog>(calls);
  CallLog& inner = *log;
  AsyncSink async(std::move(log));
  std::vector<const PhaseSegment*> built;
  for (std::uint64_t id = 1; id <= 3 * AsyncSink::kBatchItems; ++id) {
    SyncTimeline sync;
    sync.id = id;
    sync.segments.resize(4);
    built.push_back(sync.segments.data());
    async.take(Timeline(std::move(sync)));
  }
  async.wait();
  EXPECT_EQ(inner.taken_segments, built);
}

// A failure on the sink's thread (the drain's write error) reaches the caller at its next call,
// as the same exception; what was queued behind it never runs, and later calls fail too.
TEST(AsyncSink, TheSinkThreadsFailureIsRethrownToTheCallerAndLaterWorkIsDropped) {
  std::vector<std::string> calls;
  int drains = 0;
  AsyncSink async(std::make_unique<CallLog>(calls), [&drains] {
    if (++drains == 2) throw std::runtime_error("writing out.json: No space left on device");
  });
  async.take(write_item(1));
  async.flush();
  async.wait();  // the first drain succeeded
  async.take(write_item(2));
  async.flush();  // its drain fails on the sink's thread
  try {
    async.wait();
    FAIL() << "wait() returned after the drain failed";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "writing out.json: No space left on device");
  }
  async.take(write_item(3));  // held in the caller's batch until the next hand-over
  EXPECT_THROW(async.flush(), std::runtime_error);
  EXPECT_THROW(async.wait(), std::runtime_error);
  EXPECT_EQ(calls, (std::vector<std::string>{"item 1", "flush", "item 2", "flush"}));
}

}  // namespace
}  // namespace wp
