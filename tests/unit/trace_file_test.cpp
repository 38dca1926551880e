// SPDX-License-Identifier: Apache-2.0
// The trace file writer's buffering: frames come back whole and in order whatever the buffer
// size, and a failed write is reported with its reason. The reader streams frames, and stops
// at a damaged or cut-short tail with a warning.
#include "record/trace_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace wp {
namespace {

std::vector<std::byte> payload(std::size_t size, unsigned char fill) {
  return std::vector<std::byte>(size, static_cast<std::byte>(fill));
}

TEST(TraceFileWriter, FramesRoundTripThroughASmallBuffer) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("wp_trace_file_test_" + std::to_string(::getpid()) + ".wpt");
  TraceFileHeader header;
  header.writepath_version = "test";
  header.kernel = "6.x";
  header.record_version = 7;
  header.min_latency_ns = 5'000'000;
  LostCounts lost{};
  lost[1] = 42;
  {
    // The smallest buffer holds one maximal frame: 300 frames force many write-outs.
    TraceFileWriter writer(path.string(), header, 1);
    for (unsigned i = 0; i < 300; ++i) writer.record(payload(100 + i * 7, i & 0xff));
    writer.lost(lost);
    writer.record(payload(kMaxFramePayload, 0xab));
    EXPECT_TRUE(writer.ok()) << writer.error();
    EXPECT_EQ(writer.records(), 301u);
  }
  TraceFileReader reader = TraceFileReader::open(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(reader.error().empty()) << reader.error();
  EXPECT_TRUE(reader.warning().empty()) << reader.warning();
  EXPECT_EQ(reader.header().record_version, 7u);
  EXPECT_EQ(reader.header().min_latency_ns, 5'000'000u);
  // Frames are read one at a time; copy them out to look at them all.
  struct Copy {
    FrameKind kind;
    std::vector<std::byte> payload;
  };
  std::vector<Copy> frames;
  while (const auto frame = reader.next())
    frames.push_back({frame->kind, {frame->payload.begin(), frame->payload.end()}});
  EXPECT_TRUE(reader.warning().empty()) << reader.warning();
  ASSERT_EQ(frames.size(), 302u);
  EXPECT_EQ(reader.frames_read(), 302u);
  for (unsigned i = 0; i < 300; ++i) {
    const Copy& frame = frames[i];
    ASSERT_EQ(frame.kind, FrameKind::Record);
    ASSERT_EQ(frame.payload.size(), 100 + i * 7);
    EXPECT_EQ(frame.payload.front(), static_cast<std::byte>(i & 0xff));
    EXPECT_EQ(frame.payload.back(), static_cast<std::byte>(i & 0xff));
  }
  ASSERT_EQ(frames[300].kind, FrameKind::Lost);
  LostCounts back{};
  std::memcpy(back.data(), frames[300].payload.data(), sizeof(back));
  EXPECT_EQ(back, lost);
  EXPECT_EQ(frames[301].payload.size(), kMaxFramePayload);
}

// The untraced calls' counts, written once at the end of a recording, read back by name.
TEST(TraceFileWriter, UntracedCountsRoundTripByName) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("wp_trace_file_untraced_" + std::to_string(::getpid()) + ".wpt");
  const UntracedByName counts{{"fallocate", 3}, {"splice", 0}, {"a_call_added_later", 7}};
  {
    TraceFileWriter writer(path.string(), TraceFileHeader{});
    writer.record(payload(64, 1));
    writer.untraced(counts);
  }
  TraceFileReader reader = TraceFileReader::open(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(reader.error().empty()) << reader.error();
  ASSERT_TRUE(reader.next().has_value());
  const auto frame = reader.next();
  ASSERT_TRUE(frame.has_value()) << reader.warning();
  ASSERT_EQ(frame->kind, FrameKind::Untraced);
  EXPECT_EQ(untraced_counts_of(*frame), counts);
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_TRUE(reader.warning().empty()) << reader.warning();
}

namespace {
// A file of one frame of `kind` holding `body`, as bytes.
std::vector<std::byte> file_with_frame(FrameKind kind, const std::vector<std::byte>& body) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("wp_trace_file_frame_" + std::to_string(::getpid()) + ".wpt");
  { TraceFileWriter writer(path.string(), TraceFileHeader{}); }
  std::ifstream in(path, std::ios::binary);
  std::vector<std::byte> bytes;
  for (char c; in.get(c);) bytes.push_back(static_cast<std::byte>(c));
  std::filesystem::remove(path);
  const auto put_u32 = [&](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<std::byte>(v >> (8 * i)));
  };
  put_u32(static_cast<std::uint32_t>(body.size()));
  put_u32(static_cast<std::uint32_t>(kind));
  bytes.insert(bytes.end(), body.begin(), body.end());
  return bytes;
}
}  // namespace

// Recordings made when the frame held raw counts of a fixed list of calls still read.
TEST(TraceFileReader, FixedUntracedFrameOfOlderRecordingsReadsByName) {
  std::vector<std::uint64_t> words(8, 0);
  words[2] = 16;                         // msync
  words[6] = 3;                          // fallocate
  words[7] = (1u << 2) | (1u << 6) | 1;  // counted: msync, fallocate, io_uring_enter
  std::vector<std::byte> body(words.size() * 8);
  std::memcpy(body.data(), words.data(), body.size());
  const auto bytes = file_with_frame(FrameKind::UntracedFixed, body);
  TraceFileReader reader = TraceFileReader::parse(bytes);
  ASSERT_TRUE(reader.error().empty()) << reader.error();
  const auto frame = reader.next();
  ASSERT_TRUE(frame.has_value()) << reader.warning();
  EXPECT_EQ(untraced_counts_of(*frame),
            (UntracedByName{{"fallocate", 3}, {"io_uring_enter", 0}, {"msync", 16}}));
}

// A named entry running past its frame is damage, not a count.
TEST(TraceFileReader, UntracedFrameWithACutEntryIsDamaged) {
  std::vector<std::byte> body{std::byte{5},   std::byte{'m'}, std::byte{'s'}, std::byte{'y'},
                              std::byte{'n'}, std::byte{'c'}, std::byte{1}};
  const auto bytes = file_with_frame(FrameKind::Untraced, body);
  TraceFileReader reader = TraceFileReader::parse(bytes);
  ASSERT_TRUE(reader.error().empty()) << reader.error();
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_NE(reader.warning().find("damaged frame"), std::string::npos) << reader.warning();
}

// A filtered recording keeps what the disks did for the requests the kernel kept out.
TEST(TraceFileWriter, FilteredRequestTotalsRoundTripPerDisk) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("wp_trace_file_filtered_" + std::to_string(::getpid()) + ".wpt");
  const FilteredRequestsByDisk totals{{make_dev(7, 1), {120, 491'520, 3}},
                                      {make_dev(254, 0), {1, 0, 0}}};
  {
    TraceFileWriter writer(path.string(), TraceFileHeader{});
    writer.filtered_requests(totals);
  }
  TraceFileReader reader = TraceFileReader::open(path.string());
  std::filesystem::remove(path);
  const auto frame = reader.next();
  ASSERT_TRUE(frame.has_value()) << reader.warning();
  ASSERT_EQ(frame->kind, FrameKind::FilteredRequests);
  EXPECT_EQ(filtered_requests_of(*frame), totals);
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_TRUE(reader.warning().empty()) << reader.warning();
}

// A totals frame that is not whole entries, or names a disk twice, is damage.
TEST(TraceFileReader, FilteredRequestsFrameOfPartEntriesIsDamaged) {
  const auto cut = file_with_frame(FrameKind::FilteredRequests, std::vector<std::byte>(20));
  TraceFileReader reader = TraceFileReader::parse(cut);
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_NE(reader.warning().find("damaged frame"), std::string::npos) << reader.warning();
  const auto twice = file_with_frame(FrameKind::FilteredRequests, std::vector<std::byte>(64));
  TraceFileReader again = TraceFileReader::parse(twice);
  EXPECT_FALSE(again.next().has_value());
  EXPECT_NE(again.warning().find("damaged frame"), std::string::npos) << again.warning();
}

// A filtered recording keeps the data the kernel kept out of traced disks, by owner.
TEST(TraceFileWriter, FilteredIoRoundTripsByOwner) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("wp_trace_file_filtered_io_" + std::to_string(::getpid()) + ".wpt");
  const std::vector<FilteredIo> owners{
      {.disk = make_dev(7, 1),
       .tgid = 4211,
       .cgroup_id = 9,
       .comm = "dd",
       .bytes = 1 << 20,
       .bios = 4},
      {.disk = make_dev(7, 1),
       .dev = make_dev(7, 1),
       .ino = 12,
       .comm = {},
       .bytes = 4096,
       .bios = 1},
      {.disk = make_dev(259, 0), .tgid = 1, .comm = "a-name-of-15-ch", .bytes = 1, .bios = 1}};
  {
    TraceFileWriter writer(path.string(), TraceFileHeader{});
    writer.filtered_io(owners);
  }
  TraceFileReader reader = TraceFileReader::open(path.string());
  std::filesystem::remove(path);
  const auto frame = reader.next();
  ASSERT_TRUE(frame.has_value()) << reader.warning();
  ASSERT_EQ(frame->kind, FrameKind::FilteredIo);
  EXPECT_EQ(filtered_io_of(*frame), owners);
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_TRUE(reader.warning().empty()) << reader.warning();
}

// An owners frame that is not whole entries, or whose padding is not zero, is damage.
TEST(TraceFileReader, FilteredIoFrameOfPartEntriesIsDamaged) {
  const auto cut = file_with_frame(FrameKind::FilteredIo, std::vector<std::byte>(40));
  TraceFileReader reader = TraceFileReader::parse(cut);
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_NE(reader.warning().find("damaged frame"), std::string::npos) << reader.warning();
  std::vector<std::byte> padded(64);
  padded[28] = std::byte{1};  // the u32 after the file's dev_t
  TraceFileReader again = TraceFileReader::parse(file_with_frame(FrameKind::FilteredIo, padded));
  EXPECT_FALSE(again.next().has_value());
  EXPECT_NE(again.warning().find("damaged frame"), std::string::npos) << again.warning();
}

// A recording keeps the disks its end found with no write in flight, and when.
TEST(TraceFileWriter, WriteIdleDisksRoundTrip) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("wp_trace_file_idle_" + std::to_string(::getpid()) + ".wpt");
  const WriteIdleDisks idle{123'456'789, {make_dev(7, 1), make_dev(254, 0)}};
  {
    TraceFileWriter writer(path.string(), TraceFileHeader{});
    writer.write_idle_disks(idle);
    writer.write_idle_disks({5, {}});  // none idle: still when it was read
  }
  TraceFileReader reader = TraceFileReader::open(path.string());
  std::filesystem::remove(path);
  auto frame = reader.next();
  ASSERT_TRUE(frame.has_value()) << reader.warning();
  EXPECT_EQ(write_idle_disks_of(*frame), idle);
  frame = reader.next();
  ASSERT_TRUE(frame.has_value()) << reader.warning();
  EXPECT_EQ(write_idle_disks_of(*frame), (WriteIdleDisks{5, {}}));
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_TRUE(reader.warning().empty()) << reader.warning();
}

// A part of a disk number, a disk named twice or no time is damage.
TEST(TraceFileReader, WriteIdleDisksFrameThatIsNotWholeIsDamaged) {
  std::vector<std::byte> part(8 + 6);
  part[0] = std::byte{1};
  std::vector<std::byte> twice(8 + 8);  // two disks 0:0
  twice[0] = std::byte{1};
  const std::vector<std::byte> no_time(8 + 4, std::byte{0});
  for (const auto& payload : {part, twice, no_time}) {
    TraceFileReader reader =
        TraceFileReader::parse(file_with_frame(FrameKind::WriteIdleDisks, payload));
    EXPECT_FALSE(reader.next().has_value());
    EXPECT_NE(reader.warning().find("damaged frame"), std::string::npos) << reader.warning();
  }
}

// A recording keeps the path of every cgroup its records name.
TEST(TraceFileWriter, CgroupNamesRoundTrip) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("wp_trace_file_cgroup_" + std::to_string(::getpid()) + ".wpt");
  {
    TraceFileWriter writer(path.string(), TraceFileHeader{});
    writer.cgroup_name({0x1f2e, "/kubepods.slice/kubepods-burstable.slice/pod x"});
    writer.record(payload(64, 1));
    writer.cgroup_name({1, "/"});
  }
  TraceFileReader reader = TraceFileReader::open(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(reader.error().empty()) << reader.error();
  auto frame = reader.next();
  ASSERT_TRUE(frame.has_value()) << reader.warning();
  auto name = cgroup_name_of(*frame);
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->id, 0x1f2eu);
  EXPECT_EQ(name->path, "/kubepods.slice/kubepods-burstable.slice/pod x");
  frame = reader.next();
  ASSERT_TRUE(frame.has_value());
  EXPECT_FALSE(cgroup_name_of(*frame).has_value());  // a record
  frame = reader.next();
  ASSERT_TRUE(frame.has_value());
  name = cgroup_name_of(*frame);
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->id, 1u);
  EXPECT_EQ(name->path, "/");
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_TRUE(reader.warning().empty()) << reader.warning();
}

// A frame of `kind` holding a u64 id and then `text` is reported as damage, and ends the
// frames.
void expect_damaged_id_frame(FrameKind kind, const std::string& text) {
  std::vector<std::byte> body(8 + text.size());
  std::memcpy(body.data() + 8, text.data(), text.size());
  const auto bytes = file_with_frame(kind, body);
  TraceFileReader reader = TraceFileReader::parse(bytes);
  ASSERT_TRUE(reader.error().empty()) << reader.error();
  EXPECT_FALSE(reader.next().has_value()) << text.size();
  EXPECT_NE(reader.warning().find("damaged frame"), std::string::npos) << reader.warning();
}

// A name frame without a path, or with one that is not absolute, is damage.
TEST(TraceFileReader, CgroupNameFrameWithoutAnAbsolutePathIsDamaged) {
  for (const std::string& text : {std::string(), std::string("relative")})
    expect_damaged_id_frame(FrameKind::CgroupName, text);
}

// What the host said of a container cgroup travels with the recording; nothing is written for
// a cgroup it said nothing of, or a name too long to be one.
TEST(TraceFileWriter, ContainerNamesRoundTrip) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("wp_trace_file_names_" + std::to_string(::getpid()) + ".wpt");
  const ContainerNames names{
      .name = "api", .pod = "api-7f9", .namespace_ = "shop", .hostname = "api-7f9"};
  {
    TraceFileWriter writer(path.string(), TraceFileHeader{});
    writer.container_names({0x1f2e, names});
    writer.container_names({7, ContainerNames{}});
    writer.container_names({8, ContainerNames{.name = std::string(kMaxContainerName + 1, 'x'),
                                              .pod = "",
                                              .namespace_ = "",
                                              .hostname = ""}});
    writer.container_names(
        {9, ContainerNames{.name = "", .pod = "", .namespace_ = "", .hostname = "web"}});
  }
  TraceFileReader reader = TraceFileReader::open(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(reader.error().empty()) << reader.error();
  auto frame = reader.next();
  ASSERT_TRUE(frame.has_value()) << reader.warning();
  auto read = container_names_of(*frame);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->id, 0x1f2eu);
  EXPECT_EQ(read->names, names);
  EXPECT_FALSE(cgroup_name_of(*frame).has_value());
  frame = reader.next();
  ASSERT_TRUE(frame.has_value()) << reader.warning();
  read = container_names_of(*frame);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->id, 9u);
  EXPECT_EQ(read->names.hostname, "web");
  EXPECT_EQ(read->names.name, "");
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_TRUE(reader.warning().empty()) << reader.warning();
}

// Fewer than four fields, or bytes after the fourth, is damage.
TEST(TraceFileReader, ContainerNamesFrameOfTheWrongShapeIsDamaged) {
  // Lengths given: a literal's NULs would end the string at the first.
  for (const std::string& text :
       {std::string("a\0b\0c\0", 6), std::string("a\0b\0c\0d\0e", 9), std::string()})
    expect_damaged_id_frame(FrameKind::ContainerNames, text);
}

TEST(TraceFileWriter, KernelSymbolsRoundTrip) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("wp_trace_file_ksym_" + std::to_string(::getpid()) + ".wpt");
  {
    TraceFileWriter writer(path.string(), TraceFileHeader{});
    writer.kernel_symbol({0xffffffff81b5fd40ull, "jbd2_log_wait_commit+0xee [jbd2]"});
    writer.record(payload(64, 1));
    writer.kernel_symbol({0xffffffff81000000ull, "(hidden)"});
    writer.kernel_symbol({0xffffffff81000008ull, ""});  // nothing to say: no frame
    writer.kernel_symbol({0xffffffff81000010ull, std::string(kMaxKernelSymbolName + 1, 'x')});
  }
  TraceFileReader reader = TraceFileReader::open(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(reader.error().empty()) << reader.error();
  auto frame = reader.next();
  ASSERT_TRUE(frame.has_value()) << reader.warning();
  EXPECT_EQ(frame->kind, FrameKind::KernelSymbol);
  auto symbol = kernel_symbol_of(*frame);
  ASSERT_TRUE(symbol.has_value());
  EXPECT_EQ(symbol->address, 0xffffffff81b5fd40ull);
  EXPECT_EQ(symbol->name, "jbd2_log_wait_commit+0xee [jbd2]");
  frame = reader.next();
  ASSERT_TRUE(frame.has_value());
  EXPECT_FALSE(kernel_symbol_of(*frame).has_value());  // a record
  EXPECT_FALSE(cgroup_name_of(*frame).has_value());
  frame = reader.next();
  ASSERT_TRUE(frame.has_value());
  symbol = kernel_symbol_of(*frame);
  ASSERT_TRUE(symbol.has_value());
  EXPECT_EQ(symbol->name, "(hidden)");
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_TRUE(reader.warning().empty()) << reader.warning();
}

// A symbol frame without a name, with a zero address, a NUL in its name or a name past the
// bound is damage.
TEST(TraceFileReader, CorruptKernelSymbolFrameIsDamaged) {
  struct Case {
    std::uint64_t address;
    std::string name;
  };
  for (const Case& c : {Case{0xffffffff81000000ull, ""}, Case{0, "schedule+0x1a"},
                        Case{0xffffffff81000000ull, std::string("sched\0ule", 9)},
                        Case{0xffffffff81000000ull, std::string(kMaxKernelSymbolName + 1, 'x')}}) {
    std::vector<std::byte> body(8 + c.name.size());
    std::memcpy(body.data(), &c.address, 8);
    std::memcpy(body.data() + 8, c.name.data(), c.name.size());
    const auto bytes = file_with_frame(FrameKind::KernelSymbol, body);
    TraceFileReader reader = TraceFileReader::parse(bytes);
    ASSERT_TRUE(reader.error().empty()) << reader.error();
    EXPECT_FALSE(reader.next().has_value()) << c.name;
    EXPECT_NE(reader.warning().find("damaged frame"), std::string::npos) << reader.warning();
  }
  std::vector<std::byte> short_body(4);  // not even an address
  TraceFileReader reader =
      TraceFileReader::parse(file_with_frame(FrameKind::KernelSymbol, short_body));
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_NE(reader.warning().find("damaged frame"), std::string::npos) << reader.warning();
}

TEST(TraceFileWriter, AFailedWriteIsReportedWithItsReason) {
  // /dev/full takes the open and refuses every write with ENOSPC; the header write is the
  // first, so the constructor already fails with the reason.
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  try {
    TraceFileWriter writer("/dev/full", TraceFileHeader{});
    FAIL() << "the header write to /dev/full succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(std::strerror(ENOSPC)), std::string::npos) << e.what();
  }
}

// A file of `frames` 1000-byte records, as bytes.
std::vector<std::byte> recorded_bytes(unsigned frames) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("wp_trace_file_cut_" + std::to_string(::getpid()) + ".wpt");
  {
    TraceFileWriter writer(path.string(), TraceFileHeader{});
    for (unsigned i = 0; i < frames; ++i) writer.record(payload(1000, i & 0xff));
  }
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

// A file recorded before the discard hook existed has eight lost counters per Lost frame.
TEST(TraceFileReader, LostFrameOfAnOlderRecorderHasItsMissingCountersZero) {
  std::vector<std::byte> bytes = recorded_bytes(1);
  const std::uint32_t length = kMinLostFramePayload;
  const std::uint32_t kind = static_cast<std::uint32_t>(FrameKind::Lost);
  std::vector<std::uint64_t> counts(length / 8, 0);
  counts[1] = 5;
  const auto append = [&](const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    bytes.insert(bytes.end(), b, b + n);
  };
  append(&length, 4);
  append(&kind, 4);
  append(counts.data(), length);
  auto reader = TraceFileReader::parse(bytes);
  ASSERT_TRUE(reader.next());
  const auto lost = reader.next();
  ASSERT_TRUE(lost);
  ASSERT_EQ(lost->kind, FrameKind::Lost);
  const LostCounts back = lost_counts_of(lost->payload);
  EXPECT_EQ(back[1], 5u);
  EXPECT_EQ(back[WP_HOOK_DISCARD], 0u);
  EXPECT_TRUE(reader.warning().empty()) << reader.warning();
  EXPECT_FALSE(lost_frame_length_ok(kMinLostFramePayload - 8));
  EXPECT_FALSE(lost_frame_length_ok(sizeof(LostCounts) + 8));
  EXPECT_FALSE(lost_frame_length_ok(kMinLostFramePayload + 4));
}

TEST(TraceFileReader, ACutShortFileGivesTheWholeFramesBeforeTheCutAndAWarning) {
  std::vector<std::byte> bytes = recorded_bytes(10);
  bytes.resize(bytes.size() - 500);  // the last frame loses half its payload
  auto reader = TraceFileReader::parse(bytes);
  ASSERT_TRUE(reader.error().empty()) << reader.error();
  unsigned frames = 0;
  while (reader.next()) ++frames;
  EXPECT_EQ(frames, 9u);
  EXPECT_NE(reader.warning().find("ends inside a frame after 9 frames"), std::string::npos)
      << reader.warning();
}

TEST(TraceFileReader, ADamagedFrameEndsTheFramesWithItsOffset) {
  std::vector<std::byte> bytes = recorded_bytes(10);
  const std::size_t frame_bytes = 8 + 1000;
  const std::size_t third = bytes.size() - 7 * frame_bytes;  // the 4th frame's header
  bytes[third + 4] = std::byte{0x7f};                        // an unknown frame kind
  auto reader = TraceFileReader::parse(bytes);
  unsigned frames = 0;
  while (reader.next()) ++frames;
  EXPECT_EQ(frames, 3u);
  EXPECT_NE(reader.warning().find("damaged frame at byte " + std::to_string(third)),
            std::string::npos)
      << reader.warning();
  EXPECT_FALSE(reader.next());  // stays at the end
}

// The page size the records count pages in travels in the header: a 16 KiB-page recording is
// reported with 16 KiB pages on any machine; a file from before the key reads as 4 KiB (all
// such files were recorded with 4 KiB pages); a size no kernel has is a damaged header.
TEST(TraceFileReader, PageShiftComesFromTheHeaderAndOlderFilesHave4KiBPages) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("wp_trace_file_page_" + std::to_string(::getpid()) + ".wpt");
  TraceFileHeader header;
  header.page_shift = 14;
  { TraceFileWriter writer(path.string(), header); }
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  const auto read_as = [](std::string bytes_text) {
    std::vector<std::byte> bytes(bytes_text.size());
    std::memcpy(bytes.data(), bytes_text.data(), bytes_text.size());
    return TraceFileReader::parse(bytes);
  };
  const std::size_t key = text.find("\"page_shift\":14");
  ASSERT_NE(key, std::string::npos) << text;

  auto recorded = read_as(text);
  ASSERT_TRUE(recorded.error().empty()) << recorded.error();
  EXPECT_EQ(recorded.header().page_shift, 14u);

  std::string older = text;  // the same length: the header's length field still holds
  older.replace(key, 15, "\"page_xxxxx\":14");
  auto old_reader = read_as(older);
  ASSERT_TRUE(old_reader.error().empty()) << old_reader.error();
  EXPECT_EQ(old_reader.header().page_shift, 12u);

  std::string damaged = text;
  damaged.replace(key, 15, "\"page_shift\":40");
  EXPECT_EQ(read_as(damaged).error(), "damaged trace file header");
}

TEST(TraceFileReader, AForeignFileIsAnErrorWithNoFrames) {
  const std::string text = "{\"type\":\"write\"}\n";
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  auto reader = TraceFileReader::parse(bytes);
  EXPECT_EQ(reader.error(),
            "JSON Lines, not a writepath trace file: report reads recordings (writepath record "
            "-o FILE, or trace --save FILE)");
  EXPECT_FALSE(reader.next());
}

}  // namespace
}  // namespace wp
