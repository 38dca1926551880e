#include "probe/container_names.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

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
      return ContainerNames{.name = container.id, .pod = "", .namespace_ = ""};
  }
  return {};
}

}  // namespace wp
