// SPDX-License-Identifier: Apache-2.0
#include "agent/cost_probe.h"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "probe/bpf_session.h"

namespace wp {
namespace {

Nanos now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Nanos>(ts.tv_sec) * 1'000'000'000ull + static_cast<Nanos>(ts.tv_nsec);
}

// The helper process: on each byte from `command_fd`, `calls` writes to `fd` (4 KiB pwrites at
// offset 0 of a file, so every one hits the page cache, or 64-byte writes), then their time on
// `result_fd`. A closed command pipe ends it.
[[noreturn]] void helper_main(int command_fd, int result_fd, int fd, bool pwrites,
                              std::uint32_t calls) {
  alignas(4096) static char buffer[4096];
  std::memset(buffer, 'w', sizeof(buffer));
  char command = 0;
  while (::read(command_fd, &command, 1) == 1) {
    const Nanos start = now_ns();
    for (std::uint32_t i = 0; i < calls; ++i) {
      if (pwrites)
        (void)!::pwrite(fd, buffer, sizeof(buffer), 0);
      else
        (void)!::write(fd, buffer, 64);
    }
    const Nanos took = now_ns() - start;
    if (::write(result_fd, &took, sizeof(took)) != sizeof(took)) break;
  }
  ::_exit(0);
}

template <typename T>
T median(std::vector<T> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct ProgramTotals {
  std::uint64_t runs = 0;
  Nanos ns = 0;
};

ProgramTotals program_totals(const BpfSession& session) {
  ProgramTotals t;
  for (const auto& p : session.program_costs()) {
    t.runs += p.runs;
    t.ns += p.ns;
  }
  return t;
}

// A file of the helper's own to write: unnamed (O_TMPFILE) where the file system allows it.
int open_scratch_file(std::string& error) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  std::string path = dir + "/writepath-cost-XXXXXX";
  fd = ::mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0) {
    error = "cannot make a file in " + dir + ": " + std::strerror(errno);
    return -1;
  }
  ::unlink(path.c_str());
  return fd;
}

}  // namespace

std::unique_ptr<CostProbe> CostProbe::start(std::uint32_t calls, std::string& error) {
  std::unique_ptr<CostProbe> probe(new CostProbe());
  probe->calls_ = calls;
  const int parent = ::getpid();
  for (Helper* helper : {&probe->traced_, &probe->bystander_}) {
    const bool pwrites = helper == &probe->traced_;
    const int fd = pwrites ? open_scratch_file(error) : ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      if (error.empty()) error = std::string("cannot open /dev/null: ") + std::strerror(errno);
      return nullptr;
    }
    int command[2], result[2];
    if (::pipe2(command, O_CLOEXEC) != 0 || ::pipe2(result, O_CLOEXEC) != 0) {
      error = std::string("pipe: ") + std::strerror(errno);
      ::close(fd);
      return nullptr;
    }
    const int pid = ::fork();
    if (pid < 0) {
      error = std::string("fork: ") + std::strerror(errno);
      ::close(fd);
      return nullptr;
    }
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);
      ::close(command[1]);
      ::close(result[0]);
      // The other helper's ends: its command pipe must see end of file when the parent
      // closes it.
      for (const int other : {probe->traced_.command_fd, probe->traced_.result_fd})
        if (other >= 0) ::close(other);
      helper_main(command[0], result[1], fd, pwrites, calls);
    }
    ::close(fd);
    ::close(command[0]);
    ::close(result[1]);
    helper->pid = pid;
    helper->command_fd = command[1];
    helper->result_fd = result[0];
    helper->command = pwrites ? 'p' : 'w';
  }
  return probe;
}

CostProbe::~CostProbe() {
  for (Helper* helper : {&traced_, &bystander_}) {
    if (helper->command_fd >= 0) ::close(helper->command_fd);
    if (helper->result_fd >= 0) ::close(helper->result_fd);
    if (helper->pid > 0) ::waitpid(helper->pid, nullptr, 0);
  }
}

std::optional<Nanos> CostProbe::run(const Helper& helper, BpfSession* session, std::string& error) {
  if (::write(helper.command_fd, &helper.command, 1) != 1) {
    error = std::string("the cost helper is gone: ") + std::strerror(errno);
    return std::nullopt;
  }
  // The traced helper's records go to the ring buffer: drained as they come, as trace does.
  pollfd fds[2] = {{helper.result_fd, POLLIN, 0}, {session ? session->ring_fd() : -1, POLLIN, 0}};
  for (;;) {
    if (::poll(fds, session ? 2 : 1, 1000) < 0 && errno != EINTR) {
      error = std::string("poll: ") + std::strerror(errno);
      return std::nullopt;
    }
    if (session) session->consume();
    if (fds[0].revents & (POLLIN | POLLHUP)) break;
  }
  Nanos took = 0;
  if (::read(helper.result_fd, &took, sizeof(took)) != sizeof(took)) {
    error = "the cost helper ended early";
    return std::nullopt;
  }
  return took / std::max<std::uint32_t>(calls_, 1);
}

bool CostProbe::measure_untraced(int rounds, std::string& error) {
  for (int i = 0; i < rounds; ++i) {
    for (Helper* helper : {&traced_, &bystander_}) {
      const auto ns = run(*helper, nullptr, error);
      if (!ns) return false;
      helper->untraced.push_back(*ns);
    }
  }
  return true;
}

bool CostProbe::measure_traced(int rounds, BpfSession& session, std::string& error) {
  // Run-time counting on for the measurement only: the kernel turns it off again when the
  // descriptor closes (v5.8). Without the privilege, the sysctl may already have it on.
  const int stats_fd = ::bpf_enable_stats(BPF_STATS_RUN_TIME);
  counted_by_ = stats_fd >= 0              ? "BPF_ENABLE_STATS"
                : kernel_counts_bpf_time() ? "kernel.bpf_stats_enabled"
                                           : "";
  bool ok = true;
  for (int i = 0; i < rounds && ok; ++i) {
    for (Helper* helper : {&traced_, &bystander_}) {
      const ProgramTotals before = program_totals(session);
      const auto ns = run(*helper, &session, error);
      if (!ns) {
        ok = false;
        break;
      }
      const ProgramTotals after = program_totals(session);
      helper->traced.push_back(*ns);
      if (!counted_by_.empty()) {
        helper->program.push_back((after.ns - before.ns) / calls_);
        helper->runs.push_back(static_cast<double>(after.runs - before.runs) / calls_);
      }
    }
  }
  if (stats_fd >= 0) ::close(stats_fd);
  rounds_ = std::max(rounds_, rounds);
  return ok;
}

TraceCost CostProbe::result() const {
  TraceCost cost;
  cost.calls = calls_;
  cost.rounds = rounds_;
  cost.counted_by = counted_by_;
  auto fill = [](CallCost& c, const Helper& h) {
    c.untraced_ns = median(h.untraced);
    c.traced_ns = median(h.traced);
    if (!h.program.empty()) {
      c.program_ns = median(h.program);
      c.program_runs = median(h.runs);
    }
  };
  fill(cost.traced_pwrite, traced_);
  fill(cost.bystander_write, bystander_);
  return cost;
}

}  // namespace wp
