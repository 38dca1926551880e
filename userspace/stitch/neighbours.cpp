// SPDX-License-Identifier: Apache-2.0
#include "stitch/neighbours.h"

#include <algorithm>
#include <set>

namespace wp::stitch {
namespace {

// Files whose dirtier is remembered, and completed bios per disk, at most: past these the
// oldest go (a flusher's bio of a forgotten file has no owner; a sync older than the oldest
// completion kept names fewer neighbours).
constexpr std::size_t kMaxDirtiers = 1u << 18;
constexpr std::size_t kMaxCompletedPerDisk = 1u << 20;

bool writes_data(ReqOp op) {
  return op == ReqOp::Write || op == ReqOp::WriteZeroes;
}

}  // namespace

void NeighbourTracker::on_dirtier(const DirtierEvent& ev) {
  const InodeKey key{ev.dev, ev.ino};
  auto [it, inserted] = dirtiers_.insert_or_assign(key, IoOwner{.pid = ev.pid,
                                                                .comm = ev.comm,
                                                                .cgroup_id = ev.cgroup_id,
                                                                .cgroup = {},
                                                                .container = nullptr});
  (void)it;
  if (!inserted) return;
  dirtier_order_.push_back(key);
  if (dirtiers_.size() > kMaxDirtiers) {
    dirtiers_.erase(dirtier_order_.front());
    dirtier_order_.pop_front();
  }
}

std::optional<IoOwner> NeighbourTracker::owner_of(const Bio& bio) const {
  const BioEvent& ev = bio.ev;
  if (!(ev.bio_flags & bio_flag::kKernelThread))
    return IoOwner{.pid = ev.pid,
                   .comm = ev.comm,
                   .cgroup_id = cgroup_of_(ev.pid, ev.tid),
                   .cgroup = {},
                   .container = nullptr};
  // A kernel thread writes back someone's pages, or its own blocks (the journal's).
  if (ev.ino == 0) return std::nullopt;
  const auto it = dirtiers_.find(InodeKey{ev.file_dev, ev.ino});
  if (it == dirtiers_.end()) return std::nullopt;
  return it->second;
}

std::uint32_t NeighbourTracker::index_of(const IoOwner& owner) {
  const auto key = std::make_pair(owner.pid, owner.cgroup_id);
  if (auto it = owner_index_.find(key); it != owner_index_.end()) {
    owners_[it->second].comm = owner.comm;  // the latest name (exec renames)
    return it->second;
  }
  const auto index = static_cast<std::uint32_t>(owners_.size());
  owners_.push_back(owner);
  owner_index_.emplace(key, index);
  return index;
}

void NeighbourTracker::data_completed(const Request& r,
                                      const std::vector<std::shared_ptr<Bio>>& bios, Nanos ts) {
  if (!writes_data(r.tl.op)) return;
  std::deque<Completed>& done = completed_[r.tl.disk];
  // A request's bios have an owner or two: a short list, not a set allocated per request.
  std::vector<std::uint32_t> owners_of_request;
  for (const auto& bio : bios) {
    if (!bio || !writes_data(bio->ev.op)) continue;
    Completed c{.ts = ts, .request = r.id, .bytes = bio->ev.bytes, .owner = std::nullopt};
    if (const auto owner = owner_of(*bio)) {
      c.owner = index_of(*owner);
      auto& [bytes, requests] = totals_[{r.tl.disk, *c.owner}];
      bytes += c.bytes;
      if (std::find(owners_of_request.begin(), owners_of_request.end(), *c.owner) ==
          owners_of_request.end()) {
        owners_of_request.push_back(*c.owner);
        ++requests;
      }
    }
    add_completed(done, c);
  }
}

void NeighbourTracker::add_completed(std::deque<Completed>& done, const Completed& c) {
  // Completions arrive in time order; one out of order goes where it belongs.
  if (done.empty() || done.back().ts <= c.ts)
    done.push_back(c);
  else
    done.insert(std::upper_bound(done.begin(), done.end(), c.ts,
                                 [](Nanos t, const Completed& e) { return t < e.ts; }),
                c);
  while (done.size() > kMaxCompletedPerDisk) done.pop_front();
}

std::optional<IoOwner> NeighbourTracker::kept_out_owner(std::uint32_t tgid, const std::string& comm,
                                                        std::uint64_t cgroup_id, DevT dev,
                                                        std::uint64_t ino) const {
  if (tgid != 0)
    return IoOwner{
        .pid = tgid, .comm = comm, .cgroup_id = cgroup_id, .cgroup = {}, .container = nullptr};
  const auto it = dirtiers_.find(InodeKey{dev, ino});
  if (it == dirtiers_.end()) return std::nullopt;
  return it->second;
}

void NeighbourTracker::on_bystander_io(const BystanderIoEvent& ev) {
  std::optional<std::uint32_t> owner;
  if (const auto o = kept_out_owner(ev.tgid, ev.comm, ev.cgroup_id, ev.file_dev, ev.ino))
    owner = index_of(*o);
  // Not in the totals: the kernel counted these bytes when it kept the bios out (add_filtered).
  // The kernel's request pointer for an id: the agent's ids are small counters, never one.
  add_completed(completed_[ev.disk],
                Completed{.ts = ev.ts, .request = ev.rq, .bytes = ev.bytes, .owner = owner});
}

std::vector<Neighbour> NeighbourTracker::of(const SyscallEvent& call,
                                            const std::vector<DevT>& disks) const {
  const Nanos start = call.start_ns;
  const Nanos end = call_end(call);
  struct Sum {
    std::uint64_t bytes = 0;
    std::set<std::uint64_t> requests;
  };
  std::vector<Neighbour> out;
  for (DevT disk : disks) {
    const auto it = completed_.find(disk);
    if (it == completed_.end()) continue;
    const std::deque<Completed>& done = it->second;
    auto first = std::lower_bound(done.begin(), done.end(), start,
                                  [](const Completed& e, Nanos t) { return e.ts < t; });
    std::uint64_t total = 0;
    std::map<std::uint32_t, Sum> by_owner;
    for (auto e = first; e != done.end() && e->ts <= end; ++e) {
      total += e->bytes;
      if (!e->owner || owners_[*e->owner].pid == call.pid) continue;
      Sum& sum = by_owner[*e->owner];
      sum.bytes += e->bytes;
      sum.requests.insert(e->request);
    }
    for (const auto& [owner, sum] : by_owner) {
      const double share = static_cast<double>(sum.bytes) / static_cast<double>(total);
      out.push_back(
          Neighbour{.owner = owners_[owner],
                    .disk = disk,
                    .bytes = sum.bytes,
                    .requests = sum.requests.size(),
                    .share = share,
                    .delay_ns = static_cast<Nanos>(static_cast<double>(end - start) * share)});
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Neighbour& a, const Neighbour& b) { return a.bytes > b.bytes; });
  if (out.size() > kMaxNeighbours) out.resize(kMaxNeighbours);
  return out;
}

void NeighbourTracker::add_filtered(const FilteredIo& io) {
  const auto owner = kept_out_owner(io.tgid, io.comm, io.cgroup_id, io.dev, io.ino);
  if (!owner) return;
  // Bytes only: the requests that carried them were kept out, unseen.
  totals_[{io.disk, index_of(*owner)}].first += io.bytes;
}

std::vector<OwnerIo> NeighbourTracker::totals() const {
  std::vector<OwnerIo> out;
  for (const auto& [key, sums] : totals_)
    out.push_back(OwnerIo{.owner = owners_[key.second],
                          .disk = key.first,
                          .bytes = sums.first,
                          .requests = sums.second});
  std::stable_sort(out.begin(), out.end(),
                   [](const OwnerIo& a, const OwnerIo& b) { return a.bytes > b.bytes; });
  return out;
}

void NeighbourTracker::sweep(Nanos horizon) {
  for (auto& [disk, done] : completed_)
    while (!done.empty() && done.front().ts < horizon) done.pop_front();
}

}  // namespace wp::stitch
