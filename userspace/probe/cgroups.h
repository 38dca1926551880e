// SPDX-License-Identifier: Apache-2.0
// cgroup v2 as the agent sees it: where the cgroup2 hierarchy is mounted, which cgroup
// --cgroup names, and the path of a cgroup the kernel names by id.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "probe/devices.h"

namespace wp {

// The cgroup2 mounts among `mounts`, those of the whole hierarchy (root "/") first. A hybrid
// host mounts it at /sys/fs/cgroup/unified, a unified one at /sys/fs/cgroup.
std::vector<MountEntry> cgroup2_mounts(const std::vector<MountEntry>& mounts);
// Where this host's cgroup2 hierarchy is mounted ("" without one).
std::string cgroup2_root();

// A cgroup named by --cgroup.
struct CgroupDir {
  std::string dir;       // its directory: the cgroup2 mount point and path
  std::string path;      // under the cgroup2 root: "/system.slice/x.service"; "/" for the root
  std::uint64_t id = 0;  // the directory's inode number, which is the kernel's cgroup id
};

// What --cgroup takes: a directory on a cgroup2 mount (/sys/fs/cgroup/unified/x); a path
// relative to the cgroup2 root (system.slice/x.service); or an absolute path that is on no
// cgroup2 mount, as /proc/PID/cgroup and systemd print it (/system.slice/x.service), also
// relative to the root. Throws Failure (usage) with one line: no cgroup2 mounted (cgroup v1
// only), or no such cgroup and where it was looked for.
CgroupDir resolve_cgroup(const std::string& arg, const std::vector<MountEntry>& mounts);

// What --container takes: a container's id or a prefix of it (as `docker ps` shows it), or its
// name for the runtimes that name containers by it (systemd-nspawn, LXC). The container is
// found by walking the cgroup2 hierarchy for the cgroups the runtimes make
// (container_of_cgroup); its own cgroup is what the kernel's filter holds. Throws Failure
// (usage) with one line: no cgroup2, nothing matches (and what the walk found, by runtime),
// or the prefix names more than one (and which).
CgroupDir resolve_container(const std::string& arg, const std::vector<MountEntry>& mounts);
// What --pod takes: a Kubernetes pod's uid or a prefix of it, or its name ("api-7f9", or
// "shop/api-7f9" with its namespace) where its containers' runtime state says it; its cgroup
// (the containers are below it) is found and filtered as --container's.
CgroupDir resolve_pod(const std::string& arg, const std::vector<MountEntry>& mounts);
// What --namespace takes: a Kubernetes namespace; the cgroups of its pods on this node, as the
// runtime's state names them, at most WP_MAX_FILTER_CGROUPS. Throws Failure (usage) with one
// line: no cgroup2, no pod of that namespace (and which namespaces the pods found are in), or
// more pods than the kernel's filter holds.
std::vector<CgroupDir> resolve_namespace(const std::string& arg,
                                         const std::vector<MountEntry>& mounts);

// The containers and pods the cgroup2 hierarchy holds now, for doctor; nullopt without cgroup2.
struct ContainerCensus {
  std::string root;                               // the cgroup2 mount walked
  std::map<std::string, std::size_t> by_runtime;  // containers, by runtime name
  std::size_t pods = 0;
};
std::optional<ContainerCensus> count_containers(const std::vector<MountEntry>& mounts);

// The path under the cgroup2 root ("/a/b") of a cgroup id, from a walk of the mount's
// directories, done once and again when an id is not known (a cgroup made since). An id no
// walk finds (a cgroup removed before it was looked up) is not walked for again.
class CgroupPaths {
 public:
  explicit CgroupPaths(std::string mount_point) : mount_point_(std::move(mount_point)) {}
  // The first cgroup2 mount of /proc/self/mountinfo; none on a host with cgroup v1 only.
  static std::optional<CgroupPaths> of_this_host();

  std::optional<std::string> path_of(std::uint64_t id);
  std::size_t walks() const { return walks_; }

 private:
  void walk();

  std::string mount_point_;
  std::unordered_map<std::uint64_t, std::string> paths_;
  std::unordered_set<std::uint64_t> missing_;
  std::size_t walks_ = 0;
};

}  // namespace wp
