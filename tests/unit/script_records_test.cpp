// SPDX-License-Identifier: Apache-2.0
// The event-script lines of the events made from one record table (script_records.h), held
// to the tables: every field of every such event, given random values, is written as a line
// and read back unchanged, and each line kind reads as exactly one event.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <sstream>

#include "event_script.h"
#include "script_records.h"

namespace wp {
namespace {

using script::Names;
using script::ScriptValue;

class RandomValues {
 public:
  explicit RandomValues(std::uint64_t seed) : rng_(seed) {}

  template <typename Token, typename T>
  void fill(T& out) {
    if constexpr (std::is_same_v<Token, field::dev>) {
      // A declared device by its name, or one written as MAJ:MIN.
      out = pick(2) ? make_dev(253, static_cast<std::uint32_t>(pick(2)))
                    : make_dev(static_cast<std::uint32_t>(pick(4096)),
                               static_cast<std::uint32_t>(pick(1 << 20)));
    } else if constexpr (std::is_same_v<Token, field::comm>) {
      static constexpr std::string_view kChars = "abcxyz019/:- ";
      out.clear();
      for (std::uint64_t n = pick(16); n > 0; --n) out += kChars[pick(kChars.size())];
    } else if constexpr (requires { ScriptValue<Token>::table(); }) {
      const auto table = ScriptValue<Token>::table();
      std::uint32_t value = table[pick(table.size())].first;
      if constexpr (std::is_same_v<T, std::uint32_t>) {  // a flag set: any of its bits
        value = 0;
        for (const auto& [bit, name] : table)
          if (pick(2)) value |= bit;
      }
      out = static_cast<T>(value);
    } else if constexpr (std::is_same_v<Token, field::ns>) {
      out = pick(3) == 0 ? 0 : pick(10'000'000'000ull);
    } else {
      // Small values and ones at the type's ends: a zero is left out of a line, the rest
      // are written.
      switch (pick(3)) {
        case 0: out = 0; break;
        case 1: out = static_cast<T>(pick(100)); break;
        default: out = static_cast<T>(rng_()); break;
      }
    }
  }

  std::uint64_t pick(std::uint64_t bound) { return rng_() % bound; }

 private:
  std::mt19937_64 rng_;
};

template <typename E>
E random_event(RandomValues& random) {
  E ev{};
  ev.ts = random.pick(1'000'000'000);
  ev.visit_fields([&]<typename Token>(std::string_view, auto& member) {
    if constexpr (!script::Unwritten<Token>) random.template fill<Token>(member);
  });
  return ev;
}

constexpr const char* kDevices = "device vda 253:0\ndevice vda1 253:1 disk=vda\n";

template <typename E>
void expect_round_trips(RandomValues& random, int rounds) {
  for (int i = 0; i < rounds; ++i) {
    const E written = random_event<E>(random);
    Names names;
    names.add_device("vda", make_dev(253, 0));
    names.add_device("vda1", make_dev(253, 1));
    const auto line = write_event_line(written, names);
    ASSERT_TRUE(line);
    std::istringstream in(std::string(kDevices) + *line + "\n");
    const ParsedScript parsed = parse_event_script(in);
    ASSERT_TRUE(parsed.script) << parsed.error << "\n  " << *line;
    ASSERT_EQ(parsed.script->steps.size(), 1u) << *line;
    const Event& read = std::get<Event>(parsed.script->steps[0]);
    ASSERT_TRUE(std::holds_alternative<E>(read)) << *line;
    EXPECT_TRUE(std::get<E>(read) == written) << *line;
  }
}

template <typename... E>
void expect_all_round_trip(std::tuple<E...>*, RandomValues& random) {
  (expect_round_trips<E>(random, 200), ...);
}

TEST(ScriptRecords, EveryFieldOfEveryTableEventIsWrittenAndReadBack) {
  const std::uint64_t seed = std::random_device{}();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  RandomValues random(seed);
  expect_all_round_trip(static_cast<script::TableEvents*>(nullptr), random);
}

// A field left at what leaving it out means is left out: the lines stay as short as a person
// writes them.
TEST(ScriptRecords, ALineLeavesOutWhatItsFallbacksGive) {
  Names names;
  names.add_device("vda", make_dev(253, 0));
  const RequestEvent issue{.ts = 12'000,
                           .rq = 0x10,
                           .disk = make_dev(253, 0),
                           .op = ReqOp::Write,
                           .bytes = 4096,
                           .kind = RequestEventKind::Issue};
  EXPECT_EQ(write_event_line(issue, names), "12us issue rq=0x10 disk=vda bytes=4096");
  const CgroupEvent cgroup{.ts = 1'000'000, .cgroup_id = 7, .pid = 5, .tid = 5};
  EXPECT_EQ(write_event_line(cgroup, names), "1ms cgroup id=7 tid=5");
  const SyscallEvent call{};
  EXPECT_FALSE(write_event_line(call, names));
}

template <typename... E>
std::vector<std::size_t> readers_of(std::tuple<E...>*, std::string_view word) {
  std::vector<std::size_t> readers;
  std::size_t index = 0;
  ((script::is_word_of<E>(word) ? readers.push_back(index++) : void(++index)), ...);
  return readers;
}

TEST(ScriptRecords, EachLineKindIsOneEvents) {
  std::set<std::string> words;
  std::apply(
      [&](auto... ev) {
        (
            [&]<typename E>(const E&) {
              for (std::string_view word : script::words_of<E>()) words.emplace(word);
            }(ev),
            ...);
      },
      script::TableEvents{});
  EXPECT_EQ(words.size(), 23u);  // 5 request events, 2 NVMe, 3 xfs log, 13 single-kind records
  for (const std::string& word : words) {
    EXPECT_EQ(readers_of(static_cast<script::TableEvents*>(nullptr), word).size(), 1u) << word;
    // Nor is it a kind the hand-written readers take.
    for (const char* hand : {"bio", "split", "lost", "offcpu", "path", "sleep"})
      EXPECT_NE(word, hand);
    const std::size_t calls = kSyscallSlots.size() + kUringOps.size() + kNameChangeCalls.size();
    for (std::size_t call = 0; call < calls; ++call)
      EXPECT_NE(std::string_view(syscall_name(static_cast<Syscall>(call))), word);
  }
}

}  // namespace
}  // namespace wp
