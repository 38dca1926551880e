// SPDX-License-Identifier: Apache-2.0
#include "probe/kernel_caps.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>

namespace wp {
namespace fs = std::filesystem;

bool tracepoint_exists(const std::string& tracefs, const std::string& category,
                       const std::string& name) {
  std::error_code ec;
  return fs::exists(fs::path(tracefs) / "events" / category / name / "format", ec);
}

std::string tracefs_mount_point(std::string_view proc_mounts) {
  std::string debugfs;
  while (!proc_mounts.empty()) {
    const std::size_t eol = std::min(proc_mounts.find('\n'), proc_mounts.size());
    std::istringstream line{std::string(proc_mounts.substr(0, eol))};
    proc_mounts.remove_prefix(std::min(eol + 1, proc_mounts.size()));
    std::string source, point, type;
    if (!(line >> source >> point >> type)) continue;
    if (type == "tracefs") return point;
    if (type == "debugfs" && debugfs.empty()) debugfs = point + "/tracing";
  }
  return debugfs;
}

bool find_tracefs(std::string& path, std::string& error) {
  std::ifstream in("/proc/mounts");
  const std::string mounts((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  path = tracefs_mount_point(mounts);
  if (path.empty()) {
    error = "not mounted";
    return false;
  }
  const std::string events = path + "/events";
  // AT_EACCESS: checked with the effective ids and capabilities, as the open will be. access()
  // uses the real uid, which says no to a non-root service holding CAP_DAC_READ_SEARCH.
  if (::faccessat(AT_FDCWD, events.c_str(), R_OK | X_OK, AT_EACCESS) != 0) {
    error = fmt::format("{}: {}", events, std::strerror(errno));
    return false;
  }
  return true;
}

namespace {

// The "can fentry attach" probe: load `r0 = 0; exit` as fentry on vfs_write and attach it.
// Restricted ftrace (or a kernel without it) fails here with the real errno.
bool probe_fentry(std::string& error) {
  struct btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) {
    error = "no vmlinux BTF";
    return false;
  }
  int type_id = btf__find_by_name_kind(vmlinux, "vfs_write", BTF_KIND_FUNC);
  btf__free(vmlinux);
  if (type_id < 0) {
    error = "vfs_write not in BTF";
    return false;
  }
  const struct bpf_insn insns[] = {
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .src_reg = 0, .off = 0, .imm = 0},
      {.code = BPF_JMP | BPF_EXIT, .dst_reg = 0, .src_reg = 0, .off = 0, .imm = 0},
  };
  LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FENTRY,
              .attach_btf_id = static_cast<__u32>(type_id));
  int prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "wp_fentry_probe", "GPL", insns, 2, &opts);
  if (prog < 0) {
    error = std::string("load: ") + std::strerror(errno);
    return false;
  }
  int link = bpf_link_create(prog, 0, BPF_TRACE_FENTRY, nullptr);
  int saved = errno;
  ::close(prog);
  if (link < 0) {
    error = std::string("attach: ") + std::strerror(saved);
    return false;
  }
  ::close(link);
  return true;
}

}  // namespace

KernelCaps detect_kernel_caps() {
  KernelCaps caps;
  struct utsname uts {};
  if (::uname(&uts) == 0) caps.kernel_release = uts.release;
  caps.privilege_facts = read_privilege_facts();
  caps.privileges = decide_privileges(caps.privilege_facts);

  KernelBtf btf;
  caps.btf = btf.loaded();
  caps.btf_error = btf.error();
  caps.tracefs = find_tracefs(caps.tracefs_path, caps.tracefs_error);
  if (caps.privileges.ok)
    caps.fentry = probe_fentry(caps.fentry_error);
  else
    caps.fentry_error = "not probed without the capabilities";
  return caps;
}

KernelBtf::KernelBtf() {
  vmlinux_ = btf__load_vmlinux_btf();
  if (!vmlinux_) error_ = std::string("cannot load kernel BTF: ") + std::strerror(errno);
}

KernelBtf::~KernelBtf() {
  btf__free(vmlinux_);
}

bool KernelBtf::has_function(const std::string& name) const {
  return vmlinux_ && btf__find_by_name_kind(vmlinux_, name.c_str(), BTF_KIND_FUNC) >= 0;
}

std::optional<std::int64_t> KernelBtf::enumerator(std::string_view name) const {
  if (!vmlinux_) return std::nullopt;
  const std::uint32_t types = btf__type_cnt(vmlinux_);
  for (std::uint32_t id = 1; id < types; ++id) {
    const struct btf_type* t = btf__type_by_id(vmlinux_, id);
    if (btf_is_enum(t)) {
      const struct btf_enum* e = btf_enum(t);
      for (std::uint16_t i = 0; i < btf_vlen(t); ++i)
        if (name == btf__name_by_offset(vmlinux_, e[i].name_off)) return e[i].val;
    } else if (btf_is_enum64(t)) {
      const struct btf_enum64* e = btf_enum64(t);
      for (std::uint16_t i = 0; i < btf_vlen(t); ++i)
        if (name == btf__name_by_offset(vmlinux_, e[i].name_off))
          return static_cast<std::int64_t>(btf_enum64_value(e + i));
    }
  }
  return std::nullopt;
}

int KernelBtf::tracepoint_args(const std::string& name, const std::string& module) const {
  if (!vmlinux_) return -1;
  std::unique_ptr<struct btf, decltype(&btf__free)> module_btf(nullptr, &btf__free);
  const struct btf* btf = vmlinux_;
  // A module built in has its tracepoints in vmlinux (xfs on the development kernel); loaded,
  // in its own BTF split on vmlinux (jbd2, xfs, nvme_core on Debian's).
  const std::string type = "btf_trace_" + name;
  if (!module.empty() && btf__find_by_name_kind(vmlinux_, type.c_str(), BTF_KIND_TYPEDEF) < 0) {
    module_btf.reset(btf__parse_split(("/sys/kernel/btf/" + module).c_str(), vmlinux_));
    if (!module_btf) return -1;
    btf = module_btf.get();
  }
  int id = btf__find_by_name_kind(btf, type.c_str(), BTF_KIND_TYPEDEF);
  if (id < 0) return -1;
  const struct btf_type* t = btf__type_by_id(btf, id);
  t = btf__type_by_id(btf, t->type);  // pointer
  if (!t || !btf_is_ptr(t)) return -1;
  t = btf__type_by_id(btf, t->type);  // func proto: (void *ctx, args...)
  if (!t || !btf_is_func_proto(t)) return -1;
  return static_cast<int>(btf_vlen(t)) - 1;
}

RunningKernelFacts::RunningKernelFacts(const KernelCaps& caps)
    : tracefs_(caps.tracefs ? caps.tracefs_path : ""),
      fentry_(caps.fentry),
      fentry_error_(caps.fentry_error) {}

bool RunningKernelFacts::tracepoint_exists(const std::string& category,
                                           const std::string& event) const {
  return !tracefs_.empty() && wp::tracepoint_exists(tracefs_, category, event);
}

int RunningKernelFacts::tracepoint_args(const std::string& event, const std::string& module) const {
  return btf_.tracepoint_args(event, module);
}

bool in_flight_outlasts_completion_event(const KernelFacts& facts) {
  return !facts.has_function("blk_mq_in_flight_rw");
}

bool RunningKernelFacts::has_function(const std::string& name) const {
  return btf_.has_function(name);
}

}  // namespace wp
