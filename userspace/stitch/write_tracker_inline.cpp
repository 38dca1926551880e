// SPDX-License-Identifier: Apache-2.0
// The write tracker's writes whose data went into their file system's metadata instead of data
// blocks: a btrfs inline extent (writeback copied the page into the subvolume's tree), ext4's
// inline_data (the write copied it into the inode). No data request will carry those pages:
// the transaction that holds them does, when it commits (a btrfs transaction commit, a btrfs
// log-tree sync of the file, a jbd2 commit), and the commit's own FUA writes (btrfs's
// superblocks, jbd2's commit block) are their requests.
// Rules: docs/reference/stitching-rules.md, "Writes";
// tests: tests/unit/write_tracker_inline_test.cpp.
#include <algorithm>
#include <cstdint>

#include "stitch/write_tracker.h"

namespace wp::stitch {
namespace {

// Whether a commit of transaction `committed` covers data held by `wanted`: btrfs counts its
// transactions in 64 bits; jbd2 in 32 that wrap around (jbd2's tid_geq()).
bool covers(InlineFs fs, std::uint64_t committed, std::uint64_t wanted) {
  if (fs == InlineFs::Ext4) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(committed) -
                                     static_cast<std::uint32_t>(wanted)) >= 0;
  }
  return committed >= wanted;
}

}  // namespace

// The copied pages leave the pending set as a bio's would, with no request.
void WriteTracker::data_inlined(const InlineDataEvent& ev) {
  if (ev.len == 0) return;
  pages_gone(InodeKey{ev.dev, ev.ino}, page().index(ev.start), page().index(ev.start + ev.len - 1),
             ev.ts, [&](BatchIt it, std::vector<std::uint32_t>& done) {
               Batch& b = it->second;
               if (done.empty() || b.inlined) return;
               b.inlined = std::make_unique<Batch::Inlined>(Batch::Inlined{
                   InlineData{ev.fs, ev.ts, ev.transaction, std::nullopt}, ev.fs_dev});
               inlined_.push_back(it->first);
             });
}

std::vector<std::shared_ptr<const Request>> WriteTracker::commit_writes(std::uint32_t tid,
                                                                        DevT fs_dev, Nanos from,
                                                                        Nanos to) const {
  std::vector<std::shared_ptr<const Request>> writes;
  const auto* bios = history_.bios_of_thread(tid);
  if (bios == nullptr) return writes;
  const std::vector<DevT> disks = devices_.disks_of(fs_dev);
  for (auto it = bios->rbegin(); it != bios->rend(); ++it) {
    const Bio& bio = **it;
    if (bio.ev.ts < from) break;
    if (bio.ev.ts > to || bio.ev.op != ReqOp::Write || !(bio.ev.flags & req_flag::kFua) ||
        !bio.request)
      continue;
    if (bio.ev.bdev != fs_dev && std::find(disks.begin(), disks.end(), bio.ev.disk) == disks.end())
      continue;
    if (std::find(writes.begin(), writes.end(), bio.request) == writes.end())
      writes.push_back(bio.request);
  }
  std::reverse(writes.begin(), writes.end());
  return writes;
}

// Its writes whose every page went into the metadata are written by the commit's FUA writes
// and durable when those are; with none seen, written and durable at the commit's end.
void WriteTracker::commit_inlined(BatchId id,
                                  const std::vector<std::shared_ptr<const Request>>& fua_writes,
                                  Nanos committed_ns) {
  auto it = batches_.find(id);
  if (it == batches_.end()) return;
  it->second.inlined->data.committed_ns = committed_ns;
  std::vector<std::uint32_t> waiting;
  for (std::size_t i = it->second.first_live; i < it->second.writes.size(); ++i) {
    const PendingWrite& w = it->second.writes[i];
    if (!w.emitted && w.state == WriteState::Dirty && w.pages_left == 0)
      waiting.push_back(static_cast<std::uint32_t>(i));
  }
  // The batch is erased with its last live write, which is the last one here.
  for (std::uint32_t index : waiting) {
    it = batches_.find(id);
    if (it == batches_.end()) return;
    if (fua_writes.empty()) {
      it->second.writes[index].state = WriteState::Durable;
      emit_write(it, index, Eviction::None);
      continue;
    }
    for (const auto& r : fua_writes) add_request(it->second, index, r);
    become_written(it, index);
  }
}

void WriteTracker::metadata_committed(const MetadataCommit& commit) {
  // Its own writes began with its work, after the commit before it ended: one transaction of a
  // file system commits at a time.
  Nanos& last = last_commit_[commit.fs_dev];
  const Nanos began = std::max(commit.start_ns, last);
  last = std::max(last, commit.ts);
  std::erase_if(inlined_, [&](BatchId id) {
    auto it = batches_.find(id);
    if (it == batches_.end()) return true;  // emitted meanwhile (aged out)
    const Batch::Inlined& in = *it->second.inlined;
    if (in.data.fs != commit.fs || in.fs_dev != commit.fs_dev ||
        !covers(commit.fs, commit.transaction, in.data.transaction))
      return false;
    commit_inlined(id,
                   commit_writes(commit.tid, commit.fs_dev, std::max(in.data.ns, began), commit.ts),
                   commit.ts);
    return true;
  });
}

// btrfs's fsync logs the file into its log tree, inline extents with it, and syncs the log:
// the superblock it writes last commits them. (One that needed a full transaction commit is
// a MetadataCommit of its own, seen inside the call.)
void WriteTracker::file_synced(const SyscallEvent& ev) {
  const bool fsync = ev.syscall == Syscall::Fsync || ev.syscall == Syscall::Fdatasync ||
                     ev.syscall == Syscall::IoUringFsync || ev.syscall == Syscall::IoUringFdatasync;
  if (!fsync || ev.ret != 0 || ev.ino == 0 || inlined_.empty()) return;
  std::erase_if(inlined_, [&](BatchId id) {
    auto it = batches_.find(id);
    if (it == batches_.end()) return true;
    const Batch& b = it->second;
    const Batch::Inlined& in = *b.inlined;
    if (in.data.fs != InlineFs::Btrfs || b.dev != ev.dev || b.ino != ev.ino) return false;
    const auto writes =
        commit_writes(ev.tid, in.fs_dev, std::max(in.data.ns, ev.start_ns), call_end(ev));
    if (writes.empty()) return false;
    commit_inlined(id, writes, call_end(ev));
    return true;
  });
}

}  // namespace wp::stitch
