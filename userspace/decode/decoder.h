// SPDX-License-Identifier: Apache-2.0
// Ring-buffer records → typed events. Validates the header (type, size, version) so that a
// mismatched BPF object or a corrupt record is counted, never misread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "decode/events.h"
#include "writepath.h"

namespace wp {

// Records the kernel side lost (ring buffer full), per hook (enum wp_hook).
using LostCounts = std::array<std::uint64_t, WP_HOOK_COUNT>;
const char* hook_counter_name(std::size_t hook);  // "syscall", "bio", ...

struct DecodeStats {
  std::uint64_t records = 0;
  std::uint64_t malformed = 0;  // short, wrong size, unknown type or version
};

class Decoder {
 public:
  // The event the record carries, or nullopt (counted in stats) when it is malformed.
  std::optional<Event> decode(std::span<const std::byte> record);
  const DecodeStats& stats() const { return stats_; }

 private:
  DecodeStats stats_;
};

}  // namespace wp
