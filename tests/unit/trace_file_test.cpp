// The trace file writer's buffering: frames come back whole and in order whatever the buffer
// size, and a failed write is reported with its reason.
#include "record/trace_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
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
  ASSERT_EQ(reader.frames().size(), 302u);
  for (unsigned i = 0; i < 300; ++i) {
    const Frame& frame = reader.frames()[i];
    ASSERT_EQ(frame.kind, FrameKind::Record);
    ASSERT_EQ(frame.payload.size(), 100 + i * 7);
    EXPECT_EQ(frame.payload.front(), static_cast<std::byte>(i & 0xff));
    EXPECT_EQ(frame.payload.back(), static_cast<std::byte>(i & 0xff));
  }
  ASSERT_EQ(reader.frames()[300].kind, FrameKind::Lost);
  LostCounts back{};
  std::memcpy(back.data(), reader.frames()[300].payload.data(), sizeof(back));
  EXPECT_EQ(back, lost);
  EXPECT_EQ(reader.frames()[301].payload.size(), kMaxFramePayload);
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

}  // namespace
}  // namespace wp
