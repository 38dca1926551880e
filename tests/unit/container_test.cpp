// SPDX-License-Identifier: Apache-2.0
// container_of_cgroup: every runtime's cgroup naming, with both drivers, cgroup v2 and v1, and
// the paths that look like a container's and are not.
#include "common/container.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

namespace wp {
namespace {

const std::string kId = "3f9c1d2e4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0";
const std::string kUid = "8c1d0f2e-1b2a-4c3d-9e8f-0a1b2c3d4e5f";
const std::string kUidSystemd = "8c1d0f2e_1b2a_4c3d_9e8f_0a1b2c3d4e5f";

struct Case {
  std::string path;
  std::string id;
  ContainerRuntime runtime;
  std::string cgroup;  // the container's own cgroup
  std::string pod_uid = "";
  PodQos qos = PodQos::None;
};

TEST(Container, EveryRuntimeAndDriverNamesItsContainer) {
  const Case cases[] = {
      // Docker: systemd driver (v2 and v1's name=systemd line alike), cgroupfs driver.
      {"/system.slice/docker-" + kId + ".scope", kId, ContainerRuntime::Docker,
       "/system.slice/docker-" + kId + ".scope"},
      {"/docker/" + kId, kId, ContainerRuntime::Docker, "/docker/" + kId},
      // Rootless docker under the user's manager.
      {"/user.slice/user-1000.slice/user@1000.service/app.slice/docker-" + kId + ".scope", kId,
       ContainerRuntime::Docker,
       "/user.slice/user-1000.slice/user@1000.service/app.slice/docker-" + kId + ".scope"},
      // containerd outside Kubernetes (nerdctl), CRI-O.
      {"/system.slice/nerdctl-" + kId + ".scope", kId, ContainerRuntime::Containerd,
       "/system.slice/nerdctl-" + kId + ".scope"},
      {"/system.slice/crio-" + kId + ".scope", kId, ContainerRuntime::CriO,
       "/system.slice/crio-" + kId + ".scope"},
      // Podman: root under machine.slice (with the "container" child of its split cgroup),
      // rootless under the user's slice, cgroupfs under libpod_parent.
      {"/machine.slice/libpod-" + kId + ".scope/container", kId, ContainerRuntime::Podman,
       "/machine.slice/libpod-" + kId + ".scope"},
      {"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + kId + ".scope", kId,
       ContainerRuntime::Podman,
       "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + kId + ".scope"},
      {"/libpod_parent/libpod-" + kId, kId, ContainerRuntime::Podman,
       "/libpod_parent/libpod-" + kId},
      // systemd-nspawn: the service of `systemd-nspawn@NAME`, and machined's scope; names are
      // unit-escaped.
      {"/machine.slice/systemd-nspawn@web\\x2d1.service/payload", "web-1", ContainerRuntime::Nspawn,
       "/machine.slice/systemd-nspawn@web\\x2d1.service"},
      {"/machine.slice/machine-build\\x2dbox.scope", "build-box", ContainerRuntime::Nspawn,
       "/machine.slice/machine-build\\x2dbox.scope"},
      // LXC 4+ (and LXD), LXC before 4 on cgroup v1.
      {"/lxc.payload.db1", "db1", ContainerRuntime::Lxc, "/lxc.payload.db1"},
      {"/lxc.payload.db1/system.slice/cron.service", "db1", ContainerRuntime::Lxc,
       "/lxc.payload.db1"},
      {"/lxc/db1", "db1", ContainerRuntime::Lxc, "/lxc/db1"},
      // Kubernetes, systemd driver: each QoS class and each CRI runtime.
      {"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kUidSystemd +
           ".slice/cri-containerd-" + kId + ".scope",
       kId, ContainerRuntime::Containerd,
       "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kUidSystemd +
           ".slice/cri-containerd-" + kId + ".scope",
       kUid, PodQos::Burstable},
      {"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + kUidSystemd +
           ".slice/crio-" + kId + ".scope",
       kId, ContainerRuntime::CriO,
       "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + kUidSystemd +
           ".slice/crio-" + kId + ".scope",
       kUid, PodQos::BestEffort},
      {"/kubepods.slice/kubepods-pod" + kUidSystemd + ".slice/cri-containerd-" + kId + ".scope",
       kId, ContainerRuntime::Containerd,
       "/kubepods.slice/kubepods-pod" + kUidSystemd + ".slice/cri-containerd-" + kId + ".scope",
       kUid, PodQos::Guaranteed},
      // Kubernetes, cgroupfs driver: containerd's bare id, CRI-O's prefixed one.
      {"/kubepods/burstable/pod" + kUid + "/" + kId, kId, ContainerRuntime::Containerd,
       "/kubepods/burstable/pod" + kUid + "/" + kId, kUid, PodQos::Burstable},
      {"/kubepods/pod" + kUid + "/crio-" + kId, kId, ContainerRuntime::CriO,
       "/kubepods/pod" + kUid + "/crio-" + kId, kUid, PodQos::Guaranteed},
      {"/kubepods/besteffort/pod" + kUid + "/" + kId, kId, ContainerRuntime::Containerd,
       "/kubepods/besteffort/pod" + kUid + "/" + kId, kUid, PodQos::BestEffort},
      // A runtime nested in a container: the innermost container is the process's.
      {"/system.slice/docker-" + kId + ".scope/docker/" + std::string(64, 'a'),
       std::string(64, 'a'), ContainerRuntime::Docker,
       "/system.slice/docker-" + kId + ".scope/docker/" + std::string(64, 'a')},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    const auto got = container_of_cgroup(c.path);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->id, c.id);
    EXPECT_STREQ(container_runtime_name(got->runtime), container_runtime_name(c.runtime));
    EXPECT_EQ(got->cgroup, c.cgroup);
    EXPECT_EQ(got->pod_uid, c.pod_uid);
    EXPECT_STREQ(pod_qos_name(got->qos), pod_qos_name(c.qos));
  }
}

TEST(Container, HostCgroupsAndRuntimeHelpersAreNoContainer) {
  const std::string paths[] = {
      "/",
      "",
      "/system.slice/docker.service",  // the daemon itself
      "/system.slice/containerd.service",
      "/init.scope",
      "/user.slice/user-1000.slice/session-3.scope",
      "/machine.slice/libpod-conmon-" + kId + ".scope",        // podman's monitor
      "/system.slice/crio-conmon-" + kId + ".scope",           // CRI-O's monitor
      "/lxc.monitor.db1",                                      // LXC's monitor
      "/machine.slice/machine-qemu\\x2d1\\x2dvm.scope",        // a libvirt VM, not a container
      "/system.slice/docker-" + kId.substr(0, 63) + ".scope",  // not a whole id
      "/system.slice/docker-" + std::string(64, 'G') + ".scope",
      "/" + kId,                         // a bare id under no runtime's directory
      "/kubepods/burstable/pod" + kUid,  // a pod's own cgroup: no container yet
      "/kubepods.slice/kubepods-burstable.slice",
  };
  for (const std::string& path : paths) {
    EXPECT_FALSE(container_of_cgroup(path).has_value()) << path;
  }
}

TEST(Container, APodIsItsOwnCgroupAndEveryCgroupBelowIt) {
  const std::string systemd_pod =
      "/kubepods.slice/kubepods-besteffort.slice/"
      "kubepods-besteffort-pod" +
      kUidSystemd + ".slice";
  const std::string cgroupfs_pod = "/kubepods/pod" + kUid;
  for (const auto& [path, pod_cgroup, qos] : {
           std::tuple{systemd_pod, systemd_pod, PodQos::BestEffort},
           std::tuple{systemd_pod + "/cri-containerd-" + kId + ".scope", systemd_pod,
                      PodQos::BestEffort},
           std::tuple{cgroupfs_pod, cgroupfs_pod, PodQos::Guaranteed},
           std::tuple{cgroupfs_pod + "/" + kId, cgroupfs_pod, PodQos::Guaranteed},
       }) {
    SCOPED_TRACE(path);
    const auto pod = pod_of_cgroup(path);
    ASSERT_TRUE(pod.has_value());
    EXPECT_EQ(pod->uid, kUid);
    EXPECT_EQ(pod->cgroup, pod_cgroup);
    EXPECT_STREQ(pod_qos_name(pod->qos), pod_qos_name(qos));
  }
  EXPECT_FALSE(pod_of_cgroup("/kubepods.slice/kubepods-burstable.slice").has_value());
  EXPECT_FALSE(pod_of_cgroup("/system.slice/docker-" + kId + ".scope").has_value());
  EXPECT_FALSE(pod_of_cgroup("/system.slice/pod" + kUid).has_value());  // not under kubepods
}

TEST(Container, ShortIdIsTwelveDigitsOfAnIdAndTheWholeOfAName) {
  Container hex;
  hex.id = kId;
  EXPECT_EQ(hex.short_id(), kId.substr(0, 12));
  Container named;
  named.id = "web-1";
  named.runtime = ContainerRuntime::Nspawn;
  EXPECT_EQ(named.short_id(), "web-1");
}

}  // namespace
}  // namespace wp
