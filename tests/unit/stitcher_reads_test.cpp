// SPDX-License-Identifier: Apache-2.0
// The dispatcher's read and fault rules (stitcher.cpp, docs/reference/stitching-rules.md
// "Reads and faults"): each whole at its record.
#include <gtest/gtest.h>

#include "stitch_fixture.h"

namespace wp {
namespace {

using namespace stitch_test;

using ReadStitching = StitcherTest;

FaultEvent fault_at(std::uint64_t index, std::uint32_t pages_added, std::uint16_t calls,
                    std::uint16_t flags, std::uint32_t mapped = 0) {
  FaultEvent ev;
  ev.ts = 500;
  ev.start_ns = 100;
  ev.last_ns = 180;
  ev.pid = ev.tid = 7;
  ev.dev = kPart;
  ev.ino = 42;
  ev.address = 0x7f0000000000 + index * 4096;
  ev.index = index;
  ev.pages_added = pages_added;
  ev.filemap_faults = calls;
  ev.flags = flags;
  ev.mapped_pages = mapped;
  return ev;
}

const ReadTimeline& only_read(const std::vector<Timeline>& out) {
  EXPECT_EQ(out.size(), 1u);
  return std::get<ReadTimeline>(out.back());
}

// A fault that put its own page's folio in the cache read it from the device, and is major;
// the other pages it inserted are readahead around it.
TEST_F(ReadStitching, AFaultThatFilledItsPageIsMajorWithItsReadaheadAroundIt) {
  feed(fault_at(3, 32, 2, WP_FAULT_FILLED));
  const ReadTimeline& r = only_read(out_);
  ASSERT_TRUE(r.fault);
  EXPECT_TRUE(r.fault->major);
  EXPECT_EQ(r.call.syscall, Syscall::PageFault);
  EXPECT_EQ(r.call.pos, 3u * 4096);
  EXPECT_EQ(r.first_page, 3u);
  EXPECT_EQ(r.pages_from_device, 1u);
  EXPECT_EQ(r.pages_cached, 0u);
  EXPECT_EQ(r.readahead_pages, 31u);
  EXPECT_EQ(r.call.end_ns, 180u) << "its end is its last page-cache event";
}

// A fault that ran filemap_fault twice waited for its page (the retry): major, as the kernel
// counts FAULT_FLAG_TRIED, though its page came in by another read.
TEST_F(ReadStitching, AFaultRetriedAfterAWaitIsMajorWithItsPageFoundCached) {
  feed(fault_at(8, 0, 2, 0));
  const ReadTimeline& r = only_read(out_);
  EXPECT_TRUE(r.fault->major);
  EXPECT_EQ(r.pages_from_device, 0u);
  EXPECT_EQ(r.pages_cached, 1u);
}

// Fault-around mapping the page from the cache, or one filemap_fault that inserted nothing:
// minor.
TEST_F(ReadStitching, AFaultServedFromTheCacheIsMinor) {
  feed(fault_at(64, 0, 0, 0, 16));
  feed(fault_at(80, 0, 1, WP_FAULT_WRITE));
  ASSERT_EQ(out_.size(), 2u);
  for (const Timeline& t : out_) {
    const ReadTimeline& r = std::get<ReadTimeline>(t);
    EXPECT_FALSE(r.fault->major);
    EXPECT_EQ(r.pages_cached, 1u);
    EXPECT_EQ(r.readahead_pages, 0u);
  }
  EXPECT_EQ(std::get<ReadTimeline>(out_[0]).fault->mapped_pages, 16u);
  EXPECT_TRUE(std::get<ReadTimeline>(out_[1]).fault->write);
}

// A read's pages added inside [pos, pos + ret) came from the device; past its last byte they
// are readahead; the rest of its span it found cached.
TEST_F(ReadStitching, AReadsFillsInsideItsRangeCameFromTheDeviceThePastOnesAreReadahead) {
  ReadEvent ev;
  ev.call.syscall = Syscall::Pread64;
  ev.call.start_ns = 100;
  ev.call.end_ns = 200;
  ev.call.pid = ev.call.tid = 7;
  ev.call.dev = kPart;
  ev.call.ino = 42;
  ev.call.file_flags = file_flag::kRegular;
  ev.call.pos = 8192;
  ev.call.count = 16384;
  ev.call.ret = 16384;
  ev.pages_added = 30;
  ev.pages_added_beyond = 28;
  feed(ev);
  const ReadTimeline& r = only_read(out_);
  EXPECT_FALSE(r.fault);
  EXPECT_EQ(r.first_page, 2u);
  EXPECT_EQ(r.pages, 4u);
  EXPECT_EQ(r.pages_from_device, 2u);
  EXPECT_EQ(r.pages_cached, 2u);
  EXPECT_EQ(r.readahead_pages, 28u);
}

}  // namespace
}  // namespace wp
