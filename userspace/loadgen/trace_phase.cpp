// SPDX-License-Identifier: Apache-2.0
#include "loadgen/trace_phase.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "common/trace_phase.h"

namespace wp::loadgen {

void name_this_thread(const std::string& role) {
  ::prctl(PR_SET_NAME, role.substr(0, 15).c_str(), 0, 0, 0);
}

std::string this_thread_name() {
  char name[16] = {};
  ::prctl(PR_GET_NAME, name, 0, 0, 0);
  return name;
}

TracePhaseMarker::TracePhaseMarker() {
  const char* value = std::getenv(kTracePhaseFdEnv);
  if (!value) return;
  int fd = -1;
  const char* end = value + std::strlen(value);
  auto [ptr, ec] = std::from_chars(value, end, fd);
  // The load's own children (mkfs, losetup) must not inherit the socket or the variable.
  ::unsetenv(kTracePhaseFdEnv);
  if (ec != std::errc() || ptr != end || fd < 0 || ::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) return;
  fd_ = UniqueFd(fd);
}

void TracePhaseMarker::mark(char message) {
  if (fd_.get() < 0) return;
  char ack = 0;
  ssize_t n;
  do {
    n = ::write(fd_.get(), &message, 1);
  } while (n < 0 && errno == EINTR);
  if (n == 1) {
    do {
      n = ::read(fd_.get(), &ack, 1);
    } while (n < 0 && errno == EINTR);
  }
  if (n != 1 || ack != kPhaseAck) fd_ = UniqueFd();
}

MeasuredPhase::MeasuredPhase(TracePhaseMarker& marker, const std::string& role)
    : marker_(marker), old_name_(this_thread_name()) {
  name_this_thread(role);
  marker_.mark(kPhaseBegin);
}

MeasuredPhase::~MeasuredPhase() {
  marker_.mark(kPhaseEnd);
  name_this_thread(old_name_);
}

}  // namespace wp::loadgen
