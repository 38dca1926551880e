// SPDX-License-Identifier: Apache-2.0
// Where a scenario runs: its workspace (a directory it owns, on a scratch filesystem or one
// the user named), interruption, progress, and the measurements every scenario shares.
#pragma once

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "loadgen/trace_phase.h"

namespace wp::loadgen {

// Thrown out of a scenario when the user pressed Ctrl-C or sent SIGTERM; the workspace,
// sysctl overrides and threads unwind through their destructors.
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

// A failure of the scenario's own I/O (ENOSPC, EIO...): reported, exit 1.
class LoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Blocks SIGINT and SIGTERM for the process while alive (threads started meanwhile inherit
// the mask); `pending()` asks the kernel whether one arrived. No handler, no global flag.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  bool pending() const;

 private:
  sigset_t previous_{};
};

struct WorkspaceOptions {
  std::optional<std::string> dir;  // --dir: new or empty directory
  std::string fs = "ext4";         // --fs: scratch filesystem type when no --dir
  std::uint64_t fs_size = 0;       // --fs-size; 0 = sized from the scenario's needs
  bool keep = false;               // --keep: leave created files (and a --dir) in place
};

// The directory a scenario writes in. With --dir, only files created through path() are
// removed afterwards; otherwise a loop-device filesystem with a journal is made, mounted and
// torn down again.
class Workspace {
 public:
  Workspace(const WorkspaceOptions& options, std::uint64_t space_needed);
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  // A path for a file the scenario creates (recorded for removal).
  std::filesystem::path path(const std::string& name);
  std::string device() const { return loop_; }  // the loop device, "" with --dir
  std::string describe() const;                 // "scratch ext4 (256 MiB) on /dev/loop3"

 private:
  void make_scratch(const WorkspaceOptions& options, std::uint64_t size);
  void teardown() noexcept;

  std::filesystem::path dir_;
  std::filesystem::path scratch_root_;  // image + mount point, scratch only
  std::string loop_;
  std::string fs_;
  std::uint64_t fs_size_ = 0;
  bool mounted_ = false;
  bool created_dir_ = false;
  bool keep_ = false;
  std::vector<std::filesystem::path> created_;
};

// A directory seen through a FUSE file system: Debian's bindfs, mounted on a directory of its
// own under /tmp with the kernel's readahead for it held to `max_readahead` bytes, unmounted
// (and its directory removed) when this goes. Slow storage within reach: every read the page
// cache misses is a round trip to the daemon, a page at a time with max_readahead 4096, as
// mmap over network storage reads.
class FuseMount {
 public:
  FuseMount(const std::filesystem::path& source, std::uint64_t max_readahead);
  ~FuseMount();
  FuseMount(const FuseMount&) = delete;
  FuseMount& operator=(const FuseMount&) = delete;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

// A progress bar on stderr for runs longer than about a second, when stdout is a terminal.
class Progress {
 public:
  Progress(std::string label, std::uint64_t total, bool enabled);
  ~Progress();
  void update(std::uint64_t done);

 private:
  std::string label_;
  std::uint64_t total_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

class LoadContext {
 public:
  // No progress bar under a tracer: its writes to the terminal would be traced too.
  LoadContext(Workspace& workspace, const InterruptGuard& interrupts, TracePhaseMarker& marker,
              bool progress)
      : workspace_(workspace),
        interrupts_(interrupts),
        marker_(marker),
        progress_(progress && !marker.under_tracer()) {}

  Workspace& workspace() { return workspace_; }
  // Every scenario opens one around its measured part, once its files are laid out; the
  // calling thread is named `role` meanwhile ("wal-writer"), as is every thread it starts
  // until they name themselves (name_this_thread).
  MeasuredPhase measured_phase(const std::string& role) { return MeasuredPhase(marker_, role); }
  // Throws Interrupted if the user asked to stop; call it in every loop.
  void check_interrupt() const {
    if (interrupts_.pending()) throw Interrupted();
  }
  Progress progress(const std::string& label, std::uint64_t total) const {
    return Progress(label, total, progress_);
  }

 private:
  Workspace& workspace_;
  const InterruptGuard& interrupts_;
  TracePhaseMarker& marker_;
  bool progress_;
};

}  // namespace wp::loadgen
