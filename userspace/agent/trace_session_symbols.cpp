// SPDX-License-Identifier: Apache-2.0
#include "agent/trace_session_symbols.h"

#include <fmt/format.h>
#include <cstring>
#include <iostream>

#include "writepath.h"

namespace wp {

std::string KernelAddressNamer::name_of(std::uint64_t address) const {
  return symbols_.empty() ? kHiddenFrame : symbols_.symbolize(address);
}

void KernelAddressNamer::name(std::uint64_t address) {
  if (address == 0 || !seen_.insert(address).second) return;
  named_(KernelSymbolName{address, name_of(address)});
}

void KernelAddressNamer::on_record(std::span<const std::byte> record) {
  wp_record_header h;
  if (record.size() < sizeof(h)) return;
  std::memcpy(&h, record.data(), sizeof(h));
  if (h.type != WP_REC_OFFCPU) return;
  wp_offcpu_record r;
  if (h.size != sizeof(r) || record.size() < sizeof(r)) return;  // the decoder counts it
  std::memcpy(&r, record.data(), sizeof(r));
  for (unsigned i = 0; i < r.nslots && i < WP_OFFCPU_SLOTS; ++i) {
    const wp_offcpu_slot& slot = r.slots[i];
    for (unsigned f = 0; f < slot.nframes && f < WP_STACK_DEPTH; ++f) name(slot.frames[f]);
    if (slot.flags & WP_WAKER_KNOWN)
      for (unsigned f = 0; f < slot.waker_nframes && f < WP_STACK_DEPTH; ++f)
        name(slot.waker_frames[f]);
  }
}

std::unique_ptr<KernelAddressNamer> kernel_address_namer(KernelFilter& filter,
                                                         KernelAddressNamer::Named named) {
  if (!filter.causes_min_ns || !filter.offcpu_stacks) return nullptr;
  KernelSymbols symbols = KernelSymbols::from_proc();
  if (symbols.empty())
    std::cerr << fmt::format("writepath: warning: {}: kernel stack frames show as {}\n",
                             symbols.error(), kHiddenFrame);
  if (auto timer_fn = symbols.address_of("throtl_pending_timer_fn"))
    filter.throtl_timer_fn = *timer_fn;
  return std::make_unique<KernelAddressNamer>(std::move(symbols), std::move(named));
}

}  // namespace wp
