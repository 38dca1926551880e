// What the integration tests share: running the built tools with captured output, JSON
// Lines, and a scratch ext4 (with a journal) on a loop device per test suite.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
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

// Runs argv with stdout and stderr captured in files (no shell, no quoting).
inline RunResult run(const std::vector<std::string>& argv) {
  fs::path out = fs::temp_directory_path() / ("wp_it_out_" + std::to_string(::getpid()));
  fs::path err = fs::temp_directory_path() / ("wp_it_err_" + std::to_string(::getpid()));
  pid_t pid = ::fork();
  if (pid == 0) {
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(o, 1);
    ::dup2(e, 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(126);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove(out);
  fs::remove(err);
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

// ext4 with its journal on a loop device: the dev box's own root fs has no journal.
class ScratchExt4 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (::geteuid() != 0) GTEST_SKIP() << "integration tests need root";
    root_ = fs::temp_directory_path() / ("wp_it_" + std::to_string(::getpid()));
    fs::create_directories(root_ / "mnt");
    image_ = root_ / "fs.img";
    ASSERT_TRUE(sh("truncate -s 512M " + image_.string()));
    ASSERT_TRUE(sh("mkfs.ext4 -q -F -O has_journal " + image_.string()));
    FILE* p = ::popen(("losetup --find --show " + image_.string()).c_str(), "r");
    char name[64] = {};
    ASSERT_NE(p, nullptr);
    ASSERT_NE(std::fgets(name, sizeof(name), p), nullptr);
    ::pclose(p);
    loop_ = std::string(name, strcspn(name, "\n"));
    ASSERT_TRUE(sh("mount " + loop_ + " " + (root_ / "mnt").string()));
    mounted_ = true;
  }

  static void TearDownTestSuite() {
    if (mounted_) sh("umount " + (root_ / "mnt").string());
    if (!loop_.empty()) sh("losetup -d " + loop_);
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
  static inline bool mounted_ = false;
};

inline int line_count(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

inline std::uint64_t u64(const json& v) {
  return v.get<std::uint64_t>();
}

}  // namespace wp::testing
