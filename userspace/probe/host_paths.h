// SPDX-License-Identifier: Apache-2.0
// Where a file a process names in its own mount namespace is, as the agent (the host) names
// it. The kernel-side path walk follows the writer's own mount tree, so a container's item
// says "/data/x" (its root is the namespace's root mount) and a bind-mounted volume's
// "/var/lib/mysql/ibdata1": the application's view. The host's view of the same file comes
// from the two mount tables: the mount the path is under in theirs gives the path inside its
// file system, and a mount of that file system in ours that shows that place gives the host
// path. An overlay only the container mounted (its root) is not in ours: its upper directory
// is, and a copied-up file's data is there. A chroot'ed writer (runc's no_pivot_root, build
// sandboxes) sees its path from its root; the walk also gives the path from its namespace's
// root, which is the host's in the agent's own namespace and is translated in another.
#pragma once

#include <cstdint>
#include <functional>
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

// The mount table (mountinfo text) of process `pid`'s whole mount namespace, as a process at
// the namespace's root sees it; nullopt when it cannot be read. /proc/PID/mountinfo is
// relative to the process's own root: a chroot'ed process's lists only the mounts below its
// root, not the one holding it. Read by a short-lived thread that enters the namespace
// (setns() puts it at the namespace's root).
std::optional<std::string> namespace_mountinfo(const std::string& proc, std::uint32_t pid);
using NamespaceMountinfo =
    std::function<std::optional<std::string>(const std::string& proc, std::uint32_t pid)>;

// Each traced process's mount namespace, noted while it lives (/proc/PID/ns/mnt), and its
// mount table when that is not the agent's namespace (/proc/PID/mountinfo; and, when its root
// is not the namespace's, the namespace's whole table). A process gone before its first record
// is decoded (a short `dd` in a container, a compiler in a build sandbox) is found through the
// whole table of the namespace its path record named, read through another process still in
// it, or else through another process of its container's cgroup, which shares its namespace
// as a container's processes do; with neither, it has no host path.
class HostPaths {
 public:
  // `cgroup2` is where the cgroup2 hierarchy is mounted ("" if it is not); `whole` reads a
  // namespace's whole table (tests pass a fake, as they pass a fake `proc`).
  explicit HostPaths(std::string proc = "/proc", std::string cgroup2 = "",
                     NamespaceMountinfo whole = namespace_mountinfo);

  // A record of process `pid` decoded, stamped `at` (ns): at its first its namespace is looked
  // up, while it runs; after that, at most once per kRecheckNs, whether the pid now names a
  // process in another namespace or with another root (the pid reused, or the process
  // unshared its mounts or chroot'ed), which is then read afresh.
  void note_process(std::uint32_t pid, std::uint64_t at);
  static constexpr std::uint64_t kRecheckNs = 1'000'000'000;
  // The host's path of `path` (named by process `pid`, whose container's cgroup is
  // `container_cgroup`, "" for none), `ns_path` the same file from its namespace's root when
  // its root is elsewhere (SyscallEvent::ns_path, "" otherwise), `mnt_ns` that namespace as
  // the kernel said (0: not known); nullopt when the host names it `path` too, the process is
  // not known, or the host shows no such place. Cached per namespace and path.
  std::optional<std::string> host_path(std::uint32_t pid, const std::string& container_cgroup,
                                       DevT dev, DevT backing_dev, const std::string& path,
                                       const std::string& ns_path = "", std::uint32_t mnt_ns = 0);

 private:
  struct Namespace {
    std::string text;  // its mountinfo, as read
    std::vector<MountEntry> mounts;
    std::unordered_map<std::string, std::optional<std::string>> translated;
    // A table read from a root that is not the namespace's (a chroot's): the namespace's
    // whole table, read with it (null when it could not be).
    std::shared_ptr<Namespace> whole;
  };

  struct Process {
    bool known = false;             // false: gone before it was noted
    std::shared_ptr<Namespace> ns;  // null: the agent's own namespace
    std::uint64_t ns_inode = 0;     // its /proc/PID/ns/mnt's, when read
    std::string root;               // its /proc/PID/root, as the agent reads it ("/": none)
    std::uint64_t checked_at = 0;   // the record time it was last read or checked at
  };
  // Reads pid's namespace; nullopt when the process is gone.
  std::optional<Process> read_process(std::uint32_t pid);
  // The place `path` names in `ns`'s table, as the host names it (cached in `ns`).
  std::optional<std::string> translated(Namespace& ns, DevT dev, DevT backing_dev,
                                        const std::string& path);
  // A live process of the container's cgroup (or a cgroup below it), read.
  std::optional<Process> member_of(const std::string& container_cgroup);
  // The host's path of `in_namespace`, a path from the root of namespace `mnt_ns` (the
  // kernel's number), through that namespace's whole table as read through a process still
  // in it; nullopt without one.
  std::optional<std::string> through_namespace(std::uint32_t mnt_ns, DevT dev, DevT backing_dev,
                                               const std::string& in_namespace);

  std::string proc_;
  std::string cgroup2_;
  NamespaceMountinfo whole_;
  std::uint64_t own_ns_ = 0;
  std::vector<MountEntry> own_mounts_;
  std::unordered_map<std::uint32_t, Process> by_pid_;
  std::unordered_map<std::uint64_t, std::shared_ptr<Namespace>> by_ns_;
  // Each other namespace's whole table as last read, and the processes it was read through
  // (its number names that namespace only while someone is in it). Any of them still there
  // keeps it: the last one read is often a short step (a readlink, a dd) gone before the
  // items that need the table are named, while the shell that ran it is still there.
  struct WholeTable {
    std::shared_ptr<Namespace> table;
    std::vector<std::uint32_t> read_through;
  };
  static constexpr std::size_t kReadersKept = 16;
  bool in_namespace_now(std::uint32_t pid, std::uint64_t ns) const;
  void note_reader(WholeTable& entry, std::uint32_t pid, std::uint64_t ns) const;
  std::unordered_map<std::uint64_t, WholeTable> whole_by_ns_;
};

}  // namespace wp
