// SPDX-License-Identifier: Apache-2.0
// Which container a cgroup is, read from its path by each runtime's naming rules, with no
// daemon asked: the id and runtime, and on Kubernetes the pod's uid and QoS class. Names (the
// container's, the pod's) come from elsewhere when they can be had; the id is always there.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace wp {

enum class ContainerRuntime : std::uint8_t { Docker, Containerd, CriO, Podman, Nspawn, Lxc };
// "docker", "containerd", "cri-o", "podman", "systemd-nspawn", "lxc".
const char* container_runtime_name(ContainerRuntime runtime);

enum class PodQos : std::uint8_t { None, Guaranteed, Burstable, BestEffort };
// "guaranteed", "burstable", "besteffort" (as the kubepods hierarchy spells them); "" for None.
const char* pod_qos_name(PodQos qos);

struct Container {
  // The runtime's id: 64 hex digits for docker, containerd, CRI-O and podman; the machine's
  // name for systemd-nspawn, the container's for LXC.
  std::string id;
  ContainerRuntime runtime = ContainerRuntime::Docker;
  // The container's own cgroup, under the cgroup2 root ("/system.slice/docker-3f9c….scope"):
  // its processes are in it or below it (podman's ".../container", a nested runtime's).
  std::string cgroup;
  // Kubernetes: the pod's uid ("8c1d0f2e-…", dashes as the API prints it) and QoS class, from
  // the kubepods hierarchy; "" and None outside a pod.
  std::string pod_uid;
  PodQos qos = PodQos::None;
  // What the runtime's state on disk names them (probe/container_names.h), filled in by a live
  // trace; "" when not known. systemd-nspawn and LXC containers are named by their id.
  std::string name;
  std::string pod_name;
  std::string pod_namespace;
  // The hostname its UTS namespace holds ("" when not read): a pod's containers share the
  // pod's, which is the pod's name; docker's is the short id unless the container was given one.
  std::string hostname;

  // The first 12 digits of a hexadecimal id, as `docker ps` shows it; a name as it is.
  std::string_view short_id() const;
  // Its name when known, else its short id: how text output names it.
  std::string_view label() const { return name.empty() ? short_id() : std::string_view(name); }
  bool operator==(const Container&) const = default;
};

// What the host, rather than the cgroup path, says of a container: its runtime's state on disk
// (probe/container_names.h) and its UTS namespace. Every field is "" when not known.
struct ContainerNames {
  std::string name;        // "web", as `docker ps` shows it (no leading '/')
  std::string pod;         // Kubernetes: the pod's name
  std::string namespace_;  // Kubernetes: the pod's namespace
  std::string hostname;    // its UTS namespace's, from one of its processes
  bool empty() const {
    return name.empty() && pod.empty() && namespace_.empty() && hostname.empty();
  }
  bool operator==(const ContainerNames&) const = default;
};

// The container whose cgroup `path` (under the cgroup2 root, or a cgroup v1 hierarchy's path as
// /proc/PID/cgroup prints it) is or is below; nullopt for a host cgroup. The innermost match
// wins (a runtime nested in a container). Both cgroup drivers: systemd's units
// ("docker-ID.scope", "cri-containerd-ID.scope", "crio-ID.scope", "libpod-ID.scope",
// "nerdctl-ID.scope", "systemd-nspawn@NAME.service", "machine-NAME.scope") and cgroupfs's
// directories ("/docker/ID", "/libpod_parent/libpod-ID", "/kubepods/burstable/podUID/ID",
// "/lxc/NAME", "/lxc.payload.NAME"). A runtime's own helpers (conmon, the LXC monitor) are not
// containers.
std::optional<Container> container_of_cgroup(std::string_view path);

// A Kubernetes pod, from the kubepods hierarchy.
struct Pod {
  std::string uid;  // as the API prints it, with dashes
  PodQos qos = PodQos::None;
  std::string cgroup;  // the pod's own cgroup, under the cgroup2 root
  bool operator==(const Pod&) const = default;
};

// The pod whose cgroup `path` is or is below; nullopt outside the kubepods hierarchy.
std::optional<Pod> pod_of_cgroup(std::string_view path);

}  // namespace wp
