// SPDX-License-Identifier: Apache-2.0
// A sink on a thread of its own: the thread that decodes and stitches hands finished items over
// and goes on, while this sink's thread formats and writes them. Formatting JSON costs about as
// much as decoding and stitching together, so the two overlap instead of adding up (`report`
// finishes sooner; a live trace drains the ring buffer sooner and loses less).
//
// Every call is queued and run on the sink's thread in the order made, so the wrapped sink sees
// exactly what it would have seen called directly. Items travel in batches (one lock per batch);
// a batch goes over when it is full or when any other call (progress, clock, summary, flush) is
// made. When the sink's thread is behind by kMaxBatches batches, the caller waits: memory stays
// bounded. A failure on the sink's thread (the `drain` callback's, a write error) is rethrown to
// the caller by its next call, and the queued work behind it is dropped.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "sinks/sink.h"

namespace wp {

class AsyncSink : public Sink {
 public:
  static constexpr std::size_t kBatchItems = 256;
  static constexpr std::size_t kMaxBatches = 64;

  // `drain` runs on the sink's thread after each flush of `inner` (writing out the stream
  // `inner` formats into: only that thread may touch it); it may throw.
  explicit AsyncSink(std::unique_ptr<Sink> inner, std::function<void()> drain = {});
  // Runs what is still queued (unless the sink's thread failed), then joins it.
  ~AsyncSink() override;
  AsyncSink(const AsyncSink&) = delete;
  AsyncSink& operator=(const AsyncSink&) = delete;

  void timeline(const Timeline& item) override;  // a copy goes over
  void take(Timeline&& item) override;
  void progress(ItemProgress progress, const Timeline& item) override;
  void clock(const ClockOffsets& offsets) override;
  void summary(const TraceSummary& totals) override;
  // Queues the wrapped sink's flush and the drain, unless nothing went over since the last;
  // rethrows an earlier failure.
  void flush() override;
  // Returns once everything queued so far has run; rethrows a failure.
  void wait();

 private:
  struct Progress {
    ItemProgress progress;
    Timeline item;
  };
  struct Flush {};
  using Work = std::variant<std::vector<Timeline>, Progress, ClockOffsets, TraceSummary, Flush>;

  void hand_over_batch();
  void push(Work work);
  void rethrow_failure();
  void run();
  void perform(Work& work);

  std::unique_ptr<Sink> inner_;
  std::function<void()> drain_;
  std::vector<Timeline> batch_;  // the caller's, not yet handed over
  bool unflushed_ = false;       // the caller's: work went over since the last flush

  std::mutex mutex_;
  std::condition_variable work_ready_;  // to the sink's thread: work, or stop
  std::condition_variable room_;        // to the caller: room in the queue, or all done
  std::deque<Work> queue_;
  bool busy_ = false;      // the sink's thread is running a piece of work
  bool stopping_ = false;  // no more work will come
  std::exception_ptr failure_;
  std::thread thread_;  // last: started once the rest is ready
};

}  // namespace wp
