// SPDX-License-Identifier: Apache-2.0
#include "common/container.h"

#include <algorithm>
#include <vector>

namespace wp {

const char* container_runtime_name(ContainerRuntime runtime) {
  switch (runtime) {
    case ContainerRuntime::Docker: return "docker";
    case ContainerRuntime::Containerd: return "containerd";
    case ContainerRuntime::CriO: return "cri-o";
    case ContainerRuntime::Podman: return "podman";
    case ContainerRuntime::Nspawn: return "systemd-nspawn";
    case ContainerRuntime::Lxc: return "lxc";
  }
  return "?";
}

const char* pod_qos_name(PodQos qos) {
  switch (qos) {
    case PodQos::None: return "";
    case PodQos::Guaranteed: return "guaranteed";
    case PodQos::Burstable: return "burstable";
    case PodQos::BestEffort: return "besteffort";
  }
  return "";
}

std::string_view Container::short_id() const {
  const bool hex = id.size() == 64;
  return hex ? std::string_view(id).substr(0, 12) : std::string_view(id);
}

namespace {

bool is_hex_id(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool take_prefix(std::string_view& s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

bool take_suffix(std::string_view& s, std::string_view suffix) {
  if (!s.ends_with(suffix)) return false;
  s.remove_suffix(suffix.size());
  return true;
}

// systemd escapes a unit name's '-' (and other bytes) as "\xNN".
std::string systemd_unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x') {
      const auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
      };
      const int hi = nibble(s[i + 2]), lo = nibble(s[i + 3]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

// A pod's uid as the API prints it: the systemd driver's slice names write its dashes as '_'.
std::string pod_uid_of(std::string_view uid) {
  std::string out(uid);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

struct Match {
  std::string id;
  ContainerRuntime runtime;
};

// The container one path component names, given the component before it (cgroupfs drivers name
// the runtime in the parent directory: "/docker/ID", "/lxc/NAME").
std::optional<Match> container_component(std::string_view c, std::string_view parent, bool in_pod) {
  std::string_view s = c;
  // systemd driver: a transient scope per container.
  if (take_suffix(s, ".scope")) {
    const std::pair<std::string_view, ContainerRuntime> scopes[] = {
        {"docker-", ContainerRuntime::Docker},
        {"cri-containerd-", ContainerRuntime::Containerd},
        {"nerdctl-", ContainerRuntime::Containerd},
        {"crio-", ContainerRuntime::CriO},
        {"libpod-", ContainerRuntime::Podman},
    };
    for (const auto& [prefix, runtime] : scopes) {
      std::string_view id = s;
      // "crio-conmon-ID.scope" and "libpod-conmon-ID.scope" hold the runtime's monitor.
      if (take_prefix(id, prefix) && is_hex_id(id)) return Match{std::string(id), runtime};
    }
    // systemd-machined registers an nspawn container as "machine-NAME.scope"; libvirt's
    // machines share the prefix ("machine-qemu\x2d1\x2dvm.scope") and are not containers.
    std::string_view name = s;
    if (take_prefix(name, "machine-") && !name.empty()) {
      std::string machine = systemd_unescape(name);
      if (!machine.starts_with("qemu-") && !machine.starts_with("lxc-"))
        return Match{std::move(machine), ContainerRuntime::Nspawn};
    }
    return std::nullopt;
  }
  if (take_prefix(s, "systemd-nspawn@") && take_suffix(s, ".service") && !s.empty())
    return Match{systemd_unescape(s), ContainerRuntime::Nspawn};
  // cgroupfs driver.
  if (is_hex_id(c)) {
    if (parent == "docker") return Match{std::string(c), ContainerRuntime::Docker};
    // Under a pod: the CRI runtime's container (containerd names it by its bare id).
    if (in_pod) return Match{std::string(c), ContainerRuntime::Containerd};
    return std::nullopt;
  }
  s = c;
  if (take_prefix(s, "crio-") && is_hex_id(s)) return Match{std::string(s), ContainerRuntime::CriO};
  s = c;
  if (take_prefix(s, "libpod-") && is_hex_id(s))
    return Match{std::string(s), ContainerRuntime::Podman};
  s = c;
  // LXC 4 and later: "lxc.payload.NAME" ("lxc.monitor.NAME" is its monitor); before: /lxc/NAME.
  if (take_prefix(s, "lxc.payload.") && !s.empty())
    return Match{std::string(s), ContainerRuntime::Lxc};
  if (parent == "lxc" && !c.starts_with("lxc."))
    return Match{std::string(c), ContainerRuntime::Lxc};
  return std::nullopt;
}

}  // namespace

namespace {

// What a cgroup path says, component by component: the pod it is in (or is), and the
// innermost container it is in (or is).
struct PathReading {
  std::optional<Pod> pod;
  std::optional<Container> container;
};

PathReading read_cgroup_path(std::string_view path) {
  PathReading r;
  std::string_view parent;
  std::string cgroup;  // the path up to the component being read
  bool in_kubepods = false;
  PodQos qos = PodQos::None;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    const std::string_view c = path.substr(start, slash - start);
    start = slash + 1;
    if (c.empty()) continue;
    cgroup += '/';
    cgroup += c;
    // Kubernetes: /kubepods[/QOS]/podUID/… (cgroupfs) or /kubepods.slice[/kubepods-QOS.slice]/
    // kubepods[-QOS]-podUID.slice/… (systemd); a pod straight under kubepods is Guaranteed.
    const bool before_pod = in_kubepods && !r.pod;
    std::string_view s = c;
    if (c == "kubepods" || c == "kubepods.slice") {
      in_kubepods = true;
      qos = PodQos::Guaranteed;
    } else if (before_pod && (c == "burstable" || c == "kubepods-burstable.slice")) {
      qos = PodQos::Burstable;
    } else if (before_pod && (c == "besteffort" || c == "kubepods-besteffort.slice")) {
      qos = PodQos::BestEffort;
    } else if (before_pod && take_prefix(s, "pod") && !s.empty()) {
      r.pod = Pod{pod_uid_of(s), qos, cgroup};
    } else if (before_pod && take_prefix(s, "kubepods-") && take_suffix(s, ".slice")) {
      take_prefix(s, "burstable-") || take_prefix(s, "besteffort-");
      if (take_prefix(s, "pod") && !s.empty()) r.pod = Pod{pod_uid_of(s), qos, cgroup};
    } else if (auto m = container_component(c, parent, r.pod.has_value())) {
      Container container;
      container.id = std::move(m->id);
      container.runtime = m->runtime;
      container.cgroup = cgroup;
      if (r.pod) {
        container.pod_uid = r.pod->uid;
        container.qos = r.pod->qos;
      }
      r.container = std::move(container);
    }
    parent = c;
  }
  return r;
}

}  // namespace

std::optional<Container> container_of_cgroup(std::string_view path) {
  return read_cgroup_path(path).container;
}

std::optional<Pod> pod_of_cgroup(std::string_view path) {
  return read_cgroup_path(path).pod;
}

}  // namespace wp
