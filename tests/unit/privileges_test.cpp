// SPDX-License-Identifier: Apache-2.0
#include "probe/privileges.h"

#include <gtest/gtest.h>

#include <initializer_list>

#include "probe/kernel_caps.h"

namespace wp {
namespace {

PrivilegeFacts with(std::initializer_list<Cap> caps, int last_cap = 40) {
  PrivilegeFacts facts;
  facts.last_cap = last_cap;
  facts.executable = "/usr/bin/writepath";  // the binary's own path, as /proc/self/exe says
  for (Cap cap : caps) facts.effective |= 1ull << static_cast<int>(cap);
  return facts;
}

TEST(Privileges, CapBpfAndCapPerfmonAreEnoughWithoutRoot) {
  const PrivilegeVerdict v = decide_privileges(with({Cap::Bpf, Cap::Perfmon}));
  EXPECT_TRUE(v.ok);
  EXPECT_TRUE(v.missing.empty());
  EXPECT_EQ(v.present, (std::vector<Cap>{Cap::Bpf, Cap::Perfmon}));
  EXPECT_EQ(v.error, "");
}

TEST(Privileges, NoCapabilitiesNamesBothAndHowToGrantThem) {
  const PrivilegeVerdict v = decide_privileges(with({}));
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.missing, (std::vector<Cap>{Cap::Bpf, Cap::Perfmon}));
  EXPECT_EQ(v.error,
            "tracing needs CAP_BPF and CAP_PERFMON (missing CAP_BPF, CAP_PERFMON): run as root, "
            "or grant them: sudo setcap cap_bpf,cap_perfmon+ep /usr/bin/writepath, systemd "
            "AmbientCapabilities=CAP_BPF CAP_PERFMON, or setpriv --inh-caps=+bpf,+perfmon "
            "--ambient-caps=+bpf,+perfmon");
  EXPECT_EQ(v.error.find('\n'), std::string::npos);
}

TEST(Privileges, OneMissingCapabilityIsTheOneNamed) {
  const PrivilegeVerdict v = decide_privileges(with({Cap::Bpf}));
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.missing, (std::vector<Cap>{Cap::Perfmon}));
  EXPECT_NE(v.error.find("(missing CAP_PERFMON)"), std::string::npos) << v.error;
}

// bpf_capable() and perfmon_capable() both accept CAP_SYS_ADMIN (root has all three).
TEST(Privileges, CapSysAdminStillGrantsBoth) {
  EXPECT_TRUE(decide_privileges(with({Cap::SysAdmin})).ok);
}

// Before v5.8 (cap_last_cap 37) CAP_BPF and CAP_PERFMON do not exist: CAP_SYS_ADMIN it is.
TEST(Privileges, KernelWithoutCapBpfNeedsCapSysAdmin) {
  const PrivilegeVerdict v = decide_privileges(with({Cap::Bpf, Cap::Perfmon}, 37));
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.missing, (std::vector<Cap>{Cap::SysAdmin}));
  EXPECT_TRUE(v.present.empty());
  EXPECT_NE(v.error.find("tracing needs CAP_SYS_ADMIN (missing CAP_SYS_ADMIN)"), std::string::npos)
      << v.error;
  EXPECT_NE(v.error.find("setcap cap_sys_admin+ep"), std::string::npos) << v.error;
  EXPECT_TRUE(decide_privileges(with({Cap::SysAdmin}, 37)).ok);
}

TEST(Privileges, UnrelatedCapabilitiesDoNotCount) {
  const PrivilegeVerdict v = decide_privileges(with({Cap::DacReadSearch}));
  EXPECT_FALSE(v.ok);
  EXPECT_TRUE(v.present.empty());
}

TEST(Tracefs, FoundWhereItIsMountedNeverMounted) {
  EXPECT_EQ(tracefs_mount_point("sysfs /sys sysfs rw 0 0\n"
                                "nodev /sys/kernel/tracing tracefs rw,relatime 0 0\n"),
            "/sys/kernel/tracing");
  // Only debugfs: the kernel mounts tracefs under its tracing/ on access.
  EXPECT_EQ(tracefs_mount_point("debugfs /sys/kernel/debug debugfs rw 0 0\n"),
            "/sys/kernel/debug/tracing");
  EXPECT_EQ(tracefs_mount_point("debugfs /sys/kernel/debug debugfs rw 0 0\n"
                                "tracefs /mnt/t tracefs rw 0 0"),
            "/mnt/t");
  EXPECT_EQ(tracefs_mount_point("proc /proc proc rw 0 0\n\n"), "");
  EXPECT_EQ(tracefs_mount_point(""), "");
}

}  // namespace
}  // namespace wp
