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

#include "agent/output_stream.h"
#include "agent/pipeline.h"
#include "agent/process_tree.h"
#include "agent/session_loop.h"
#include "agent/trace_session_symbols.h"
#include "common/errors.h"
#include "common/fd.h"
#include "common/trace_phase.h"
#include "common/units.h"
#include "decode/decoder.h"
#include "probe/bpf_session.h"
#include "probe/cgroups.h"
#include "probe/container_names.h"
#include "probe/coverage.h"
#include "probe/devices.h"
#include "probe/hook_plan.h"
#include "probe/kernel_caps.h"
#include "record/trace_file.h"
#include "sinks/async_sink.h"
#include "sinks/audit_sink.h"
#include "stitch/stitcher.h"

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
  filter.self_tgid = static_cast<std::uint32_t>(::getpid());
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
  filter.min_latency_ns = options.min_latency_ns;
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

std::unique_ptr<TraceFileWriter> open_recording(const std::string& path, const KernelCaps& caps,
                                                const HookPlan& plan,
                                                const std::vector<std::string>& command,
                                                Nanos min_latency_ns, const ClockOffsets& clock) {
  TraceFileHeader header;
  header.clock_offsets = clock;
  header.writepath_version = "0.1.0";
  header.kernel = caps.kernel_release;
  header.record_version = WP_RECORD_VERSION;
  for (const auto& choice : plan.choices) {
    if (!choice.variant) continue;
    const auto& v = *choice.variant;
    header.hooks.push_back(fmt::format("{}: {} {}{}{}", choice.hook->name, attach_kind_name(v.kind),
                                       v.category, v.category.empty() ? "" : ":",
                                       v.programs.front().event));
  }
  header.devices = list_block_devices();
  header.file_systems = list_file_systems();
  header.command = command;
  header.min_latency_ns = min_latency_ns;
  header.page_shift = running_page_shift();
  try {
    return std::make_unique<TraceFileWriter>(path, header);
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

}  // namespace

int run_trace(const TraceOptions& options) {
  if (!options.command.empty())
    if (const std::string why = cannot_run(options.command.front()); !why.empty())
      throw Failure(kExitCommandNotFound, fmt::format("{}: {}", options.command.front(), why));
  std::vector<UniqueFd> cgroup_dirs;
  KernelFilter filter = build_filter(options, cgroup_dirs);

  // Opened before anything is traced: a bad path fails fast.
  std::unique_ptr<OutputStream> output;
  if (!options.record_only) {
    output = options.output.empty() ? std::make_unique<OutputStream>()
                                    : std::make_unique<OutputStream>(options.output);
    if (output->open_errno())
      throw Failure(kExitRuntime, fmt::format("cannot write {}: {}", options.output,
                                              std::strerror(output->open_errno())));
  }

  KernelCaps caps = detect_kernel_caps();
  if (!caps.privileges.ok) throw Failure(kExitRuntime, caps.privileges.error);
  if (!caps.btf)
    throw Failure(kExitRuntime, caps.btf_error + " (CO-RE needs CONFIG_DEBUG_INFO_BTF=y)");

  SigpipeBlocked sigpipe;
  // SIGINT and SIGTERM stop the trace; SIGCHLD tells of the command's exit.
  SignalInbox signals({SIGINT, SIGTERM, SIGCHLD});

  std::unique_ptr<HeldChild> child;
  std::unique_ptr<PhaseSocket> phase;
  if (!options.command.empty()) {
    if (options.command_marks_phase) phase = std::make_unique<PhaseSocket>();
    child = std::make_unique<HeldChild>(options.command, sigpipe.original(),
                                        phase ? phase->command_end() : -1);
    // A command that marks its phase is matched from its kPhaseBegin on.
    if (phase)
      phase->command_started();
    else
      filter.tgids.push_back(static_cast<std::uint32_t>(child->pid()));
  }

  const std::vector<DeviceInfo> devices = list_block_devices();
  // MONOTONIC (the records' clock) → wall clock, re-measured by the session loop.
  const ClockOffsets clock = measure_clock_offsets();
  std::set<std::uint32_t> pids_with_items;  // the -p processes the trace saw items of
  // Formatting and writing run on the sink's own thread, so this one goes back to draining the
  // ring buffer sooner; only that thread touches the output from now on (the drain runs there).
  std::unique_ptr<AsyncSink> sink;
  // Where the cgroup2 hierarchy is mounted: host paths and container names look there.
  const std::string cgroup2 = cgroup2_root();
  std::unique_ptr<Pipeline> pipeline;
  if (!options.record_only) {
    auto drain = [&output] {
      if (!output->drain())
        throw Failure(kExitRuntime, fmt::format("writing {}: {}", output->name(), output->error()));
    };
    sink = std::make_unique<AsyncSink>(
        options.audit
            ? std::make_unique<AuditSink>(output->stream(), options.format == OutputFormat::Json)
            : make_sink(options.format, output->stream(),
                        SinkOptions{.color = options.output.empty() && ::isatty(STDOUT_FILENO),
                                    .devices = devices,
                                    .live = options.live,
                                    .timestamps = options.timestamps,
                                    .clock = clock,

                                    .cgroups = options.cgroup || options.container || options.pod ||
                                               options.k8s_namespace}),
        drain);
    auto observer = [&options, &pids_with_items](const Timeline& item) {
      const std::uint32_t pid = call_of(item).pid;
      for (auto p : options.pids)
        if (p == pid) pids_with_items.insert(pid);
      if (options.observer) options.observer(item);
    };
    pipeline = std::make_unique<Pipeline>(
        PipelineOptions{.min_latency_ns = options.min_latency_ns,
                        .observer = observer,
                        .live = true,
                        .item_progress = options.live,
                        .file_systems = list_file_systems(),
                        .host_paths = std::make_shared<HostPaths>("/proc", cgroup2)},
        devices, *sink);
  }
  std::unique_ptr<TraceFileWriter> recording;  // made once the hooks are known
  // The cgroup ids the records name get their paths here, once each: into the recording
  // (before the first record naming the id) and the pipeline.
  // A container's cgroup is also asked what the host says of it (its runtime's names, its
  // hostname), once, while it runs: the recording keeps that too.
  CgroupNamer cgroup_namer(CgroupPaths::of_this_host(),
                           [&recording, &pipeline, &cgroup2](const CgroupName& name) {
                             const ContainerNames names = host_container_names(name.path, cgroup2);
                             if (recording) {
                               recording->cgroup_name(name);
                               recording->container_names({name.id, names});
                             }
                             if (pipeline) pipeline->name_cgroup(name.id, name.path, names);
                           });
  // Likewise the kernel addresses of the off-CPU records' stacks (with stacks on).
  const std::unique_ptr<KernelAddressNamer> address_namer =
      kernel_address_namer(filter, [&recording, &pipeline](const KernelSymbolName& symbol) {
        if (recording) recording->kernel_symbol(symbol);
        if (pipeline) pipeline->name_kernel_address(symbol.address, symbol.name);
      });
  // Per record: a copy into the trace file's buffer and/or the live pipeline; nothing else.
  BpfSession::RecordHandler handler = [&recording, &pipeline, &cgroup_namer,
                                       &address_namer](std::span<const std::byte> record) {
    cgroup_namer.on_record(record);
    if (address_namer) address_namer->on_record(record);
    if (recording) recording->record(record);
    if (pipeline) pipeline->on_record(record);
  };
  PlannedSession planned =
      start_planned_session(caps,
                            HookPrefs{.fentry = !options.no_fentry,
                                      .raw_syscalls = options.raw_syscalls,
                                      .disabled_programs = disabled_programs_from_env()},
                            filter, handler);
  if (!planned.session) throw Failure(kExitRuntime, planned.error);
  // Tracing goes on without tracefs (nothing is mounted); say once what that costs.
  if (const auto costs = tracefs_costs(planned.plan); !costs.empty()) {
    std::string joined;
    for (const auto& cost : costs) joined += (joined.empty() ? "" : "; ") + cost;
    std::fprintf(stderr, "writepath: no tracefs (%s): %s\n", caps.tracefs_error.c_str(),
                 joined.c_str());
  }
  auto& session = planned.session;
  // The -p processes with children at the start: the summary's hint if nothing is seen of them.
  std::set<std::uint32_t> pids_with_children;
  // A command's tree is new (held before exec): the kernel follows all of it.
  if (options.children && options.command.empty())
    follow_existing_descendants(*session, options);
  else if (!options.pids.empty())
    pids_with_children = parents_in(read_process_table());
  if (!options.record_path.empty())
    recording = open_recording(options.record_path, caps, planned.plan, options.command,
                               options.min_latency_ns, clock);
  // Writes out what is buffered; a failed write ends the trace with its reason. The session
  // and the hooks go with the stack as the Failure leaves.
  auto flush_outputs = [&] {
    if (recording) {
      recording->flush();
      if (!recording->ok())
        throw Failure(kExitRuntime,
                      fmt::format("writing {}: {}", options.record_path, recording->error()));
    }
    if (sink) sink->flush();  // the drain follows on the sink's thread; rethrows its failure
  };

  int exit_code = 0;
  std::vector<WatchedFd> watched;
  if (phase)
    watched.push_back({phase->fd(), [&phase, &session, &child] {
                         return phase->serve(*session, static_cast<std::uint32_t>(child->pid()));
                       }});
  SessionLoop loop(SessionLoopOptions{
      .ring_fd = session->ring_fd(),
      .consume = [&session](int max_records) { return session->consume(max_records); },
      .lost = [&session] { return session->lost(); },
      .detach = [&session] { session->detach(); },
      .signal_fd = signals.fd(),
      .on_signal =
          [&child, &exit_code](const signalfd_siginfo& info) {
            if (info.ssi_signo != SIGCHLD) return AfterSignal::Stop;
            // The command's exit ends the trace; another child of ours (none yet) would not.
            return child && child->reap(exit_code) ? AfterSignal::Stop : AfterSignal::Continue;
          },
      .duration_ns = options.duration_ns,
      .watched = std::move(watched),
      .poll_ms = kTracePollMs,
      .on_start =
          [&child] {
            if (child) child->release();
          },
      .on_lost =
          [&recording, &pipeline](const LostCounts& delta) {
            if (recording) recording->lost(delta);
            if (pipeline) pipeline->add_lost(delta);
          },
      .flush = flush_outputs,
      .on_clock =
          [&pipeline](const ClockOffsets& offsets) {
            if (pipeline) pipeline->set_clock(offsets);
          },
  });

  if (!options.command.empty())
    std::cerr << fmt::format("writepath: {} {} (pid {})\n",
                             options.record_only ? "recording" : "tracing", options.command[0],
                             child->pid());
  else if (options.duration_ns)
    std::cerr << fmt::format("writepath: {} writes and syncs for {}; Ctrl-C stops it early\n",
                             options.record_only ? "recording" : "tracing",
                             human_duration(*options.duration_ns));  // hooks are in
  else
    std::cerr << fmt::format("writepath: {} writes and syncs; Ctrl-C to stop\n",
                             options.record_only ? "recording" : "tracing");  // hooks are in
  // The span traced ends where tracing was to stop (the command's exit, the --duration timer,
  // the signal); the loop has detached the hooks and read what they left.
  const Nanos duration = loop.run();
  for (auto pid : options.pids)
    if (session->tgid_flags(pid) & WP_TGID_FORKED) pids_with_children.insert(pid);
  LossReport loss;
  bool hazards = false;
  // Read once the hooks are detached: the final counts, kept by a recording too.
  const UntracedTally untraced = untraced_tally(planned.plan, session->untraced_calls());
  if (recording) recording->untraced(untraced_by_name(untraced));
  FilteredRequestsByDisk filtered;
  for (const auto& [dev, t] : session->filtered_requests())
    filtered[dev] = {t.write_requests, t.write_bytes, t.flush_requests};
  if (recording && !filtered.empty()) recording->filtered_requests(filtered);
  if (pipeline && kernel_counts_bpf_time()) {
    BpfCost cost;
    for (auto& p : session->program_costs())
      if (p.runs) cost.programs.push_back(std::move(p));
    std::sort(cost.programs.begin(), cost.programs.end(),
              [](const ProgramCost& a, const ProgramCost& b) { return a.ns > b.ns; });
    cost.cpus = static_cast<unsigned>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
    pipeline->set_bpf_cost(std::move(cost));
  }
  if (pipeline) {
    pipeline->add_filtered_requests(filtered);
    pipeline->set_untraced_calls(untraced_by_name(untraced));
    pipeline->set_hint(children_hint(options.pids, pids_with_children, pids_with_items));
    const TraceSummary summary = pipeline->finish(duration);
    loss = loss_report(summary.events, loop.lost_total(), true);
    hazards = !summary.hazards.empty();
  } else if (recording)
    loss = loss_report(recording->records(), loop.lost_total(), false);
  flush_outputs();
  if (sink) sink->wait();  // everything written before the warnings below
  if (child) child->reap(exit_code);
  signals.restore();
  if (!loss.warning.empty()) std::cerr << "writepath: " << loss.warning << "\n";
  if (options.record_only && recording)
    std::cerr << fmt::format("writepath: recorded {} records to {}\n", recording->records(),
                             options.record_path);
  // audit: its verdict first; without hazards, the command's own code.
  if (options.audit && hazards) return kExitHazards;
  return exit_code;
}

}  // namespace wp
