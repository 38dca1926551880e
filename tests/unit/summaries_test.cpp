// SPDX-License-Identifier: Apache-2.0
#include "analyze/summaries.h"

#include "sinks/text_sink.h"

#include "builders.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <random>
#include <type_traits>
#include <vector>

namespace wp {
namespace {

using namespace builders;

SyncTimeline sync_of(Nanos latency, Nanos flush) {
  return sync_timeline(
      syscall_event({.syscall = Syscall::Fsync, .start_ns = 1000, .end_ns = 1000 + latency}),
      {.flush_ns = flush, .other_ns = latency - flush});
}

TEST(Log2Histogram, BucketsByPowerOfTwo) {
  Log2Histogram h;
  for (Nanos v : {0ull, 1ull, 2ull, 3ull, 4ull, 1023ull, 1024ull, 1ull << 40}) h.add(v);
  EXPECT_EQ(h.buckets[0], 2u);   // 0 and 1
  EXPECT_EQ(h.buckets[1], 2u);   // 2, 3
  EXPECT_EQ(h.buckets[2], 1u);   // 4
  EXPECT_EQ(h.buckets[9], 1u);   // 1023
  EXPECT_EQ(h.buckets[10], 1u);  // 1024
  EXPECT_EQ(h.buckets[40], 1u);
  EXPECT_EQ(h.count(), 8u);
}

TEST(SyncPhaseSummary, PercentilesPerPhase) {
  SyncPhaseSummary summary;
  for (Nanos i = 1; i <= 100; ++i) summary.add(sync_of(i * 1000, i * 600));
  EXPECT_EQ(summary.syncs(), 100u);
  PhaseStats latency = summary.latency();
  EXPECT_EQ(latency.count, 100u);
  EXPECT_NEAR(static_cast<double>(latency.p50), 50'000, 500);  // within 1 %
  EXPECT_NEAR(static_cast<double>(latency.p99), 99'000, 990);
  EXPECT_EQ(latency.max, 100'000u);
  EXPECT_EQ(latency.total, 5'050'000u);
  EXPECT_EQ(latency.histogram.count(), 100u);
  PhaseStats flush = summary.phase(SyncPhase::Flush);
  EXPECT_NEAR(static_cast<double>(flush.p50), 30'000, 300);
  EXPECT_EQ(flush.max, 60'000u);
  EXPECT_EQ(summary.phase(SyncPhase::DataIo).max, 0u);  // no data I/O in these
  EXPECT_EQ(summary.phase(SyncPhase::DataIo).count, 100u);
  EXPECT_EQ(SyncPhaseSummary().phase(SyncPhase::Flush).count, 0u);
}

// The exact nearest-rank quantile of `values`, by the same rank the histogram uses.
Nanos exact_of(std::vector<Nanos> values, double q) {
  std::sort(values.begin(), values.end());
  return exact_quantile(values, q);
}

constexpr double kQuantiles[] = {0.0, 0.001, 0.01, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0};

// Every quantile within 1 % of exact; count, min, max and total exact.
void expect_close_to_exact(const std::vector<Nanos>& values, const char* what) {
  LogLinearHistogram h;
  Nanos total = 0;
  for (Nanos v : values) {
    h.add(v);
    total += v;  // callers keep the sum below 2^64
  }
  ASSERT_EQ(h.count(), values.size()) << what;
  EXPECT_EQ(h.max(), *std::max_element(values.begin(), values.end())) << what;
  EXPECT_EQ(h.min(), *std::min_element(values.begin(), values.end())) << what;
  EXPECT_EQ(h.total(), total) << what;
  for (double q : kQuantiles) {
    const double exact = static_cast<double>(exact_of(values, q));
    const double approx = static_cast<double>(h.quantile(q));
    EXPECT_LE(std::abs(approx - exact), exact / 100) << what << " q=" << q << " exact " << exact;
  }
}

TEST(LogLinearHistogram, QuantilesOfRandomDataWithinOnePercent) {
  std::mt19937_64 random(42);  // fixed seed: a failure reproduces
  for (int round = 0; round < 20; ++round) {
    std::vector<Nanos> uniform, log_uniform;
    for (int i = 0; i < 5'000; ++i) {
      uniform.push_back(random() % 10'000'000);
      // Spread over 1 ns .. 2^50 ns: every magnitude, as latencies are.
      log_uniform.push_back(random() >> (14 + random() % 50));
    }
    expect_close_to_exact(uniform, "uniform");
    expect_close_to_exact(log_uniform, "log-uniform");
  }
}

TEST(LogLinearHistogram, AdversarialData) {
  expect_close_to_exact({0}, "one zero");
  expect_close_to_exact({1}, "one 1");
  expect_close_to_exact({~Nanos{0}}, "one huge value");
  expect_close_to_exact({123'456'789}, "one sample");
  expect_close_to_exact(std::vector<Nanos>(10'000, 1'234'567), "many equal samples");
  expect_close_to_exact(std::vector<Nanos>(1'000, 0), "many zeros");
  std::vector<Nanos> zeros_and_huge(999, 0);
  zeros_and_huge.push_back(Nanos{1} << 63);
  expect_close_to_exact(zeros_and_huge, "zeros and one huge value");
  std::vector<Nanos> edges;  // both sides of every power of two and of its sub-buckets
  for (unsigned power = 1; power < 60; ++power)  // the exact sum stays below 2^64
    for (Nanos v : {(Nanos{1} << power) - 1, Nanos{1} << power, (Nanos{1} << power) + 1,
                    (Nanos{3} << (power - 1)) - 1})
      edges.push_back(v);
  expect_close_to_exact(edges, "bucket edges");
  std::vector<Nanos> small;  // below 128 every value has its own bucket: exact
  for (Nanos v = 0; v < 128; ++v) small.push_back(v);
  LogLinearHistogram exact;
  for (Nanos v : small) exact.add(v);
  for (double q : kQuantiles) EXPECT_EQ(exact.quantile(q), exact_of(small, q)) << q;
}

TEST(LogLinearHistogram, EmptyAndSaturatingTotal) {
  LogLinearHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.quantile(0.5), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.total(), 0u);
  h.add(~Nanos{0});
  h.add(~Nanos{0});
  EXPECT_EQ(h.total(), ~Nanos{0}) << "saturates rather than wraps";
  EXPECT_EQ(h.quantile(0.5), ~Nanos{0});
}

TEST(LogLinearHistogram, BucketsTileTheRangeWithinOnePercent) {
  EXPECT_EQ(LogLinearHistogram::bucket_of(0), 0u);
  EXPECT_EQ(LogLinearHistogram::bucket_of(~Nanos{0}), LogLinearHistogram::kBuckets - 1);
  for (std::size_t b = 0; b + 1 < LogLinearHistogram::kBuckets; ++b) {
    const Nanos lower = LogLinearHistogram::bucket_lower(b);
    const Nanos width = LogLinearHistogram::bucket_width(b);
    ASSERT_EQ(LogLinearHistogram::bucket_lower(b + 1), lower + width) << b;  // no gaps
    ASSERT_EQ(LogLinearHistogram::bucket_of(lower), b);
    ASSERT_EQ(LogLinearHistogram::bucket_of(lower + width - 1), b);
    ASSERT_LE(static_cast<double>(width - 1), static_cast<double>(lower) / 100) << b;
  }
}

TEST(LogLinearHistogram, FixedSizeWhateverTheSampleCount) {
  // No heap: copying one is copying its bytes, so its memory cannot grow with the samples.
  static_assert(std::is_trivially_copyable_v<LogLinearHistogram>);
  static_assert(sizeof(LogLinearHistogram) < 64 * 1024);
  LogLinearHistogram h;
  for (Nanos i = 0; i < 1'000'000; ++i) h.add(i * 7919);
  EXPECT_EQ(h.count(), 1'000'000u);
}

TEST(LogLinearHistogram, Log2ViewMatchesADirectLog2Histogram) {
  std::mt19937_64 random(7);
  LogLinearHistogram h;
  Log2Histogram direct;
  for (int i = 0; i < 20'000; ++i) {
    const Nanos v = random() >> (random() % 64);
    h.add(v);
    direct.add(v);
  }
  for (Nanos v : {Nanos{0}, Nanos{1}, Nanos{2}, ~Nanos{0}}) {
    h.add(v);
    direct.add(v);
  }
  EXPECT_EQ(h.log2().buckets, direct.buckets);
}

TEST(SyncPhaseSummary, ManyCallsKeepExactMaxAndTotal) {
  SyncPhaseSummary summary;
  Nanos total = 0;
  for (Nanos i = 1; i <= 100'000; ++i) {
    summary.add(sync_of(i * 37, 0));
    total += i * 37;
  }
  const PhaseStats latency = summary.latency();
  EXPECT_EQ(latency.count, 100'000u);
  EXPECT_EQ(latency.max, 3'700'000u);
  EXPECT_EQ(latency.total, total);
  EXPECT_NEAR(static_cast<double>(latency.p99), 99'000 * 37.0, 99'000 * 37.0 / 100);
  EXPECT_EQ(latency.histogram.count(), 100'000u);
}

WriteTimeline direct_write(std::uint32_t pid, std::uint64_t ino, std::int64_t ret,
                           std::uint32_t dirtied) {
  WriteTimeline w;
  w.direct = true;
  w.call =
      syscall_event({.pid = pid, .comm = "db", .ino = ino, .ret = ret, .pages_dirtied = dirtied});
  w.call.file_flags |= file_flag::kDirect;
  return w;
}

TEST(DirectIoSummary, VerdictPerProcessAndFile) {
  DirectIoSummary summary;
  summary.add(direct_write(1, 10, 4096, 0));
  summary.add(direct_write(1, 10, 4096, 0));
  summary.add(direct_write(1, 10, -EINVAL, 0));
  summary.add(direct_write(1, 11, 8192, 2));  // the filesystem went buffered
  summary.add(direct_write(2, 10, -EIO, 0));
  WriteTimeline buffered = direct_write(1, 10, 4096, 1);
  buffered.direct = false;
  summary.add(buffered);  // not O_DIRECT: not judged here

  auto v = summary.verdicts();
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].ino, 10u);
  EXPECT_EQ(v[0].writes, 2u);
  EXPECT_EQ(v[0].bytes, 8192u);
  EXPECT_EQ(v[0].einval, 1u);
  EXPECT_TRUE(v[0].bypassed());
  EXPECT_EQ(v[1].ino, 11u);
  EXPECT_EQ(v[1].pages_dirtied, 2u);
  EXPECT_EQ(v[1].buffered_bytes, 8192u);
  EXPECT_FALSE(v[1].bypassed());
  EXPECT_EQ(v[2].pid, 2u);
  EXPECT_EQ(v[2].other_errors, 1u);
  EXPECT_EQ(v[2].writes, 0u);
}

TEST(DirectIoSummary, VerdictNamesTheFileByItsPathWhenAnItemHadIt) {
  DirectIoSummary summary;
  summary.add(direct_write(1, 10, 4096, 0));  // no path record yet
  WriteTimeline named = direct_write(1, 10, 4096, 0);
  named.call.path = "/mnt/kv/blocks.bin";
  summary.add(named);
  summary.add(direct_write(1, 11, 4096, 0));
  auto v = summary.verdicts();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].path, "/mnt/kv/blocks.bin");
  EXPECT_EQ(v[1].path, "");
  SinkOptions options;
  const std::string text = format_direct_io(summary, options);
  EXPECT_NE(text.find("pid 1 (db) /mnt/kv/blocks.bin: 2 writes"), std::string::npos) << text;
  EXPECT_NE(text.find(" ino 11: 1 writes"), std::string::npos) << text;
}

// A read item of `pid` on inode `ino`: `ret` bytes at 0 taking `latency`, `from_device` of its
// pages brought in, the rest found cached.
ReadTimeline read_of(std::uint32_t pid, std::uint64_t ino, std::int64_t ret,
                     std::uint64_t from_device, Nanos latency = 1000) {
  ReadTimeline r;
  r.call = syscall_event({.syscall = Syscall::Pread64,
                          .start_ns = 1000,
                          .end_ns = 1000 + latency,
                          .pid = pid,
                          .tid = pid,
                          .ino = ino});
  r.call.ret = ret;
  r.call.count = ret > 0 ? static_cast<std::uint64_t>(ret) : 4096;
  r.pages = ret > 0 ? (static_cast<std::uint64_t>(ret) + 4095) / 4096 : 0;
  r.pages_from_device = from_device;
  r.pages_cached = r.pages - from_device;
  return r;
}

TEST(ReadFileSummary, EachFileAddsUpWhereItsPagesCameFrom) {
  ReadFileSummary summary;
  ReadTimeline cold = read_of(1, 10, 16384, 4, 5000);
  cold.readahead_pages = 28;
  cold.sync_readaheads = 1;
  summary.add(cold);
  summary.add(read_of(1, 10, 16384, 0));
  summary.add(read_of(2, 10, 8192, 1));
  summary.add(read_of(1, 10, -EIO, 0));
  summary.add(read_of(1, 11, 4096, 0));
  const auto files = summary.files();
  ASSERT_EQ(files.size(), 2u);
  const FileReads& f = files[0];  // most bytes first
  EXPECT_EQ(f.ino, 10u);
  EXPECT_EQ(f.reads, 4u);
  EXPECT_EQ(f.failed, 1u);
  EXPECT_EQ(f.processes, 2u);
  EXPECT_EQ(f.bytes, 40960u);
  EXPECT_EQ(f.pages_from_device, 5u);
  EXPECT_EQ(f.pages_cached, 5u);
  // 10 pages spanned, 5 brought in by the reads and 28 by their readahead: all misses.
  ASSERT_TRUE(f.hit_ratio());
  EXPECT_DOUBLE_EQ(*f.hit_ratio(), 0.0);
  EXPECT_EQ(f.readahead_pages, 28u);
  EXPECT_EQ(f.sync_readaheads, 1u);
  EXPECT_EQ(f.latency_ns, 5000u + 3 * 1000u);
  EXPECT_EQ(files[1].ino, 11u);
  EXPECT_DOUBLE_EQ(*files[1].hit_ratio(), 1.0);
}

// Half the pages spanned found cached, the other half brought in with no readahead: 0.5; a
// readahead that brought a quarter more: 0.25.
TEST(ReadFileSummary, TheHitRatioCountsReadaheadAsMisses) {
  ReadFileSummary half;
  half.add(read_of(1, 10, 8 * 4096, 4));
  EXPECT_DOUBLE_EQ(*half.files()[0].hit_ratio(), 0.5);
  ReadFileSummary quarter;
  ReadTimeline with_readahead = read_of(1, 10, 8 * 4096, 4);
  with_readahead.readahead_pages = 2;
  quarter.add(with_readahead);
  EXPECT_DOUBLE_EQ(*quarter.files()[0].hit_ratio(), 0.25);
}

RequestTimeline read_request(std::uint64_t sector, std::uint32_t bytes, Nanos issue,
                             Nanos complete) {
  RequestTimeline r;
  r.disk = make_dev(7, 0);
  r.op = ReqOp::Read;
  r.sector = sector;
  r.bytes = bytes;
  r.issue_ns = issue;
  r.complete_ns = complete;
  return r;
}

// Requests as biosize and biopattern count them: sizes in power-of-two buckets, sequential when
// one begins where the file's last ended (the first is random), the device's busy time with
// overlaps once, and a request two items list counted once.
TEST(ReadFileSummary, ItsRequestsAreCountedBySizePatternAndDeviceTime) {
  ReadFileSummary summary;
  ReadTimeline first = read_of(1, 10, 1 << 20, 256);
  first.requests = {read_request(1000, 131072, 100, 300), read_request(1256, 131072, 200, 400)};
  ReadTimeline second = read_of(1, 10, 4096, 1);
  // The second request again (its bios merged with this item's), then one far away.
  second.requests = {read_request(1256, 131072, 200, 400), read_request(90000, 4096, 500, 600)};
  summary.add(first);
  summary.add(second);
  const FileReads& f = summary.files()[0];
  EXPECT_EQ(f.read_requests, 3u);
  EXPECT_EQ(f.request_bytes, 2u * 131072 + 4096);
  EXPECT_EQ(f.sequential_requests, 1u);
  EXPECT_EQ(f.request_sizes[0], 1u);  // 4 KiB
  EXPECT_EQ(f.request_sizes[5], 2u);  // 128 KiB
  EXPECT_EQ(f.device_ns, (400u - 100u) + (600u - 500u));
}

// An O_DIRECT read spans pages it neither found nor brought in: no hit ratio to speak of.
TEST(ReadFileSummary, DirectReadsHaveBytesButNoHitRatio) {
  ReadFileSummary summary;
  ReadTimeline direct = read_of(1, 10, 1 << 20, 0);
  direct.call.file_flags |= file_flag::kDirect;
  direct.pages_cached = 0;
  summary.add(direct);
  const auto files = summary.files();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].direct_bytes, 1u << 20);
  EXPECT_FALSE(files[0].hit_ratio());
  SinkOptions options;
  const std::string text = format_read_files(summary, options);
  EXPECT_NE(text.find("dev 7:0 ino 10: 1 read, 1 MiB, 1 MiB direct; 1.0us in reads"),
            std::string::npos)
      << text;
}

// Past kFilesKept files the reads add up in one row, last: memory stays bounded.
TEST(ReadFileSummary, FilesPastTheCapShareOneRow) {
  ReadFileSummary summary;
  const std::uint64_t files = ReadFileSummary::kFilesKept + 3;
  for (std::uint64_t ino = 1; ino <= files; ++ino) summary.add(read_of(1, ino, 4096, 1));
  const auto rows = summary.files();
  ASSERT_EQ(rows.size(), ReadFileSummary::kFilesKept + 1);
  const FileReads& others = rows.back();
  EXPECT_EQ(others.ino, 0u);
  EXPECT_EQ(others.dev, 0u);
  EXPECT_EQ(others.reads, 3u);
  EXPECT_EQ(others.pages_from_device, 3u);
  SinkOptions options;
  const std::string text = format_read_files(summary, options);
  EXPECT_NE(text.find("and 4087 more files (JSON: read_files)"), std::string::npos) << text;
}

// The top bucket's upper bound is 2^64 - 1: found by the fuzzer as a shift by 64.
TEST(SyncPhaseSummaryText, HistogramOfHugeLatenciesRenders) {
  SyncPhaseSummary summary;
  summary.add(sync_of(~Nanos{0} - 2000, 0));
  summary.add(sync_of(~Nanos{0} - 4000, 0));
  std::string text = format_sync_phases(summary, SinkOptions{});
  EXPECT_NE(text.find("latency histogram"), std::string::npos) << text;
}

// One call: its figures on one line, not a table of percentiles and histograms of one sample;
// a phase that never took time (no flush here) is left out.
TEST(SyncPhaseSummaryText, OneCallIsOneLineOfItsFigures) {
  SyncPhaseSummary summary;
  summary.add(sync_of(2'000'000, 0));
  const std::string text = format_sync_phases(summary, SinkOptions{});
  EXPECT_EQ(text, "fsync phases (1 call)  latency 2.00ms  other 2.00ms\n");
}

TEST(SyncPhaseSummaryText, NoRowOrHistogramForAPhaseThatNeverTookTime) {
  SyncPhaseSummary summary;
  summary.add(sync_of(2'000'000, 500'000));
  summary.add(sync_of(3'000'000, 700'000));
  const std::string text = format_sync_phases(summary, SinkOptions{});
  EXPECT_NE(text.find("fsync phases (2 calls)"), std::string::npos) << text;
  EXPECT_NE(text.find("  flush "), std::string::npos) << text;
  EXPECT_NE(text.find("latency histogram"), std::string::npos) << text;
  EXPECT_NE(text.find("flush histogram"), std::string::npos) << text;
  EXPECT_EQ(text.find("journal"), std::string::npos) << text;
  EXPECT_EQ(text.find("writeback"), std::string::npos) << text;
  EXPECT_EQ(text.find("0ns .. 1ns"), std::string::npos) << text;
}

}  // namespace
}  // namespace wp
