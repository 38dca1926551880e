// SPDX-License-Identifier: Apache-2.0
// Where a file a process names in its own mount namespace is, as the agent (the host) names
// it. The kernel-side path walk follows the writer's own mount tree, so a container's item
// says "/data/x" (its root is the namespace's root mount) and a bind-mounted volume's
// "/var/lib/mysql/ibdata1": the application's view. The host's view of the same file comes
// from the two mount tables: the mount the path is under in theirs gives the path inside its
// file system, and a mount of that file system in ours that shows that place gives the host
// path. An overlay only the container mounted (its root) is not in ours: its upper directory
// is, and a copied-up file's data is there.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "probe/devices.h"

namespace wp {

// The path `path`, a file of device `dev` (as stat() shows it) named in the mounts `theirs`, as
// the mounts `ours` name it; `backing_dev` is an overlay file's upper file's device (0
// otherwise), for an overlay not mounted in ours. nullopt when ours shows no such place.
std::optional<std::string> translate_path(const std::string& path, DevT dev, DevT backing_dev,
                                          const std::vector<MountEntry>& theirs,
                                          const std::vector<MountEntry>& ours);

// Each traced process's mount namespace, noted while it lives (/proc/PID/ns/mnt), and its
// mount table when that is not the agent's namespace (/proc/PID/mountinfo). A process gone
// before its first record is decoded (a short `dd` in a container) is read through another
// process of its container's cgroup, which shares its namespace as a container's processes
// do; with none left, it has no host path.
class HostPaths {
 public:
  // `cgroup2` is where the cgroup2 hierarchy is mounted ("" if it is not).
  explicit HostPaths(std::string proc = "/proc", std::string cgroup2 = "");

  // A record of process `pid` decoded, stamped `at` (ns): at its first its namespace is looked
  // up, while it runs; after that, at most once per kRecheckNs, whether the pid now names a
  // process in another namespace (the pid reused, or the process unshared its mounts), which
  // is then read afresh.
  void note_process(std::uint32_t pid, std::uint64_t at);
  static constexpr std::uint64_t kRecheckNs = 1'000'000'000;
  // The host's path of `path` (named by process `pid`, whose container's cgroup is
  // `container_cgroup`, "" for none); nullopt when the process shares the agent's mount
  // namespace, is not known, or the host shows no such place. Cached per namespace and path.
  std::optional<std::string> host_path(std::uint32_t pid, const std::string& container_cgroup,
                                       DevT dev, DevT backing_dev, const std::string& path);

 private:
  struct Namespace {
    std::string text;  // its mountinfo, as read
    std::vector<MountEntry> mounts;
    std::unordered_map<std::string, std::optional<std::string>> translated;
  };

  struct Process {
    bool known = false;             // false: gone before it was noted
    std::shared_ptr<Namespace> ns;  // null: the agent's own namespace
    std::uint64_t ns_inode = 0;     // its /proc/PID/ns/mnt's, when read
    std::uint64_t checked_at = 0;   // the record time it was last read or checked at
  };
  // Reads pid's namespace; nullopt when the process is gone.
  std::optional<Process> read_process(std::uint32_t pid);
  // A live process of the container's cgroup (or a cgroup below it), read.
  std::optional<Process> member_of(const std::string& container_cgroup);

  std::string proc_;
  std::string cgroup2_;
  std::uint64_t own_ns_ = 0;
  std::vector<MountEntry> own_mounts_;
  std::unordered_map<std::uint32_t, Process> by_pid_;
  std::unordered_map<std::uint64_t, std::shared_ptr<Namespace>> by_ns_;
};

}  // namespace wp
