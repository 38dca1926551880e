// A container's name, and its pod's name and namespace on Kubernetes, from what its runtime
// keeps on disk, with no daemon asked: docker's config.v2.json, podman's containers.json,
// containerd's and CRI-O's OCI bundle configs (the Kubernetes annotations the CRI plugins
// write). systemd-nspawn and LXC name containers by their id. Anything missing or unreadable
// leaves the field empty: the id is always there.
#pragma once

#include <string>

#include "common/container.h"

namespace wp {

struct ContainerNames {
  std::string name;        // "web", as `docker ps` shows it (no leading '/')
  std::string pod;         // Kubernetes: the pod's name
  std::string namespace_;  // Kubernetes: the pod's namespace
  bool operator==(const ContainerNames&) const = default;
};

// What the runtime's state under `root` ("/" on a live host) says of `container`.
ContainerNames container_names(const Container& container, const std::string& root = "/");

}  // namespace wp
