// SPDX-License-Identifier: Apache-2.0
#include "agent/session_loop.h"

#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "common/errors.h"

namespace wp {
namespace {

// At most this many records per read, so that signals, the timer and output failures are seen
// under a flood. One value for every command: a batch is about what one wake-up of the BPF
// side announces (cfg_wakeup_bytes, 4 MiB, is some 65,000 records of tens of bytes), so a flood
// is read in few large gulps, and even through the full pipeline a batch ends within tens of
// milliseconds, well inside kFlushNs.
constexpr int kBatchRecords = 1 << 16;
// Buffered output, trace file data and the slow-call log are written out at least this often
// while records keep coming: a live reader or a tail -f sees them promptly, a flood still gets
// few large writes. An idle look writes out at once.
constexpr Nanos kFlushNs = 200'000'000;
// The wall clock's offsets are measured again this often: NTP slews the clock and someone may
// set it, and a second's drift is below what a timestamp shows.
constexpr Nanos kClockNs = 1'000'000'000;
// Ready descriptors taken per wait: the loop watches a handful, and any left over are reported
// by the next wait.
constexpr int kEventsPerWait = 8;

}  // namespace

SignalInbox::SignalInbox(std::initializer_list<int> signals) {
  sigemptyset(&handled_);
  for (int sig : signals) sigaddset(&handled_, sig);
  ::pthread_sigmask(SIG_BLOCK, &handled_, &original_);
  fd_ = UniqueFd(::signalfd(-1, &handled_, SFD_CLOEXEC));
  if (!fd_) {
    const std::string why = errno_text();
    restore();
    throw Failure(kExitRuntime, "signalfd: " + why);
  }
}

SignalInbox::~SignalInbox() {
  if (restored_) return;
  const timespec now{};
  while (::sigtimedwait(&handled_, nullptr, &now) > 0) {
  }
  restore();
}

void SignalInbox::restore() {
  if (std::exchange(restored_, true)) return;
  ::pthread_sigmask(SIG_SETMASK, &original_, nullptr);
}

SessionLoop::SessionLoop(SessionLoopOptions options)
    : options_(std::move(options)), epoll_(::epoll_create1(EPOLL_CLOEXEC)) {
  if (!epoll_) throw Failure(kExitRuntime, "epoll: " + errno_text());
  watch(options_.ring_fd);
  if (options_.signal_fd >= 0) watch(options_.signal_fd);
  for (const WatchedFd& watched : options_.watched) watch(watched.fd);
  if (options_.duration_ns) {
    timer_ = UniqueFd(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
    if (!timer_) throw Failure(kExitRuntime, "timerfd: " + errno_text());
    watch(timer_.get());  // armed by run(), when the span it ends starts
  }
}

void SessionLoop::arm_timer() {
  if (!timer_) return;
  itimerspec spec{};
  spec.it_value.tv_sec = static_cast<time_t>(*options_.duration_ns / 1'000'000'000ull);
  spec.it_value.tv_nsec = static_cast<long>(*options_.duration_ns % 1'000'000'000ull);
  // An all-zero time disarms a timer: --duration 0 fires at once instead.
  if (*options_.duration_ns == 0) spec.it_value.tv_nsec = 1;
  ::timerfd_settime(timer_.get(), 0, &spec, nullptr);
}

void SessionLoop::watch(int fd) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0)
    throw Failure(kExitRuntime, "epoll: " + errno_text());
}

bool SessionLoop::handle_ready(int fd) {
  if (fd == options_.signal_fd) {
    signalfd_siginfo info{};
    if (::read(fd, &info, sizeof(info)) != sizeof(info)) return true;
    return options_.on_signal && options_.on_signal(info) == AfterSignal::Continue;
  }
  if (timer_ && fd == timer_.get()) return false;
  for (const WatchedFd& watched : options_.watched)
    if (fd == watched.fd && !watched.on_ready())
      ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
  return true;  // the ring buffer: read below
}

// The kernel side counts losses; hand on what is new since the last look.
void SessionLoop::take_lost() {
  const LostCounts now = options_.lost();
  LostCounts delta{};
  bool any = false;
  for (std::size_t hook = 0; hook < now.size(); ++hook) {
    delta[hook] = now[hook] - lost_seen_[hook];
    lost_total_ += delta[hook];
    any |= delta[hook] != 0;
  }
  lost_seen_ = now;
  if (any && options_.on_lost) options_.on_lost(delta);
}

Nanos SessionLoop::run() {
  const auto flush = [this] {
    if (options_.flush) options_.flush();
  };
  const Nanos started = monotonic_now();
  // Armed after the span's start is read: the span a --duration run reports is never shorter
  // than asked (armed before it, a 1 s trace once reported 0.99998 s).
  arm_timer();
  if (options_.on_start) options_.on_start();
  Nanos last_flush = started;
  Nanos last_clock = started;
  Nanos last_lost = started;
  bool running = true;
  bool first_look = true;
  int timeout_ms = options_.poll_ms;
  while (running) {
    epoll_event ready[kEventsPerWait];
    // Sleeps only when the last look found the ring buffer empty.
    const int n = ::epoll_wait(epoll_.get(), ready, kEventsPerWait, timeout_ms);
    if (n < 0 && errno != EINTR) throw Failure(kExitRuntime, "epoll_wait: " + errno_text());
    for (int i = 0; i < n; ++i) running &= handle_ready(ready[i].data.fd);
    const int got = options_.consume(kBatchRecords);
    timeout_ms = got > 0 ? 0 : options_.poll_ms;
    const Nanos now = monotonic_now();
    // The kernel loses a record only when the ring buffer is full, and the next look reads a
    // full ring buffer: a look that read nothing has no new loss to find. The counters are one
    // map lookup per hook, so an idle trace reads them only once a second besides (and at the
    // start, and at the end below).
    if (got > 0 || std::exchange(first_look, false) || now - last_lost >= kClockNs) {
      take_lost();
      last_lost = now;
    }
    if (now - last_clock >= kClockNs) {
      if (options_.on_clock) options_.on_clock(measure_clock_offsets());
      last_clock = now;
    }
    // Idle or due: a live reader sees items promptly, a flood gets few large writes.
    if (got == 0 || now - last_flush >= kFlushNs) {
      flush();
      last_flush = now;
    }
  }
  const Nanos span = monotonic_now() - started;
  // Stop the hooks, then read what they left in the ring buffer.
  if (options_.detach) options_.detach();
  while (options_.consume(kBatchRecords) > 0) flush();
  take_lost();
  return span;
}

}  // namespace wp
