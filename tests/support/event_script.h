// SPDX-License-Identifier: Apache-2.0
// The event script: kernel events written as a human would write them, one line per event, for
// test inputs that read like the rules they exercise (tests/golden/scripts/). Its grammar is in
// docs/reference/event-script.md; in short:
//
//   # a comment                               (also after a line's fields)
//   device vda 253:0 cache=volatile            the disks and partitions, before any event
//   device vda1 253:1 disk=vda
//   12us     pwrite64 tid=100 fd=3 dev=vda1 ino=42 pos=0 ret=4096 dur=12us
//   +40us    bio      bio=b1 dev=vda1 sector=2048 bytes=4096 ext=0+1 ino=42
//   +5us     issue    rq=r1 disk=vda sector=2048 bytes=4096
//
// A line starts with its time (absolute, or +delta from the previous line's: when the kernel
// emits the record, so a call's line is at its return and dur= its latency) and its kind, then
// key=value fields (a bare key is a flag). Kernel pointers are written as names (b1, r1): each
// name stands for one pointer throughout the script. Events are fed in the order written, as
// the ring buffer would deliver them.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "decode/decoder.h"
#include "decode/events.h"
#include "script_values.h"

namespace wp {

// Records the kernel could not deliver (`lost hook=bio count=3`): as a live trace's loss delta.
struct ScriptLoss {
  LostCounts counts{};
};

// A kernel text address a script's stacks use, with its name (what a trace file's
// KernelSymbol frame says): fed before the first event whose stack holds it.
struct ScriptSymbol {
  std::uint64_t address = 0;
  std::string name;
};

using ScriptStep = std::variant<Event, ScriptLoss, ScriptSymbol>;

struct EventScript {
  std::vector<DeviceInfo> devices;
  std::vector<FileSystemInfo> file_systems;
  unsigned page_shift = 12;
  Nanos min_latency_ns = 0;
  std::vector<ScriptStep> steps;
};

// The script read whole, or the first error as "LINE: message" (1-based line number).
struct ParsedScript {
  std::optional<EventScript> script;
  std::string error;
};
ParsedScript parse_event_script(std::istream& in);

// The line an event made from one record table is written as (script_records.h), with its
// time: "12us issue rq=0xffff888000001000 disk=vda bytes=4096"; nullopt for the others, whose
// lines only people write. Devices are named as `names` knows them.
std::optional<std::string> write_event_line(const Event& event, const script::Names& names);

}  // namespace wp
