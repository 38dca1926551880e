// SPDX-License-Identifier: Apache-2.0
// The read diagnosis (analyze/read_diagnosis.h) from per-file summaries of made-up items: each
// finding named where its evidence is, and only there.
#include "analyze/read_diagnosis.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "builders.h"

namespace wp {
namespace {

using builders::syscall_event;

constexpr std::uint64_t kPage = 4096;

// A read of `pages` pages of inode `ino` from page `first`, `from_device` of them brought in,
// `readahead` more past it.
ReadTimeline read_at(std::uint64_t ino, std::uint64_t first, std::uint64_t pages,
                     std::uint64_t from_device, std::uint32_t readahead = 0) {
  ReadTimeline r;
  r.call = syscall_event({.syscall = Syscall::Pread64,
                          .start_ns = 1000,
                          .end_ns = 201000,
                          .pid = 7,
                          .tid = 7,
                          .ino = ino});
  r.call.pos = first * kPage;
  r.call.ret = static_cast<std::int64_t>(pages * kPage);
  r.call.count = pages * kPage;
  r.pages = pages;
  r.first_page = first;
  r.pages_from_device = from_device;
  r.pages_cached = pages - from_device;
  r.readahead_pages = readahead;
  return r;
}

// A fault of inode `ino` on page `page`: major when it read its page in (with `readahead`
// around it), else minor.
ReadTimeline fault_at(std::uint64_t ino, std::uint64_t page, bool major,
                      std::uint32_t readahead = 0) {
  ReadTimeline r = read_at(ino, page, 1, major ? 1 : 0, readahead);
  r.call.syscall = Syscall::PageFault;
  r.fault = FaultFacts{.major = major, .filemap_faults = static_cast<std::uint16_t>(major ? 2 : 0)};
  return r;
}

std::vector<ReadFindingKind> kinds_of(const ReadFileSummary& summary, std::uint64_t ino) {
  std::vector<ReadFindingKind> kinds;
  for (const ReadFinding& f : diagnose_reads(summary.files(), kPage))
    if (f.ino == ino) kinds.push_back(f.kind);
  return kinds;
}

bool has(const std::vector<ReadFindingKind>& kinds, ReadFindingKind kind) {
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

// Faults that each bring in one page are page-per-page; faults whose readahead brings in a
// window around them are not, however many there are.
TEST(ReadDiagnosis, PagePerPageFaultsAreNamedOnlyWhereEachFaultBroughtInAboutOnePage) {
  ReadFileSummary summary;
  for (std::uint64_t page = 0; page < 300; ++page) summary.add(fault_at(1, page, true));
  for (std::uint64_t page = 0; page < 300 * 32; page += 32)
    summary.add(fault_at(2, page, true, 31));
  const auto lazy_fuse = kinds_of(summary, 1), lazy_local = kinds_of(summary, 2);
  EXPECT_TRUE(has(lazy_fuse, ReadFindingKind::PagePerPageFaults));
  EXPECT_FALSE(has(lazy_local, ReadFindingKind::PagePerPageFaults));
  // Both brought in more than a megabyte from the device: its rate is evidence for both.
  EXPECT_TRUE(has(lazy_fuse, ReadFindingKind::ColdStorage));
  EXPECT_TRUE(has(lazy_local, ReadFindingKind::ColdStorage));
  const std::vector<ReadFinding> all = diagnose_reads(summary.files(), kPage);
  const auto text = std::find_if(all.begin(), all.end(), [](const ReadFinding& f) {
    return f.kind == ReadFindingKind::PagePerPageFaults;
  });
  ASSERT_NE(text, all.end());
  EXPECT_NE(text->text.find("300 major faults brought in 300 pages (1.0 per fault)"),
            std::string::npos)
      << text->text;
}

// A second cold read of pages an earlier read brought in went to the device again; a warm
// second read did not.
TEST(ReadDiagnosis, PagesThatCameFromTheDeviceTwiceAreASecondLoadThatWentToTheDisk) {
  ReadFileSummary summary;
  summary.add(read_at(1, 0, 32, 32));
  summary.add(read_at(1, 0, 32, 32));
  summary.add(read_at(2, 0, 32, 32));
  summary.add(read_at(2, 0, 32, 0));
  const std::vector<FileReads> files = summary.files();
  for (const FileReads& f : files) {
    EXPECT_TRUE(f.pages_followed);
    EXPECT_EQ(f.pages_touched, 32u);
    EXPECT_EQ(f.pages_again, f.ino == 1 ? 32u : 0u);
  }
  EXPECT_TRUE(has(kinds_of(summary, 1), ReadFindingKind::ReadAgain));
  EXPECT_FALSE(has(kinds_of(summary, 2), ReadFindingKind::ReadAgain));
}

// Readahead no read touched is waste a reader by calls shows; a mapped file's is not judged,
// as fault-around maps pages no item names.
TEST(ReadDiagnosis, ReadaheadNoReadTouchedIsNamedForReadersByCallsOnly) {
  ReadFileSummary summary;
  summary.add(read_at(1, 0, 4, 4, 1020));
  summary.add(read_at(2, 0, 4, 4, 28));
  summary.add(read_at(2, 4, 28, 0));
  summary.add(fault_at(3, 0, true, 1020));
  EXPECT_TRUE(has(kinds_of(summary, 1), ReadFindingKind::ReadaheadUnused));
  EXPECT_FALSE(has(kinds_of(summary, 2), ReadFindingKind::ReadaheadUnused));
  EXPECT_FALSE(has(kinds_of(summary, 3), ReadFindingKind::ReadaheadUnused));
}

}  // namespace
}  // namespace wp
