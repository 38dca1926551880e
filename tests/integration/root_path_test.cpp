// SPDX-License-Identifier: Apache-2.0
// Paths of a writer whose root is not the host's: chroot'ed in its own mount namespace (build
// sandboxes, mock, schroot, runc's no_pivot_root), chroot'ed in the agent's, and pivot_root'ed
// into a new root (every container runtime's default). Each item names the file as the writer
// sees it, and host_path where the host has it. Truths: what the writer itself read from
// /proc/$$/fd for the descriptor it wrote through, and the place the test made its root at.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>
#include <sstream>

#include "harness.h"

namespace {

using namespace wp::testing;

std::uint64_t inode_of(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

// A root directory for one writer on the scratch ext4, holding only what the writer runs: a
// shell, readlink, dd and umount, and the libraries ldd says they load (copied, not bound:
// no host directory is mounted below it, so removing it removes nothing of the host's), an
// empty /proc to mount, /data, and /gate, a FIFO the writer waits on before it exits.
class WriterRoot {
 public:
  explicit WriterRoot(const fs::path& dir) : dir_(dir) {
    for (const char* d : {"bin", "proc", "data", "old"}) fs::create_directories(dir_ / d);
    std::set<std::string> libraries;
    for (const auto& [name, binary] : {std::pair{"sh", "/bin/sh"}, std::pair{"readlink", ""},
                                       std::pair{"dd", ""}, std::pair{"umount", ""}}) {
      const std::string from = *binary ? binary : "/usr/bin/" + std::string(name);
      fs::copy_file(fs::canonical(from), dir_ / "bin" / name);
      const RunResult ldd = run({"ldd", from});
      std::istringstream lines(ldd.out);
      // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)" or "/lib64/ld-linux-x86-64.so.2 (0x…)"
      for (std::string line; std::getline(lines, line);) {
        const auto slash = line.find('/');
        if (slash == std::string::npos) continue;
        libraries.insert(line.substr(slash, line.find(' ', slash) - slash));
      }
    }
    for (const std::string& lib : libraries) {
      const fs::path to = dir_ / fs::path(lib).relative_path();
      fs::create_directories(to.parent_path());
      fs::copy_file(fs::canonical(lib), to);
    }
    ok_ = ::mkfifo((dir_ / "gate").c_str(), 0600) == 0;
  }
  ~WriterRoot() {
    // Only if nothing is mounted on its /proc any more (a mount would be the host's /proc).
    struct stat root {};
    struct stat proc {};
    if (::stat(dir_.c_str(), &root) == 0 && ::stat((dir_ / "proc").c_str(), &proc) == 0 &&
        root.st_dev == proc.st_dev)
      fs::remove_all(dir_);
  }
  WriterRoot(const WriterRoot&) = delete;
  WriterRoot& operator=(const WriterRoot&) = delete;

  bool ok() const { return ok_; }
  const fs::path& dir() const { return dir_; }
  // The file the writer writes, as the host names it.
  fs::path host_file() const { return fs::canonical(dir_) / "data" / "x"; }
  // What the writer read from /proc/$$/fd for the descriptor it wrote through.
  std::string seen() const {
    std::string s = slurp(dir_ / "data" / "seen");
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }
  // Lets the writer go: it waits in open() of the FIFO for a writer, so an open for writing
  // succeeds only once it is there (ENXIO before).
  bool release() const {
    return wait_until([this] {
      const int fd = ::open((dir_ / "gate").c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0) return false;
      ::close(fd);
      return true;
    });
  }

 private:
  fs::path dir_;
  bool ok_ = false;
};

// The writer, run by the root's shell with `prefix` before its absolute names ("" inside its
// root): it opens data/x on fd 3, writes down what /proc says fd 3 is, writes 8 KiB through it
// with the shell's own printf (the items whose process is still there when the agent reads its
// namespace, as it waits at the gate), has dd fsync the file (making those writes durable, so
// their items come out while it waits), and waits at the gate.
std::string writer_script(const std::string& prefix) {
  return "exec 3>" + prefix + "/data/x && readlink /proc/$$/fd/3 > " + prefix +
         "/data/seen && printf %4096s a >&3 && printf %4096s b >&3 && dd if=" + prefix +
         "/data/seen of=" + prefix + "/data/x bs=1 count=0 conv=notrunc,fsync status=none && " +
         "{ read _ < " + prefix + "/gate; true; }";
}

// Quotes `s` for sh -c (single quotes, a quote inside closed and escaped).
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

class WriterRootPaths : public ScratchExt4 {
 protected:
  void SetUp() override {
    ScratchExt4::SetUp();
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    root_dir_.emplace(fs::path(file("roots")) / name);
    ASSERT_TRUE(root_dir_->ok());
  }
  void TearDown() override { root_dir_.reset(); }

  // `writepath trace --format json -- COMMAND`, the writer released once the trace has shown
  // a durable write of its shell and dd's fsync (their records were decoded while the shell
  // kept the namespace: the fsync's record comes after the flush that made the writes
  // durable, and once the shell is gone too the namespace's table goes); the items of the
  // writer's file (by the inode stat() gives).
  std::vector<json> trace_writer(const std::vector<std::string>& command) {
    const WriterRoot& root = *root_dir_;
    const fs::path out = root.dir().parent_path() / (root.dir().filename().string() + ".jsonl");
    std::vector<std::string> argv = {writepath(), "trace", "--format", "json", "-o", out, "--"};
    argv.insert(argv.end(), command.begin(), command.end());
    Background tracer(argv);
    const auto durable_write_and_fsync = [&] {
      const std::uint64_t ino = inode_of(root.host_file());
      if (ino == 0 || !fs::exists(out)) return false;
      bool write = false, fsync = false;
      std::istringstream lines(slurp(out));
      for (std::string line; std::getline(lines, line);) {
        const json item = json::parse(line, nullptr, false);
        if (!item.is_object() || item.value("ino", 0ull) != ino) continue;
        write |= item.value("type", "") == "write" && item.value("comm", "") == "sh";
        fsync |= item.value("type", "") == "fsync" && item.value("comm", "") == "dd";
      }
      return write && fsync;
    };
    EXPECT_TRUE(wait_until(durable_write_and_fsync)) << tracer.err();
    EXPECT_TRUE(root.release());
    EXPECT_EQ(tracer.wait(), 0) << tracer.err();
    std::vector<json> items;
    const std::uint64_t ino = inode_of(root.host_file());
    for (const json& item : json_lines(slurp(out)))
      if ((item["type"] == "write" || item["type"] == "fsync") && item["ino"] == ino)
        items.push_back(item);
    fs::remove(out);
    return items;
  }

  // The writer's items: its shell's writes (2, of 4 KiB each; dash's printf writes each in
  // one call) and dd's fsync name the file as the writer saw it, and carry `host_path` (null:
  // the same as the path). dd is often gone before the agent decodes its record: its items
  // are found through the namespace its path record names (the shell is still in it).
  void expect_named(const std::vector<json>& items, const std::optional<std::string>& host_path) {
    const std::string seen = root_dir_->seen();
    ASSERT_FALSE(seen.empty()) << "the writer read nothing from /proc";
    std::size_t writes = 0, syncs = 0;
    for (const json& item : items) {
      SCOPED_TRACE(item.dump());
      EXPECT_EQ(item["path"], seen);
      if (item["type"] == "fsync") {
        ++syncs;
        EXPECT_EQ(item["comm"], "dd");
      } else {
        ++writes;
        EXPECT_EQ(item["comm"], "sh");
        EXPECT_EQ(item["state"], "durable");
      }
      if (host_path)
        EXPECT_EQ(item["host_path"], *host_path);
      else
        EXPECT_TRUE(item["host_path"].is_null());
    }
    EXPECT_EQ(writes, 2u);
    EXPECT_EQ(syncs, 1u);
  }

  std::optional<WriterRoot> root_dir_;
};

// unshare --mount, then chroot into a plain directory of the scratch file system (no mount of
// its own): the writer sees /data/x; the host has it under the directory, found through the
// namespace's whole mount table (the writer's own lists only its /proc).
TEST_F(WriterRootPaths, AWriterChrootedInItsOwnMountNamespaceSeesItsOwnPath) {
  const std::string box = root_dir_->dir().string();
  const std::vector<json> items =
      trace_writer({"unshare", "--mount", "--propagation", "private", "sh", "-c",
                    "mount -t proc proc " + box + "/proc && exec chroot " + box + " /bin/sh -c " +
                        quoted(writer_script(""))});
  EXPECT_EQ(root_dir_->seen(), "/data/x");
  expect_named(items, root_dir_->host_file().string());
}

// The same chroot without a mount namespace of its own (the agent's): the path from the
// namespace's root that the kernel's walk went on to is the host's.
TEST_F(WriterRootPaths, AWriterChrootedInTheAgentsMountNamespaceHasItsDirectoryAsHostPath) {
  const std::string box = root_dir_->dir().string();
  const Mounted proc("mount -t proc proc " + box + "/proc", box + "/proc");
  ASSERT_TRUE(proc.ok());
  const std::vector<json> items = trace_writer({"chroot", box, "/bin/sh", "-c", writer_script("")});
  EXPECT_EQ(root_dir_->seen(), "/data/x");
  expect_named(items, root_dir_->host_file().string());
}

// unshare --mount, the root bound onto itself, pivot_root into it and the old root detached,
// as a container runtime does: the writer's root is its namespace's root, its path /data/x,
// found on the host through its own mount table.
TEST_F(WriterRootPaths, AWriterPivotRootedIntoANewRootSeesItsOwnPath) {
  const std::string box = root_dir_->dir().string();
  const std::vector<json> items = trace_writer(
      {"unshare", "--mount", "--propagation", "private", "sh", "-c",
       "mount --bind " + box + " " + box + " && mount -t proc proc " + box + "/proc && cd " + box +
           " && pivot_root . old && umount -l /old && exec /bin/sh -c " +
           quoted(writer_script(""))});
  EXPECT_EQ(root_dir_->seen(), "/data/x");
  expect_named(items, root_dir_->host_file().string());
}

// The control: a writer in a mount namespace of its own but at its root names the file as
// the host does, and its items have no host path.
TEST_F(WriterRootPaths, AWriterAtItsNamespacesRootHasNoHostPathOfItsOwn) {
  const std::string box = root_dir_->dir().string();
  const std::vector<json> items = trace_writer(
      {"unshare", "--mount", "--propagation", "private", "sh", "-c", writer_script(box)});
  EXPECT_EQ(root_dir_->seen(), root_dir_->host_file().string());
  expect_named(items, std::nullopt);
}

}  // namespace
