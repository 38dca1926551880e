// SPDX-License-Identifier: Apache-2.0
// The loop every tracing command runs once its hooks are attached (trace, record, serve): it
// waits on the ring buffer, the signals and the --duration timer, reads the records in batches,
// writes its outputs out, hands on the kernel's new losses and, once told to stop, detaches and
// drains what the hooks left. What differs between the commands comes in as callbacks.
#pragma once

#include <signal.h>
#include <sys/signalfd.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <vector>

#include "common/fd.h"
#include "common/nanos.h"
#include "common/wall_clock.h"
#include "decode/decoder.h"

namespace wp {

// How long the loop sleeps when the ring buffer is empty: the BPF side wakes it early only when
// the buffer fills (wp_submit), so this bounds how late a record is read. While records keep
// coming the loop does not sleep at all.
// trace and record: a live reader sees each item within a blink, and a run is short.
constexpr int kTracePollMs = 20;
// serve: a daemon read by scrapes seconds apart (and a slow-call log); five times fewer idle
// wake-ups all day are worth more to it than 80 ms sooner in a histogram.
constexpr int kServePollMs = 100;

// Signals taken through a signalfd: no handler, no global flag. They are blocked from
// construction (threads started later inherit the block, so none of them takes a signal), and
// the previous mask comes back with restore(). Destroyed without restore() (a failure is on its
// way out), it first discards those still pending: a Ctrl-C that came meanwhile must not kill
// the process before the failure's message is printed.
class SignalInbox {
 public:
  explicit SignalInbox(std::initializer_list<int> signals);
  ~SignalInbox();
  SignalInbox(const SignalInbox&) = delete;
  SignalInbox& operator=(const SignalInbox&) = delete;

  int fd() const { return fd_.get(); }
  // Unblocks what the constructor blocked; a signal still pending is then delivered.
  void restore();

 private:
  sigset_t handled_;
  sigset_t original_;
  UniqueFd fd_;
  bool restored_ = false;
};

enum class AfterSignal { Stop, Continue };

// A descriptor the loop watches beside its own; `on_ready` runs when it is readable and
// returns false when it is to be watched no more (its peer has gone).
struct WatchedFd {
  int fd = -1;
  std::function<bool()> on_ready;
};

struct SessionLoopOptions {
  // The records' side (LiveSession::loop fills it in): the ring buffer's fd, a read of at most
  // so many records (returns how many), the kernel's loss counters per hook (cumulative), and
  // the stop of the hooks.
  int ring_fd = -1;
  std::function<int(int max_records)> consume = {};
  std::function<LostCounts()> lost = {};
  std::function<void()> detach = {};
  // SignalInbox::fd(); each signal read from it goes to on_signal (none given: every one stops).
  int signal_fd = -1;
  std::function<AfterSignal(const ::signalfd_siginfo&)> on_signal = {};
  std::optional<Nanos> duration_ns;  // stop this long after the start
  std::vector<WatchedFd> watched = {};
  int poll_ms = kTracePollMs;
  // Runs once at the start of the span traced (trace releases its held command there).
  std::function<void()> on_start = {};
  // The losses counted since the previous call; only called when there are some.
  std::function<void(const LostCounts&)> on_lost = {};
  // Writes out what the outputs buffer; a failure throws, and ends the session.
  std::function<void()> flush = {};
  // The wall clock's offsets, measured afresh now and then.
  std::function<void(const ClockOffsets&)> on_clock = {};
};

class SessionLoop {
 public:
  // Builds the epoll set and the duration timer (armed when run() starts); throws Failure when
  // it cannot.
  explicit SessionLoop(SessionLoopOptions options);
  // Runs until a signal, the timer or a watched fd's handler stops it, then detaches and drains.
  // Returns the span traced: from the start to the moment the loop was told to stop, not to the
  // end of detaching the hooks one by one (most of a second on a busy machine, tracing nothing).
  Nanos run();
  // Every loss handed on so far.
  std::uint64_t lost_total() const { return lost_total_; }

 private:
  void watch(int fd);
  bool handle_ready(int fd);  // false: stop
  void take_lost();
  void arm_timer();

  SessionLoopOptions options_;
  UniqueFd epoll_;
  UniqueFd timer_;
  LostCounts lost_seen_{};
  std::uint64_t lost_total_ = 0;
};

}  // namespace wp
