// SPDX-License-Identifier: Apache-2.0
// A container's name, and its pod's name and namespace on Kubernetes, from what its runtime
// keeps on disk, with no daemon asked: docker's config.v2.json, podman's containers.json,
// containerd's and CRI-O's OCI bundle configs (the Kubernetes annotations the CRI plugins
// write). systemd-nspawn and LXC name containers by their id. Anything missing or unreadable
// leaves the field empty: the id is always there.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/container.h"

namespace wp {

// What the runtime's state under `root` ("/" on a live host) says of `container`.
ContainerNames container_names(const Container& container, const std::string& root = "/");

// The hostname of process `pid`'s UTS namespace (`proc` is where procfs is mounted); "" when
// it is gone or the agent may not enter its namespace (setns needs CAP_SYS_ADMIN).
std::string uts_hostname(std::uint32_t pid, const std::string& proc = "/proc");

// A process of the cgroup `cgroup` (its path under the cgroup2 root `cgroup2`) or of a cgroup
// below it for which `wanted` holds, the cgroup's own first (podman puts its processes in a
// "container" child); nullopt for none.
std::optional<std::uint32_t> member_of_cgroup(const std::string& cgroup2, const std::string& cgroup,
                                              const std::function<bool(std::uint32_t)>& wanted);

// What this host says of the cgroup at `cgroup_path` (under the cgroup2 root `cgroup2`, "" when
// not mounted) if it is a container's: its runtime's names (container_names) and the hostname
// one of its processes sees. Empty for a host cgroup. Read once per cgroup: not on a hot path.
ContainerNames host_container_names(const std::string& cgroup_path, const std::string& cgroup2);

}  // namespace wp
