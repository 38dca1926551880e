// SPDX-License-Identifier: Apache-2.0
// Name-change items on real runs, against the workload's own log of the calls it made (what it
// opened how, what it closed, with which fd), not what the tracer computed. Counts are random
// (the seed is printed).
#include <set>
#include <string>
#include <tuple>

#include "harness.h"

namespace {

using namespace wp::testing;

class NameChangeItems : public SeededTest {};

// A close is an item when it closes a regular file open for writing (written or not): the
// script's files opened O_WRONLY, each closed once. Not the same files opened read-only, not
// its pipes, not a close of an fd that is not open (EBADF).
TEST_F(NameChangeItems, CloseIsAnItemForFilesOpenForWritingOnly) {
  ScratchFs disk("ext4", "mkfs.ext4 -q -F");
  ASSERT_TRUE(disk.ready());
  const int written = 1 + static_cast<int>(rng_() % 6);
  const int read_only = static_cast<int>(rng_() % 4);
  const int pipes = static_cast<int>(rng_() % 3);
  const std::string script =
      "import os, sys\n"
      "d = sys.argv[1]\n"
      "log = []\n"
      "for i in range(" +
      std::to_string(written) +
      "):\n"
      "    p = f'{d}/w{i}'\n"
      "    fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o644)\n"
      "    os.write(fd, b'x' * (i + 1))\n"
      "    os.close(fd)\n"
      "    log.append(f'{p} {fd}')\n"
      "for i in range(" +
      std::to_string(read_only) +
      "):\n"
      "    os.close(os.open(f'{d}/w0', os.O_RDONLY))\n"
      "for i in range(" +
      std::to_string(pipes) +
      "):\n"
      "    r, w = os.pipe(); os.close(r); os.close(w)\n"
      "try:\n"
      "    os.close(987)\n"
      "except OSError:\n"
      "    pass\n"
      "print(os.getpid())\n"
      "print('\\n'.join(log))\n";
  const fs::path out = fs::temp_directory_path() / "wp_close.jsonl";
  const RunResult r = run({writepath(), "trace", "--format", "json", "-o", out.string(), "--",
                           "python3", "-c", script, disk.mount_point()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The script's own account: its pid, then "path fd" per file it closed after writing.
  std::istringstream lines(r.out);
  std::string pid;
  std::getline(lines, pid);
  std::multiset<std::pair<std::string, int>> closed;
  for (std::string line; std::getline(lines, line);) {
    const auto space = line.rfind(' ');
    if (space != std::string::npos)
      closed.insert({line.substr(0, space), std::stoi(line.substr(space + 1))});
  }
  ASSERT_EQ(closed.size(), static_cast<std::size_t>(written)) << r.out;

  std::multiset<std::pair<std::string, int>> items;
  for (const json& item : json_lines(slurp(out))) {
    if (item["type"] != "namespace" || item["op"] != "close") continue;
    if (std::to_string(item["pid"].get<int>()) != pid) continue;
    // (Files of the harness the script inherited, closed by it too, are not the script's.)
    if (item["path"].get<std::string>().rfind(disk.mount_point(), 0) != 0) continue;
    EXPECT_EQ(item["ret"], 0) << item.dump();
    EXPECT_EQ(item["syscall"], "close") << item.dump();
    items.insert({item["path"].get<std::string>(), item["fd"].get<int>()});
  }
  fs::remove(out);
  EXPECT_EQ(items, closed);
}

}  // namespace
