// SPDX-License-Identifier: Apache-2.0
// What the integration tests share: running the built tools with captured output, in the
// foreground or in the background with waits on what they print, skipping without root, JSON
// Lines, load scenarios' figures, and a scratch ext4 (with a journal) on a loop device per
// test suite. Every loop device a test attaches has the queue the tests rely on (LoopDevice).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace wp::testing {

namespace fs = std::filesystem;
using nlohmann::json;

inline fs::path build_dir() {
  const char* dir = std::getenv("WRITEPATH_BUILD");
  return dir ? fs::path(dir) : fs::current_path();
}

inline std::string writepath() {
  return (build_dir() / "writepath").string();
}

// Skips the test (or, in SetUpTestSuite, the suite) unless it runs as root: BPF, loop
// devices, mounts and sysctls all need it.
#define WP_REQUIRE_ROOT()                                                                    \
  do {                                                                                       \
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (BPF, loop devices, mounts, sysctls)"; \
  } while (0)

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Polls `done` until it holds or `timeout` has passed; says whether it held. For conditions a
// test can observe (a line on stderr, a file, a sysctl), never for a guess at how long
// something takes.
template <class Condition>
bool wait_until(Condition done, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// A command running in the background, stdin from /dev/null, stdout and stderr in files of
// its own (no shell, no quoting). A test acts while it runs, then stops it or waits for it. One
// still running when the test ends (a failed assertion) gets SIGINT, as a user would send, so
// that it cleans up its scratch filesystem and sysctls; SIGKILL if it ignores that.
class Background {
 public:
  explicit Background(const std::vector<std::string>& argv)
      : out_(temp_file("out")), err_(temp_file("err")) {
    pid_ = ::fork();
    if (pid_ == 0) {
      int o = ::open(out_.c_str(), O_WRONLY | O_TRUNC);
      int e = ::open(err_.c_str(), O_WRONLY | O_TRUNC);
      int devnull = ::open("/dev/null", O_RDONLY);
      ::dup2(o, 1);
      ::dup2(e, 2);
      ::dup2(devnull, 0);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      ::_exit(126);
    }
  }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  ~Background() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGINT);
      if (!wait_until([this] { return poll_exit(); }, std::chrono::seconds(60))) {
        ::kill(pid_, SIGKILL);
        wait();
      }
    }
    fs::remove(out_);
    fs::remove(err_);
  }

  pid_t pid() const { return pid_; }
  std::string out() const { return slurp(out_); }
  std::string err() const { return slurp(err_); }

  // Until `text` shows on its stderr (false if it exits first or `timeout` passes).
  bool wait_for_stderr(std::string_view text,
                       std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    wait_until([&] { return err().find(text) != std::string::npos || poll_exit(); }, timeout);
    return err().find(text) != std::string::npos;
  }
  // `writepath trace|record` without a command says this once its hooks are attached.
  bool wait_attached() { return wait_for_stderr("writes and syncs"); }

  // Its exit code (128 + signal if a signal ended it), once it has exited.
  int wait() {
    if (!exited_) {
      int status = 0;
      ::waitpid(pid_, &status, 0);
      record(status);
    }
    return exit_code_;
  }
  int stop(int signal = SIGINT) {
    if (!exited_) ::kill(pid_, signal);
    return wait();
  }

 private:
  static fs::path temp_file(const std::string& what) {
    std::string templ = (fs::temp_directory_path() / ("wp_it_" + what + ".XXXXXX")).string();
    int fd = ::mkstemp(templ.data());
    if (fd >= 0) ::close(fd);
    return templ;
  }
  bool poll_exit() {
    int status = 0;
    if (!exited_ && ::waitpid(pid_, &status, WNOHANG) == pid_) record(status);
    return exited_;
  }
  void record(int status) {
    exited_ = true;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  fs::path out_;
  fs::path err_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_code_ = -1;
};

// Runs argv to the end with its output captured.
inline RunResult run(const std::vector<std::string>& argv) {
  Background command(argv);
  RunResult r;
  r.exit_code = command.wait();
  r.out = command.out();
  r.err = command.err();
  return r;
}

inline bool sh(const std::string& command) {
  return std::system(command.c_str()) == 0;
}

inline std::vector<json> json_lines(const std::string& text) {
  std::vector<json> items;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) items.push_back(json::parse(line));
  return items;
}

inline std::vector<json> of_type(const std::vector<json>& items, const std::string& type,
                                 const std::string& comm = "wp_workload") {
  std::vector<json> out;
  for (const auto& item : items)
    if (item["type"] == type && (type == "summary" || item["comm"] == comm)) out.push_back(item);
  return out;
}

// `writepath load SCENARIO --json ARGS…`: its figures. The test fails (and gets `{}`) unless
// the run succeeded with one JSON document of that scenario.
inline json load_figures(const std::string& scenario, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {writepath(), "load", scenario, "--json"};
  argv.insert(argv.end(), args.begin(), args.end());
  RunResult r = run(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return json::object();
  json doc = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    ADD_FAILURE() << "expected one JSON document, got: " << r.out;
    return json::object();
  }
  EXPECT_EQ(doc["scenario"], scenario);
  return doc["figures"];
}

// A root test whose sizes and counts are drawn at random: the seed is printed with each
// failure, so a failing run can be told apart and its draw read back.
class SeededTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WP_REQUIRE_ROOT();
    const auto seed = std::random_device{}();
    rng_.seed(seed);
    seed_trace_.emplace(__FILE__, __LINE__, "seed " + std::to_string(seed));
  }
  std::mt19937 rng_;

 private:
  std::optional<::testing::ScopedTrace> seed_trace_;
};

// A block device's queue knobs (/sys/block/NAME/queue/KNOB) as they are when it is made, each
// put back when it goes: a loop device keeps its queue settings after it is detached, so
// whatever a user set is what the next user to attach that device finds.
class QueueKnobs {
 public:
  explicit QueueKnobs(std::string device) : queue_("/sys/block/" + std::move(device) + "/queue/") {
    for (const char* knob : {"scheduler", "max_sectors_kb", "write_cache"}) {
      const std::string value = get(knob);
      if (!value.empty()) saved_.emplace_back(knob, value);
    }
  }
  ~QueueKnobs() {
    for (const auto& [knob, value] : saved_) set(knob, value);
  }
  QueueKnobs(const QueueKnobs&) = delete;
  QueueKnobs& operator=(const QueueKnobs&) = delete;

  // The knob's value; of the scheduler's list ("none [mq-deadline] kyber"), the bracketed one.
  std::string get(const std::string& knob) const {
    std::string value = slurp(queue_ + knob);
    if (knob == "scheduler") {
      const auto open = value.find('['), close = value.find(']');
      value = open != std::string::npos && close > open ? value.substr(open + 1, close - open - 1)
                                                        : std::string();
    }
    while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) value.pop_back();
    return value;
  }
  // False when the kernel refused the value.
  bool set(const std::string& knob, const std::string& value) const {
    std::ofstream out(queue_ + knob);
    out << value;
    out.flush();
    return static_cast<bool>(out);
  }

 private:
  std::string queue_;
  std::vector<std::pair<std::string, std::string>> saved_;
};

// What the tests rely on of a loop device's queue, as a fresh one has it: a volatile write cache
// (so a sync's flush reaches the device and a write is durable "via flush", not "no-write-cache"),
// no I/O scheduler, requests of up to 1280 KiB.
inline const std::vector<std::pair<std::string, std::string>> kLoopQueue = {
    {"write_cache", "write back"}, {"scheduler", "none"}, {"max_sectors_kb", "1280"}};

// `losetup --find --show IMAGE`, its queue set to kLoopQueue (a test fails if the kernel refuses
// a knob), and, when it goes, the knobs put back as the device had them and the device detached.
class LoopDevice {
 public:
  explicit LoopDevice(const std::string& image) {
    FILE* p = ::popen(("losetup --find --show " + image).c_str(), "r");
    if (p == nullptr) return;
    char name[64] = {};
    if (std::fgets(name, sizeof(name), p) == nullptr) name[0] = 0;
    ::pclose(p);
    node_ = std::string(name, strcspn(name, "\n"));
    if (node_.empty()) return;
    knobs_.emplace(this->name());
    for (const auto& [knob, value] : kLoopQueue)
      EXPECT_TRUE(knobs_->set(knob, value))
          << "cannot set " << node_ << "'s queue/" << knob << " to " << value;
  }
  ~LoopDevice() {
    if (node_.empty()) return;
    knobs_.reset();  // while attached: the device is still the one they were read from
    sh("losetup -d " + node_);
  }
  LoopDevice(const LoopDevice&) = delete;
  LoopDevice& operator=(const LoopDevice&) = delete;

  // "/dev/loop3", "" if none was attached.
  const std::string& node() const { return node_; }
  // "loop3".
  std::string name() const { return fs::path(node_).filename().string(); }
  // Sets a queue knob for the test (false when the kernel refused it); it is put back too.
  bool set_queue(const std::string& knob, const std::string& value) const {
    return knobs_ && knobs_->set(knob, value);
  }

 private:
  std::string node_;
  std::optional<QueueKnobs> knobs_;
};

// ext4 with its journal on a loop device: the dev box's own root fs has no journal.
class ScratchExt4 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    WP_REQUIRE_ROOT();
    root_ = fs::temp_directory_path() / ("wp_it_" + std::to_string(::getpid()));
    fs::create_directories(root_ / "mnt");
    image_ = root_ / "fs.img";
    ASSERT_TRUE(sh("truncate -s 512M " + image_.string()));
    ASSERT_TRUE(sh("mkfs.ext4 -q -F -O has_journal " + image_.string()));
    loop_device_ = std::make_unique<LoopDevice>(image_.string());
    loop_ = loop_device_->node();
    ASSERT_FALSE(loop_.empty()) << "no free loop device";
    ASSERT_TRUE(sh("mount " + loop_ + " " + (root_ / "mnt").string()));
    mounted_ = true;
  }

  static void TearDownTestSuite() {
    if (mounted_) sh("umount " + (root_ / "mnt").string());
    loop_device_.reset();
    if (!root_.empty()) fs::remove_all(root_);
  }

  static std::string file(const std::string& name) { return (root_ / "mnt" / name).string(); }
  static std::string tool(const std::string& name) { return (build_dir() / name).string(); }

  // `writepath trace --format json -- wp_workload MODE FILE COUNT`
  static RunResult trace_workload(const std::string& mode, const std::string& path, int count) {
    return run({tool("writepath"), "trace", "--format", "json", "--", tool("wp_workload"), mode,
                path, std::to_string(count)});
  }

  static inline fs::path root_;
  static inline fs::path image_;
  static inline std::string loop_;
  static inline std::unique_ptr<LoopDevice> loop_device_;
  static inline bool mounted_ = false;
};

// A disk's own counters: /proc/diskstats' writes, sectors written and flushes completed
// (fields 5, 7 and 16 after the name; Documentation/admin-guide/iostats.rst, Linux 5.5+).
struct DiskCounters {
  std::uint64_t writes = 0, write_sectors = 0, flushes = 0, read_sectors = 0;
};
// Of a copy of /proc/diskstats taken earlier (`text`), or of the file as it is now.
inline DiskCounters disk_counters_in(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string major_no, minor_no, dev;
    fields >> major_no >> minor_no >> dev;
    if (dev != name) continue;
    std::vector<std::uint64_t> field(17, 0);
    for (int i = 1; i <= 16 && (fields >> field[i]); ++i) {
    }
    return DiskCounters{field[5], field[7], field[16], field[3]};
  }
  return {};
}
inline DiskCounters disk_counters(const std::string& name) {
  return disk_counters_in(slurp("/proc/diskstats"), name);
}

// cachestat(2)'s counts for a whole file (6.5+; syscall 451 on x86-64 and arm64), or nullopt
// where the kernel has none.
struct CacheCounts {
  std::uint64_t cache = 0, dirty = 0, writeback = 0, evicted = 0, recently_evicted = 0;
};
inline std::optional<CacheCounts> cachestat(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct {
    std::uint64_t off = 0, len = 0;  // len 0: to the end of the file
  } range;
  CacheCounts counts;
  const long rc = ::syscall(451, fd, &range, &counts, 0);
  ::close(fd);
  if (rc != 0) return std::nullopt;
  return counts;
}

// The mkfs command of the sweeps' file systems: ext4, xfs, btrfs.
inline std::string mkfs_of(const std::string& type) {
  if (type == "ext4") return "mkfs.ext4 -q -F";
  if (type == "xfs") return "mkfs.xfs -q -f";
  return "mkfs.btrfs -q -f";
}

// A device node's "major:minor" ("" when it cannot be statted).
inline std::string device_number(const std::string& node) {
  struct stat st {};
  if (::stat(node.c_str(), &st) != 0) return "";
  return std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev));
}

// A thin-provisioned disk: a loop device over a 512 MiB sparse file on a 48 MiB tmpfs, with an
// ext4 on it. Writeback runs it out of space: its write requests fail (ENOSPC) once about
// 40 MiB are on it. Taken apart when it goes.
class ThinDisk {
 public:
  ThinDisk() {
    std::string root = (fs::temp_directory_path() / "wp_thin.XXXXXX").string();
    if (::mkdtemp(root.data()) == nullptr) return;
    root_ = root;
    fs::create_directories(root_ / "backing");
    fs::create_directories(root_ / "mnt");
    if (!(backing_mounted_ = sh("mount -t tmpfs -o size=48m wp_thin " + backing()))) return;
    if (!sh("truncate -s 512M " + backing() + "/disk.img")) return;
    const std::string& node = loop_.emplace(backing() + "/disk.img").node();
    if (node.empty()) return;
    mounted_ = sh("mkfs.ext4 -q -F " + node + " && mount " + node + " " + mount_point());
  }
  ~ThinDisk() {
    if (mounted_) sh("umount " + mount_point());
    loop_.reset();
    // The loop device lets go of its image when its last opener closes it (udev probes it
    // after a change): until then the tmpfs holding the image is busy.
    if (backing_mounted_ &&
        !wait_until([this] { return sh("umount " + backing() + " 2>/dev/null"); },
                    std::chrono::seconds(30)))
      ADD_FAILURE() << backing() << " stayed busy: the loop device kept its image";
    std::error_code ec;  // a destructor: a busy mount is said above, never thrown
    if (!root_.empty()) fs::remove_all(root_, ec);
  }
  ThinDisk(const ThinDisk&) = delete;
  ThinDisk& operator=(const ThinDisk&) = delete;

  bool ready() const { return mounted_; }
  std::string mount_point() const { return (root_ / "mnt").string(); }
  std::string file(const std::string& name) const { return (root_ / "mnt" / name).string(); }
  std::string scratch(const std::string& name) const { return (root_ / name).string(); }
  std::string loop_name() const { return loop_ ? loop_->name() : ""; }
  // The loop device's "major:minor".
  std::string disk() const { return loop_ ? device_number(loop_->node()) : ""; }

 private:
  std::string backing() const { return (root_ / "backing").string(); }
  fs::path root_;
  std::optional<LoopDevice> loop_;
  bool backing_mounted_ = false, mounted_ = false;
};

// A mount made by a shell command (`mount …`) at `point`, unmounted when it goes.
class Mounted {
 public:
  Mounted(const std::string& command, std::string point)
      : point_(std::move(point)), ok_(sh(command)) {}
  ~Mounted() {
    if (ok_) sh("umount " + point_);
  }
  Mounted(const Mounted&) = delete;
  Mounted& operator=(const Mounted&) = delete;
  bool ok() const { return ok_; }

 private:
  std::string point_;
  bool ok_;
};

// A file system of `type` made by `mkfs` on a fresh 512 MiB loop device, mounted with
// `options` (mount -o; none if empty) for as long as it lives.
class ScratchFs {
 public:
  ScratchFs(const std::string& type, const std::string& mkfs, const std::string& options = "") {
    // A directory of its own: a test may hold two of the same type.
    std::string templ = (fs::temp_directory_path() / ("wp_fs_" + type + ".XXXXXX")).string();
    if (::mkdtemp(templ.data()) == nullptr) return;
    root_ = templ;
    fs::create_directories(root_ / "mnt");
    const std::string image = (root_ / "fs.img").string();
    if (!sh("truncate -s 512M " + image) || !sh(mkfs + " " + image + " >/dev/null 2>&1")) return;
    const std::string& node = loop_.emplace(image).node();
    if (node.empty()) return;
    mounted_ = sh("mount -t " + type + (options.empty() ? "" : " -o " + options) + " " + node +
                  " " + mount_point());
  }
  ~ScratchFs() {
    if (mounted_) sh("umount " + mount_point());
    loop_.reset();
    if (!root_.empty()) fs::remove_all(root_);
  }
  ScratchFs(const ScratchFs&) = delete;
  ScratchFs& operator=(const ScratchFs&) = delete;

  bool ready() const { return mounted_; }
  std::string mount_point() const { return (root_ / "mnt").string(); }
  std::string file(const std::string& name) const { return (root_ / "mnt" / name).string(); }
  std::string loop_name() const { return loop_ ? loop_->name() : ""; }
  // The loop device's queue/KNOB set to `value` for this disk's life (false when refused).
  bool set_queue(const std::string& knob, const std::string& value) const {
    return loop_ && loop_->set_queue(knob, value);
  }
  // The loop device's "major:minor".
  std::string disk() const { return loop_ ? device_number(loop_->node()) : ""; }
  // What stat() says of the mount point's device.
  std::string stat_dev() const {
    struct stat st {};
    if (::stat(mount_point().c_str(), &st) != 0) return "";
    return std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  }
  // Flush requests completed on the loop device (diskstats' field 16).
  std::uint64_t flushes_completed() const { return disk_counters(loop_name()).flushes; }

 private:
  fs::path root_;
  std::optional<LoopDevice> loop_;
  bool mounted_ = false;
};

// Where cgroup2 is mounted, as /proc/mounts says ("" if it is not).
inline std::string cgroup2_mount() {
  std::istringstream mounts(slurp("/proc/mounts"));
  for (std::string line; std::getline(mounts, line);) {
    std::istringstream fields(line);
    std::string source, point, type;
    if (fields >> source >> point >> type && type == "cgroup2") return point;
  }
  return "";
}

// Cgroups made for one test under the cgroup2 mount, removed deepest first when it ends (a
// cgroup can only be removed once no process is in it: the test's writers have exited by
// then). Directories that were there already are left alone.
class TestCgroups {
 public:
  explicit TestCgroups(std::string mount) : mount_(std::move(mount)) {}
  ~TestCgroups() {
    for (auto it = made_.rbegin(); it != made_.rend(); ++it) ::rmdir(it->c_str());
  }
  TestCgroups(const TestCgroups&) = delete;
  TestCgroups& operator=(const TestCgroups&) = delete;

  // Makes the cgroup at `path` under the root ("/a/b/c") and its missing parents; returns its
  // directory.
  std::string make(const std::string& path) {
    std::string dir = mount_;
    for (std::size_t at = 1; at <= path.size();) {
      std::size_t end = path.find('/', at);
      if (end == std::string::npos) end = path.size();
      dir += "/" + path.substr(at, end - at);
      at = end + 1;
      if (::mkdir(dir.c_str(), 0755) == 0)
        made_.push_back(dir);
      else if (errno != EEXIST)
        ADD_FAILURE() << "mkdir " << dir << ": " << std::strerror(errno);
    }
    return dir;
  }

 private:
  std::string mount_;
  std::vector<std::string> made_;
};

inline int line_count(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// Whether `program` is on the PATH.
inline bool have(const std::string& program) {
  return sh("command -v " + program + " >/dev/null 2>&1");
}

inline std::uint64_t u64(const json& v) {
  return v.get<std::uint64_t>();
}

}  // namespace wp::testing
