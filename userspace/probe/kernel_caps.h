// SPDX-License-Identifier: Apache-2.0
// What the running kernel and this process can do, found by looking (BTF, tracefs, a real
// fentry attach), never by kernel version numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "probe/kernel_facts.h"
#include "probe/privileges.h"

struct btf;

namespace wp {

struct KernelCaps {
  std::string kernel_release;
  PrivilegeFacts privilege_facts;
  PrivilegeVerdict privileges;  // may this process trace (capabilities, not the uid)
  bool btf = false;             // /sys/kernel/btf/vmlinux loads
  std::string btf_error;
  // tracefs as it is mounted (never mounted by writepath): classic tracepoints need its
  // events/; tp_btf and raw_tp hooks do not.
  bool tracefs = false;
  std::string tracefs_path;
  std::string tracefs_error;
  bool fentry = false;  // a 2-instruction fentry program attached to vfs_write
  std::string fentry_error;
};

// Where tracefs is mounted, from the text of /proc/mounts: a tracefs mount, else a debugfs
// mount's tracing/ directory (the kernel mounts tracefs there on access); "" when neither.
std::string tracefs_mount_point(std::string_view proc_mounts);

// The mounted tracefs's path if its events/ can be read by this process, else false with why
// (not mounted, or not readable: tracefs is root's 0700 unless remounted with mode=).
bool find_tracefs(std::string& path, std::string& error);

KernelCaps detect_kernel_caps();

// True when tracefs has events/<category>/<name>.
bool tracepoint_exists(const std::string& tracefs, const std::string& category,
                       const std::string& name);

// Owns a vmlinux BTF (plus module BTFs split on it, looked up on demand).
class KernelBtf {
 public:
  KernelBtf();
  ~KernelBtf();
  KernelBtf(const KernelBtf&) = delete;
  KernelBtf& operator=(const KernelBtf&) = delete;

  bool loaded() const { return vmlinux_ != nullptr; }
  const std::string& error() const { return error_; }
  // Number of arguments (without the ctx pointer) of `btf_trace_<name>` in vmlinux, else in
  // `module`'s BTF; -1 if the raw tracepoint type does not exist.
  int tracepoint_args(const std::string& name, const std::string& module = {}) const;
  // True when vmlinux's BTF has a function `name` (an fentry target).
  bool has_function(const std::string& name) const;
  // The value of enumerator `name` of any enum in vmlinux's BTF, named or anonymous (those
  // CO-RE cannot relocate); nullopt when there is none.
  std::optional<std::int64_t> enumerator(std::string_view name) const;

 private:
  struct btf* vmlinux_ = nullptr;
  std::string error_;
};

// The running kernel's facts: its BTF (vmlinux, and module BTFs looked up on demand), its
// tracefs at caps.tracefs_path when readable, and the fentry attach probe detect_kernel_caps ran.
class RunningKernelFacts final : public KernelFacts {
 public:
  explicit RunningKernelFacts(const KernelCaps& caps);

  bool tracefs_available() const override { return !tracefs_.empty(); }
  bool tracepoint_exists(const std::string& category, const std::string& event) const override;
  int tracepoint_args(const std::string& event, const std::string& module) const override;
  bool has_function(const std::string& name) const override;
  bool has_enumerator(const std::string& name) const override {
    return btf_.enumerator(name).has_value();
  }
  bool fentry_attaches() const override { return fentry_; }
  std::string fentry_error() const override { return fentry_error_; }

 private:
  KernelBtf btf_;
  std::string tracefs_;
  bool fentry_;
  std::string fentry_error_;
};

}  // namespace wp
