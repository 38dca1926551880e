// SPDX-License-Identifier: Apache-2.0
#include "probe/host_paths.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "probe/container_names.h"

namespace wp {
namespace fs = std::filesystem;
namespace {

// What follows `base` in `path` ("" for `base` itself, "/a/b" below it); nullopt when `path` is
// not `base` or below it, component by component.
std::optional<std::string> rest_under(const std::string& path, const std::string& base) {
  if (base == "/") return path == "/" ? std::string() : path;
  if (path == base) return std::string();
  if (path.size() > base.size() && path.starts_with(base) && path[base.size()] == '/')
    return path.substr(base.size());
  return std::nullopt;
}

std::string joined(const std::string& base, const std::string& rest) {
  if (base == "/") return rest.empty() ? "/" : rest;
  return base + rest;
}

// The mount of `mounts` that shows `path` (of device `dev`): the deepest mount point above it,
// the last of equals (a later mount on the same point hides an earlier one).
const MountEntry* mount_of(const std::string& path, DevT dev, const std::vector<MountEntry>& mounts,
                           std::string& rest) {
  const MountEntry* best = nullptr;
  for (const MountEntry& m : mounts) {
    if (m.dev != dev) continue;
    auto r = rest_under(path, m.mount_point);
    if (!r) continue;
    if (!best || m.mount_point.size() >= best->mount_point.size()) {
      best = &m;
      rest = std::move(*r);
    }
  }
  return best;
}

// Where `mounts` show the place `fs_path` inside device `dev`'s file system: under the mount
// whose root is the deepest directory above it.
std::optional<std::string> shown_at(const std::string& fs_path, DevT dev,
                                    const std::vector<MountEntry>& mounts) {
  const MountEntry* best = nullptr;
  std::string best_rest;
  for (const MountEntry& m : mounts) {
    if (m.dev != dev) continue;
    auto r = rest_under(fs_path, m.root);
    if (!r) continue;
    if (!best || m.root.size() > best->root.size()) {
      best = &m;
      best_rest = std::move(*r);
    }
  }
  if (!best) return std::nullopt;
  return joined(best->mount_point, best_rest);
}

std::string slurp_mountinfo(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::uint64_t namespace_of(const std::string& ns_link) {
  struct stat st {};
  return ::stat(ns_link.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_ino) : 0;
}

}  // namespace

std::optional<std::string> translate_path(const std::string& path, DevT dev, DevT backing_dev,
                                          const std::vector<MountEntry>& theirs,
                                          const std::vector<MountEntry>& ours) {
  std::string rest;
  const MountEntry* theirs_mount = mount_of(path, dev, theirs, rest);
  if (theirs_mount == nullptr) return std::nullopt;
  const std::string fs_path = joined(theirs_mount->root, rest);
  if (auto host = shown_at(fs_path, dev, ours)) return host;
  // An overlay the process's namespace mounted (a container's root) is not in ours: its upper
  // directory, named where the overlay was mounted, holds the file once it is copied up.
  if (backing_dev == 0) return std::nullopt;
  const auto upper = overlay_upper_dir(*theirs_mount);
  if (!upper) return std::nullopt;
  return translate_path(joined(*upper, fs_path == "/" ? "" : fs_path), backing_dev, 0, theirs,
                        ours);
}

HostPaths::HostPaths(std::string proc, std::string cgroup2)
    : proc_(std::move(proc)),
      cgroup2_(std::move(cgroup2)),
      own_ns_(namespace_of(proc_ + "/self/ns/mnt")),
      own_mounts_(read_mountinfo(proc_ + "/self/mountinfo")) {}

std::optional<HostPaths::Process> HostPaths::read_process(std::uint32_t pid) {
  const std::string dir = proc_ + "/" + std::to_string(pid);
  const std::uint64_t ns = namespace_of(dir + "/ns/mnt");
  if (ns == 0) return std::nullopt;                         // gone
  if (ns == own_ns_) return Process{true, nullptr, ns, 0};  // the agent's own: no other view
  // Each process's table is read: the kernel reuses a freed namespace's number, so a number
  // alone does not say which namespace it was. Processes whose tables read the same share one.
  const std::string text = slurp_mountinfo(dir + "/mountinfo");
  if (text.empty()) return std::nullopt;
  std::shared_ptr<Namespace>& known = by_ns_[ns];
  if (!known || known->text != text) {
    known = std::make_shared<Namespace>();
    known->text = text;
    known->mounts = parse_mountinfo(text);
  }
  return Process{true, known, ns, 0};
}

void HostPaths::note_process(std::uint32_t pid, std::uint64_t at) {
  auto [it, first] = by_pid_.try_emplace(pid);
  Process& process = it->second;
  if (!first) {
    // Every record of the process comes here: a lookup and a compare, and a stat once a second.
    if (at < process.checked_at + kRecheckNs) return;
    const std::uint64_t ns = namespace_of(proc_ + "/" + std::to_string(pid) + "/ns/mnt");
    // Gone (its items may still be pending: what was read stands), or still where it was.
    if (ns == 0 || (process.known && ns == process.ns_inode)) {
      process.checked_at = at;
      return;
    }
  }
  process = read_process(pid).value_or(Process{});
  process.checked_at = at;
}

std::optional<HostPaths::Process> HostPaths::member_of(const std::string& container_cgroup) {
  // A process in the agent's own namespace is a runtime's helper (a shim, or unshare waiting
  // for its child), not the container's.
  std::optional<Process> found;
  member_of_cgroup(cgroup2_, container_cgroup, [&](std::uint32_t pid) {
    auto process = read_process(pid);
    if (process && process->ns) found = std::move(process);
    return found.has_value();
  });
  return found;
}

std::optional<std::string> HostPaths::host_path(std::uint32_t pid,
                                                const std::string& container_cgroup, DevT dev,
                                                DevT backing_dev, const std::string& path) {
  auto it = by_pid_.find(pid);
  if (it == by_pid_.end() || path.empty()) return std::nullopt;
  if (!it->second.known) {
    // Gone before it was noted: a process of its container stands for it, once.
    if (auto member = member_of(container_cgroup)) it->second = *member;
    if (!it->second.known) return std::nullopt;
  }
  if (!it->second.ns) return std::nullopt;
  Namespace& ns = *it->second.ns;
  const std::string key = path + '\0' + std::to_string(dev) + '\0' + std::to_string(backing_dev);
  if (auto cached = ns.translated.find(key); cached != ns.translated.end()) return cached->second;
  auto host = translate_path(path, dev, backing_dev, ns.mounts, own_mounts_);
  if (host == path) host.reset();  // the same place by the same name: nothing to add
  ns.translated.emplace(key, host);
  return host;
}

}  // namespace wp
