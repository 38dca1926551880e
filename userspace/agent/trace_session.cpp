#include "agent/trace_session.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fmt/format.h>
#include <linux/magic.h>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <utility>

#include "agent/errors.h"
#include "agent/pipeline.h"
#include "decode/decoder.h"
#include "probe/bpf_session.h"
#include "probe/devices.h"
#include "probe/hook_plan.h"
#include "probe/kernel_caps.h"
#include "record/trace_file.h"
#include "stitch/stitcher.h"

namespace wp {
namespace {

// A file descriptor closed on scope exit.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

std::string errno_text() {
  return std::strerror(errno);
}

// The command of `-- CMD`, forked at once but held before exec until tracing is attached,
// so its first write is traced.
class HeldChild {
 public:
  explicit HeldChild(const std::vector<std::string>& argv, const sigset_t& original_mask) {
    int go[2];
    if (::pipe2(go, O_CLOEXEC) != 0) throw Failure(kExitRuntime, "pipe: " + errno_text());
    pid_ = ::fork();
    if (pid_ < 0) throw Failure(kExitRuntime, "fork: " + errno_text());
    if (pid_ == 0) {
      ::close(go[1]);
      char byte;
      if (::read(go[0], &byte, 1) != 1) ::_exit(127);  // the tracer gave up
      ::sigprocmask(SIG_SETMASK, &original_mask, nullptr);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      std::fprintf(stderr, "writepath: cannot run %s: %s\n", args[0], std::strerror(errno));
      ::_exit(127);
    }
    ::close(go[0]);
    go_ = Fd(go[1]);
  }
  ~HeldChild() {
    // Never started (tracing failed): closing the pipe makes it exit 127; reap it. A started
    // command that outlives the trace goes on untraced, as under strace and perf.
    if (pid_ > 0 && go_.get() >= 0) {
      go_ = Fd();
      ::waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  void release() {
    char byte = 1;
    if (::write(go_.get(), &byte, 1) != 1) throw Failure(kExitRuntime, "cannot start command");
    go_ = Fd();
  }
  // Non-blocking reap; returns true (and the exit code) once the child has exited.
  bool reap(int& exit_code) {
    int status = 0;
    if (reaped_ || ::waitpid(pid_, &status, WNOHANG) != pid_) return reaped_;
    reaped_ = true;
    exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return true;
  }

 private:
  pid_t pid_ = -1;
  Fd go_;
  bool reaped_ = false;
};

DevT kernel_dev(dev_t dev) {
  return make_dev(major(dev), minor(dev));
}

KernelFilter build_filter(const TraceOptions& options) {
  KernelFilter filter;
  filter.self_tgid = static_cast<std::uint32_t>(::getpid());
  for (auto pid : options.pids) {
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      throw Failure(kExitUsage, fmt::format("no process with pid {}", pid));
    filter.tgids.push_back(pid);
  }
  filter.filter_tgid = !filter.tgids.empty() || !options.command.empty();
  filter.follow_children = !options.command.empty();
  filter.causes_min_ns = options.causes_min_ns ? options.causes_min_ns : options.min_latency_ns;
  if (options.comm) {
    if (options.comm->empty() || options.comm->size() >= WP_COMM_LEN)
      throw Failure(kExitUsage, fmt::format("--comm takes a name of 1 to {} characters (the "
                                            "kernel keeps {}), not '{}'",
                                            WP_COMM_LEN - 1, WP_COMM_LEN - 1, *options.comm));
    filter.comm = options.comm;
  }
  if (options.cgroup) {
    std::string path = *options.cgroup;
    if (path.empty() || path[0] != '/') path = "/sys/fs/cgroup/" + path;
    struct stat st {};
    struct statfs sfs {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      throw Failure(kExitUsage, fmt::format("--cgroup {}: no such cgroup directory", path));
    if (::statfs(path.c_str(), &sfs) != 0 || sfs.f_type != CGROUP2_SUPER_MAGIC)
      throw Failure(kExitUsage, fmt::format("--cgroup {}: not on a cgroup2 filesystem", path));
    filter.cgroup_id = st.st_ino;  // a cgroup2 directory's inode number is the cgroup id
  }
  if (options.dev) {
    auto device = find_block_device(*options.dev);
    if (!device)
      throw Failure(kExitUsage, fmt::format("--dev {}: no such block device", *options.dev));
    filter.disk = device->disk;
  }
  if (options.file) {
    struct stat st {};
    if (::stat(options.file->c_str(), &st) != 0)
      throw Failure(kExitUsage, fmt::format("--file {}: {}", *options.file, errno_text()));
    filter.file_dev = kernel_dev(st.st_dev);
    filter.file_ino = st.st_ino;
  }
  return filter;
}

struct Output {
  std::ofstream file;
  std::ostream* stream = &std::cout;
};

constexpr int kPollMs = 20;

std::unique_ptr<TraceFileWriter> open_recording(const std::string& path, const KernelCaps& caps,
                                                const HookPlan& plan,
                                                const std::vector<std::string>& command) {
  TraceFileHeader header;
  header.writepath_version = "0.1.0";
  header.kernel = caps.kernel_release;
  header.record_version = WP_RECORD_VERSION;
  for (const auto& choice : plan.choices) {
    if (!choice.variant) continue;
    const auto& v = *choice.variant;
    header.hooks.push_back(fmt::format("{}: {} {}{}{}", choice.hook->name, attach_kind_name(v.kind),
                                       v.category, v.category.empty() ? "" : ":",
                                       v.events.front()));
  }
  header.devices = list_block_devices();
  header.command = command;
  try {
    return std::make_unique<TraceFileWriter>(path, header);
  } catch (const std::runtime_error& e) {
    throw Failure(kExitRuntime, e.what());
  }
}

Nanos monotonic_now() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Nanos>(ts.tv_sec) * 1'000'000'000ull + static_cast<Nanos>(ts.tv_nsec);
}

}  // namespace

int run_trace(const TraceOptions& options) {
  KernelFilter filter = build_filter(options);

  Output output;
  if (!options.output.empty()) {
    // Opened before anything is traced: a bad path fails fast.
    output.file.open(options.output, std::ios::out | std::ios::trunc);
    if (!output.file)
      throw Failure(kExitRuntime, fmt::format("cannot write {}: {}", options.output, errno_text()));
    output.stream = &output.file;
  }

  KernelCaps caps = detect_kernel_caps();
  if (!caps.root)
    throw Failure(kExitRuntime, "must run as root: BPF tracing needs CAP_BPF and CAP_PERFMON");
  if (!caps.btf)
    throw Failure(kExitRuntime, caps.btf_error + " (CO-RE needs CONFIG_DEBUG_INFO_BTF=y)");
  if (!caps.tracefs) throw Failure(kExitRuntime, caps.tracefs_error);

  // Signals arrive through a signalfd: no handler, no global flag.
  sigset_t handled, original;
  sigemptyset(&handled);
  sigaddset(&handled, SIGINT);
  sigaddset(&handled, SIGTERM);
  sigaddset(&handled, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &handled, &original);
  Fd signals(::signalfd(-1, &handled, SFD_CLOEXEC));
  if (signals.get() < 0) throw Failure(kExitRuntime, "signalfd: " + errno_text());

  std::unique_ptr<HeldChild> child;
  if (!options.command.empty()) {
    child = std::make_unique<HeldChild>(options.command, original);
    filter.tgids.push_back(static_cast<std::uint32_t>(child->pid()));
  }

  const std::vector<DeviceInfo> devices = list_block_devices();
  auto sink = make_sink(
      options.format, *output.stream,
      SinkOptions{.color = options.output.empty() && ::isatty(STDOUT_FILENO), .devices = devices});
  Pipeline pipeline(PipelineOptions{options.min_latency_ns, options.observer}, devices, *sink);
  std::unique_ptr<TraceFileWriter> recording;  // made once the hooks are known
  PlannedSession planned = start_planned_session(caps, !options.no_fentry, filter,
                                                 [&](std::span<const std::byte> record) {
                                                   if (recording) recording->record(record);
                                                   pipeline.on_record(record);
                                                 });
  if (!planned.session) throw Failure(kExitRuntime, planned.error);
  auto& session = planned.session;
  if (!options.record_path.empty())
    recording = open_recording(options.record_path, caps, planned.plan, options.command);
  LostCounts lost_seen{};
  // The kernel side counts losses; hand on what is new since the last look.
  auto take_lost = [&] {
    LostCounts now = session->lost(), delta{};
    bool any = false;
    for (std::size_t hook = 0; hook < now.size(); ++hook) {
      delta[hook] = now[hook] - lost_seen[hook];
      any |= delta[hook] != 0;
    }
    lost_seen = now;
    if (!any) return;
    if (recording) recording->lost(delta);
    pipeline.add_lost(delta);
  };

  Fd epoll(::epoll_create1(EPOLL_CLOEXEC));
  Fd timer;
  auto watch = [&epoll](int fd) {
    struct epoll_event ev {};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(epoll.get(), EPOLL_CTL_ADD, fd, &ev) != 0)
      throw Failure(kExitRuntime, "epoll: " + errno_text());
  };
  watch(session->ring_fd());
  watch(signals.get());
  if (options.duration_ns) {
    timer = Fd(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
    struct itimerspec spec {};
    spec.it_value.tv_sec = static_cast<time_t>(*options.duration_ns / 1'000'000'000ull);
    spec.it_value.tv_nsec = static_cast<long>(*options.duration_ns % 1'000'000'000ull);
    if (*options.duration_ns == 0) spec.it_value.tv_nsec = 1;
    ::timerfd_settime(timer.get(), 0, &spec, nullptr);
    watch(timer.get());
  }

  if (!options.command.empty())
    std::cerr << fmt::format("writepath: tracing {} (pid {})\n", options.command[0], child->pid());
  else
    std::cerr << "writepath: tracing writes and syncs; Ctrl-C to stop\n";  // hooks are in
  const Nanos started = monotonic_now();
  if (child) child->release();

  int exit_code = 0;
  bool running = true;
  while (running) {
    struct epoll_event ready[4];
    // The BPF side wakes us only when its buffer fills (wp_submit): poll on a short period.
    int n = ::epoll_wait(epoll.get(), ready, 4, kPollMs);
    if (n < 0 && errno != EINTR) throw Failure(kExitRuntime, "epoll_wait: " + errno_text());
    for (int i = 0; i < n; ++i) {
      int fd = ready[i].data.fd;
      if (fd == signals.get()) {
        struct signalfd_siginfo info {};
        if (::read(signals.get(), &info, sizeof(info)) != sizeof(info)) continue;
        if (info.ssi_signo == SIGCHLD) {
          if (child && child->reap(exit_code)) running = false;
        } else {
          running = false;
        }
      } else if (timer.get() >= 0 && fd == timer.get()) {
        running = false;
      }
    }
    session->consume();
    take_lost();
    if (recording) recording->flush();  // a killed recorder leaves whole frames
  }

  // Stop the hooks, then read what they left in the ring buffer.
  session->detach();
  while (session->consume() > 0) {
  }
  take_lost();
  pipeline.finish(monotonic_now() - started);
  if (recording) {
    recording->flush();
    if (!recording->ok())
      throw Failure(kExitRuntime, fmt::format("writing {} failed", options.record_path));
  }
  if (child) child->reap(exit_code);
  ::sigprocmask(SIG_SETMASK, &original, nullptr);
  if (!options.output.empty() && !output.file)
    throw Failure(kExitRuntime, fmt::format("writing {} failed", options.output));
  return exit_code;
}

}  // namespace wp
