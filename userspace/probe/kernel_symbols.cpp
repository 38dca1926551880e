// SPDX-License-Identifier: Apache-2.0
#include "probe/kernel_symbols.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace wp {
namespace {

bool is_text_type(char type) {
  return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

// One line of kallsyms, or nullopt when it is not "HEX TYPE NAME" with an optional "[MODULE]".
struct KallsymsLine {
  std::uint64_t address = 0;
  char type = 0;
  std::string name;
  std::string module;
};

std::optional<KallsymsLine> parse_line(const std::string& line) {
  std::istringstream fields(line);
  std::string address, type, name, module, extra;
  if (!(fields >> address >> type >> name)) return std::nullopt;
  if (type.size() != 1) return std::nullopt;
  KallsymsLine parsed;
  const char* end = address.data() + address.size();
  const auto [stop, failure] = std::from_chars(address.data(), end, parsed.address, 16);
  if (failure != std::errc{} || stop != end) return std::nullopt;
  parsed.type = type[0];
  parsed.name = std::move(name);
  if (fields >> module) {
    if (module.size() < 3 || module.front() != '[' || module.back() != ']') return std::nullopt;
    if (fields >> extra) return std::nullopt;
    parsed.module = module.substr(1, module.size() - 2);
  }
  return parsed;
}

std::string hex(std::uint64_t address) {
  return fmt::format("{:#x}", address);
}

}  // namespace

KernelSymbols KernelSymbols::parse(std::istream& text) {
  KernelSymbols table;
  std::size_t well_formed = 0;
  bool any_nonzero = false;
  std::string line;
  while (std::getline(text, line)) {
    auto parsed = parse_line(line);
    if (!parsed) continue;
    ++well_formed;
    // Data symbols count for the kptr_restrict check too: a reader denied addresses sees zero
    // for every line alike.
    if (parsed->address != 0) any_nonzero = true;
    if (!is_text_type(parsed->type)) continue;
    table.symbols_.push_back({parsed->address, std::move(parsed->name), std::move(parsed->module)});
  }
  if (well_formed > 0 && !any_nonzero) {
    table.symbols_.clear();
    table.error_ = "kernel symbols hidden: /proc/kallsyms shows zero addresses (kptr_restrict)";
    return table;
  }
  if (table.symbols_.empty()) {
    table.error_ = "kernel symbols unavailable: kallsyms lists no text symbols";
    return table;
  }
  // Aliases share an address; the first listed names it (stable sort, then unique).
  std::stable_sort(
      table.symbols_.begin(), table.symbols_.end(),
      [](const KernelSymbol& a, const KernelSymbol& b) { return a.address < b.address; });
  table.symbols_.erase(std::unique(table.symbols_.begin(), table.symbols_.end(),
                                   [](const KernelSymbol& a, const KernelSymbol& b) {
                                     return a.address == b.address;
                                   }),
                       table.symbols_.end());
  return table;
}

KernelSymbols KernelSymbols::from_proc(const std::string& path) {
  std::ifstream file(path);
  if (!file) {
    KernelSymbols table;
    table.error_ =
        fmt::format("kernel symbols unavailable: cannot read {}: {}", path, std::strerror(errno));
    return table;
  }
  return parse(file);
}

const KernelSymbol* KernelSymbols::find(std::uint64_t address) const {
  const auto after = std::upper_bound(
      symbols_.begin(), symbols_.end(), address,
      [](std::uint64_t wanted, const KernelSymbol& symbol) { return wanted < symbol.address; });
  if (after == symbols_.begin()) return nullptr;
  const KernelSymbol& symbol = *std::prev(after);
  // Saturating: a symbol within kMaxSymbolSize of the top of the address space ends there.
  const std::uint64_t room = std::numeric_limits<std::uint64_t>::max() - symbol.address;
  std::uint64_t end = symbol.address + std::min(kMaxSymbolSize, room);
  if (after != symbols_.end()) end = std::min(end, after->address);
  if (address >= end) return nullptr;
  return &symbol;
}

std::string KernelSymbols::symbolize(std::uint64_t address) const {
  const KernelSymbol* symbol = find(address);
  if (!symbol) return hex(address);
  std::string text = fmt::format("{}+{:#x}", symbol->name, address - symbol->address);
  if (!symbol->module.empty()) text += fmt::format(" [{}]", symbol->module);
  return text;
}

std::optional<std::uint64_t> KernelSymbols::address_of(std::string_view name,
                                                       std::string_view module) const {
  for (const auto& symbol : symbols_)
    if (symbol.name == name && symbol.module == module) return symbol.address;
  return std::nullopt;
}

}  // namespace wp
