// SPDX-License-Identifier: Apache-2.0
#include "stitch/file_names.h"

#include <algorithm>
#include <filesystem>
#include <vector>

namespace wp::stitch {

void FileNames::on_file_path(const FilePathEvent& ev) {
  if (ev.ino == 0) return;
  auto& entry = paths_[InodeKey{ev.dev, ev.ino}];
  entry.path = ev.path;
  entry.ns_path = ev.ns_path;
  entry.mnt_ns = ev.mnt_ns;
  // A path record starts the file afresh: reached through an overlay only if a view follows.
  entry.view_dev = 0;
  entry.view_ino = 0;
  entry.seq = next_seq_++;
  if (paths_.size() > max_files_) trim();
}

void FileNames::on_file_view(const FileViewEvent& ev) {
  const auto it = paths_.find(InodeKey{ev.dev, ev.ino});
  if (it == paths_.end()) return;
  it->second.view_dev = ev.view_dev;
  it->second.view_ino = ev.view_ino;
}

void FileNames::name(SyscallEvent& call) const {
  if (call.ino == 0 || !call.path.empty()) return;
  const auto it = paths_.find(InodeKey{call.dev, call.ino});
  if (it == paths_.end()) return;
  call.path = it->second.path;
  call.ns_path = it->second.ns_path;
  call.mnt_ns = it->second.mnt_ns;
  call.view_dev = it->second.view_dev;
  call.view_ino = it->second.view_ino;
}

std::string FileNames::resolve(DevT dir_dev, std::uint64_t dir_ino, const std::string& name) const {
  if (name.empty()) return "";
  std::filesystem::path joined;
  if (name.front() == '/') {
    joined = name;
  } else {
    const auto it = paths_.find(InodeKey{dir_dev, dir_ino});
    // A directory whose path was cut or that was removed names nothing whole.
    if (dir_ino == 0 || it == paths_.end() || it->second.path.rfind("...", 0) == 0 ||
        it->second.path.ends_with(" (deleted)"))
      return "";
    joined = std::filesystem::path(it->second.path) / name;
  }
  std::string out = joined.lexically_normal().string();
  // "dir/" names the directory itself.
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

void FileNames::trim() {
  std::vector<std::uint64_t> seqs;
  seqs.reserve(paths_.size());
  for (const auto& [k, e] : paths_) seqs.push_back(e.seq);
  auto mid = seqs.begin() + static_cast<std::ptrdiff_t>(seqs.size() / 2);
  std::nth_element(seqs.begin(), mid, seqs.end());
  const std::uint64_t cut = *mid;
  std::erase_if(paths_, [cut](const auto& kv) { return kv.second.seq < cut; });
}

}  // namespace wp::stitch
