// SPDX-License-Identifier: Apache-2.0
// The names of what a live trace's records name by number: the kernel addresses its off-CPU
// records hold (their sleep and waker stacks), from this machine's /proc/kallsyms, and the
// cgroup ids of its cgroup records.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>

#include "probe/bpf_session.h"
#include "probe/cgroups.h"
#include "probe/kernel_symbols.h"
#include "record/trace_file.h"

namespace wp {

// What a frame is named when kallsyms hid its addresses (kptr_restrict).
inline constexpr const char* kHiddenFrame = "(hidden)";

// Names each address of the wp_offcpu_records it is shown, once per address, as they arrive:
// the caller hands the name on (to a recording, before the record; to the pipeline).
class KernelAddressNamer {
 public:
  using Named = std::function<void(const KernelSymbolName&)>;
  KernelAddressNamer(KernelSymbols symbols, Named named)
      : symbols_(std::move(symbols)), named_(std::move(named)) {}
  void on_record(std::span<const std::byte> record);
  // The name of one address: "(hidden)" when the table is empty (kallsyms unreadable or its
  // addresses hidden), the address in hex when it is in no symbol.
  std::string name_of(std::uint64_t address) const;

 private:
  void name(std::uint64_t address);

  KernelSymbols symbols_;
  Named named_;
  std::unordered_set<std::uint64_t> seen_;
};

// With stacks on (filter.offcpu_stacks and causes): reads kallsyms once, sets blk-throttle's
// timer function in the filter, warns on stderr (one line) when the addresses are hidden, and
// returns the namer; nullptr with stacks off.
std::unique_ptr<KernelAddressNamer> kernel_address_namer(KernelFilter& filter,
                                                         KernelAddressNamer::Named named);

// Names the cgroup ids of the kernel's cgroup records as they arrive, each once.
class CgroupNamer {
 public:
  using Named = std::function<void(const CgroupName&)>;
  CgroupNamer(std::optional<CgroupPaths> paths, Named named)
      : paths_(std::move(paths)), named_(std::move(named)) {}
  // A cgroup record's id, or a dirtier's or bystander-io record's (the cgroup of a process
  // whose data the neighbours of a sync name).
  void on_record(std::span<const std::byte> record) {
    wp_record_header h;
    if (record.size() < sizeof(h) || !paths_) return;
    std::memcpy(&h, record.data(), sizeof(h));
    if (h.type == WP_REC_CGROUP) name<wp_cgroup_record>(record);
    if (h.type == WP_REC_DIRTIER) name<wp_dirtier_record>(record);
    if (h.type == WP_REC_BYSTANDER_IO) name<wp_bystander_io_record>(record);
  }
  // An id no record carried (the owner of data the kernel kept out), once.
  void name(std::uint64_t cgroup_id) {
    if (!paths_ || cgroup_id == 0 || !seen_.insert(cgroup_id).second) return;
    if (auto path = paths_->path_of(cgroup_id)) named_(CgroupName{cgroup_id, *path});
  }

 private:
  template <typename Record>
  void name(std::span<const std::byte> record) {
    Record r;
    if (record.size() < sizeof(r)) return;
    std::memcpy(&r, record.data(), sizeof(r));
    if (r.h.size == sizeof(r)) name(r.cgroup_id);
  }

  std::optional<CgroupPaths> paths_;
  Named named_;
  std::unordered_set<std::uint64_t> seen_;
};

}  // namespace wp
