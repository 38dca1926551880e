// SPDX-License-Identifier: Apache-2.0
// Kernel text addresses → "function+0xoff [module]", from /proc/kallsyms: the symbolizer for
// kernel stacks (bpf_get_stackid/bpf_get_stack), read once and kept by the object that owns it.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wp {

// One text symbol of kallsyms (types t, T, w, W): vmlinux's have no module.
struct KernelSymbol {
  std::uint64_t address = 0;
  std::string name;
  std::string module;  // "ext4" for "[ext4]"; empty for vmlinux
};

class KernelSymbols {
 public:
  // kallsyms carries no sizes: a symbol ends at the next symbol's address, and at most this far
  // past its start (the largest function of a 6.18 x86-64 vmlinux is ~20 KiB; the gaps past the
  // last symbol of a section — entry text, alignment padding, a module's end — run to megabytes,
  // and an address there is in no function).
  static constexpr std::uint64_t kMaxSymbolSize = 64 * 1024;

  // Parses kallsyms text: "ADDRESS TYPE NAME[\t[MODULE]]" per line. Lines that are not of that
  // form are skipped. Every address zero (kptr_restrict hides them from this reader) leaves the
  // table empty and error() saying so.
  static KernelSymbols parse(std::istream& text);
  // parse() of /proc/kallsyms; a file that cannot be read leaves the table empty with the reason.
  static KernelSymbols from_proc(const std::string& path = "/proc/kallsyms");

  // "schedule+0x1a", "ext4_sync_file+0x40 [ext4]"; the address in hex ("0xffffffff81000000")
  // when it is below the first symbol, in no symbol, or the table is empty.
  std::string symbolize(std::uint64_t address) const;
  // The symbol `address` falls in (within its bounds), or null.
  const KernelSymbol* find(std::uint64_t address) const;
  // The address of the first text symbol called `name` (of vmlinux when module is empty).
  std::optional<std::uint64_t> address_of(std::string_view name,
                                          std::string_view module = {}) const;

  std::size_t size() const { return symbols_.size(); }
  bool empty() const { return symbols_.empty(); }
  // Why the table is empty, as one line a caller can show; empty when symbols were read.
  const std::string& error() const { return error_; }

 private:
  std::vector<KernelSymbol> symbols_;  // sorted by address; the first of equal addresses kept
  std::string error_;
};

}  // namespace wp
