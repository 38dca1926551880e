// The traced syscalls as the agent sees them, generated from WP_SYSCALL_TABLE in
// bpf/writepath.h: the one list of syscall slots, shared with the BPF programs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "writepath.h"

namespace wp {

// One value per slot; the value is the slot (WP_SLOT_*), in the table's order.
enum class Syscall : std::uint8_t {
#define WP_SYSCALL_ENUMERATOR_(id, value, name, Name, cls, vfs) Name = WP_SLOT_##id,
  WP_SYSCALL_TABLE(WP_SYSCALL_ENUMERATOR_)
#undef WP_SYSCALL_ENUMERATOR_
};

struct SyscallSlot {
  Syscall syscall;
  std::uint8_t value;  // WP_SYS_*: what records carry
  const char* name;    // the kernel's name: "pwrite64"
  bool is_write;       // WP_CLASS_WRITE (else WP_CLASS_SYNC)
  bool vfs;            // also served by the fentry/fexit programs on the VFS
};

inline constexpr std::array<SyscallSlot, WP_SYSCALL_SLOTS> kSyscallSlots{{
#define WP_SYSCALL_SLOT_ROW_(id, value, name, Name, cls, vfs) \
  {Syscall::Name, WP_SYS_##id, #name, WP_CLASS_##cls == WP_CLASS_WRITE, (vfs) != 0},
    WP_SYSCALL_TABLE(WP_SYSCALL_SLOT_ROW_)
#undef WP_SYSCALL_SLOT_ROW_
}};

constexpr const SyscallSlot& syscall_slot(Syscall s) {
  return kSyscallSlots[static_cast<std::size_t>(s)];
}

// The syscall a record's WP_SYS_* value names, or nullopt for a value that is none.
constexpr std::optional<Syscall> syscall_from_record(std::uint32_t value) {
  const std::uint32_t slot = wp_syscall_slot(value);
  if (slot >= WP_SYSCALL_SLOTS) return std::nullopt;
  return static_cast<Syscall>(slot);
}

constexpr const char* syscall_name(Syscall s) {
  return static_cast<std::size_t>(s) < kSyscallSlots.size() ? syscall_slot(s).name : "unknown";
}
constexpr bool is_write_syscall(Syscall s) {
  return syscall_slot(s).is_write;
}

// The table's rows are in slot order, so Syscall, slot and row index agree.
static_assert([] {
  for (std::size_t i = 0; i < kSyscallSlots.size(); ++i)
    if (static_cast<std::size_t>(kSyscallSlots[i].syscall) != i ||
        wp_syscall_slot(kSyscallSlots[i].value) != i)
      return false;
  return true;
}());

}  // namespace wp
