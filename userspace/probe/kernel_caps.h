// What the running kernel and this process can do, found by looking (BTF, tracefs, a real
// fentry attach), never by kernel version numbers.
#pragma once

#include <string>

#include "probe/kernel_facts.h"

struct btf;

namespace wp {

struct KernelCaps {
  std::string kernel_release;
  bool root = false;
  bool btf = false;  // /sys/kernel/btf/vmlinux loads
  std::string btf_error;
  bool tracefs = false;  // events/ reachable (mounted by ensure_tracefs if need be)
  std::string tracefs_path;
  std::string tracefs_error;
  bool fentry = false;  // a 2-instruction fentry program attached to vfs_write
  std::string fentry_error;
};

// Mounts tracefs at /sys/kernel/tracing when no tracefs is reachable. Returns the events
// directory's parent, or an error message.
bool ensure_tracefs(std::string& path, std::string& error);

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
  // Number of arguments (without the ctx pointer) of `btf_trace_<name>` in vmlinux or in
  // `module`'s BTF; -1 if the raw tracepoint type does not exist.
  int tracepoint_args(const std::string& name, const std::string& module = {}) const;
  // True when vmlinux's BTF has a function `name` (an fentry target).
  bool has_function(const std::string& name) const;

 private:
  struct btf* vmlinux_ = nullptr;
  std::string error_;
};

// The running kernel's facts: its BTF (vmlinux, and module BTFs looked up on demand), its
// tracefs at caps.tracefs_path, and the fentry attach probe detect_kernel_caps ran.
class RunningKernelFacts final : public KernelFacts {
 public:
  explicit RunningKernelFacts(const KernelCaps& caps);

  bool tracepoint_exists(const std::string& category, const std::string& event) const override;
  int tracepoint_args(const std::string& event, const std::string& module) const override;
  bool has_function(const std::string& name) const override;
  bool fentry_attaches() const override { return fentry_; }
  std::string fentry_error() const override { return fentry_error_; }

 private:
  KernelBtf btf_;
  std::string tracefs_;
  bool fentry_;
  std::string fentry_error_;
};

}  // namespace wp
