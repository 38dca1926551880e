// SPDX-License-Identifier: Apache-2.0
// Containers built here from what a runtime is made of, since podman cannot run in this
// sandbox: a cgroup named as the runtime names its containers, entered before `unshare`
// gives the process its own pid, mount and UTS namespaces and a file system at /mnt. A docker
// container (systemd driver, a bind-mounted volume), a Kubernetes pod's containerd container
// (cgroupfs driver, burstable, an overlay) and a host writer write at once; every item of
// each carries what the test made (or no container at all) and both paths of its file, and
// --container and --pod select one container's writes exactly, counted against the writer's
// own count. Ids are random (the seed is printed); the cgroups are removed.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using namespace wp::testing;

constexpr int kWrites = 6;  // wp_workload fsync-each: a 4 KiB pwrite then an fsync, 6 times

std::string random_hex(std::mt19937_64& rng, std::size_t digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < digits; ++i) out += kHex[rng() % 16];
  return out;
}

// A container's writer: the shell enters the cgroup, then `unshare` gives the writer its own
// pid, mount and UTS namespaces, a hostname and its file system at /mnt (`mount_it`), as a
// runtime would; it writes `file` there and exits, while the container's shell stays a while
// (as a container's init does): a writer gone before the agent read its namespace is read
// through it.
std::string container_writer(const std::string& cgroup_dir, const std::string& hostname,
                             const std::string& mount_it, const std::string& file) {
  return "echo $$ > " + cgroup_dir + "/cgroup.procs && exec unshare --pid --mount --uts --fork " +
         "sh -c 'hostname " + hostname + " && " + mount_it + " && " +
         (build_dir() / "wp_workload").string() + " fsync-each " + file + " " +
         std::to_string(kWrites) + " && sleep 1'";
}

// A runtime's state file written for a test container (docker's config.v2.json), removed with
// the directories made for it when the test ends.
class StateFile {
 public:
  StateFile(const fs::path& path, const std::string& text) {
    for (fs::path dir = path.parent_path(); !dir.empty() && !fs::exists(dir);
         dir = dir.parent_path())
      made_.insert(made_.begin(), dir);
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    file_ = path;
  }
  ~StateFile() {
    std::error_code ec;
    fs::remove(file_, ec);
    for (auto it = made_.rbegin(); it != made_.rend(); ++it) fs::remove(*it, ec);
  }
  StateFile(const StateFile&) = delete;
  StateFile& operator=(const StateFile&) = delete;

 private:
  fs::path file_;
  std::vector<fs::path> made_;  // outermost first
};

// The host's inode of an item's file: an overlay file's upper file, where its data is.
// A file as stat() names it: device ("MAJ:MIN", as the items print it) and inode. Other tests'
// writers run beside these, on file systems of their own whose small inode numbers are these'.
struct FileId {
  std::string dev;
  std::uint64_t ino = 0;
  bool operator==(const FileId&) const = default;
};

FileId host_file_of(const json& item) {
  const json& file = item["backing"].is_null() ? item : item["backing"];
  return {file["dev"].is_string() ? file["dev"].get<std::string>() : "", u64(file["ino"])};
}

FileId file_id(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev)), st.st_ino};
}

// Two containers (random ids) and a host writer writing at once, under `trace --format json`
// with `filter`: what the trace printed and which file each wrote.
struct Ids {
  std::string docker_id, docker_name, docker_hostname, pod_uid, containerd_id, pod_hostname;
  std::string pod_name, pod_namespace;  // as the CRI plugin's annotations name them
};

std::string pod_uid(std::mt19937_64& rng) {
  return random_hex(rng, 8) + "-" + random_hex(rng, 4) + "-" + random_hex(rng, 4) + "-" +
         random_hex(rng, 4) + "-" + random_hex(rng, 12);
}

// containerd's OCI bundle config for a pod's container, with the annotations its CRI plugin
// writes, where containerd keeps it.
fs::path containerd_config(const std::string& id) {
  return "/run/containerd/io.containerd.runtime.v2.task/k8s.io/" + id + "/config.json";
}
std::string cri_annotations(const std::string& container, const std::string& pod,
                            const std::string& ns) {
  return R"({"ociVersion":"1.1.0","annotations":{"io.kubernetes.cri.container-type":"container",)"
         R"("io.kubernetes.cri.container-name":")" +
         container + R"(","io.kubernetes.cri.sandbox-name":")" + pod +
         R"(","io.kubernetes.cri.sandbox-namespace":")" + ns + R"("}})";
}

Ids draw_ids(std::mt19937_64& rng) {
  Ids ids;
  ids.docker_id = random_hex(rng, 64);
  ids.docker_name = "web-" + random_hex(rng, 6);
  ids.docker_hostname = "web-host-" + random_hex(rng, 6);
  ids.pod_hostname = "api-" + random_hex(rng, 6);
  ids.containerd_id = random_hex(rng, 64);
  ids.pod_uid = pod_uid(rng);
  ids.pod_name = "api-" + random_hex(rng, 5);
  ids.pod_namespace = "shop-" + random_hex(rng, 4);
  return ids;
}

struct ThreeWriters : Ids {
  std::string docker_path, docker_host_path, pod_path,
      pod_host_path;                     // in the container, on the host
  FileId docker_ino, pod_ino, host_ino;  // the host's files
  std::vector<json> items;
};

// A scratch ext4 for the writers' files, the cgroup2 mount (skipped without one), the test's
// cgroups and a random generator whose seed every failure prints.
class ContainerTrace : public ScratchExt4 {
 protected:
  void SetUp() override {
    ScratchExt4::SetUp();
    const std::string mount = cgroup2_mount();
    if (mount.empty()) GTEST_SKIP() << "no cgroup2 mounted";
    cgroups_.emplace(mount);
    const auto seed = std::random_device{}();
    rng_.seed(seed);
    trace_.emplace(__FILE__, __LINE__, "seed " + std::to_string(seed));
  }
  ThreeWriters run_three_writers(const Ids& ids, std::vector<std::string> filter);

  std::optional<TestCgroups> cgroups_;
  std::mt19937_64 rng_;
  std::optional<::testing::ScopedTrace> trace_;
};

ThreeWriters ContainerTrace::run_three_writers(const Ids& ids, std::vector<std::string> filter) {
  TestCgroups& cgroups = *cgroups_;
  ScratchExt4& scratch = *this;
  ThreeWriters w;
  static_cast<Ids&>(w) = ids;
  const std::string docker_dir = cgroups.make("/system.slice/docker-" + w.docker_id + ".scope");
  // docker's own record of the container, where dockerd keeps it: its name.
  const StateFile docker_state(
      "/var/lib/docker/containers/" + w.docker_id + "/config.v2.json",
      R"({"ID":")" + w.docker_id + R"(","Name":"/)" + w.docker_name + R"(","Config":{}})");
  const std::string pod_dir =
      cgroups.make("/kubepods/burstable/pod" + w.pod_uid + "/" + w.containerd_id);
  const StateFile pod_state(containerd_config(w.containerd_id),
                            cri_annotations("api", w.pod_name, w.pod_namespace));
  // The docker container's data is a bind-mounted volume; the pod's container has an overlay
  // of its own. Both see their file at /mnt; the host has it elsewhere.
  const std::string volume = scratch.file("docker-volume"), lower = scratch.file("pod-lower"),
                    upper = scratch.file("pod-upper"), work = scratch.file("pod-work");
  for (const auto& dir : {volume, lower, upper, work}) fs::create_directories(dir);
  w.docker_path = "/mnt/docker.dat";
  w.docker_host_path = volume + "/docker.dat";
  w.pod_path = "/mnt/pod.dat";
  w.pod_host_path = upper + "/pod.dat";
  const std::string on_host = scratch.file("host.dat");
  const std::string bind = "mount --bind " + volume + " /mnt";
  const std::string overlay = "mount -t overlay overlay -o lowerdir=" + lower +
                              ",upperdir=" + upper + ",workdir=" + work + " /mnt";

  std::vector<std::string> argv = {writepath(), "trace", "--format", "json"};
  argv.insert(argv.end(), filter.begin(), filter.end());
  Background tracer(argv);
  if (!tracer.wait_attached()) {
    ADD_FAILURE() << tracer.err();
    return w;
  }
  Background docker(
      {"sh", "-c", container_writer(docker_dir, w.docker_hostname, bind, w.docker_path)});
  Background pod({"sh", "-c", container_writer(pod_dir, w.pod_hostname, overlay, w.pod_path)});
  const RunResult host =
      run({(build_dir() / "wp_workload").string(), "fsync-each", on_host, std::to_string(kWrites)});
  EXPECT_EQ(host.exit_code, 0) << host.err;
  EXPECT_EQ(docker.wait(), 0) << docker.err();
  EXPECT_EQ(pod.wait(), 0) << pod.err();
  EXPECT_EQ(tracer.stop(SIGINT), 0) << tracer.err();
  w.docker_ino = file_id(w.docker_host_path);
  w.pod_ino = file_id(w.pod_host_path);
  w.host_ino = file_id(on_host);
  w.items = json_lines(tracer.out());
  return w;
}

// Every item names its container (the host's none) and, beside the path its writer sees, the
// host's path of the file: a bound volume's directory, an overlay's upper directory. The
// recording keeps what the host said of each container: its report, made once the runtime's
// state is gone, names them as the live trace did.
TEST_F(ContainerTrace, EveryItemNamesTheContainerItCameFromAndHostItemsNone) {
  const std::string recording = file("containers.wpt");
  const ThreeWriters w =
      run_three_writers(draw_ids(rng_), {"--comm", "wp_workload", "--save", recording});

  int docker_items = 0, pod_items = 0, host_items = 0;
  for (const auto& item : w.items) {
    // The writers' writes and fsyncs, counted below (their opens are name-change items).
    if (item["type"] != "write" && item["type"] != "fsync") continue;
    const auto ino = host_file_of(item);
    if (ino == w.docker_ino) {
      ++docker_items;
      EXPECT_EQ(item["path"], w.docker_path) << item;
      EXPECT_EQ(item["host_path"], w.docker_host_path) << item;
      ASSERT_TRUE(item["container"].is_object()) << item;
      EXPECT_EQ(item["container"]["id"], w.docker_id) << item;
      EXPECT_EQ(item["container"]["runtime"], "docker") << item;
      EXPECT_EQ(item["container"]["name"], w.docker_name) << item;
      EXPECT_EQ(item["container"]["hostname"], w.docker_hostname) << item;
      EXPECT_TRUE(item["container"]["pod_uid"].is_null()) << item;
    } else if (ino == w.pod_ino) {
      ++pod_items;
      EXPECT_EQ(item["path"], w.pod_path) << item;
      EXPECT_EQ(item["host_path"], w.pod_host_path) << item;
      ASSERT_TRUE(item["container"].is_object()) << item;
      EXPECT_EQ(item["container"]["id"], w.containerd_id) << item;
      EXPECT_EQ(item["container"]["runtime"], "containerd") << item;
      EXPECT_EQ(item["container"]["hostname"], w.pod_hostname) << item;
      EXPECT_EQ(item["container"]["name"], "api") << item;
      EXPECT_EQ(item["container"]["pod"], w.pod_name) << item;
      EXPECT_EQ(item["container"]["namespace"], w.pod_namespace) << item;
      EXPECT_EQ(item["container"]["pod_uid"], w.pod_uid) << item;
      EXPECT_EQ(item["container"]["qos"], "burstable") << item;
    } else if (ino == w.host_ino) {
      ++host_items;
      EXPECT_TRUE(item["container"].is_null()) << item;
      EXPECT_TRUE(item["host_path"].is_null()) << item;  // the agent's own namespace
    }
  }
  // Each writer's pwrites and fsyncs, as it made them.
  EXPECT_EQ(docker_items, 2 * kWrites);
  EXPECT_EQ(pod_items, 2 * kWrites);
  EXPECT_EQ(host_items, 2 * kWrites);

  ASSERT_FALSE(fs::exists("/var/lib/docker/containers/" + w.docker_id));
  const RunResult report = run({writepath(), "report", recording, "--format", "json"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  int named = 0;
  for (const auto& item : json_lines(report.out)) {
    if (item["type"] != "write" && item["type"] != "fsync") continue;
    if (host_file_of(item) == w.docker_ino) {
      ++named;
      EXPECT_EQ(item["container"]["id"], w.docker_id) << item;
      EXPECT_EQ(item["container"]["name"], w.docker_name) << item;
      EXPECT_EQ(item["container"]["hostname"], w.docker_hostname) << item;
    } else if (host_file_of(item) == w.pod_ino) {
      ++named;
      EXPECT_EQ(item["container"]["hostname"], w.pod_hostname) << item;
    }
  }
  EXPECT_EQ(named, 4 * kWrites) << report.out;
}

// Exactly one writer's pwrites and fsyncs (its file on the host, `ino`), as it made them, and
// nothing of the other container's or the host's; each item's container has `key` = `value`.
void expect_only_writes_of(const ThreeWriters& w, const FileId& ino, const char* key,
                           const std::string& value) {
  EXPECT_EQ(of_type(w.items, "write").size(), static_cast<std::size_t>(kWrites));
  EXPECT_EQ(of_type(w.items, "fsync").size(), static_cast<std::size_t>(kWrites));
  for (const auto& item : w.items) {
    if (item["type"] == "summary") continue;
    EXPECT_EQ(item["container"][key], value) << item;
    // A name-change call (the runtime's mkdir, the writer's open) names no data of its own.
    if (item["type"] == "namespace") continue;
    EXPECT_EQ(host_file_of(item), ino) << "not the container's: " << item;
  }
}

void expect_only_the_pods_writes(const ThreeWriters& w) {
  expect_only_writes_of(w, w.pod_ino, "id", w.containerd_id);
}

TEST_F(ContainerTrace, ContainerFlagSelectsExactlyThatContainersWrites) {
  // A prefix of the pod's container's id, as `docker ps` shows ids.
  const Ids ids = draw_ids(rng_);
  expect_only_the_pods_writes(
      run_three_writers(ids, {"--container", ids.containerd_id.substr(0, 12)}));
}

TEST_F(ContainerTrace, ContainerFlagTakesTheNameTheRuntimeGaveIt) {
  const Ids ids = draw_ids(rng_);
  const ThreeWriters w = run_three_writers(ids, {"--container", ids.docker_name});
  expect_only_writes_of(w, w.docker_ino, "name", ids.docker_name);
}

TEST_F(ContainerTrace, PodFlagSelectsExactlyThePodsContainers) {
  const Ids ids = draw_ids(rng_);
  expect_only_the_pods_writes(run_three_writers(ids, {"--pod", ids.pod_uid.substr(0, 8)}));
}

TEST_F(ContainerTrace, PodFlagTakesThePodsNameAndNamespace) {
  const Ids ids = draw_ids(rng_);
  expect_only_the_pods_writes(run_three_writers(ids, {"--pod", ids.pod_name}));
  expect_only_the_pods_writes(
      run_three_writers(ids, {"--pod", ids.pod_namespace + "/" + ids.pod_name}));
}

// --namespace: every pod of the namespace on this node (a containerd pod with the cgroupfs
// driver, a CRI-O pod with systemd's), each counted against its writer's own count, and nothing
// of a pod of another namespace. The kernel's filter holds both pods' cgroups.
TEST_F(ContainerTrace, NamespaceFlagSelectsEveryPodOfTheNamespaceAndNoOther) {
  const std::string ns = "shop-" + random_hex(rng_, 4), other_ns = "batch-" + random_hex(rng_, 4);
  struct PodWriter {
    std::string uid, container_id, cgroup, state, file;
    FileId ino;
  };
  std::vector<PodWriter> pods(3);  // two in `ns`, one in `other_ns`
  std::vector<std::unique_ptr<StateFile>> states;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    PodWriter& p = pods[i];
    p.uid = pod_uid(rng_);
    p.container_id = random_hex(rng_, 64);
    p.file = file("pod" + std::to_string(i) + ".dat");
    const std::string pod_ns = i < 2 ? ns : other_ns;
    const std::string name = "pod-" + random_hex(rng_, 5);
    if (i == 1) {  // CRI-O, systemd driver
      std::string uid = p.uid;
      std::replace(uid.begin(), uid.end(), '-', '_');
      p.cgroup = cgroups_->make(
          "/kubepods.slice/kubepods-besteffort.slice/"
          "kubepods-besteffort-pod" +
          uid + ".slice/crio-" + p.container_id + ".scope");
      states.push_back(std::make_unique<StateFile>(
          "/run/containers/storage/overlay-containers/" + p.container_id + "/userdata/config.json",
          R"({"annotations":{"io.kubernetes.container.name":"c","io.kubernetes.pod.name":")" +
              name + R"(","io.kubernetes.pod.namespace":")" + pod_ns + R"("}})"));
    } else {  // containerd, cgroupfs driver
      p.cgroup = cgroups_->make("/kubepods/burstable/pod" + p.uid + "/" + p.container_id);
      states.push_back(std::make_unique<StateFile>(containerd_config(p.container_id),
                                                   cri_annotations("c", name, pod_ns)));
    }
  }

  Background tracer({writepath(), "trace", "--format", "json", "--namespace", ns});
  ASSERT_TRUE(tracer.wait_attached()) << tracer.err();
  std::vector<std::unique_ptr<Background>> writers;
  for (const PodWriter& p : pods)
    writers.push_back(std::make_unique<Background>(
        std::vector<std::string>{"sh", "-c", container_writer(p.cgroup, "pod", "true", p.file)}));
  for (auto& w : writers) EXPECT_EQ(w->wait(), 0) << w->err();
  EXPECT_EQ(tracer.stop(SIGINT), 0) << tracer.err();
  for (PodWriter& p : pods) p.ino = file_id(p.file);

  std::vector<int> items(pods.size());
  for (const auto& item : json_lines(tracer.out())) {
    if (item["type"] == "summary") continue;
    EXPECT_EQ(item["container"]["namespace"], ns) << item;
    if (item["type"] == "namespace") continue;  // counted: the pods' writes and fsyncs
    const auto at = std::find_if(pods.begin(), pods.end(),
                                 [&](const PodWriter& p) { return p.ino == host_file_of(item); });
    ASSERT_NE(at, pods.end()) << "not a pod's of the namespace: " << item;
    ++items[static_cast<std::size_t>(at - pods.begin())];
    EXPECT_EQ(item["container"]["namespace"], ns) << item;
  }
  EXPECT_EQ(items[0], 2 * kWrites);
  EXPECT_EQ(items[1], 2 * kWrites);
  EXPECT_EQ(items[2], 0);

  const RunResult none = run({writepath(), "trace", "--namespace", "wp-no-such-namespace"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(line_count(none.err), 1) << none.err;
  EXPECT_NE(none.err.find("no pod of this namespace"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find(ns), std::string::npos) << none.err;  // the namespaces found
}

// doctor counts what the hierarchy holds: the containers made here among any others.
TEST_F(ContainerTrace, DoctorCountsTheContainersByRuntimeAndThePods) {
  const auto count_in = [](const std::string& doctor, const std::string& what) {
    const auto line_at = doctor.find("\ncontainers (");
    if (line_at == std::string::npos) return -1;
    const std::string line = doctor.substr(line_at, doctor.find('\n', line_at + 1) - line_at);
    std::smatch m;  // "docker 2", "containerd 1", "in 1 pod"
    if (!std::regex_search(line, m, std::regex("[ ,:]" + what + " ([0-9]+)"))) return 0;
    return std::stoi(m[1]);
  };
  const RunResult before = run({writepath(), "doctor"});
  ASSERT_EQ(before.exit_code, 0) << before.err;
  const Ids ids = draw_ids(rng_);
  cgroups_->make("/system.slice/docker-" + ids.docker_id + ".scope");
  cgroups_->make("/kubepods/burstable/pod" + ids.pod_uid + "/" + ids.containerd_id);
  const RunResult after = run({writepath(), "doctor"});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  ASSERT_GE(count_in(before.out, "docker"), 0) << before.out;
  EXPECT_EQ(count_in(after.out, "docker"), count_in(before.out, "docker") + 1) << after.out;
  EXPECT_EQ(count_in(after.out, "containerd"), count_in(before.out, "containerd") + 1) << after.out;
  EXPECT_EQ(count_in(after.out, "in"), count_in(before.out, "in") + 1) << after.out;  // pods
}

TEST_F(ContainerTrace, AContainerFlagNamingNoneOrTwoIsOneLine) {
  // Two containers whose ids share their first 12 digits.
  const std::string shared = random_hex(rng_, 12);
  const std::string a = shared + random_hex(rng_, 52), b = shared + random_hex(rng_, 52);
  cgroups_->make("/system.slice/docker-" + a + ".scope");
  cgroups_->make("/machine.slice/libpod-" + b + ".scope");

  const RunResult two = run({writepath(), "trace", "--container", shared});
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_EQ(line_count(two.err), 1) << two.err;
  EXPECT_NE(two.err.find("names 2 of them"), std::string::npos) << two.err;
  EXPECT_NE(two.err.find("(docker)"), std::string::npos) << two.err;
  EXPECT_NE(two.err.find("(podman)"), std::string::npos) << two.err;

  const RunResult none = run({writepath(), "trace", "--container", "wp-no-such-container"});
  const RunResult no_pod = run({writepath(), "trace", "--pod", "wp-no-such-pod"});
  EXPECT_EQ(no_pod.exit_code, 2);
  EXPECT_EQ(line_count(no_pod.err), 1) << no_pod.err;
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(line_count(none.err), 1) << none.err;
  EXPECT_NE(none.err.find("nothing has this id or name"), std::string::npos) << none.err;

  const RunResult both =
      run({writepath(), "trace", "--container", shared, "--cgroup", "/system.slice"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("excludes"), std::string::npos) << both.err;
}

}  // namespace
