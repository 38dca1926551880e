// SPDX-License-Identifier: Apache-2.0
#include "agent/process_tree.h"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <map>
#include <system_error>

namespace wp {

namespace {

std::optional<std::uint32_t> parse_u32(std::string_view text) {
  std::uint32_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<ProcessEntry> parse_proc_stat(std::string_view line) {
  const auto open = line.find(" (");
  const auto close = line.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return std::nullopt;
  ProcessEntry entry;
  auto pid = parse_u32(line.substr(0, open));
  if (!pid) return std::nullopt;
  entry.pid = *pid;
  entry.comm = std::string(line.substr(open + 2, close - open - 2));
  // After the name: " S ppid …".
  std::string_view rest = line.substr(close + 1);
  if (rest.size() < 4 || rest[0] != ' ' || rest[2] != ' ') return std::nullopt;
  rest.remove_prefix(3);
  auto ppid = parse_u32(rest.substr(0, rest.find(' ')));
  if (!ppid) return std::nullopt;
  entry.ppid = *ppid;
  return entry;
}

std::vector<ProcessEntry> read_process_table(const std::filesystem::path& proc) {
  std::vector<ProcessEntry> table;
  std::error_code ec;
  for (const auto& dir : std::filesystem::directory_iterator(proc, ec)) {
    const std::string name = dir.path().filename().string();
    if (!parse_u32(name)) continue;
    std::ifstream in(dir.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;  // gone meanwhile
    if (auto entry = parse_proc_stat(line)) table.push_back(std::move(*entry));
  }
  return table;
}

std::set<std::uint32_t> descendants_of(const std::vector<ProcessEntry>& table,
                                       const std::function<bool(const ProcessEntry&)>& is_root) {
  std::multimap<std::uint32_t, const ProcessEntry*> children;  // ppid → child
  for (const auto& entry : table) children.emplace(entry.ppid, &entry);
  std::set<std::uint32_t> found;
  std::vector<std::uint32_t> frontier;
  for (const auto& entry : table)
    if (is_root(entry)) frontier.push_back(entry.pid);
  // Breadth first from the roots; `found` keeps a cycle from looping.
  while (!frontier.empty()) {
    const std::uint32_t parent = frontier.back();
    frontier.pop_back();
    auto [first, last] = children.equal_range(parent);
    for (auto it = first; it != last; ++it) {
      const std::uint32_t child = it->second->pid;
      if (child != parent && found.insert(child).second) frontier.push_back(child);
    }
  }
  return found;
}

std::set<std::uint32_t> parents_in(const std::vector<ProcessEntry>& table) {
  std::set<std::uint32_t> parents;
  for (const auto& entry : table)
    if (entry.ppid != 0) parents.insert(entry.ppid);
  return parents;
}

std::string children_hint(const std::vector<std::uint32_t>& pids,
                          const std::set<std::uint32_t>& with_children,
                          const std::set<std::uint32_t>& with_items) {
  std::vector<std::uint32_t> silent;
  for (auto pid : pids)
    if (with_children.count(pid) && !with_items.count(pid)) silent.push_back(pid);
  if (silent.empty()) return "";
  const bool one = silent.size() == 1;
  return fmt::format(
      "nothing traced from {} {}, which {} child processes; -p traces a process's own threads "
      "only: add --children to follow its descendants",
      one ? "pid" : "pids", fmt::join(silent, ", "), one ? "has" : "have");
}

}  // namespace wp
