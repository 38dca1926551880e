// SPDX-License-Identifier: Apache-2.0
// Neighbours: whose I/O a sync waited behind. The tracker keeps, per disk, the data its
// requests carried as they completed (each bio's bytes, charged to its owner: the process that
// dirtied the pages a kernel thread wrote back, told by the kernel's dirtier records, or the
// user thread that queued the bio; a bystander's request the kernel kept out is told by a
// bystander-io record while a traced sync waits), for as long as the stitcher's history. A
// sync's neighbours are the other owners whose data the sync's disk completed between the
// call's start and end. It also counts every owner's bytes per disk over the whole trace (the
// summary's ranking), a bystander's as the kernel counted what it kept out (add_filtered).
// Tests: tests/unit/neighbours_test.cpp.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "stitch/io_state.h"
#include "stitch/timeline.h"

namespace wp::stitch {

// Neighbours a sync names at most, most bytes first.
constexpr std::size_t kMaxNeighbours = 5;

class NeighbourTracker {
 public:
  // `cgroup_of(pid, tid)`: the cgroup the kernel last named for a thread (0: none).
  using CgroupOf = std::function<std::uint64_t(std::uint32_t, std::uint32_t)>;
  explicit NeighbourTracker(CgroupOf cgroup_of) : cgroup_of_(std::move(cgroup_of)) {}

  void on_dirtier(const DirtierEvent& ev);
  // Data request `r` completed at `ts` carrying `bios`.
  void data_completed(const Request& r, const std::vector<std::shared_ptr<Bio>>& bios, Nanos ts);
  // The other owners whose data `disks` completed inside `call`, most bytes first.
  std::vector<Neighbour> of(const SyscallEvent& call, const std::vector<DevT>& disks) const;
  // A bystander's data the kernel kept out, completed while a traced sync waited: a neighbour
  // of the syncs it completed inside.
  void on_bystander_io(const BystanderIoEvent& ev);
  // Adds data the kernel kept out of a traced disk to its owner's bytes (not to any sync's
  // neighbours: bystander-io records tell those). A kernel thread's goes to its file's
  // dirtier; none known, it is nobody's.
  void add_filtered(const FilteredIo& io);
  // Every owner's data per disk so far, most bytes first.
  std::vector<OwnerIo> totals() const;
  void sweep(Nanos horizon);

 private:
  // One bio's data, completed: `owner` indexes owners_ (nullopt: no process owns it, as the
  // journal's blocks, or pages dirtied before the trace).
  struct Completed {
    Nanos ts = 0;
    std::uint64_t request = 0;  // Request::id
    std::uint32_t bytes = 0;
    std::optional<std::uint32_t> owner;
  };
  std::optional<IoOwner> owner_of(const Bio& bio) const;
  // The owner of data the kernel kept out: process `tgid`, or with tgid 0 the dirtier of file
  // (dev, ino), if known.
  std::optional<IoOwner> kept_out_owner(std::uint32_t tgid, const std::string& comm,
                                        std::uint64_t cgroup_id, DevT dev, std::uint64_t ino) const;
  std::uint32_t index_of(const IoOwner& owner);
  static void add_completed(std::deque<Completed>& done, const Completed& c);

  CgroupOf cgroup_of_;
  std::unordered_map<InodeKey, IoOwner, InodeKeyHash> dirtiers_;
  std::deque<InodeKey> dirtier_order_;  // oldest first, to bound dirtiers_
  std::vector<IoOwner> owners_;         // by index; one per (pid, cgroup)
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint32_t> owner_index_;
  std::unordered_map<DevT, std::deque<Completed>> completed_;  // per disk, by completion
  std::map<std::pair<DevT, std::uint32_t>, std::pair<std::uint64_t, std::uint64_t>>
      totals_;  // (disk, owner) -> bytes, requests
};

}  // namespace wp::stitch
