// SPDX-License-Identifier: Apache-2.0
#include "probe/privileges.h"

#include <fmt/format.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>

namespace wp {

const char* cap_name(Cap cap) {
  switch (cap) {
    case Cap::DacReadSearch: return "CAP_DAC_READ_SEARCH";
    case Cap::SysAdmin: return "CAP_SYS_ADMIN";
    case Cap::Perfmon: return "CAP_PERFMON";
    case Cap::Bpf: return "CAP_BPF";
  }
  return "?";
}

namespace {

std::string names(const std::vector<Cap>& caps, const char* separator) {
  std::string out;
  for (Cap cap : caps) {
    if (!out.empty()) out += separator;
    out += cap_name(cap);
  }
  return out;
}

// "cap_bpf,cap_perfmon" for setcap, "+bpf,+perfmon" for setpriv.
std::string setcap_list(const std::vector<Cap>& caps) {
  std::string out;
  for (Cap cap : caps) {
    if (!out.empty()) out += ',';
    std::string name = cap_name(cap);
    for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    out += name;
  }
  return out;
}

std::string setpriv_list(const std::vector<Cap>& caps) {
  std::string out;
  for (Cap cap : caps) {
    if (!out.empty()) out += ',';
    std::string name = std::string(cap_name(cap)).substr(4);  // without "CAP_"
    for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    out += "+" + name;
  }
  return out;
}

}  // namespace

PrivilegeVerdict decide_privileges(const PrivilegeFacts& facts) {
  PrivilegeVerdict verdict;
  const bool kernel_has_cap_bpf = facts.last_cap >= static_cast<int>(Cap::Bpf);
  const std::vector<Cap> wanted = kernel_has_cap_bpf ? std::vector<Cap>{Cap::Bpf, Cap::Perfmon}
                                                     : std::vector<Cap>{Cap::SysAdmin};
  for (Cap cap : {Cap::Bpf, Cap::Perfmon, Cap::SysAdmin})
    if (facts.has(cap) && (kernel_has_cap_bpf || cap == Cap::SysAdmin))
      verdict.present.push_back(cap);
  // CAP_SYS_ADMIN still implies bpf_capable() and perfmon_capable() where CAP_BPF exists.
  if (!facts.has(Cap::SysAdmin))
    for (Cap cap : wanted)
      if (!facts.has(cap)) verdict.missing.push_back(cap);
  verdict.ok = verdict.missing.empty();
  if (verdict.ok) return verdict;
  verdict.error = fmt::format(
      "tracing needs {} (missing {}): run as root, or grant them: "
      "sudo setcap {}+ep {}, systemd AmbientCapabilities={}, or "
      "setpriv --inh-caps={} --ambient-caps={}",
      names(wanted, " and "), names(verdict.missing, ", "), setcap_list(wanted), facts.executable,
      names(wanted, " "), setpriv_list(wanted), setpriv_list(wanted));
  if (!kernel_has_cap_bpf) verdict.error += " (this kernel predates CAP_BPF and CAP_PERFMON)";
  return verdict;
}

PrivilegeFacts read_privilege_facts() {
  PrivilegeFacts facts;
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) == 0)
    facts.effective = static_cast<std::uint64_t>(data[0].effective) |
                      (static_cast<std::uint64_t>(data[1].effective) << 32);
  std::ifstream last("/proc/sys/kernel/cap_last_cap");
  if (!(last >> facts.last_cap)) facts.last_cap = 0;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec && !self.empty()) facts.executable = self.string();
  return facts;
}

}  // namespace wp
