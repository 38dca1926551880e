// SPDX-License-Identifier: Apache-2.0
// Writes to a FUSE file system (Debian's bindfs, a real daemon started here in the foreground):
// each is handed to the daemon, which the item names by the pid this test started it as, and
// none is left dirty in the kernel; the fsync says the daemon was asked. Truths: dd's own
// count, the daemon's pid, and the bytes that reached bindfs's source directory.
#include <sys/stat.h>

#include <memory>

#include "harness.h"
#include "oracle.h"

namespace wp::testing {
namespace {

TEST(Fuse, WritesAreHandedToTheDaemonThatAnsweredThem) {
  WP_REQUIRE_ROOT();
  if (::system("command -v bindfs >/dev/null") != 0) GTEST_SKIP() << "no bindfs";
  std::string root = (fs::temp_directory_path() / "wp_fuse.XXXXXX").string();
  ASSERT_NE(::mkdtemp(root.data()), nullptr);
  const std::string source = root + "/source", mnt = root + "/mnt";
  fs::create_directories(source);
  fs::create_directories(mnt);
  auto daemon = std::make_unique<Background>(std::vector<std::string>{"bindfs", "-f", source, mnt});
  struct Cleanup {
    std::string root, mnt;
    std::unique_ptr<Background>* daemon;
    ~Cleanup() {
      sh("umount " + mnt + " 2>/dev/null");
      daemon->reset();
      fs::remove_all(root);
    }
  } cleanup{root, mnt, &daemon};
  ASSERT_TRUE(wait_until(
      [&] { return slurp("/proc/self/mountinfo").find(" " + mnt + " ") != std::string::npos; },
      std::chrono::seconds(10)))
      << daemon->err();

  const std::string path = mnt + "/f";
  constexpr int kCount = 16;
  RunResult res =
      run({writepath(), "trace", "--format", "json", "--", "dd", "if=/dev/urandom", "of=" + path,
           "bs=4k", "count=" + std::to_string(kCount), "conv=fsync", "status=none"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const oracle::FileItems f = oracle::items_of(json_lines(res.out), path);
  ASSERT_EQ(f.writes.size(), static_cast<std::size_t>(kCount));  // dd's count
  ASSERT_EQ(f.syncs.size(), 1u);
  EXPECT_EQ(f.syncs[0]["ret"], 0);
  // What bindfs made of them: the bytes are in its source directory.
  struct stat st {};
  ASSERT_EQ(::stat((source + "/f").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, kCount * 4096);

  const bool named = !f.writes[0]["fuse_daemon"].is_null();  // the kernel's FUSE tracepoints
  for (const json& w : f.writes) {
    EXPECT_EQ(w["state"], "handed") << w.dump();
    EXPECT_TRUE(w["requests"].empty()) << w.dump();
    if (!named) continue;
    EXPECT_EQ(w["fuse_daemon"]["pid"], daemon->pid()) << w.dump();
    EXPECT_EQ(w["fuse_daemon"]["comm"], "bindfs") << w.dump();
    EXPECT_TRUE(w["fuse_daemon"]["error"].is_null()) << w.dump();
  }
  if (named) {
    EXPECT_EQ(f.syncs[0]["fuse_daemon"]["pid"], daemon->pid()) << f.syncs[0].dump();
  } else {
    EXPECT_FALSE(fs::exists("/sys/kernel/btf/vmlinux") &&
                 slurp("/proc/kallsyms").find("__tracepoint_fuse_request_send") !=
                     std::string::npos)
        << "the kernel has FUSE tracepoints, yet no daemon was named";
  }
}

}  // namespace
}  // namespace wp::testing
