// SPDX-License-Identifier: Apache-2.0
// The process tree as /proc shows it, for `--children`: the descendants a trace follows from
// its start (new forks are followed in the kernel), and whether a `-p` process the trace saw
// nothing from had children it was not told to follow.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace wp {

struct ProcessEntry {
  std::uint32_t pid = 0;
  std::uint32_t ppid = 0;
  std::string comm;  // the main thread's name, as /proc/PID/stat has it
};

// One line of /proc/PID/stat: "pid (comm) state ppid …". The name may hold spaces and
// parentheses, so it ends at the last ')'. Nothing for a malformed line.
std::optional<ProcessEntry> parse_proc_stat(std::string_view line);

// Every process under `proc` (a process that exits while it is read is left out).
std::vector<ProcessEntry> read_process_table(const std::filesystem::path& proc = "/proc");

// The processes whose ancestry reaches a root (roots themselves excluded unless another root is
// their ancestor), in pid order. Robust to a table with cycles (pid reuse while reading).
std::set<std::uint32_t> descendants_of(const std::vector<ProcessEntry>& table,
                                       const std::function<bool(const ProcessEntry&)>& is_root);

// The pids among `table` with a child.
std::set<std::uint32_t> parents_in(const std::vector<ProcessEntry>& table);

// The summary's hint when a `-p` process had children (at the start or forked during the trace)
// and the trace saw nothing from it: not following them is then likely why. Empty otherwise.
std::string children_hint(const std::vector<std::uint32_t>& pids,
                          const std::set<std::uint32_t>& with_children,
                          const std::set<std::uint32_t>& with_items);

}  // namespace wp
