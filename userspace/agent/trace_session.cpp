// SPDX-License-Identifier: Apache-2.0
#include "agent/trace_session.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <set>
#include <unordered_set>
#include <utility>

#include "agent/live_session.h"
#include "agent/output_stream.h"
#include "agent/process_tree.h"
#include "agent/session_loop.h"
#include "common/errors.h"
#include "common/fd.h"
#include "common/trace_phase.h"
#include "common/units.h"
#include "probe/bpf_session.h"
#include "probe/cgroups.h"
#include "probe/devices.h"
#include "probe/hook_plan.h"
#include "probe/kernel_caps.h"
#include "record/trace_file.h"
#include "sinks/async_sink.h"
#include "sinks/audit_sink.h"

namespace wp {
namespace {

// Why `command` cannot be run, as execvp would find it (a name with a slash as it is, else
// each directory of PATH), or "" when it can. Asked before anything is traced: a command that
// cannot start would otherwise leave only its own error message in the trace.
std::string cannot_run(const std::string& command) {
  const auto runnable = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(path.c_str(), X_OK) == 0;
  };
  if (command.find('/') != std::string::npos) {
    if (runnable(command)) return "";
    struct stat st {};
    if (::stat(command.c_str(), &st) != 0) return errno_text();
    return S_ISREG(st.st_mode) ? std::strerror(EACCES) : "not a regular file";
  }
  const char* env = std::getenv("PATH");
  std::string path = env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin";
  for (std::size_t begin = 0; begin <= path.size();) {
    const std::size_t end = std::min(path.find(':', begin), path.size());
    const std::string dir = end == begin ? "." : path.substr(begin, end - begin);
    if (runnable(dir + "/" + command)) return "";
    begin = end + 1;
  }
  return "command not found";
}

void check_runnable(const std::string& command) {
  if (const std::string why = cannot_run(command); !why.empty())
    throw Failure(kExitCommandNotFound, fmt::format("{}: {}", command, why));
}

// The command of `-- CMD`, forked at once but held before exec until tracing is attached,
// so its first write is traced.
class HeldChild {
 public:
  // `phase_fd`, when not -1, is handed to the command (common/trace_phase.h).
  HeldChild(const std::vector<std::string>& argv, const sigset_t& original_mask, int phase_fd) {
    int go[2];
    if (::pipe2(go, O_CLOEXEC) != 0) throw Failure(kExitRuntime, "pipe: " + errno_text());
    pid_ = ::fork();
    if (pid_ < 0) throw Failure(kExitRuntime, "fork: " + errno_text());
    if (pid_ == 0) {
      ::close(go[1]);
      char byte;
      if (::read(go[0], &byte, 1) != 1) ::_exit(127);  // the tracer gave up
      ::sigprocmask(SIG_SETMASK, &original_mask, nullptr);
      if (phase_fd >= 0) {
        ::fcntl(phase_fd, F_SETFD, 0);  // kept across exec
        ::setenv(kTracePhaseFdEnv, std::to_string(phase_fd).c_str(), 1);
      }
      // The command runs as the invoking user: capabilities granted to writepath for tracing
      // (ambient, e.g. by setpriv or systemd) are not passed on to it.
      ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      std::fprintf(stderr, "writepath: cannot run %s: %s\n", args[0], std::strerror(errno));
      ::_exit(127);
    }
    ::close(go[0]);
    go_ = UniqueFd(go[1]);
  }
  ~HeldChild() {
    // Never started (tracing failed): closing the pipe makes it exit 127; reap it. A started
    // command that outlives the trace goes on untraced, as under strace and perf.
    if (pid_ > 0 && go_.get() >= 0) {
      go_ = UniqueFd();
      ::waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  void release() {
    char byte = 1;
    if (::write(go_.get(), &byte, 1) != 1) throw Failure(kExitRuntime, "cannot start command");
    go_ = UniqueFd();
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
  UniqueFd go_;
  bool reaped_ = false;
};

// The tracer's end of the socket through which a command marks its measured phase: the
// command's process is matched from its kPhaseBegin to its kPhaseEnd only.
class PhaseSocket {
 public:
  PhaseSocket() {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
      throw Failure(kExitRuntime, "socketpair: " + errno_text());
    ours_ = UniqueFd(pair[0]);
    theirs_ = UniqueFd(pair[1]);
  }
  int fd() const { return ours_.get(); }
  int command_end() const { return theirs_.get(); }
  // Once the command has its copy: ours alone reads EOF when the command is gone.
  void command_started() { theirs_ = UniqueFd(); }
  // Answers one message of the command; false when it has closed its end.
  bool serve(BpfSession& session, std::uint32_t tgid) {
    char message = 0;
    if (::read(ours_.get(), &message, 1) != 1) return false;
    if (message == kPhaseBegin && !session.add_tgid(tgid))
      throw Failure(kExitRuntime, fmt::format("cannot trace pid {}", tgid));
    if (message == kPhaseEnd) session.remove_tgid(tgid);
    return ::write(ours_.get(), &kPhaseAck, 1) == 1;
  }

 private:
  UniqueFd ours_;
  UniqueFd theirs_;
};

DevT kernel_dev(dev_t dev) {
  return make_dev(major(dev), minor(dev));
}

// `cgroup_dirs` gets the filter's cgroup directories, which the kernel's filter holds by fd.
KernelFilter build_filter(const TraceOptions& options, std::vector<UniqueFd>& cgroup_dirs) {
  KernelFilter filter;
  for (auto pid : options.pids) {
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      throw Failure(kExitUsage, fmt::format("no process with pid {}", pid));
    filter.tgids.push_back(pid);
  }
  if (options.children && options.pids.empty() && !options.comm)
    throw Failure(kExitUsage, "--children follows the processes of -p or --comm; give one of them");
  filter.filter_tgid = !filter.tgids.empty() || !options.command.empty();
  filter.follow_children = !options.command.empty() || options.children;
  // Alone with --children, --comm names the roots; beside -p or a command it narrows them.
  filter.comm_roots = options.children && options.comm && !filter.filter_tgid;
  filter.causes_min_ns = options.causes_min_ns ? options.causes_min_ns : options.min_latency_ns;
  filter.offcpu_stacks = options.stacks;
  filter.min_latency_ns = options.min_latency_ns;
  filter.ring_bytes = options.buffer_bytes;
  if (options.comm) {
    if (options.comm->empty() || options.comm->size() >= WP_COMM_LEN)
      throw Failure(kExitUsage, fmt::format("--comm takes a name of 1 to {} characters (the "
                                            "kernel keeps {}), not '{}'",
                                            WP_COMM_LEN - 1, WP_COMM_LEN - 1, *options.comm));
    filter.comm = options.comm;
  }
  if (options.cgroup || options.container || options.pod || options.k8s_namespace) {
    // --container, --pod and --namespace are their cgroups' (the four exclude each other on
    // the command line).
    const auto mounts = read_mountinfo();
    const std::vector<CgroupDir> cgroups =
        options.container       ? std::vector{resolve_container(*options.container, mounts)}
        : options.pod           ? std::vector{resolve_pod(*options.pod, mounts)}
        : options.k8s_namespace ? resolve_namespace(*options.k8s_namespace, mounts)
                                : std::vector{resolve_cgroup(*options.cgroup, mounts)};
    const std::string flag = options.container       ? "--container " + *options.container
                             : options.pod           ? "--pod " + *options.pod
                             : options.k8s_namespace ? "--namespace " + *options.k8s_namespace
                                                     : "--cgroup " + *options.cgroup;
    for (const CgroupDir& cgroup : cgroups) {
      UniqueFd dir(::open(cgroup.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (dir.get() < 0)
        throw Failure(kExitRuntime,
                      fmt::format("{}: cannot open {}: {}", flag, cgroup.dir, errno_text()));
      filter.cgroup_fds.push_back(dir.get());
      cgroup_dirs.push_back(std::move(dir));
    }
  }
  if (options.dev) {
    // A disk or partition, or the device stat() reports for a file system that is on no
    // block device of its own (a btrfs mount) or on a stacked one (dm-0): then its first
    // disk, where its requests are.
    const std::vector<FileSystemInfo> file_systems = list_file_systems();
    const auto device = find_block_device(*options.dev);
    const auto dev = device ? std::optional<DevT>(device->dev) : parse_dev(*options.dev);
    const auto fs = dev ? find_file_system(*dev, file_systems) : std::nullopt;
    if (device && !fs) {
      filter.disk = device->disk;
    } else if (fs) {
      if (fs->disks.empty())
        throw Failure(kExitUsage, fmt::format("--dev {}: no block device found under its {} file "
                                              "system",
                                              *options.dev, fs->type));
      filter.disk = fs->disks.front();
    } else {
      throw Failure(kExitUsage, fmt::format("--dev {}: no such block device", *options.dev));
    }
    // Files (and journals) of the file systems on that disk whose superblock device is
    // another (btrfs, dm-0) pass the filter by their superblock device.
    for (const auto& on_disk : file_systems)
      if (std::find(on_disk.disks.begin(), on_disk.disks.end(), filter.disk) != on_disk.disks.end())
        filter.disk_fs_devs.push_back(on_disk.dev);
  }
  if (options.file) {
    struct stat st {};
    if (::stat(options.file->c_str(), &st) != 0)
      throw Failure(kExitUsage, fmt::format("--file {}: {}", *options.file, errno_text()));
    // A file of an overlay mount that was copied up is followed as its upper file, which its
    // pages, requests and stores name (its calls pass either way); one still only in a lower
    // layer gets an upper file when first opened for writing, and passes by its overlay inode.
    if (const auto upper = overlay_upper_file(*options.file, read_mountinfo()))
      if (::stat(upper->c_str(), &st) != 0)
        throw Failure(kExitUsage, fmt::format("--file {}: its upper file {}: {}", *options.file,
                                              *upper, errno_text()));
    filter.file_dev = kernel_dev(st.st_dev);
    filter.file_ino = st.st_ino;
  }
  return filter;
}

// SIGPIPE blocked for the trace: a closed pipe on stdout is an EPIPE write error that ends the
// trace cleanly, not a death. Blocked rather than ignored, so the traced command (which gets
// the original mask back before exec) keeps the default action. A SIGPIPE left pending is
// taken before the mask is restored.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    ::sigprocmask(SIG_BLOCK, &pipe, &original_);
  }
  ~SigpipeBlocked() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    const struct timespec now {};
    while (::sigtimedwait(&pipe, nullptr, &now) == SIGPIPE) {
    }
    ::sigprocmask(SIG_SETMASK, &original_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;
  // The mask to give the traced command: the one from before any blocking.
  const sigset_t& original() const { return original_; }

 private:
  sigset_t original_;
};

// record (or --record): the trace file, made once the hooks are known (its header lists them).
void record_if_asked(LiveSession& session, const TraceOptions& options, const KernelCaps& caps,
                     const ClockOffsets& clock) {
  if (options.record_path.empty()) return;
  TraceFileHeader header;
  header.clock_offsets = clock;
  header.writepath_version = "0.1.0";
  header.kernel = caps.kernel_release;
  header.record_version = WP_RECORD_VERSION;
  for (const auto& choice : session.plan().choices) {
    if (!choice.variant) continue;
    const auto& v = *choice.variant;
    header.hooks.push_back(fmt::format("{}: {} {}{}{}", choice.hook->name, attach_kind_name(v.kind),
                                       v.category, v.category.empty() ? "" : ":",
                                       v.programs.front().event));
  }
  header.devices = list_block_devices();
  header.file_systems = list_file_systems();
  header.command = options.command;
  header.min_latency_ns = options.min_latency_ns;
  header.page_shift = running_page_shift();
  header.io_owners = true;
  try {
    session.record_to(std::make_unique<TraceFileWriter>(options.record_path, header),
                      options.record_path);
  } catch (const std::runtime_error& e) {
    throw Failure(kExitRuntime, e.what());
  }
}

// --children: adds to the kernel's filter every process whose ancestry reaches a root, as /proc
// shows them now. The hooks are attached first, so a fork by a process already in the filter is
// followed by the kernel; one by a process not yet added is in /proc by the next walk. Walking
// until a walk finds nothing new (at most eight walks, against a fork storm) leaves none out (a
// child orphaned meanwhile and reparented outside the tree is not followed).
void follow_existing_descendants(BpfSession& session, const TraceOptions& options) {
  const std::set<std::uint32_t> pids(options.pids.begin(), options.pids.end());
  auto is_root = [&](const ProcessEntry& p) {
    if (!pids.empty()) return pids.count(p.pid) > 0;
    return options.comm && p.comm == *options.comm;
  };
  std::set<std::uint32_t> added;
  for (int walk = 0; walk < 8; ++walk) {
    bool grew = false;
    for (std::uint32_t pid : descendants_of(read_process_table(), is_root)) {
      if (!added.insert(pid).second) continue;
      grew = true;
      if (!session.add_tgid(pid))
        throw Failure(kExitRuntime,
                      fmt::format("--children: cannot follow pid {} (more than {} processes?)", pid,
                                  WP_MAX_TGIDS));
    }
    if (!grew) return;
  }
}

// The command of `-- CMD`, if one was given: held before exec until the hooks are in and, when
// it marks its measured phase, answered on the socket it marks it on.
class TracedCommand {
 public:
  // Forks the command; its process is traced from the start (its pid goes into `filter`) or,
  // when it marks its phase, from its kPhaseBegin on.
  TracedCommand(const TraceOptions& options, const sigset_t& original_mask, KernelFilter& filter) {
    if (options.command.empty()) return;
    if (options.command_marks_phase) phase_ = std::make_unique<PhaseSocket>();
    child_ = std::make_unique<HeldChild>(options.command, original_mask,
                                         phase_ ? phase_->command_end() : -1);
    if (phase_)
      phase_->command_started();
    else
      filter.tgids.push_back(static_cast<std::uint32_t>(child_->pid()));
  }
  pid_t pid() const { return child_ ? child_->pid() : -1; }
  // The phase socket, for the loop to watch.
  std::vector<WatchedFd> watched(BpfSession& session) {
    if (!phase_) return {};
    return {{phase_->fd(), [this, &session] {
               return phase_->serve(session, static_cast<std::uint32_t>(child_->pid()));
             }}};
  }
  void release() {
    if (child_) child_->release();
  }
  // SIGCHLD: the command's exit ends the trace; another child of ours (none yet) would not.
  AfterSignal on_signal(const signalfd_siginfo& info) {
    if (info.ssi_signo != SIGCHLD) return AfterSignal::Stop;
    return reaped() ? AfterSignal::Stop : AfterSignal::Continue;
  }
  // The command's exit code once it has exited; 0 while it runs, and without a command.
  int exit_code() {
    reaped();
    return exit_code_;
  }

 private:
  bool reaped() { return child_ && child_->reap(exit_code_); }

  std::unique_ptr<HeldChild> child_;
  std::unique_ptr<PhaseSocket> phase_;
  int exit_code_ = 0;
};

// Formatting and writing run on the sink's own thread, so the trace's goes back to draining the
// ring buffer sooner; only that thread touches the output from now on (the drain runs there).
std::unique_ptr<AsyncSink> trace_sink(const TraceOptions& options, OutputStream& output,
                                      const std::vector<DeviceInfo>& devices,
                                      const ClockOffsets& clock) {
  const bool cgroups = options.cgroup || options.container || options.pod || options.k8s_namespace;
  return std::make_unique<AsyncSink>(
      options.audit
          ? std::make_unique<AuditSink>(output.stream(), options.format == OutputFormat::Json)
          : make_sink(options.format, output.stream(),
                      SinkOptions{.color = options.output.empty() && ::isatty(STDOUT_FILENO),
                                  .devices = devices,
                                  .live = options.live,
                                  .timestamps = options.timestamps,
                                  .clock = clock,
                                  .cgroups = cgroups}),
      [&output] { output.drain_or_throw(); });
}

// What the summary's hint needs of the -p processes (process_tree.h): which of them the trace
// saw items of, and which had children, at the start or forked during the trace.
class PidsSeen {
 public:
  explicit PidsSeen(const TraceOptions& options) : options_(options) {}
  void item(const Timeline& item) {
    const std::uint32_t pid = call_of(item).pid;
    for (auto p : options_.pids)
      if (p == pid) with_items_.insert(pid);
    if (options_.observer) options_.observer(item);
  }
  // Once the hooks are in: with --children, the trees that exist now are followed (a command's
  // tree is new, held before exec: the kernel follows all of it); else the -p processes with
  // children now are noted.
  void start(BpfSession& session) {
    if (options_.children && options_.command.empty())
      follow_existing_descendants(session, options_);
    else if (!options_.pids.empty())
      with_children_ = parents_in(read_process_table());
  }
  std::string hint(const BpfSession& session) {
    for (auto pid : options_.pids)
      if (session.tgid_flags(pid) & WP_TGID_FORKED) with_children_.insert(pid);
    return children_hint(options_.pids, with_children_, with_items_);
  }

 private:
  const TraceOptions& options_;
  std::set<std::uint32_t> with_items_;
  std::set<std::uint32_t> with_children_;
};

// Tracing goes on without tracefs (nothing is mounted); say once what that costs.
void warn_without_tracefs(const KernelCaps& caps, const HookPlan& plan) {
  if (const auto costs = tracefs_costs(plan); !costs.empty()) {
    std::string joined;
    for (const auto& cost : costs) joined += (joined.empty() ? "" : "; ") + cost;
    std::fprintf(stderr, "writepath: no tracefs (%s): %s\n", caps.tracefs_error.c_str(),
                 joined.c_str());
  }
}

// Once the hooks are in: what is traced, until when.
void say_started(const TraceOptions& options, pid_t command) {
  const char* what = options.record_only ? "recording" : "tracing";
  if (!options.command.empty())
    std::cerr << fmt::format("writepath: {} {} (pid {})\n", what, options.command[0], command);
  else if (options.duration_ns)
    std::cerr << fmt::format("writepath: {} writes and syncs for {}; Ctrl-C stops it early\n", what,
                             human_duration(*options.duration_ns));
  else
    std::cerr << fmt::format("writepath: {} writes and syncs; Ctrl-C to stop\n", what);
}

// Once everything is written: what was lost and, for record, what was recorded.
void say_ended(const TraceOptions& options, const LiveSession& session, const LossReport& loss) {
  warn_of_losses(loss);
  if (options.record_only && session.recording())
    std::cerr << fmt::format("writepath: recorded {} records to {}\n",
                             session.recording()->records(), options.record_path);
}

}  // namespace

int run_trace(const TraceOptions& options) {
  if (!options.command.empty()) check_runnable(options.command.front());
  std::vector<UniqueFd> cgroup_dirs;
  KernelFilter filter = build_filter(options, cgroup_dirs);
  // Opened before anything is traced: a bad path fails fast.
  const std::unique_ptr<OutputStream> output =
      options.record_only ? nullptr : open_output(options.output);
  const KernelCaps caps = tracing_kernel();
  SigpipeBlocked sigpipe;
  // SIGINT and SIGTERM stop the trace; SIGCHLD tells of the command's exit.
  SignalInbox signals({SIGINT, SIGTERM, SIGCHLD});
  TracedCommand command(options, sigpipe.original(), filter);
  const std::vector<DeviceInfo> devices = list_block_devices();
  // MONOTONIC (the records' clock) → wall clock, re-measured by the session loop.
  const ClockOffsets clock = measure_clock_offsets();
  const std::unique_ptr<AsyncSink> sink =
      output ? trace_sink(options, *output, devices, clock) : nullptr;
  PidsSeen pids(options);
  LiveSession session(
      caps, std::move(filter),
      LiveSessionOptions{.prefs = {.fentry = !options.no_fentry,
                                   .raw_syscalls = options.raw_syscalls,
                                   .reads = options.reads},
                         .sink = sink.get(),
                         .devices = devices,
                         .min_latency_ns = options.min_latency_ns,
                         .observer = [&pids](const Timeline& item) { pids.item(item); },
                         .item_progress = options.live,
                         .host_paths = true});
  if (options.reads) {
    require_read_hooks(session.plan());
    warn_without_fault_hooks(session.plan());
  }
  warn_without_tracefs(caps, session.plan());
  pids.start(session.bpf());
  record_if_asked(session, options, caps, clock);
  SessionLoop loop = session.loop(SessionLoopOptions{
      .signal_fd = signals.fd(),
      .on_signal = [&command](const signalfd_siginfo& info) { return command.on_signal(info); },
      .duration_ns = options.duration_ns,
      .watched = command.watched(session.bpf()),
      .poll_ms = kTracePollMs,
      .on_start = [&command] { command.release(); },
      // The drain follows on the sink's thread; flush() rethrows its failure.
      .flush =
          [&sink] {
            if (sink) sink->flush();
          },
  });
  say_started(options, command.pid());  // the hooks are in
  // The span traced ends where tracing was to stop (the command's exit, the --duration timer,
  // the signal); the loop has detached the hooks and read what they left.
  const Nanos span = loop.run();
  session.summary().set_hint(pids.hint(session.bpf()));
  if (const std::string slow = session.plan().slow_syscall_path(); !slow.empty())
    session.summary().set_slow_syscall_path(
        slow +
        ": every syscall of every thread on the machine took the kernel's slow path "
        "while they were attached (writepath doctor: syscall plan)");
  const SessionEnd end = session.finish(loop, span);
  if (sink) sink->wait();  // everything written before the warnings below
  const int exit_code = command.exit_code();
  signals.restore();
  say_ended(options, session, end.loss);
  // audit: its verdict first; without hazards, the command's own code.
  if (options.audit && end.summary && !end.summary->hazards.empty()) return kExitHazards;
  return exit_code;
}

}  // namespace wp
