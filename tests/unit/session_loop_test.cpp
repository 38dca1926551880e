// SPDX-License-Identifier: Apache-2.0
#include "agent/session_loop.h"

#include <gtest/gtest.h>

#include <sys/eventfd.h>
#include <unistd.h>
#include <chrono>
#include <thread>

#include <algorithm>
#include <csignal>
#include <cstdint>

#include "common/fd.h"

namespace wp {
namespace {

constexpr Nanos kMs = 1'000'000;

// The ring buffer's stand-in: a count of records held, an eventfd readable while it holds any
// (as the ring buffer's fd is), and loss counters the test sets.
class FakeSource {
 public:
  FakeSource() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  void add(int records) {
    held_ += records;
    std::uint64_t one = 1;
    EXPECT_EQ(::write(fd_.get(), &one, sizeof(one)), static_cast<ssize_t>(sizeof(one)));
  }
  int consume(int max_records) {
    const int got = std::min(held_, max_records);
    held_ -= got;
    consumed_ += got;
    if (held_ == 0) {
      std::uint64_t count = 0;
      (void)!::read(fd_.get(), &count, sizeof(count));
    }
    return got;
  }
  int fd() const { return fd_.get(); }
  int held() const { return held_; }
  int consumed() const { return consumed_; }
  LostCounts lost{};

 private:
  UniqueFd fd_;
  int held_ = 0;
  int consumed_ = 0;
};

SessionLoopOptions options_for(FakeSource& source) {
  SessionLoopOptions options;
  options.ring_fd = source.fd();
  options.consume = [&source](int max_records) { return source.consume(max_records); };
  options.lost = [&source] { return source.lost; };
  return options;
}

TEST(SessionLoop, StopsOnTheDurationTimer) {
  FakeSource source;
  int detached = 0;
  SessionLoopOptions options = options_for(source);
  options.duration_ns = 50 * kMs;
  options.detach = [&detached] { ++detached; };
  const Nanos span = SessionLoop(std::move(options)).run();
  EXPECT_GE(span, 50 * kMs);
  EXPECT_LT(span, 5'000 * kMs);
  EXPECT_EQ(detached, 1);
}

// The span starts when run() does, whatever was done between building the loop and running
// it (attaching the hooks): a --duration run never reports less than it was asked for.
TEST(SessionLoop, TheDurationCountsFromTheRunNotFromTheBuild) {
  FakeSource source;
  SessionLoopOptions options = options_for(source);
  options.duration_ns = 50 * kMs;
  SessionLoop loop(std::move(options));
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  EXPECT_GE(loop.run(), 50 * kMs);
}

TEST(SessionLoop, DrainsAllTheSourceHoldsAfterTheStop) {
  FakeSource source;
  // More than one batch before the stop, and more left behind by the detach.
  source.add(3 * 65'536 + 5);
  bool detached = false;
  int flushes_after_detach = 0;
  SessionLoopOptions options = options_for(source);
  options.duration_ns = 0;
  options.detach = [&] {
    detached = true;
    source.add(1'000);
  };
  options.flush = [&] { flushes_after_detach += detached; };
  SessionLoop(std::move(options)).run();
  EXPECT_EQ(source.held(), 0);
  EXPECT_EQ(source.consumed(), 3 * 65'536 + 5 + 1'000);
  EXPECT_GT(flushes_after_detach, 0);
}

TEST(SessionLoop, ASignalAnsweredContinueKeepsItRunning) {
  FakeSource source;
  SignalInbox signals({SIGUSR1});
  ASSERT_EQ(::raise(SIGUSR1), 0);  // blocked: waits in the signalfd
  int seen = 0;
  SessionLoopOptions options = options_for(source);
  options.signal_fd = signals.fd();
  options.on_signal = [&seen](const signalfd_siginfo& info) {
    seen += info.ssi_signo == SIGUSR1;
    return AfterSignal::Continue;
  };
  options.duration_ns = 100 * kMs;
  const Nanos span = SessionLoop(std::move(options)).run();
  signals.restore();
  EXPECT_EQ(seen, 1);
  EXPECT_GE(span, 100 * kMs);  // ran on to the timer
}

TEST(SessionLoop, ASignalStopsItWhenNoCallbackAnswers) {
  FakeSource source;
  SignalInbox signals({SIGUSR2});
  ASSERT_EQ(::raise(SIGUSR2), 0);
  SessionLoopOptions options = options_for(source);
  options.signal_fd = signals.fd();
  options.duration_ns = 10'000 * kMs;  // a safety net: the signal stops it long before
  const Nanos span = SessionLoop(std::move(options)).run();
  signals.restore();
  EXPECT_LT(span, 5'000 * kMs);
}

TEST(SessionLoop, HandsOnLossesAsDeltasAndCountsThemAll) {
  FakeSource source;
  source.lost[0] = 5;
  std::uint64_t handed_on = 0;
  int calls = 0;
  SessionLoopOptions options = options_for(source);
  options.on_lost = [&](const LostCounts& delta) {
    ++calls;
    for (auto n : delta) handed_on += n;
  };
  // More are lost while the hooks are detached: the final look hands them on too.
  options.detach = [&source] { source.lost[1] = 7; };
  options.duration_ns = 20 * kMs;
  SessionLoop loop(std::move(options));
  loop.run();
  EXPECT_EQ(handed_on, 12u);
  EXPECT_EQ(loop.lost_total(), 12u);
  EXPECT_EQ(calls, 2);  // only when there is something new
}

// The kernel loses records only while the ring buffer is full, which the next look reads: a
// look that reads nothing does not read the loss counters (a map lookup per hook). An idle
// loop reads them at its first look and at the end; a look that reads records reads them.
TEST(SessionLoop, AnIdleLoopReadsTheLossCountersOnlyAtItsStartAndEnd) {
  FakeSource source;
  int reads = 0;
  SessionLoopOptions options = options_for(source);
  options.lost = [&] {
    ++reads;
    return source.lost;
  };
  options.duration_ns = 300 * kMs;  // some 15 idle looks
  // A look more than a second after the last read reads them too (a stalled run).
  const Nanos span = SessionLoop(std::move(options)).run();
  EXPECT_GE(reads, 2);
  EXPECT_LE(reads, 2 + span / 1'000'000'000);

  FakeSource busy;
  reads = 0;
  int fed = 0;
  SessionLoopOptions with_records = options_for(busy);
  with_records.lost = [&] {
    ++reads;
    return busy.lost;
  };
  with_records.flush = [&] {  // each idle look: three more records, then none
    if (fed++ < 3) busy.add(1);
  };
  with_records.duration_ns = 300 * kMs;
  const Nanos busy_span = SessionLoop(std::move(with_records)).run();
  EXPECT_EQ(busy.consumed(), 3);
  EXPECT_GE(reads, 2 + 3);
  EXPECT_LE(reads, 2 + 3 + busy_span / 1'000'000'000);
}

TEST(SessionLoop, AWatchedFdIsDroppedWhenItsHandlerSaysSo) {
  FakeSource source;
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  ASSERT_EQ(::write(write_end.get(), "x", 1), 1);  // stays readable: never read
  int calls = 0;
  SessionLoopOptions options = options_for(source);
  options.watched.push_back({read_end.get(), [&calls] {
                               ++calls;
                               return false;
                             }});
  options.duration_ns = 50 * kMs;
  SessionLoop(std::move(options)).run();
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace wp
