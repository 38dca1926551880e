// SPDX-License-Identifier: Apache-2.0
// What the stall tests share: a cgroup with one controller's limit (cgroup2 where the
// controller is enabled there, else the controller's v1 hierarchy), removed whatever happens;
// the workload's own report of what it did (its stdout lines); the kernel stacks of a process
// sampled from /proc while it runs; and finding a slow call's named waits in the JSON.
#pragma once

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <string>
#include <vector>

#include "harness.h"

namespace wp::testing {

inline std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

// A cgroup of its own under one controller, with limits written into it; removed (stray
// processes moved back to the root first) when it goes. `v2_controller` is the controller's
// cgroup2 name ("io", "memory"), `v1_controller` its v1 hierarchy's ("blkio", "memory").
class LimitedCgroup {
 public:
  LimitedCgroup(const std::string& v2_controller, const std::string& v1_controller) {
    std::istringstream mounts(slurp("/proc/mounts"));
    std::string v2_mount, v1_mount;
    for (std::string line; std::getline(mounts, line);) {
      std::istringstream fields(line);
      std::string source, point, type, options;
      if (!(fields >> source >> point >> type >> options)) continue;
      if (type == "cgroup2") v2_mount = point;
      if (type == "cgroup" && has_word(options, v1_controller, ',')) v1_mount = point;
    }
    const std::string name = "/wp_it_" + v1_controller + "_" + std::to_string(::getpid());
    if (!v2_mount.empty() &&
        has_word(first_line(slurp(v2_mount + "/cgroup.controllers")), v2_controller, ' ')) {
      // Its children get the controller only once the root hands it down.
      const std::string subtree = v2_mount + "/cgroup.subtree_control";
      if (!has_word(first_line(slurp(subtree)), v2_controller, ' ')) {
        if (!write_file(subtree, "+" + v2_controller)) return;
        enabled_in_ = subtree;
        disable_ = "-" + v2_controller;
      }
      root_ = v2_mount;
      v2_ = true;
    } else if (!v1_mount.empty()) {
      root_ = v1_mount;
    } else {
      return;
    }
    dir_ = root_ + name;
    if (::mkdir(dir_.c_str(), 0755) != 0) dir_.clear();
  }
  ~LimitedCgroup() {
    if (!dir_.empty()) {
      std::istringstream pids(slurp(dir_ + "/cgroup.procs"));
      for (std::string pid; pids >> pid;) write_file(root_ + "/cgroup.procs", pid);
      ::rmdir(dir_.c_str());
    }
    if (!enabled_in_.empty()) write_file(enabled_in_, disable_);
  }
  LimitedCgroup(const LimitedCgroup&) = delete;
  LimitedCgroup& operator=(const LimitedCgroup&) = delete;

  bool ready() const { return !dir_.empty(); }
  bool v2() const { return v2_; }
  std::string dir() const { return dir_; }
  std::string procs() const { return dir_ + "/cgroup.procs"; }
  // Writes `value` to the cgroup's file `name`; false (with the reason) if the kernel refused.
  bool set(const std::string& name, const std::string& value) const {
    if (write_file(dir_ + "/" + name, value)) return true;
    ADD_FAILURE() << "writing '" << value << "' to " << dir_ << "/" << name << ": "
                  << std::strerror(errno);
    return false;
  }
  std::string read(const std::string& name) const { return slurp(dir_ + "/" + name); }

 private:
  static bool has_word(const std::string& list, const std::string& word, char sep) {
    std::istringstream in(list);
    for (std::string w; std::getline(in, w, sep);)
      if (w == word) return true;
    return false;
  }
  static bool write_file(const std::string& path, const std::string& value) {
    int fd = ::open(path.c_str(), O_WRONLY);
    if (fd < 0) return false;
    const bool ok = ::write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
    ::close(fd);
    return ok;
  }

  std::string root_;
  std::string dir_;
  std::string enabled_in_;
  std::string disable_;
  bool v2_ = false;
};

// The workload's stdout: lines "KEY VALUE…"; the first value of each key, or "".
inline std::string reported(const std::string& out, const std::string& key) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + " ", 0) == 0) return line.substr(key.size() + 1);
  return "";
}

inline std::uint64_t reported_number(const std::string& out, const std::string& key) {
  const std::string value = reported(out, key);
  return value.empty() ? 0 : std::stoull(value);
}

// A process's kernel stack (/proc/PID/stack) as function names, innermost first.
inline std::vector<std::string> proc_stack(const std::string& pid) {
  std::vector<std::string> frames;
  std::istringstream in(slurp("/proc/" + pid + "/stack"));
  for (std::string line; std::getline(in, line);) {
    // "[<0>] __iomap_dio_rw+0x683/0x960"
    const auto name = line.find("] ");
    if (name == std::string::npos) continue;
    frames.push_back(line.substr(name + 2, line.find('+') - name - 2));
  }
  return frames;
}

// Samples the stacks of the processes in the cgroup whose cgroup.procs is `procs` until one
// has the frame `wanted` (that stack), or the cgroup, once joined, is empty again, or 60 s
// pass (empty).
inline std::vector<std::string> sample_until_frame(const std::string& procs,
                                                   const std::string& wanted) {
  std::vector<std::string> found;
  bool joined = false;
  wait_until(
      [&] {
        std::istringstream pids(slurp(procs));
        bool any = false;
        for (std::string pid; pids >> pid;) {
          any = joined = true;
          auto frames = proc_stack(pid);
          if (std::find(frames.begin(), frames.end(), wanted) != frames.end()) {
            found = frames;
            return true;
          }
        }
        return joined && !any;
      },
      std::chrono::seconds(60));
  return found;
}

inline bool has_frame(const json& frames, const std::string& function) {
  if (!frames.is_array()) return false;
  for (const auto& f : frames) {
    const std::string s = f.get<std::string>();
    // "jbd2_log_wait_commit+0x9c [jbd2]": the name up to its offset.
    if (s.substr(0, s.find_first_of("+ ")) == function) return true;
  }
  return false;
}

// The named wait of `cause` in a slow call's causes (null when it has none).
inline json named_wait(const json& item, const std::string& cause) {
  if (!item.contains("causes") || !item["causes"].is_object()) return nullptr;
  const json& causes = item["causes"];
  if (!causes.contains("waits")) return nullptr;
  for (const auto& w : causes["waits"])
    if (w["cause"] == cause) return w;
  return nullptr;
}

// Whether any of the call's sleep stacks has the frame `function`.
inline bool slept_in(const json& item, const std::string& function) {
  if (!item.contains("causes") || !item["causes"].is_object()) return false;
  const json& causes = item["causes"];
  if (!causes.contains("stacks")) return false;
  for (const auto& s : causes["stacks"])
    if (has_frame(s["frames"], function)) return true;
  return false;
}

// The items of `type` made by thread `tid`.
inline std::vector<json> items_of_tid(const std::vector<json>& items, const std::string& type,
                                      std::uint64_t tid) {
  std::vector<json> out;
  for (const auto& item : items)
    if (item["type"] == type && item.contains("tid") && u64(item["tid"]) == tid)
      out.push_back(item);
  return out;
}

}  // namespace wp::testing
