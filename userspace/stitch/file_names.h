// SPDX-License-Identifier: Apache-2.0
// Which path each file (dev, ino) has, from the kernel's path records, for the items that
// name it. Pure: it knows only what the events said.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "decode/events.h"
#include "stitch/io_state.h"

namespace wp::stitch {

class FileNames {
 public:
  // The kernel sends a file's path once per file it resolves, so the table holds one entry per
  // file met; past `max_files` the oldest-inserted half is dropped (the kernel's cache of
  // resolved files is smaller, so a file dropped here is rarely one it still remembers).
  explicit FileNames(std::size_t max_files = 1u << 16) : max_files_(max_files) {}

  // A path record: (dev, ino) is called this from now on (a later record for the same file is
  // the kernel resolving it afresh, e.g. an inode number reused by a new file).
  void on_file_path(const FilePathEvent& ev);
  // What the file just named is to the application (overlayfs): follows its path record.
  void on_file_view(const FileViewEvent& ev);
  // Sets call.path, its namespace's path and namespace (ns_path, mnt_ns) and the overlay view
  // from the table unless it has a path; leaves them empty when no path is known.
  void name(SyscallEvent& call) const;
  // The path a name-change call's name stands for: `name` joined to the path of the directory
  // (dev, ino) it is relative to, "." and ".." resolved as written (a symlink among them is
  // not followed); `name` itself when absolute; "" when the directory's path is not known.
  // Both as the caller sees them: a chroot'ed caller's absolute names are from its root, and
  // so is its directories' path.
  std::string resolve(DevT dir_dev, std::uint64_t dir_ino, const std::string& name) const;
  std::size_t size() const { return paths_.size(); }

 private:
  struct Entry {
    std::string path;
    std::string ns_path;  // FilePathEvent::ns_path: "" when the same as path
    std::uint32_t mnt_ns = 0;
    DevT view_dev = 0;  // from a FileViewEvent after the path: an overlay file's own
    std::uint64_t view_ino = 0;
    std::uint64_t seq = 0;  // insertion order, for the bound
  };
  void trim();

  std::size_t max_files_;
  std::uint64_t next_seq_ = 0;
  std::unordered_map<InodeKey, Entry, InodeKeyHash> paths_;
};

}  // namespace wp::stitch
