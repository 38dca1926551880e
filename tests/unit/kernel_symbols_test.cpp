// SPDX-License-Identifier: Apache-2.0
// Kernel symbols: synthetic kallsyms text (vmlinux and module symbols, data symbols, aliases,
// hidden addresses, broken lines), and the running kernel's /proc/kallsyms.
#include "probe/kernel_symbols.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace wp {
namespace {

KernelSymbols parse(const std::string& text) {
  std::istringstream in(text);
  return KernelSymbols::parse(in);
}

// Out of address order, as module symbols are; data symbols between the text ones.
const char* const kSynthetic =
    "ffffffff81000000 T _stext\n"
    "ffffffff81000100 t do_one_initcall\n"
    "ffffffff81000200 D some_data\n"
    "ffffffff81000300 T schedule\n"
    "ffffffff81000300 T schedule_alias\n"
    "ffffffff81000400 W weak_function\n"
    "ffffffffc0002000 t ext4_sync_file\t[ext4]\n"
    "ffffffffc0001000 T ext4_file_write_iter\t[ext4]\n"
    "ffffffffc0003000 r ext4_rodata\t[ext4]\n"
    "ffffffffc0004000 t xfs_file_fsync\t[xfs]\n";

TEST(KernelSymbols, ExactStartIsOffsetZero) {
  const auto symbols = parse(kSynthetic);
  EXPECT_TRUE(symbols.error().empty());
  EXPECT_EQ(symbols.symbolize(0xffffffff81000000), "_stext+0x0");
  EXPECT_EQ(symbols.symbolize(0xffffffff81000300), "schedule+0x0");
}

TEST(KernelSymbols, InsideASymbolCountsFromItsStart) {
  const auto symbols = parse(kSynthetic);
  EXPECT_EQ(symbols.symbolize(0xffffffff810001ff), "do_one_initcall+0xff");
  // A data symbol does not name text: the address stays in the text symbol before it.
  EXPECT_EQ(symbols.symbolize(0xffffffff81000250), "do_one_initcall+0x150");
  EXPECT_EQ(symbols.symbolize(0xffffffff81000410), "weak_function+0x10");
}

TEST(KernelSymbols, SymbolsEndAtTheNextSymbol) {
  const auto symbols = parse(kSynthetic);
  EXPECT_EQ(symbols.symbolize(0xffffffff810002ff), "do_one_initcall+0x1ff");
  EXPECT_EQ(symbols.symbolize(0xffffffff81000301), "schedule+0x1");
}

TEST(KernelSymbols, AliasesAtOneAddressAreNamedByTheFirstListed) {
  const auto symbols = parse(kSynthetic);
  EXPECT_EQ(symbols.symbolize(0xffffffff81000304), "schedule+0x4");
  EXPECT_EQ(symbols.size(), 7u);  // 8 text symbols, one an alias
}

TEST(KernelSymbols, BelowTheFirstSymbolIsHex) {
  const auto symbols = parse(kSynthetic);
  EXPECT_EQ(symbols.symbolize(0xffffffff80ffffff), "0xffffffff80ffffff");
  EXPECT_EQ(symbols.symbolize(0), "0x0");
  EXPECT_EQ(symbols.find(0xffffffff80ffffff), nullptr);
}

TEST(KernelSymbols, FarPastASymbolIsInNone) {
  const auto symbols = parse(kSynthetic);
  // weak_function is followed by ext4's first symbol, far away: bounded by the maximum size.
  const std::uint64_t weak = 0xffffffff81000400;
  EXPECT_EQ(symbols.symbolize(weak + KernelSymbols::kMaxSymbolSize - 1), "weak_function+0xffff");
  EXPECT_EQ(symbols.symbolize(weak + KernelSymbols::kMaxSymbolSize), "0xffffffff81010400");
}

TEST(KernelSymbols, PastTheLastSymbolIsBoundedByTheMaximumSize) {
  const auto symbols = parse(kSynthetic);
  EXPECT_EQ(symbols.symbolize(0xffffffffc0004010), "xfs_file_fsync+0x10 [xfs]");
  EXPECT_EQ(symbols.symbolize(0xffffffffc0004000 + KernelSymbols::kMaxSymbolSize),
            "0xffffffffc0014000");
  EXPECT_EQ(symbols.symbolize(0xffffffffffffffff), "0xffffffffffffffff");
}

TEST(KernelSymbols, ModuleSymbolsNameTheirModule) {
  const auto symbols = parse(kSynthetic);
  EXPECT_EQ(symbols.symbolize(0xffffffffc0001000), "ext4_file_write_iter+0x0 [ext4]");
  EXPECT_EQ(symbols.symbolize(0xffffffffc0002abc), "ext4_sync_file+0xabc [ext4]");
  // ext4's rodata symbol is not text: ext4_sync_file runs on to xfs's first symbol.
  EXPECT_EQ(symbols.symbolize(0xffffffffc0003004), "ext4_sync_file+0x1004 [ext4]");
  EXPECT_EQ(symbols.address_of("ext4_sync_file", "ext4"), 0xffffffffc0002000u);
  EXPECT_EQ(symbols.address_of("ext4_sync_file"), std::nullopt);
}

TEST(KernelSymbols, ZeroAddressesMeanKptrRestrictHidesThem) {
  const auto symbols = parse(
      "0000000000000000 T _stext\n"
      "0000000000000000 T schedule\n"
      "0000000000000000 d some_data\n"
      "0000000000000000 t ext4_sync_file\t[ext4]\n");
  EXPECT_TRUE(symbols.empty());
  EXPECT_EQ(symbols.error(),
            "kernel symbols hidden: /proc/kallsyms shows zero addresses (kptr_restrict)");
  EXPECT_EQ(symbols.symbolize(0xffffffff81000300), "0xffffffff81000300");
}

TEST(KernelSymbols, MalformedLinesAreSkipped) {
  const auto symbols = parse(
      "\n"
      "garbage\n"
      "ffffffff81000000 T\n"                        // no name
      "ffffffffz1000000 T bad_hex\n"                // not hex
      "ffffffff81000000 TT two_letter_type\n"       // type of two letters
      "ffffffff81000000 T bad_module\text4]\n"      // module not in brackets
      "ffffffff81000000 T too_many\t[ext4] more\n"  // trailing field
      "ffffffff81001000 T good_function\n");
  EXPECT_TRUE(symbols.error().empty());
  EXPECT_EQ(symbols.size(), 1u);
  EXPECT_EQ(symbols.symbolize(0xffffffff81001008), "good_function+0x8");
  EXPECT_EQ(symbols.symbolize(0xffffffff81000008), "0xffffffff81000008");
}

TEST(KernelSymbols, NoTextSymbolsIsAnError) {
  EXPECT_FALSE(parse("").error().empty());
  EXPECT_FALSE(parse("ffffffff81000200 D some_data\n").error().empty());
}

TEST(KernelSymbols, AnUnreadableFileSaysWhy) {
  const auto symbols = KernelSymbols::from_proc("/nonexistent/kallsyms");
  EXPECT_TRUE(symbols.empty());
  EXPECT_EQ(symbols.error(),
            "kernel symbols unavailable: cannot read /nonexistent/kallsyms: No such file or "
            "directory");
}

// The running kernel: the address kallsyms gives `schedule` (the first "ADDR T schedule" line,
// read without the parser) names schedule itself; a reader shown zero addresses is told why.
TEST(KernelSymbols, RunningKernelResolvesSchedule) {
  std::ifstream kallsyms("/proc/kallsyms");
  ASSERT_TRUE(kallsyms) << "cannot read /proc/kallsyms";
  std::string line, address_text;
  while (std::getline(kallsyms, line)) {
    std::istringstream fields(line);
    std::string address, type, name;
    if (fields >> address >> type >> name && name == "schedule" && (type == "T" || type == "t")) {
      address_text = address;
      break;
    }
  }
  ASSERT_FALSE(address_text.empty()) << "no schedule in /proc/kallsyms";
  const std::uint64_t address = std::stoull(address_text, nullptr, 16);
  const auto symbols = KernelSymbols::from_proc();
  if (address == 0) {  // a reader kptr_restrict denies addresses (not root)
    EXPECT_TRUE(symbols.empty());
    EXPECT_EQ(symbols.error(),
              "kernel symbols hidden: /proc/kallsyms shows zero addresses (kptr_restrict)");
    return;
  }
  ASSERT_TRUE(symbols.error().empty()) << symbols.error();
  EXPECT_GT(symbols.size(), 1000u);
  EXPECT_EQ(symbols.symbolize(address), "schedule+0x0");
  EXPECT_EQ(symbols.symbolize(address + 4), "schedule+0x4");
  EXPECT_EQ(symbols.address_of("schedule"), address);
}

}  // namespace
}  // namespace wp
