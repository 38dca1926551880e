// SPDX-License-Identifier: Apache-2.0
// The traced syscalls as the agent sees them, generated from WP_SYSCALL_TABLE in
// bpf/writepath.h: the one list of syscall slots, shared with the BPF programs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "writepath.h"

namespace wp {

#define WP_URING_COUNT_(id, value, name, Name, cls, opcode) +1
#define WP_NAME_CHANGE_COUNT_(name, Name, value, op, d1, n1, d2, n2, flags, fd) +1

// One value per slot; the value is the slot (WP_SLOT_*), in the table's order. The io_uring
// ops (WP_URING_OP_TABLE) follow the slots: they have none; then the name-change calls
// (WP_NAME_CHANGE_TABLE), which make name-change items, neither writes nor syncs.
enum class Syscall : std::uint8_t {
#define WP_SYSCALL_ENUMERATOR_(id, value, name, Name, cls, vfs) Name = WP_SLOT_##id,
  WP_SYSCALL_TABLE(WP_SYSCALL_ENUMERATOR_)
#undef WP_SYSCALL_ENUMERATOR_
#define WP_URING_OP_ENUMERATOR_(id, value, name, Name, cls, opcode) Name,
      WP_URING_OP_TABLE(WP_URING_OP_ENUMERATOR_)
#undef WP_URING_OP_ENUMERATOR_
#define WP_NAME_CHANGE_ENUMERATOR_(name, Name, value, op, d1, n1, d2, n2, flags, fd) Name,
          WP_NAME_CHANGE_TABLE(WP_NAME_CHANGE_ENUMERATOR_)
#undef WP_NAME_CHANGE_ENUMERATOR_
              PageFault,  // a page fault on a file mapping: a read item, not a syscall
};

struct SyscallSlot {
  Syscall syscall;
  std::uint8_t value;  // WP_SYS_*: what records carry
  const char* name;    // the kernel's name: "pwrite64"
  // Makes write items: WP_CLASS_WRITE, or WP_CLASS_OPEN (an open's copy-up of an overlay file
  // is a write of the copy); sync items: WP_CLASS_SYNC; read items: WP_CLASS_READ.
  bool is_write;
  bool copies_up;        // WP_CLASS_OPEN
  bool vfs;              // also served by the fentry/fexit programs on the VFS
  bool is_read = false;  // WP_CLASS_READ: its records are read records
};

inline constexpr std::array<SyscallSlot, WP_SYSCALL_SLOTS> kSyscallSlots{{
#define WP_SYSCALL_SLOT_ROW_(id, value, name, Name, cls, vfs)           \
  {Syscall::Name,                                                       \
   WP_SYS_##id,                                                         \
   #name,                                                               \
   WP_CLASS_##cls == WP_CLASS_WRITE || WP_CLASS_##cls == WP_CLASS_OPEN, \
   WP_CLASS_##cls == WP_CLASS_OPEN,                                     \
   (vfs) != 0,                                                          \
   WP_CLASS_##cls == WP_CLASS_READ},
    WP_SYSCALL_TABLE(WP_SYSCALL_SLOT_ROW_)
#undef WP_SYSCALL_SLOT_ROW_
}};

// The io_uring ops, in Syscall order after the slots: the same facts, without a slot.
inline constexpr std::array<SyscallSlot, 0 WP_URING_OP_TABLE(WP_URING_COUNT_)> kUringOps{{
#define WP_URING_OP_ROW_(id, value, name, Name, cls, opcode) \
  {Syscall::Name,                                            \
   WP_SYS_##id,                                              \
   #name,                                                    \
   WP_CLASS_##cls == WP_CLASS_WRITE,                         \
   false,                                                    \
   false,                                                    \
   WP_CLASS_##cls == WP_CLASS_READ},
    WP_URING_OP_TABLE(WP_URING_OP_ROW_)
#undef WP_URING_OP_ROW_
}};

// The name-change calls, in Syscall order after the io_uring ops: no slot, not a write.
inline constexpr std::array<SyscallSlot, 0 WP_NAME_CHANGE_TABLE(WP_NAME_CHANGE_COUNT_)>
    kNameChangeCalls{{
#define WP_NAME_CHANGE_ROW_(name, Name, value, op, d1, n1, d2, n2, flags, fd) \
  {Syscall::Name, value, #name, false, false, false},
        WP_NAME_CHANGE_TABLE(WP_NAME_CHANGE_ROW_)
#undef WP_NAME_CHANGE_ROW_
    }};

// A page fault on a file mapping, which makes a read item as a read syscall does; its record
// is a wp_fault_record, so it has no WP_SYS_* value.
inline constexpr SyscallSlot kPageFault{
    Syscall::PageFault, 0, "page_fault", false, false, false, true};

// A slot's row, an io_uring op's, a name-change call's or the page fault's.
constexpr const SyscallSlot& syscall_slot(Syscall s) {
  const auto i = static_cast<std::size_t>(s);
  if (i < kSyscallSlots.size()) return kSyscallSlots[i];
  if (i < kSyscallSlots.size() + kUringOps.size()) return kUringOps[i - kSyscallSlots.size()];
  if (s == Syscall::PageFault) return kPageFault;
  return kNameChangeCalls[i - kSyscallSlots.size() - kUringOps.size()];
}

constexpr bool is_uring_op(Syscall s) {
  const auto i = static_cast<std::size_t>(s);
  return i >= kSyscallSlots.size() && i < kSyscallSlots.size() + kUringOps.size();
}

constexpr bool is_name_change_call(Syscall s) {
  return static_cast<std::size_t>(s) >= kSyscallSlots.size() + kUringOps.size() &&
         s != Syscall::PageFault;
}

// The name-change call a wp_name_change_record's `syscall` value names, or nullopt.
constexpr std::optional<Syscall> name_change_call_from_record(std::uint32_t value) {
  for (const SyscallSlot& call : kNameChangeCalls)
    if (call.value == value) return call.syscall;
  return std::nullopt;
}

// The syscall a record's WP_SYS_* value names, or nullopt for a value that is none.
constexpr std::optional<Syscall> syscall_from_record(std::uint32_t value) {
  const std::uint32_t slot = wp_syscall_slot(value);
  if (slot < WP_SYSCALL_SLOTS) return static_cast<Syscall>(slot);
  for (const SyscallSlot& op : kUringOps)
    if (op.value == value) return op.syscall;
  return std::nullopt;
}

constexpr const char* syscall_name(Syscall s) {
  return static_cast<std::size_t>(s) <= static_cast<std::size_t>(Syscall::PageFault)
             ? syscall_slot(s).name
             : "unknown";
}
constexpr bool is_write_syscall(Syscall s) {
  return syscall_slot(s).is_write;
}
constexpr bool is_read_syscall(Syscall s) {
  return syscall_slot(s).is_read;
}
// An open whose record is the copy-up of an overlay file it made (WP_CLASS_OPEN).
constexpr bool is_copy_up(Syscall s) {
  return syscall_slot(s).copies_up;
}

// How an io_uring op was issued, as the outputs name it (WP_VIA_* bits), or nullopt for a
// syscall: "inline" (by the submitting thread), "io-wq" (punted to a worker), "sqpoll" (by
// the ring's SQPOLL thread), "sqpoll+io-wq" (the SQPOLL thread punted it).
constexpr std::optional<const char*> uring_issue_name(std::uint8_t via) {
  if (!(via & WP_VIA_IO_URING)) return std::nullopt;
  if (via & WP_VIA_SQPOLL) return (via & WP_VIA_IO_WQ) ? "sqpoll+io-wq" : "sqpoll";
  return (via & WP_VIA_IO_WQ) ? "io-wq" : "inline";
}

// The calls counted but not stitched (WP_UNTRACED_TABLE, then the io_uring ops counted by the
// submit hook), in counter order.
struct UntracedCall {
  const char* name;   // the summary's key: "copy_file_range"
  const char* event;  // its counter's tracepoint syscalls:sys_enter_<event>, or nullptr:
  const char* hook;   // counted by this hook of the plan instead (its own program, no counter)
};

inline constexpr std::array<UntracedCall, WP_UNTRACED_COUNT> kUntracedCalls{{
#define WP_UNTRACED_ROW_(id, name, event, fd_arg) {#name, #event, nullptr},
    WP_UNTRACED_TABLE(WP_UNTRACED_ROW_)
#undef WP_UNTRACED_ROW_
        {"io_uring_ops", nullptr, "io_uring submit"},
}};
// Calls counted per entry of kUntracedCalls.
using UntracedCounts = std::array<std::uint64_t, WP_UNTRACED_COUNT>;

// What a trace counted of the untraced calls: the counts, and which calls had a counter at
// all (bit i: kUntracedCalls[i]; not counted is not the same as zero). Stored raw in trace
// files: fixed size.
struct UntracedTally {
  UntracedCounts counts{};
  std::uint64_t counted = 0;
};
static_assert(sizeof(UntracedTally) == 8 * (WP_UNTRACED_COUNT + 1));

// The counted calls by name ("fallocate" → 3), zeros included, the uncounted absent.
inline std::map<std::string, std::uint64_t> untraced_by_name(const UntracedTally& tally) {
  std::map<std::string, std::uint64_t> out;
  for (std::size_t i = 0; i < kUntracedCalls.size(); ++i)
    if (tally.counted & (1ull << i)) out[kUntracedCalls[i].name] = tally.counts[i];
  return out;
}

// The table's rows are in slot order, so Syscall, slot and row index agree.
static_assert([] {
  for (std::size_t i = 0; i < kSyscallSlots.size(); ++i)
    if (static_cast<std::size_t>(kSyscallSlots[i].syscall) != i ||
        wp_syscall_slot(kSyscallSlots[i].value) != i)
      return false;
  for (std::size_t i = 0; i < kUringOps.size(); ++i)
    if (static_cast<std::size_t>(kUringOps[i].syscall) != kSyscallSlots.size() + i ||
        syscall_from_record(kUringOps[i].value) != kUringOps[i].syscall)
      return false;
  for (std::size_t i = 0; i < kNameChangeCalls.size(); ++i)
    if (static_cast<std::size_t>(kNameChangeCalls[i].syscall) !=
            kSyscallSlots.size() + kUringOps.size() + i ||
        name_change_call_from_record(kNameChangeCalls[i].value) != kNameChangeCalls[i].syscall ||
        syscall_from_record(kNameChangeCalls[i].value))
      return false;
  return static_cast<std::size_t>(Syscall::PageFault) ==
         kSyscallSlots.size() + kUringOps.size() + kNameChangeCalls.size();
}());

}  // namespace wp
