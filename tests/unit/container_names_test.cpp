// SPDX-License-Identifier: Apache-2.0
// container_names: each runtime's state files, written here in the shape the runtime writes
// them under a scratch root, and what is read of them; missing or broken files name nothing.
#include "probe/container_names.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace wp {
namespace {

namespace fs = std::filesystem;

const std::string kId = "51aa0c3b9d2e4f60718293a4b5c6d7e8f90112233445566778899aabbccddeeff";

class ContainerNamesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("wp_names_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& relative, const std::string& text) {
    const fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  ContainerNames names_of(ContainerRuntime runtime, const std::string& id = kId) {
    Container c;
    c.id = id;
    c.runtime = runtime;
    return container_names(c, root_.string());
  }

  fs::path root_;
};

TEST_F(ContainerNamesTest, DockerNamesItsContainerInConfigV2) {
  write(
      "var/lib/docker/containers/" + kId + "/config.v2.json",
      R"({"ID":")" + kId + R"(","Name":"/web","Config":{"Hostname":"51aa0c3b9d2e","Labels":{}}})");
  EXPECT_EQ(names_of(ContainerRuntime::Docker), (ContainerNames{"web", "", "", ""}));
}

TEST_F(ContainerNamesTest, DockershimPodsAreTheKubeletsLabels) {
  write("var/lib/docker/containers/" + kId + "/config.v2.json",
        R"({"Name":"/k8s_api_api-7f9_shop_8c1d_0","Config":{"Labels":{)"
        R"("io.kubernetes.pod.name":"api-7f9","io.kubernetes.pod.namespace":"shop"}}})");
  EXPECT_EQ(names_of(ContainerRuntime::Docker),
            (ContainerNames{"k8s_api_api-7f9_shop_8c1d_0", "api-7f9", "shop", ""}));
}

TEST_F(ContainerNamesTest, PodmanNamesItsContainersInOneList) {
  write("var/lib/containers/storage/overlay-containers/containers.json",
        R"([{"id":"0000","names":["other"]},{"id":")" + kId +
            R"(","names":["db","db-alias"],"image":"x"}])");
  EXPECT_EQ(names_of(ContainerRuntime::Podman), (ContainerNames{"db", "", "", ""}));
}

TEST_F(ContainerNamesTest, ContainerdsCriAnnotationsNameTheContainerAndItsPod) {
  write("run/containerd/io.containerd.runtime.v2.task/k8s.io/" + kId + "/config.json",
        R"({"ociVersion":"1.1.0","annotations":{"io.kubernetes.cri.container-type":"container",)"
        R"("io.kubernetes.cri.container-name":"api","io.kubernetes.cri.sandbox-name":"api-7f9",)"
        R"("io.kubernetes.cri.sandbox-namespace":"shop"}})");
  EXPECT_EQ(names_of(ContainerRuntime::Containerd), (ContainerNames{"api", "api-7f9", "shop", ""}));
}

TEST_F(ContainerNamesTest, NerdctlNamesItsContainerInItsOwnAnnotation) {
  write("run/containerd/io.containerd.runtime.v2.task/default/" + kId + "/config.json",
        R"({"annotations":{"nerdctl/name":"cache"}})");
  EXPECT_EQ(names_of(ContainerRuntime::Containerd), (ContainerNames{"cache", "", "", ""}));
}

TEST_F(ContainerNamesTest, CriOsAnnotationsNameTheContainerAndItsPod) {
  write("run/containers/storage/overlay-containers/" + kId + "/userdata/config.json",
        R"({"annotations":{"io.kubernetes.container.name":"worker",)"
        R"("io.kubernetes.pod.name":"worker-5d","io.kubernetes.pod.namespace":"batch"}})");
  EXPECT_EQ(names_of(ContainerRuntime::CriO), (ContainerNames{"worker", "worker-5d", "batch", ""}));
}

TEST_F(ContainerNamesTest, NspawnAndLxcAreNamedByTheirId) {
  EXPECT_EQ(names_of(ContainerRuntime::Nspawn, "web-1"), (ContainerNames{"web-1", "", "", ""}));
  EXPECT_EQ(names_of(ContainerRuntime::Lxc, "db1"), (ContainerNames{"db1", "", "", ""}));
}

TEST_F(ContainerNamesTest, MissingOrBrokenStateNamesNothing) {
  for (auto runtime : {ContainerRuntime::Docker, ContainerRuntime::Podman,
                       ContainerRuntime::Containerd, ContainerRuntime::CriO}) {
    EXPECT_EQ(names_of(runtime), ContainerNames{}) << container_runtime_name(runtime);
  }
  write("var/lib/docker/containers/" + kId + "/config.v2.json", "{\"Name\": ");  // cut short
  write("var/lib/containers/storage/overlay-containers/containers.json", R"({"id":1})");
  write("run/containers/storage/overlay-containers/" + kId + "/userdata/config.json",
        R"({"annotations":{"io.kubernetes.container.name":7}})");  // not a string
  EXPECT_EQ(names_of(ContainerRuntime::Docker), ContainerNames{});
  write("var/lib/docker/containers/" + kId + "/config.v2.json", R"({"Config":"x"})");
  EXPECT_EQ(names_of(ContainerRuntime::Podman), ContainerNames{});
  EXPECT_EQ(names_of(ContainerRuntime::CriO), ContainerNames{});
  EXPECT_EQ(names_of(ContainerRuntime::Docker), ContainerNames{});
}

// The UTS namespace's hostname, as the process itself sees it: the agent's own here (a
// container's is checked by the integration tests, which make one).
TEST(UtsHostname, IsWhatTheProcessSees) {
  char own[256] = {};
  ASSERT_EQ(::gethostname(own, sizeof(own) - 1), 0);
  EXPECT_EQ(uts_hostname(static_cast<std::uint32_t>(::getpid())), own);
  EXPECT_EQ(uts_hostname(0x7ffffffe), "");  // no such process
}

// A host cgroup is no container: nothing is read for it.
TEST(HostContainerNames, AHostCgroupHasNone) {
  EXPECT_EQ(host_container_names("/system.slice/cron.service", "/sys/fs/cgroup"), ContainerNames{});
  EXPECT_EQ(host_container_names("/", ""), ContainerNames{});
}

}  // namespace
}  // namespace wp
