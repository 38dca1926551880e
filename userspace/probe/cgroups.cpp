// SPDX-License-Identifier: Apache-2.0
#include "probe/cgroups.h"

#include <sys/stat.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "common/container.h"
#include "common/errors.h"
#include "probe/container_names.h"
#include "writepath.h"

namespace wp {
namespace fs = std::filesystem;

std::vector<MountEntry> cgroup2_mounts(const std::vector<MountEntry>& mounts) {
  std::vector<MountEntry> found;
  for (const auto& m : mounts)
    if (m.type == "cgroup2") found.push_back(m);
  std::stable_partition(found.begin(), found.end(),
                        [](const MountEntry& m) { return m.root == "/"; });
  return found;
}

std::string cgroup2_root() {
  const std::vector<MountEntry> mounts = cgroup2_mounts(read_mountinfo());
  return mounts.empty() ? std::string() : mounts.front().mount_point;
}

namespace {

// "/" + the components of `relative` ("." and "" are the root).
std::string under_root(const fs::path& relative) {
  const std::string text = relative.generic_string();
  if (text.empty() || text == ".") return "/";
  return "/" + text;
}

// Whether `path` is `base` or below it, lexically; `relative` gets the rest.
bool lexically_under(const fs::path& path, const fs::path& base, fs::path& relative) {
  relative = path.lexically_relative(base);
  return !relative.empty() && *relative.begin() != "..";
}

bool is_cgroup_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::exists(dir / "cgroup.procs", ec);
}

CgroupDir cgroup_at(const fs::path& dir, const fs::path& relative) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    throw Failure(kExitUsage, fmt::format("--cgroup: cannot stat {}", dir.string()));
  return CgroupDir{dir.string(), under_root(relative), static_cast<std::uint64_t>(st.st_ino)};
}

}  // namespace

CgroupDir resolve_cgroup(const std::string& arg, const std::vector<MountEntry>& mounts) {
  const std::vector<MountEntry> cgroup2 = cgroup2_mounts(mounts);
  if (cgroup2.empty()) {
    const bool v1 = std::any_of(mounts.begin(), mounts.end(),
                                [](const MountEntry& m) { return m.type == "cgroup"; });
    throw Failure(kExitUsage,
                  fmt::format("--cgroup {}: no cgroup2 file system is mounted{}; --cgroup needs "
                              "cgroup v2",
                              arg, v1 ? " (this host has cgroup v1 only)" : ""));
  }
  const fs::path path = fs::path(arg).lexically_normal();
  fs::path relative;
  if (path.is_absolute()) {
    // A directory on a cgroup2 mount, by its full path.
    for (const auto& m : cgroup2) {
      if (!lexically_under(path, fs::path(m.mount_point).lexically_normal(), relative)) continue;
      if (!is_cgroup_dir(path))
        throw Failure(kExitUsage, fmt::format("--cgroup {}: no such cgroup (no cgroup directory "
                                              "{} on the cgroup2 mount {})",
                                              arg, path.string(), m.mount_point));
      return cgroup_at(path, relative);
    }
  }
  // Relative to the root of the hierarchy, with or without the leading "/".
  relative = path.relative_path();
  const fs::path& root = cgroup2.front().mount_point;
  if (!relative.empty() && *relative.begin() == "..")
    throw Failure(kExitUsage,
                  fmt::format("--cgroup {}: not under the cgroup2 root {}", arg, root.string()));
  const fs::path dir = (root / relative).lexically_normal();
  if (!is_cgroup_dir(dir))
    throw Failure(kExitUsage, fmt::format("--cgroup {}: no such cgroup (looked for {} under the "
                                          "cgroup2 root {})",
                                          arg, dir.string(), root.string()));
  return cgroup_at(dir, dir.lexically_relative(fs::path(root).lexically_normal()));
}

namespace {

// Every cgroup directory below the cgroup2 mount `root`, by its path under the root.
void for_each_cgroup(const fs::path& root,
                     const std::function<void(const std::string& path, const fs::path& dir)>& fn) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec),
       end;
       it != end; it.increment(ec)) {
    if (ec) break;
    if (it->is_directory(ec)) fn(under_root(it->path().lexically_relative(root)), it->path());
  }
}

// A cgroup that --container or --pod could name: its id (a container's id or name, a pod's
// uid), how to list it, and what kind of thing it is ("docker", "pod").
struct Candidate {
  std::string id;
  std::vector<std::string> names;  // matched whole, where the id is matched by prefix
  std::string label;
  std::string kind;
};

// The pod's name and namespace, from what the runtime keeps of its containers (the cgroups
// right below the pod's); empty when none says.
ContainerNames pod_names_at(const std::string& pod_path, const fs::path& pod_dir) {
  std::error_code ec;
  for (const auto& child : fs::directory_iterator(pod_dir, ec)) {
    if (!child.is_directory(ec)) continue;
    const auto container = container_of_cgroup(pod_path + "/" + child.path().filename().string());
    if (!container) continue;
    ContainerNames names = container_names(*container);
    if (!names.pod.empty()) return names;
  }
  return {};
}

// A pod cgroup as --pod and --namespace see it: its uid, and its name and namespace where
// its runtime's state says.
std::optional<Candidate> pod_candidate_at(const std::string& path, const fs::path& dir) {
  auto pod = pod_of_cgroup(path);
  if (!pod || pod->cgroup != path) return std::nullopt;
  const ContainerNames names = pod_names_at(path, dir);
  Candidate candidate{pod->uid, {}, pod->uid, "pod"};
  if (!names.pod.empty()) {
    candidate.names = {names.pod};
    const std::string qualified =
        names.namespace_.empty() ? names.pod : names.namespace_ + "/" + names.pod;
    if (qualified != names.pod) candidate.names.push_back(qualified);
    candidate.label = fmt::format("{} {}", pod->uid, qualified);
  }
  return candidate;
}

// The first cgroup2 mount, which --container, --pod and --namespace walk; `flag` `arg` in the
// one-line errors: no cgroup2, or no argument (`expected` says what it takes).
fs::path walk_root(const std::string& flag, const std::string& arg,
                   const std::vector<MountEntry>& mounts, const char* expected) {
  const std::vector<MountEntry> cgroup2 = cgroup2_mounts(mounts);
  if (cgroup2.empty())
    throw Failure(kExitUsage, fmt::format("{} {}: no cgroup2 file system is mounted; {} needs "
                                          "cgroup v2",
                                          flag, arg, flag));
  if (arg.empty()) throw Failure(kExitUsage, fmt::format("{}: expected {}", flag, expected));
  return fs::path(cgroup2.front().mount_point).lexically_normal();
}

// The one cgroup under the first cgroup2 mount that `candidate_at` says is a candidate whose id
// starts with `arg` (`flag` names the option in errors).
CgroupDir resolve_by_walk(
    const std::string& flag, const std::string& arg, const std::vector<MountEntry>& mounts,
    const std::function<std::optional<Candidate>(const std::string& path, const fs::path& dir)>&
        candidate_at) {
  const fs::path root = walk_root(flag, arg, mounts, "an id or a name");
  std::vector<std::pair<Candidate, fs::path>> matches;
  std::map<std::string, std::size_t> seen;  // candidates found, by kind
  for_each_cgroup(root, [&](const std::string& path, const fs::path& dir) {
    auto candidate = candidate_at(path, dir);
    if (!candidate) return;
    ++seen[candidate->kind];
    const auto& names = candidate->names;
    if (candidate->id.starts_with(arg) || std::find(names.begin(), names.end(), arg) != names.end())
      matches.emplace_back(std::move(*candidate), dir);
  });
  if (matches.size() == 1) {
    const fs::path& dir = matches.front().second;
    return cgroup_at(dir, dir.lexically_relative(root));
  }
  if (matches.empty()) {
    std::string found;
    for (const auto& [kind, n] : seen)
      found += fmt::format("{}{} {}", found.empty() ? "" : ", ", n, kind);
    throw Failure(kExitUsage,
                  fmt::format("{} {}: nothing has this id or name (found under {}: {})", flag, arg,
                              root.string(), found.empty() ? "none" : found));
  }
  std::string labels;
  for (const auto& [candidate, dir] : matches)
    labels += fmt::format("{}{}", labels.empty() ? "" : ", ", candidate.label);
  throw Failure(kExitUsage, fmt::format("{} {}: names {} of them: {}; give more of the id", flag,
                                        arg, matches.size(), labels));
}

}  // namespace

CgroupDir resolve_container(const std::string& arg, const std::vector<MountEntry>& mounts) {
  return resolve_by_walk("--container", arg, mounts,
                         [](const std::string& path, const fs::path&) -> std::optional<Candidate> {
                           auto c = container_of_cgroup(path);
                           if (!c || c->cgroup != path)
                             return std::nullopt;  // a host cgroup, or inside one
                           const std::string kind = container_runtime_name(c->runtime);
                           std::string name = container_names(*c).name;
                           const std::string label =
                               name.empty() ? fmt::format("{} ({})", c->short_id(), kind)
                                            : fmt::format("{} {} ({})", c->short_id(), name, kind);
                           return Candidate{c->id, {std::move(name)}, label, kind};
                         });
}

CgroupDir resolve_pod(const std::string& arg, const std::vector<MountEntry>& mounts) {
  return resolve_by_walk("--pod", arg, mounts, pod_candidate_at);
}

std::vector<CgroupDir> resolve_namespace(const std::string& arg,
                                         const std::vector<MountEntry>& mounts) {
  const fs::path root = walk_root("--namespace", arg, mounts, "a Kubernetes namespace");
  std::vector<CgroupDir> found;
  std::set<std::string> namespaces;  // those the pods found are in, for the error
  std::size_t pods = 0;
  for_each_cgroup(root, [&](const std::string& path, const fs::path& dir) {
    auto pod = pod_of_cgroup(path);
    if (!pod || pod->cgroup != path) return;
    ++pods;
    const ContainerNames names = pod_names_at(path, dir);
    if (!names.namespace_.empty()) namespaces.insert(names.namespace_);
    if (names.namespace_ == arg) found.push_back(cgroup_at(dir, dir.lexically_relative(root)));
  });
  if (found.empty()) {
    std::string known;
    for (const auto& ns : namespaces) known += fmt::format("{}{}", known.empty() ? "" : ", ", ns);
    throw Failure(kExitUsage,
                  fmt::format("--namespace {}: no pod of this namespace (found under {}: {} "
                              "pods{}{})",
                              arg, root.string(), pods, known.empty() ? "" : " in ", known));
  }
  if (found.size() > WP_MAX_FILTER_CGROUPS)
    throw Failure(kExitUsage,
                  fmt::format("--namespace {}: has {} pods, more than the {} the kernel's filter "
                              "holds; name one with --pod, or a parent cgroup with --cgroup",
                              arg, found.size(), WP_MAX_FILTER_CGROUPS));
  return found;
}

std::optional<ContainerCensus> count_containers(const std::vector<MountEntry>& mounts) {
  const std::vector<MountEntry> cgroup2 = cgroup2_mounts(mounts);
  if (cgroup2.empty()) return std::nullopt;
  ContainerCensus census;
  census.root = cgroup2.front().mount_point;
  for_each_cgroup(fs::path(census.root).lexically_normal(),
                  [&](const std::string& path, const fs::path&) {
                    if (auto c = container_of_cgroup(path); c && c->cgroup == path)
                      ++census.by_runtime[container_runtime_name(c->runtime)];
                    if (auto pod = pod_of_cgroup(path); pod && pod->cgroup == path) ++census.pods;
                  });
  return census;
}

std::optional<CgroupPaths> CgroupPaths::of_this_host() {
  const auto mounts = cgroup2_mounts(read_mountinfo());
  if (mounts.empty()) return std::nullopt;
  return CgroupPaths(mounts.front().mount_point);
}

std::optional<std::string> CgroupPaths::path_of(std::uint64_t id) {
  if (auto it = paths_.find(id); it != paths_.end()) return it->second;
  if (missing_.count(id)) return std::nullopt;
  walk();
  if (auto it = paths_.find(id); it != paths_.end()) return it->second;
  missing_.insert(id);
  return std::nullopt;
}

void CgroupPaths::walk() {
  ++walks_;
  const fs::path root(mount_point_);
  struct stat st {};
  if (::stat(root.c_str(), &st) == 0) paths_.insert_or_assign(st.st_ino, under_root({}));
  std::error_code ec;
  // Cgroups come and go during the walk: an entry that vanished is skipped, not an error.
  for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (!it->is_directory(type_ec) || it->is_symlink(type_ec)) continue;
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    paths_[st.st_ino] = under_root(it->path().lexically_relative(root));
  }
}

}  // namespace wp
