// SPDX-License-Identifier: Apache-2.0
#include "sinks/async_sink.h"

namespace wp {

AsyncSink::AsyncSink(std::unique_ptr<Sink> inner, std::function<void()> drain)
    : inner_(std::move(inner)), drain_(std::move(drain)), thread_([this] { run(); }) {
  batch_.reserve(kBatchItems);
}

AsyncSink::~AsyncSink() {
  try {
    hand_over_batch();
  } catch (...) {  // a failure already recorded: the queue is being dropped anyway
  }
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_one();
  thread_.join();
}

void AsyncSink::timeline(const Timeline& item) {
  take(Timeline(item));
}

void AsyncSink::take(Timeline&& item) {
  batch_.push_back(std::move(item));
  if (batch_.size() >= kBatchItems) hand_over_batch();
}

void AsyncSink::progress(ItemProgress progress, const Timeline& item) {
  hand_over_batch();
  push(Progress{progress, item});
}

void AsyncSink::clock(const ClockOffsets& offsets) {
  hand_over_batch();
  push(offsets);
}

void AsyncSink::summary(const TraceSummary& totals) {
  hand_over_batch();
  push(totals);
}

void AsyncSink::flush() {
  hand_over_batch();
  // Nothing went over since the last flush: its drain left nothing to write, and an idle trace
  // looks every few milliseconds; a wake-up of the sink's thread for nothing costs every other
  // process on a one-CPU node its share.
  if (!unflushed_) return rethrow_failure();
  push(Flush{});
  unflushed_ = false;
}

void AsyncSink::wait() {
  hand_over_batch();
  std::unique_lock lock(mutex_);
  room_.wait(lock, [this] { return failure_ || (queue_.empty() && !busy_); });
  if (failure_) std::rethrow_exception(failure_);
}

void AsyncSink::hand_over_batch() {
  if (batch_.empty()) return rethrow_failure();
  std::vector<Timeline> full;
  full.reserve(kBatchItems);
  full.swap(batch_);
  push(std::move(full));
}

void AsyncSink::push(Work work) {
  {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [this] { return failure_ || queue_.size() < kMaxBatches; });
    if (failure_) std::rethrow_exception(failure_);
    queue_.push_back(std::move(work));
  }
  unflushed_ = true;
  work_ready_.notify_one();
}

void AsyncSink::rethrow_failure() {
  std::lock_guard lock(mutex_);
  if (failure_) std::rethrow_exception(failure_);
}

void AsyncSink::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty() || failure_) return;  // stopping, and nothing (runnable) is left
    Work work = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    room_.notify_one();
    std::exception_ptr failed;
    try {
      perform(work);
    } catch (...) {
      failed = std::current_exception();
    }
    // The batch's items are freed here, off the caller's thread. Not `work = Work{}`: a
    // value-initialized variant is zeroed whole first, and Work holds a TraceSummary inline
    // (some 350 KiB), so that was a memset per batch, a third of a busy agent's time.
    work.emplace<std::vector<Timeline>>();
    lock.lock();
    busy_ = false;
    if (failed) {
      failure_ = failed;
      queue_.clear();
    }
    room_.notify_all();
  }
}

void AsyncSink::perform(Work& work) {
  std::visit(
      [this](auto& w) {
        using W = std::decay_t<decltype(w)>;
        if constexpr (std::is_same_v<W, std::vector<Timeline>>) {
          for (Timeline& item : w) inner_->take(std::move(item));
        } else if constexpr (std::is_same_v<W, Progress>) {
          inner_->progress(w.progress, w.item);
        } else if constexpr (std::is_same_v<W, ClockOffsets>) {
          inner_->clock(w);
        } else if constexpr (std::is_same_v<W, TraceSummary>) {
          inner_->summary(w);
        } else {
          inner_->flush();
          if (drain_) drain_();
        }
      },
      work);
}

}  // namespace wp
