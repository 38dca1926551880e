// SPDX-License-Identifier: Apache-2.0
// The live trace's naming of the addresses in off-CPU records: once per address, before the
// record is handed on, "(hidden)" when kallsyms hid its addresses.
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "agent/trace_session_symbols.h"
#include "builders.h"
#include "writepath.h"

namespace wp {
namespace {

using builders::bytes_of;

KernelSymbols symbols_of(const std::string& text) {
  std::istringstream in(text);
  return KernelSymbols::parse(in);
}

wp_offcpu_record offcpu_record() {
  wp_offcpu_record r{};
  r.h = {WP_REC_OFFCPU, sizeof(r), WP_RECORD_VERSION, 0, 100};
  r.nslots = 2;
  r.slots[0].sleeps = 1;
  r.slots[0].nframes = 2;
  r.slots[0].frames[0] = 0xffffffff81000010ull;
  r.slots[0].frames[1] = 0xffffffff81000110ull;
  r.slots[0].flags = WP_WAKER_KNOWN;
  r.slots[0].waker_nframes = 1;
  r.slots[0].waker_frames[0] = 0xffffffff81000110ull;  // the same address: named once
  r.slots[1].sleeps = 1;
  r.slots[1].nframes = 1;
  r.slots[1].frames[0] = 0xffffffff81000010ull;
  r.slots[1].waker_nframes = 1;  // no WP_WAKER_KNOWN: not a stack
  r.slots[1].waker_frames[0] = 0xffffffff81000200ull;
  return r;
}

TEST(KernelAddressNamer, NamesEachAddressOnceFromKallsyms) {
  std::vector<KernelSymbolName> named;
  KernelAddressNamer namer(symbols_of("ffffffff81000000 T schedule\n"
                                      "ffffffff81000100 t jbd2_log_wait_commit\t[jbd2]\n"
                                      "ffffffff81000300 T other\n"),
                           [&named](const KernelSymbolName& s) { named.push_back(s); });
  namer.on_record(bytes_of(offcpu_record()));
  namer.on_record(bytes_of(offcpu_record()));  // nothing new
  ASSERT_EQ(named.size(), 2u);
  EXPECT_EQ(named[0].address, 0xffffffff81000010ull);
  EXPECT_EQ(named[0].name, "schedule+0x10");
  EXPECT_EQ(named[1].address, 0xffffffff81000110ull);
  EXPECT_EQ(named[1].name, "jbd2_log_wait_commit+0x10 [jbd2]");
}

TEST(KernelAddressNamer, HiddenKallsymsNamesEveryFrameHidden) {
  std::vector<KernelSymbolName> named;
  const KernelSymbols hidden = symbols_of(
      "0000000000000000 T schedule\n"
      "0000000000000000 T other\n");
  ASSERT_TRUE(hidden.empty());
  KernelAddressNamer namer(hidden, [&named](const KernelSymbolName& s) { named.push_back(s); });
  namer.on_record(bytes_of(offcpu_record()));
  ASSERT_EQ(named.size(), 2u);
  for (const auto& s : named) EXPECT_EQ(s.name, "(hidden)");
}

TEST(KernelAddressNamer, OtherAndMalformedRecordsNameNothing) {
  std::vector<KernelSymbolName> named;
  KernelAddressNamer namer(symbols_of("ffffffff81000000 T schedule\n"),
                           [&named](const KernelSymbolName& s) { named.push_back(s); });
  wp_offcpu_record r = offcpu_record();
  r.h.size = sizeof(r) - 8;
  namer.on_record(bytes_of(r));
  wp_cgroup_record c{};
  c.h = {WP_REC_CGROUP, sizeof(c), WP_RECORD_VERSION, 0, 1};
  namer.on_record(bytes_of(c));
  namer.on_record(std::span<const std::byte>());
  EXPECT_TRUE(named.empty());
}

}  // namespace
}  // namespace wp
