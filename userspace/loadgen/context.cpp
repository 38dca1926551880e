// SPDX-License-Identifier: Apache-2.0
#include "loadgen/context.h"

#include <fmt/format.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "common/errors.h"

namespace wp::loadgen {
namespace fs = std::filesystem;

// ---- interrupts ------------------------------------------------------------------------------

InterruptGuard::InterruptGuard() {
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &block, &previous_);
}

InterruptGuard::~InterruptGuard() {
  // A signal still pending would act on unblocking: take it, the run is over anyway.
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  struct timespec zero {};
  while (::sigtimedwait(&block, nullptr, &zero) > 0) {
  }
  ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

bool InterruptGuard::pending() const {
  sigset_t set;
  sigemptyset(&set);
  ::sigpending(&set);
  return sigismember(&set, SIGINT) || sigismember(&set, SIGTERM);
}

// ---- workspace -------------------------------------------------------------------------------

namespace {

// Runs a helper program quietly (no shell); returns its exit status.
int run_quiet(const std::vector<std::string>& argv, std::string* out = nullptr) {
  int pipefd[2] = {-1, -1};
  if (out && ::pipe(pipefd) != 0) return -1;
  pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    std::FILE* null = std::fopen("/dev/null", "w");
    if (null) {
      ::dup2(fileno(null), 2);
      if (!out) ::dup2(fileno(null), 1);
    }
    if (out) ::dup2(pipefd[1], 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  if (out) {
    ::close(pipefd[1]);
    char buf[256];
    ssize_t n;
    while ((n = ::read(pipefd[0], buf, sizeof(buf))) > 0) out->append(buf, static_cast<size_t>(n));
    ::close(pipefd[0]);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

std::uint64_t free_bytes(const fs::path& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
}

std::string mib(std::uint64_t bytes) {
  return fmt::format("{} MiB", bytes >> 20);
}

}  // namespace

FuseMount::FuseMount(const fs::path& source, std::uint64_t max_readahead) {
  if (run_quiet({"sh", "-c", "command -v bindfs"}) != 0)
    throw LoadError("a FUSE file system needs bindfs (Debian's package bindfs)");
  std::string dir = (fs::temp_directory_path() / "writepath-fuse.XXXXXX").string();
  if (!::mkdtemp(dir.data())) throw LoadError(fmt::format("mkdtemp: {}", std::strerror(errno)));
  // bindfs mounts, then goes to the background: its exit says whether the mount is there.
  if (run_quiet({"bindfs", "-o", fmt::format("max_readahead={}", max_readahead), source.string(),
                 dir}) != 0) {
    fs::remove(dir);
    throw LoadError(fmt::format("bindfs {} {} failed", source.string(), dir));
  }
  dir_ = dir;
}

FuseMount::~FuseMount() {
  if (dir_.empty()) return;
  if (run_quiet({"umount", dir_.string()}) != 0) run_quiet({"umount", "-l", dir_.string()});
  std::error_code ec;
  fs::remove(dir_, ec);
}

Workspace::Workspace(const WorkspaceOptions& options, std::uint64_t space_needed)
    : keep_(options.keep) {
  if (options.dir) {
    dir_ = fs::absolute(*options.dir);
    std::error_code ec;
    if (fs::exists(dir_, ec)) {
      if (!fs::is_directory(dir_, ec))
        throw Failure(kExitUsage, fmt::format("--dir {}: not a directory", dir_.string()));
      if (!fs::is_empty(dir_, ec))
        throw Failure(kExitUsage,
                      fmt::format("--dir {}: not empty (give a new or empty directory: only "
                                  "files this run creates are ever touched)",
                                  dir_.string()));
    } else {
      if (!fs::create_directories(dir_, ec))
        throw Failure(kExitRuntime,
                      fmt::format("--dir {}: cannot create: {}", dir_.string(), ec.message()));
      created_dir_ = true;
    }
  } else {
    // Room for the scenario plus the journal and metadata: a quarter more and 64 MiB.
    std::uint64_t size =
        options.fs_size ? options.fs_size : space_needed + space_needed / 4 + (64u << 20);
    make_scratch(options, size);
  }
  std::uint64_t available = free_bytes(dir_);
  if (available < space_needed) {
    teardown();
    throw Failure(kExitUsage, fmt::format("{} has {} free, the scenario needs {}", dir_.string(),
                                          mib(available), mib(space_needed)));
  }
}

void Workspace::make_scratch(const WorkspaceOptions& options, std::uint64_t size) {
  if (options.fs != "ext4" && options.fs != "xfs")
    throw Failure(kExitUsage, fmt::format("--fs {}: ext4 or xfs", options.fs));
  if (::geteuid() != 0)
    throw Failure(kExitRuntime,
                  "a scratch filesystem needs root (loop device, mount); or give --dir DIR");
  fs_ = options.fs;
  fs_size_ = size;
  char templ[] = "/tmp/writepath-load.XXXXXX";
  if (!::mkdtemp(templ))
    throw Failure(kExitRuntime, fmt::format("mkdtemp: {}", std::strerror(errno)));
  scratch_root_ = templ;
  fs::path image = scratch_root_ / "fs.img";
  // The image lives on /tmp: check it fits (sparse, but it fills as the scenario writes).
  if (free_bytes(scratch_root_) < size) {
    teardown();
    throw Failure(kExitUsage, fmt::format("/tmp has {} free, a {} scratch filesystem needs it",
                                          mib(free_bytes("/tmp")), mib(size)));
  }
  {
    std::FILE* f = std::fopen(image.c_str(), "w");
    if (!f || ::ftruncate(fileno(f), static_cast<off_t>(size)) != 0) {
      if (f) std::fclose(f);
      teardown();
      throw Failure(kExitRuntime, "cannot create the scratch filesystem image");
    }
    std::fclose(f);
  }
  std::vector<std::string> mkfs =
      fs_ == "ext4"
          ? std::vector<std::string>{"mkfs.ext4", "-q", "-F", "-O", "has_journal", image.string()}
          : std::vector<std::string>{"mkfs.xfs", "-q", "-f", image.string()};
  if (run_quiet(mkfs) != 0) {
    teardown();
    throw Failure(kExitRuntime, fmt::format("{} failed (is it installed?)", mkfs[0]));
  }
  std::string loop;
  if (run_quiet({"losetup", "--direct-io=on", "--find", "--show", image.string()}, &loop) != 0 ||
      loop.empty()) {
    teardown();
    throw Failure(kExitRuntime, "losetup failed: no free loop device?");
  }
  loop_ = loop.substr(0, loop.find('\n'));
  dir_ = scratch_root_ / "mnt";
  fs::create_directories(dir_);
  if (::mount(loop_.c_str(), dir_.c_str(), fs_.c_str(), 0, nullptr) != 0) {
    int saved = errno;
    teardown();
    throw Failure(kExitRuntime, fmt::format("mount {}: {}", fs_, std::strerror(saved)));
  }
  mounted_ = true;
}

fs::path Workspace::path(const std::string& name) {
  fs::path p = dir_ / name;
  created_.push_back(p);
  return p;
}

std::string Workspace::describe() const {
  if (!loop_.empty()) return fmt::format("scratch {} ({}) on {}", fs_, mib(fs_size_), loop_);
  return dir_.string();
}

void Workspace::teardown() noexcept {
  std::error_code ec;
  if (!scratch_root_.empty()) {
    // A lazy unmount if something (a --keep'd shell, say) still holds it.
    if (mounted_ && ::umount2(dir_.c_str(), 0) != 0) ::umount2(dir_.c_str(), MNT_DETACH);
    if (!loop_.empty()) run_quiet({"losetup", "-d", loop_});
    fs::remove_all(scratch_root_, ec);
    mounted_ = false;
    loop_.clear();
    scratch_root_.clear();
    return;
  }
  if (keep_) return;
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) fs::remove_all(*it, ec);
  created_.clear();
  if (created_dir_) fs::remove(dir_, ec);  // only if it stayed empty
}

Workspace::~Workspace() {
  if (!scratch_root_.empty() && keep_) {
    std::cerr << fmt::format("writepath: --keep: {} stays mounted at {} ({})\n", fs_, dir_.string(),
                             loop_);
    return;
  }
  teardown();
}

// ---- progress --------------------------------------------------------------------------------

Progress::Progress(std::string label, std::uint64_t total, bool enabled)
    : label_(std::move(label)),
      total_(total ? total : 1),
      enabled_(enabled),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() {
  if (drawn_) std::cerr << "\r\033[K" << std::flush;
}

void Progress::update(std::uint64_t done) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  // Only runs longer than a second get a bar, redrawn ten times a second.
  if (now - start_ < std::chrono::seconds(1) || now - last_draw_ < std::chrono::milliseconds(100))
    return;
  last_draw_ = now;
  drawn_ = true;
  constexpr int kWidth = 30;
  int filled = static_cast<int>(kWidth * std::min<std::uint64_t>(done, total_) / total_);
  std::cerr << fmt::format("\r{} [{}{}] {:3}%", label_, std::string(filled, '#'),
                           std::string(kWidth - filled, ' '), 100 * done / total_)
            << std::flush;
}

}  // namespace wp::loadgen
