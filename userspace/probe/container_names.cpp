// SPDX-License-Identifier: Apache-2.0
#include "probe/container_names.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/fd.h"

namespace wp {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The JSON document at `path`; null when it is missing or not JSON.
json read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
  return doc.is_discarded() ? json(nullptr) : doc;
}

std::string text_at(const json& object, const char* key) {
  if (!object.is_object()) return "";
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// An OCI bundle's config.json as the CRI plugins annotate it: containerd's and CRI-O's keys
// differ; nerdctl writes its own name.
ContainerNames from_oci_config(const json& config) {
  const json annotations =
      config.is_object() && config.contains("annotations") ? config["annotations"] : json(nullptr);
  ContainerNames names;
  for (const char* key :
       {"io.kubernetes.cri.container-name", "io.kubernetes.container.name", "nerdctl/name"}) {
    if (names.name.empty()) names.name = text_at(annotations, key);
  }
  for (const char* key : {"io.kubernetes.cri.sandbox-name", "io.kubernetes.pod.name"}) {
    if (names.pod.empty()) names.pod = text_at(annotations, key);
  }
  for (const char* key : {"io.kubernetes.cri.sandbox-namespace", "io.kubernetes.pod.namespace"}) {
    if (names.namespace_.empty()) names.namespace_ = text_at(annotations, key);
  }
  return names;
}

ContainerNames docker_names(const Container& c, const fs::path& root) {
  const json config = read_json(root / "var/lib/docker/containers" / c.id / "config.v2.json");
  ContainerNames names;
  names.name = text_at(config, "Name");
  if (names.name.starts_with('/')) names.name.erase(0, 1);
  // dockershim's pods: the kubelet's labels on the container.
  const json inner = config.is_object() ? config.value("Config", json()) : json();
  const json labels = inner.is_object() ? inner.value("Labels", json()) : json();
  names.pod = text_at(labels, "io.kubernetes.pod.name");
  names.namespace_ = text_at(labels, "io.kubernetes.pod.namespace");
  return names;
}

ContainerNames podman_names(const Container& c, const fs::path& root) {
  const json all =
      read_json(root / "var/lib/containers/storage/overlay-containers/containers.json");
  ContainerNames names;
  if (!all.is_array()) return names;
  for (const json& entry : all) {
    if (text_at(entry, "id") != c.id) continue;
    if (entry.contains("names") && entry["names"].is_array() && !entry["names"].empty() &&
        entry["names"][0].is_string())
      names.name = entry["names"][0].get<std::string>();
    break;
  }
  return names;
}

ContainerNames containerd_names(const Container& c, const fs::path& root) {
  // One directory per containerd namespace ("k8s.io" for the CRI plugin, "moby", "default").
  const fs::path tasks = root / "run/containerd/io.containerd.runtime.v2.task";
  std::error_code ec;
  for (const auto& ns : fs::directory_iterator(tasks, ec)) {
    const json config = read_json(ns.path() / c.id / "config.json");
    if (!config.is_null()) return from_oci_config(config);
  }
  return {};
}

ContainerNames crio_names(const Container& c, const fs::path& root) {
  return from_oci_config(read_json(root / "run/containers/storage/overlay-containers" / c.id /
                                   "userdata/config.json"));
}

}  // namespace

ContainerNames container_names(const Container& container, const std::string& root) {
  const fs::path base(root);
  switch (container.runtime) {
    case ContainerRuntime::Docker: return docker_names(container, base);
    case ContainerRuntime::Podman: return podman_names(container, base);
    case ContainerRuntime::Containerd: return containerd_names(container, base);
    case ContainerRuntime::CriO: return crio_names(container, base);
    case ContainerRuntime::Nspawn:
    case ContainerRuntime::Lxc:
      return ContainerNames{.name = container.id, .pod = "", .namespace_ = "", .hostname = ""};
  }
  return {};
}

std::string uts_hostname(std::uint32_t pid, const std::string& proc) {
  const std::string link = proc + "/" + std::to_string(pid) + "/ns/uts";
  const UniqueFd ns(::open(link.c_str(), O_RDONLY | O_CLOEXEC));
  if (ns.get() < 0) return "";
  // A thread of its own enters the namespace and ends there: the agent's other threads, and
  // this one's caller, stay in theirs (a UTS namespace is per thread, unlike a mount one).
  std::string hostname;
  std::thread reader([&] {
    struct utsname names {};
    if (::setns(ns.get(), CLONE_NEWUTS) == 0 && ::uname(&names) == 0) hostname = names.nodename;
  });
  reader.join();
  return hostname;
}

std::optional<std::uint32_t> member_of_cgroup(const std::string& cgroup2, const std::string& cgroup,
                                              const std::function<bool(std::uint32_t)>& wanted) {
  if (cgroup2.empty() || cgroup.empty()) return std::nullopt;
  std::error_code ec;
  const fs::path root = fs::path(cgroup2) / fs::path(cgroup).relative_path();
  // The cgroup itself first, then those below it; a bounded look (a runtime nested in a
  // container could have many).
  constexpr std::size_t kMaxCgroups = 64;
  std::vector<fs::path> dirs = {root};
  for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec),
       end;
       it != end && dirs.size() < kMaxCgroups; it.increment(ec)) {
    if (ec) break;
    if (it->is_directory(ec)) dirs.push_back(it->path());
  }
  for (const fs::path& dir : dirs) {
    std::ifstream procs(dir / "cgroup.procs");
    for (std::uint32_t pid; procs >> pid;)
      if (wanted(pid)) return pid;
  }
  return std::nullopt;
}

namespace {

std::uint64_t inode_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_ino) : 0;
}

}  // namespace

ContainerNames host_container_names(const std::string& cgroup_path, const std::string& cgroup2) {
  const auto container = container_of_cgroup(cgroup_path);
  if (!container) return {};
  ContainerNames names = container_names(*container);
  // A process in the agent's own UTS namespace is a runtime's helper (a shim, conmon, unshare
  // waiting for its child), or a container sharing the host's: its hostname is not the
  // container's own.
  const std::uint64_t own = inode_of("/proc/self/ns/uts");
  const auto member = member_of_cgroup(cgroup2, container->cgroup, [own](std::uint32_t pid) {
    const std::uint64_t ns = inode_of("/proc/" + std::to_string(pid) + "/ns/uts");
    return ns != 0 && ns != own;
  });
  if (member) names.hostname = uts_hostname(*member);
  return names;
}

}  // namespace wp
