// Ring-buffer records → typed events. Validates the header (type, size, version) so that a
// mismatched BPF object or a corrupt record is counted, never misread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "decode/events.h"

namespace wp {

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
