// SPDX-License-Identifier: Apache-2.0
// Whether this process may trace: its capabilities, not its uid. The decision is a pure
// function of a capability set and what the kernel knows of capabilities, so it is tested
// without changing privileges; read_privilege_facts() reads them from the running process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace wp {

// Capability numbers (linux/capability.h), spelled here so the decision needs no header.
enum class Cap : int {
  DacReadSearch = 2,
  SysAdmin = 21,
  Perfmon = 38,  // v5.8
  Bpf = 39,      // v5.8
};

const char* cap_name(Cap cap);  // "CAP_BPF"

struct PrivilegeFacts {
  std::uint64_t effective = 0;  // the effective capability set, bit n = capability n
  // The highest capability the kernel knows (/proc/sys/kernel/cap_last_cap): CAP_BPF and
  // CAP_PERFMON exist when it is at least 39; before v5.8 only CAP_SYS_ADMIN allows tracing.
  int last_cap = 0;
  // This binary's own path (/proc/self/exe), for the setcap command the error suggests.
  std::string executable = "writepath";
  bool has(Cap cap) const { return (effective >> static_cast<int>(cap)) & 1; }
};

struct PrivilegeVerdict {
  bool ok = false;
  std::vector<Cap> present;  // of the capabilities tracing can use
  std::vector<Cap> missing;  // what to grant; empty when ok
  std::string error;         // one line naming the missing capabilities and how to grant them
};

// BPF tracing programs need bpf_capable() and perfmon_capable(): CAP_BPF and CAP_PERFMON, each
// also granted by CAP_SYS_ADMIN; on a kernel without CAP_BPF, CAP_SYS_ADMIN itself.
PrivilegeVerdict decide_privileges(const PrivilegeFacts& facts);

// The running process's effective set (capget) and the kernel's last capability.
PrivilegeFacts read_privilege_facts();

}  // namespace wp
