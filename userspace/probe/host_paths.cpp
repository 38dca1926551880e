// SPDX-License-Identifier: Apache-2.0
#include "probe/host_paths.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "common/fd.h"
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

// A mountinfo file's text; nullopt when it cannot be opened (the process is gone). Empty is a
// table: a process chroot'ed where no mount is below its root sees none.
std::optional<std::string> slurp_mountinfo(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string read_all(int fd) {
  std::string text;
  char buf[8192];
  for (ssize_t n; (n = ::read(fd, buf, sizeof(buf))) > 0;)
    text.append(buf, static_cast<std::size_t>(n));
  return text;
}

// /proc/PID/root as the agent reads it: "/" for a process at its namespace's root (or
// pivot_root'ed there), else its root's place in its namespace (a chroot's directory). "/"
// when unreadable: the process's own table is all there is then.
std::string root_of(const std::string& proc_pid_dir) {
  std::error_code ec;
  const fs::path root = fs::read_symlink(proc_pid_dir + "/root", ec);
  return ec || root.empty() ? "/" : root.string();
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

std::optional<std::string> namespace_mountinfo(const std::string& proc, std::uint32_t pid) {
  const std::string link = proc + "/" + std::to_string(pid) + "/ns/mnt";
  const UniqueFd ns(::open(link.c_str(), O_RDONLY | O_CLOEXEC));
  if (!ns) return std::nullopt;
  std::optional<std::string> text;
  // A thread of its own enters the namespace and ends there. setns() of a mount namespace
  // moves the caller's root and working directory, which the agent's threads share: the
  // thread takes a copy of its own first (setns refuses a shared one). Its /proc entry is
  // opened before it moves: the namespace's /proc, if it has one, is often another PID
  // namespace's, where this thread has no number.
  std::thread reader([&] {
    if (::unshare(CLONE_FS) != 0) return;
    const UniqueFd self(
        ::open((proc + "/thread-self").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!self || ::setns(ns.get(), CLONE_NEWNS) != 0) return;
    // Opened after the move: mountinfo shows the namespace and root its task has at open.
    const UniqueFd table(::openat(self.get(), "mountinfo", O_RDONLY | O_CLOEXEC));
    if (table) text = read_all(table.get());
  });
  reader.join();
  return text;
}

HostPaths::HostPaths(std::string proc, std::string cgroup2, NamespaceMountinfo whole)
    : proc_(std::move(proc)),
      cgroup2_(std::move(cgroup2)),
      whole_(std::move(whole)),
      own_ns_(namespace_of(proc_ + "/self/ns/mnt")),
      own_mounts_(read_mountinfo(proc_ + "/self/mountinfo")) {}

std::optional<HostPaths::Process> HostPaths::read_process(std::uint32_t pid) {
  const std::string dir = proc_ + "/" + std::to_string(pid);
  const std::uint64_t ns = namespace_of(dir + "/ns/mnt");
  if (ns == 0) return std::nullopt;  // gone
  // The agent's own: no other view (a chroot'ed writer's namespace path is the host's).
  if (ns == own_ns_) return Process{true, nullptr, ns, "/", 0};
  // Each process's table is read: the kernel reuses a freed namespace's number, so a number
  // alone does not say which namespace it was. Processes whose tables read the same share one.
  const std::string root = root_of(dir);
  const auto text = slurp_mountinfo(dir + "/mountinfo");
  if (!text) return std::nullopt;
  std::shared_ptr<Namespace>& known = by_ns_[ns];
  if (!known || known->text != *text) {
    known = std::make_shared<Namespace>();
    known->text = *text;
    known->mounts = parse_mountinfo(*text);
  }
  // A chroot'ed process's table is relative to its root and lacks the mount holding it: its
  // namespace's whole table is read now, while it runs (its items may come after it exits).
  if (root != "/" && !known->whole) {
    if (auto whole_text = whole_(proc_, pid)) {
      known->whole = std::make_shared<Namespace>();
      known->whole->text = std::move(*whole_text);
      known->whole->mounts = parse_mountinfo(known->whole->text);
    }
  }
  // At its namespace's root its own table is the whole one.
  if (const auto& whole = root == "/" ? known : known->whole) {
    WholeTable& entry = whole_by_ns_[ns];
    if (entry.table != whole) entry = {whole, {}};
    note_reader(entry, pid, ns);
  }
  return Process{true, known, ns, root, 0};
}

void HostPaths::note_process(std::uint32_t pid, std::uint64_t at) {
  auto [it, first] = by_pid_.try_emplace(pid);
  Process& process = it->second;
  if (!first) {
    // Every record of the process comes here: a lookup and a compare, and a stat and a
    // readlink once a second.
    if (at < process.checked_at + kRecheckNs) return;
    const std::string dir = proc_ + "/" + std::to_string(pid);
    const std::uint64_t ns = namespace_of(dir + "/ns/mnt");
    // Gone (its items may still be pending: what was read stands), or still where it was.
    if (ns == 0 || (process.known && ns == process.ns_inode &&
                    (!process.ns || root_of(dir) == process.root))) {
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
                                                DevT backing_dev, const std::string& path,
                                                const std::string& ns_path, std::uint32_t mnt_ns) {
  if (path.empty()) return std::nullopt;
  // The agent's own namespace, as the kernel said: the path there is the host's, and differs
  // from the writer's only for a chroot'ed writer. Known without the process, which a short
  // writer (a build step) has often ended before its record is read; and its number cannot
  // be another namespace's while the agent is in it.
  if (mnt_ns != 0 && mnt_ns == own_ns_) {
    if (ns_path.empty() || ns_path == path) return std::nullopt;
    return ns_path;
  }
  auto it = by_pid_.find(pid);
  std::optional<std::string> host;
  if (it == by_pid_.end() || !it->second.known) {
    // Gone before it was noted: the namespace the kernel named, through a process still in
    // it; else a process of its container stands for it, once.
    host = through_namespace(mnt_ns, dev, backing_dev, ns_path.empty() ? path : ns_path);
    if (host || it == by_pid_.end()) return host == path ? std::nullopt : host;
    if (auto member = member_of(container_cgroup)) it->second = *member;
    if (!it->second.known) return std::nullopt;
  }
  const Process& process = it->second;
  if (!process.ns) {
    // The agent's own namespace: its path there is the host's, and differs from the writer's
    // only for a chroot'ed writer.
    if (!ns_path.empty()) host = ns_path;
  } else if (process.root == "/") {
    // Another namespace, at its root: the path and the table are both from there.
    host = translated(*process.ns, dev, backing_dev, path);
  } else {
    // Chroot'ed in another namespace. Its namespace's path is ns_path, or the path itself
    // when the walk did not pass its root (a file outside it, opened before the chroot):
    // through the namespace's whole table. Its own table is relative to its root and shows
    // the mounts at and below it: it serves for a path from there when the whole table
    // could not be read.
    const std::string& in_namespace = ns_path.empty() ? path : ns_path;
    if (process.ns->whole) host = translated(*process.ns->whole, dev, backing_dev, in_namespace);
    if (!host && !ns_path.empty()) host = translated(*process.ns, dev, backing_dev, path);
  }
  if (host == path) host.reset();  // the same place by the same name: nothing to add
  return host;
}

std::optional<std::string> HostPaths::through_namespace(std::uint32_t mnt_ns, DevT dev,
                                                        DevT backing_dev,
                                                        const std::string& in_namespace) {
  const auto it = mnt_ns != 0 ? whole_by_ns_.find(mnt_ns) : whole_by_ns_.end();
  if (it == whole_by_ns_.end()) return std::nullopt;
  // The kernel reuses a freed namespace's number: the table stands only while a process it
  // was read through is still in that namespace (and so keeps it from being freed).
  std::erase_if(it->second.read_through,
                [&](std::uint32_t pid) { return !in_namespace_now(pid, mnt_ns); });
  if (it->second.read_through.empty()) {
    whole_by_ns_.erase(it);
    return std::nullopt;
  }
  return translated(*it->second.table, dev, backing_dev, in_namespace);
}

bool HostPaths::in_namespace_now(std::uint32_t pid, std::uint64_t ns) const {
  return namespace_of(proc_ + "/" + std::to_string(pid) + "/ns/mnt") == ns;
}

void HostPaths::note_reader(WholeTable& entry, std::uint32_t pid, std::uint64_t ns) const {
  if (std::find(entry.read_through.begin(), entry.read_through.end(), pid) !=
      entry.read_through.end())
    return;
  // A build sandbox runs many short steps: the ones gone go before the list grows.
  if (entry.read_through.size() >= kReadersKept)
    std::erase_if(entry.read_through, [&](std::uint32_t p) { return !in_namespace_now(p, ns); });
  if (entry.read_through.size() < kReadersKept) entry.read_through.push_back(pid);
}

std::optional<std::string> HostPaths::translated(Namespace& ns, DevT dev, DevT backing_dev,
                                                 const std::string& path) {
  const std::string key = path + '\0' + std::to_string(dev) + '\0' + std::to_string(backing_dev);
  if (auto cached = ns.translated.find(key); cached != ns.translated.end()) return cached->second;
  auto host = translate_path(path, dev, backing_dev, ns.mounts, own_mounts_);
  ns.translated.emplace(key, host);
  return host;
}

}  // namespace wp
