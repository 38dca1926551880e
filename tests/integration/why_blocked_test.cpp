// SPDX-License-Identifier: Apache-2.0
// Why a slow write or fsync blocked: each test makes one stall happen for real, on a loop
// device file system of its own, proves it happened by an independent source (the blocked
// thread's /proc stack, the cgroup's own counters, the workload's clock), then checks that
// `writepath trace --min-latency` names it: the slow call's causes.waits[] has the cause, a
// frame of its stacks shows it, and what it points at (the lock's holder, the journal thread
// that woke it, the commit and its flushes) is what the workload did.
#include <chrono>

#include "stall_fixtures.h"

namespace wp::testing {
namespace {

class WhyBlocked : public ::testing::Test {
 protected:
  void SetUp() override { WP_REQUIRE_ROOT(); }

  static std::string tool(const std::string& name) { return (build_dir() / name).string(); }

  // `writepath trace -f json -o OUT --min-latency THRESHOLD -- wp_workload ARGS…`: its items
  // in `items`; the workload's own stdout (what it did) in the result's `out`.
  RunResult trace(const std::string& threshold, const std::vector<std::string>& workload) {
    const fs::path out = fs::temp_directory_path() / ("wp_why_" + std::to_string(::getpid()));
    std::vector<std::string> argv = {
        tool("writepath"), "trace",         "--format", "json", "-o",
        out.string(),      "--min-latency", threshold,  "--",   tool("wp_workload")};
    argv.insert(argv.end(), workload.begin(), workload.end());
    RunResult r = run(argv);
    items = json_lines(slurp(out));
    fs::remove(out);
    return r;
  }

  std::vector<json> items;
};

// Two writers on one file: the holder takes the file's i_rwsem and sleeps in a userfaultfd
// fault on its source page for 300 ms; the waiter's 4 KiB write waits in down_write all that
// time. The waiter's write is named inode-lock, its stack passes rwsem_down_write_slowpath,
// and the holder named is the holder thread.
TEST_F(WhyBlocked, InodeLockNamesTheHolderThread) {
  ScratchFs ext4("ext4", "mkfs.ext4 -q -F -O has_journal");
  ASSERT_TRUE(ext4.ready());
  constexpr std::uint64_t kHoldNs = 300'000'000;
  auto r = trace("50ms", {"inode-lock", ext4.file("shared"), "300"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;

  // What the workload saw: the waiter asleep where ext4 takes the inode lock (/proc's stacks
  // leave out the scheduler's frames, rwsem_down_write_slowpath among them), for the hold.
  const std::uint64_t holder = reported_number(r.out, "holder");
  const std::uint64_t waiter = reported_number(r.out, "waiter");
  ASSERT_GT(holder, 0u) << r.out;
  ASSERT_GT(waiter, 0u) << r.out;
  const std::string stack = reported(r.out, "stack");
  EXPECT_EQ(stack.rfind(std::to_string(waiter) + " ext4_buffered_write_iter < vfs_write", 0), 0u)
      << r.out;
  const std::uint64_t waited = reported_number(r.out, "waiter-write");
  EXPECT_GE(waited, kHoldNs) << r.out;

  // The tracer's view of the same write: as slow as the workload's clock says, and asleep.
  auto writes = items_of_tid(items, "write", waiter);
  ASSERT_EQ(writes.size(), 1u) << "the waiter made one write";
  const json& w = writes[0];
  EXPECT_GE(u64(w["latency_ns"]), kHoldNs);
  EXPECT_LE(u64(w["latency_ns"]), waited);
  EXPECT_GE(u64(w["causes"]["blocked_ns"]), kHoldNs * 9 / 10) << w.dump();

  // Named: inode-lock, held by the holder thread of the same process, for the hold.
  const json wait = named_wait(w, "inode-lock");
  ASSERT_FALSE(wait.is_null()) << w["causes"].dump();
  EXPECT_GE(u64(wait["ns"]), kHoldNs * 9 / 10) << wait.dump();
  EXPECT_FALSE(wait["evidence"].get<std::string>().empty());
  ASSERT_TRUE(wait["holder"].is_object()) << wait.dump();
  EXPECT_EQ(u64(wait["holder"]["tid"]), holder) << wait.dump();
  EXPECT_EQ(u64(wait["holder"]["pid"]), u64(w["pid"])) << wait.dump();
  EXPECT_EQ(wait["holder"]["comm"], "wp_workload");
  EXPECT_TRUE(slept_in(w, "rwsem_down_write_slowpath")) << w["causes"].dump();
  EXPECT_TRUE(has_frame(wait["frames"], "ext4_buffered_write_iter")) << wait.dump();
  // The one who let it go: the holder, at the end of its write.
  ASSERT_TRUE(wait["waker"].is_object()) << wait.dump();
  EXPECT_EQ(u64(wait["waker"]["tid"]), holder) << wait.dump();
  EXPECT_FALSE(wait["waker"]["kernel_thread"].get<bool>());
}

// The dirty-throttle scenario (a flood then lowered dirty limits): its writes asleep in
// balance_dirty_pages by the writeback tracepoint (throttle_pauses) are named dirty-throttle,
// with balance_dirty_pages in the stack and the flag the page-cache hook set.
TEST_F(WhyBlocked, DirtyThrottleIsNamedWithBalanceDirtyPages) {
  const fs::path out = fs::temp_directory_path() / ("wp_why_dt_" + std::to_string(::getpid()));
  auto r = run({tool("writepath"),
                "trace",
                "--format",
                "json",
                "-o",
                out.string(),
                "--min-latency",
                "5ms",
                "--",
                tool("writepath"),
                "load",
                "dirty-throttle",
                "--dirty-limit",
                "16M",
                "--background",
                "8M",
                "--flood",
                "256M",
                "--duration",
                "2s"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  items = json_lines(slurp(out));
  fs::remove(out);
  std::size_t paused = 0, named = 0, never_asleep = 0;
  for (const auto& item : items) {
    if (item["type"] != "write" || item.value("throttle_pauses", json::array()).empty()) continue;
    ++paused;
    const json wait = named_wait(item, "dirty-throttle");
    // A pause of one jiffy (4 ms at HZ=250) can end before the writer leaves the CPU: its
    // timer fires between io_schedule_timeout() arming it and __schedule() taking the task
    // off the run queue, which finds it runnable again and switches to nothing. Such a write
    // never slept in the call (all its latency on CPU), and has nothing to name.
    const json& causes = item["causes"];
    const bool slept = !causes.is_object() || u64(causes["on_cpu_ns"]) < u64(item["latency_ns"]);
    bool one_jiffy = true;
    for (const auto& pause : item["throttle_pauses"]) one_jiffy &= u64(pause["pause_ms"]) <= 10;
    if (wait.is_null() && !slept && one_jiffy) {
      ++never_asleep;
      continue;
    }
    if (wait.is_null()) {
      ADD_FAILURE() << "a write paused in balance_dirty_pages has no dirty-throttle wait: "
                    << item["causes"].dump() << " latency_ns " << item["latency_ns"] << " pauses "
                    << item["throttle_pauses"].dump();
      continue;
    }
    ++named;
    EXPECT_GT(u64(wait["ns"]), 0u);
    EXPECT_LE(u64(wait["ns"]), u64(item["latency_ns"]));
    EXPECT_LE(u64(wait["ns"]), u64(item["causes"]["throttled_ns"]) * 11 / 10) << item.dump();
    EXPECT_TRUE(has_frame(wait["frames"], "balance_dirty_pages")) << wait.dump();
    bool flagged = false;
    for (const auto& s : item["causes"].value("stacks", json::array()))
      flagged |= s["flag"] == "dirty-throttle";
    EXPECT_TRUE(flagged) << item["causes"].dump();
  }
  EXPECT_GT(paused, 0u) << "no write was seen paused in balance_dirty_pages";
  EXPECT_EQ(named + never_asleep, paused);
  // Rare (once in the soak's runs): most pauses put the writer to sleep.
  EXPECT_LE(never_asleep * 4, paused) << never_asleep << " of " << paused << " never slept";
}

// ext4 data=ordered without delayed allocation: 64 MiB written to one file are ordered data
// of the running transaction, so a 4 KiB file's fsync waits in jbd2_log_wait_commit while the
// commit writes them out. Named journal-commit, woken by the journal thread of that device,
// and chained to the commit (its device) and the commit's flushes.
TEST_F(WhyBlocked, JournalCommitIsChainedToTheCommitAndItsFlushes) {
  ScratchFs ext4("ext4", "mkfs.ext4 -q -F -O has_journal", "nodelalloc,dioread_lock");
  ASSERT_TRUE(ext4.ready());
  auto r = trace("20ms", {"journal-commit", ext4.mount_point(), "64"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;

  // The workload's watcher saw the fsync asleep waiting for the commit.
  const std::string fsync_line = reported(r.out, "fsync");
  ASSERT_FALSE(fsync_line.empty()) << r.out;
  std::istringstream fields(fsync_line);
  std::uint64_t tid = 0, fsync_ns = 0;
  fields >> tid >> fsync_ns;
  const std::string stack = reported(r.out, "stack");
  EXPECT_EQ(stack.rfind(std::to_string(tid) + " jbd2_log_wait_commit < ext4_sync_file", 0), 0u)
      << r.out;
  EXPECT_GE(fsync_ns, 20'000'000u) << r.out;

  auto fsyncs = items_of_tid(items, "fsync", tid);
  ASSERT_EQ(fsyncs.size(), 1u);
  const json& f = fsyncs[0];
  EXPECT_LE(u64(f["latency_ns"]), fsync_ns);
  EXPECT_GT(u64(f["causes"]["blocked_ns"]), 0u) << f.dump();

  const json wait = named_wait(f, "journal-commit");
  ASSERT_FALSE(wait.is_null()) << f["causes"].dump();
  EXPECT_GT(u64(wait["ns"]), 0u);
  EXPECT_LE(u64(wait["ns"]), u64(f["latency_ns"]));
  EXPECT_EQ(wait["evidence"], "jbd2_log_wait_commit") << wait.dump();
  EXPECT_TRUE(has_frame(wait["frames"], "jbd2_log_wait_commit")) << wait.dump();
  EXPECT_TRUE(has_frame(wait["frames"], "ext4_sync_file")) << wait.dump();
  ASSERT_TRUE(wait["waker"].is_object()) << wait.dump();
  const std::string waker = wait["waker"]["comm"];
  EXPECT_EQ(waker.rfind("jbd2/" + ext4.loop_name(), 0), 0u) << waker;
  EXPECT_TRUE(wait["waker"]["kernel_thread"].get<bool>());
  const json& chain = wait["chain"];
  ASSERT_TRUE(chain["commit"].is_object()) << wait.dump();
  EXPECT_EQ(chain["commit"]["dev"], ext4.disk()) << chain.dump();
  EXPECT_GT(u64(chain["commit"]["transaction"]), 0u);
  ASSERT_FALSE(chain["flushes"].empty()) << chain.dump();
  for (const auto& flush : chain["flushes"]) EXPECT_EQ(flush["dev"], ext4.disk()) << flush.dump();
}

// O_DIRECT writes of 1 MiB, 8 of them, from a process in a cgroup limited to 4 MiB/s of writes
// to the loop device (io.max, or v1's blkio.throttle.write_bps_device: the same blk-throttle):
// two seconds at least; the cgroup's own counters say 8 MiB went through it. The slow writes
// are named block-throttle.
TEST_F(WhyBlocked, BlockThrottleIsNamedUnderAWriteLimit) {
  ScratchFs ext4("ext4", "mkfs.ext4 -q -F -O has_journal");
  ASSERT_TRUE(ext4.ready());
  LimitedCgroup cgroup("io", "blkio");
  if (!cgroup.ready())
    GTEST_SKIP() << "no cgroup2 io controller and no v1 blkio hierarchy to limit writes with";
  constexpr std::uint64_t kBps = 4 << 20, kWrites = 8, kBytes = kWrites << 20;
  const std::string dev = ext4.disk();
  ASSERT_TRUE(cgroup.v2() ? cgroup.set("io.max", dev + " wbps=" + std::to_string(kBps))
                          : cgroup.set("blkio.throttle.write_bps_device",
                                       dev + " " + std::to_string(kBps)));

  const fs::path out = fs::temp_directory_path() / ("wp_why_bt_" + std::to_string(::getpid()));
  const auto start = std::chrono::steady_clock::now();
  Background traced({tool("writepath"), "trace", "--format", "json", "-o", out.string(),
                     "--min-latency", "50ms", "--", tool("wp_workload"), "in-cgroup",
                     cgroup.procs(), "direct", ext4.file("limited"), std::to_string(kWrites),
                     std::to_string(1 << 20)});
  // While it runs: the writer asleep in the direct I/O its bios are held back in.
  auto stack = sample_until_frame(cgroup.procs(), "__iomap_dio_rw");
  ASSERT_EQ(traced.wait(), 0) << traced.err();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  items = json_lines(slurp(out));
  fs::remove(out);
  EXPECT_FALSE(stack.empty()) << "the writer was never seen waiting for its direct I/O";

  // blk-throttle lets a first slice through at once: at least 6 of the 8 MiB waited.
  EXPECT_GE(elapsed, std::chrono::milliseconds(1500));
  if (cgroup.v2()) {
    EXPECT_NE(cgroup.read("io.stat").find(dev + " "), std::string::npos) << cgroup.read("io.stat");
  } else {
    const std::string service = cgroup.read("blkio.throttle.io_service_bytes");
    EXPECT_NE(service.find(dev + " Write "), std::string::npos) << service;
    const auto at = service.find(dev + " Write ");
    if (at != std::string::npos) {
      EXPECT_GE(std::stoull(service.substr(at + dev.size() + 7)), kBytes) << service;
    }
  }

  std::uint64_t slow_ns = 0, named = 0;
  for (const auto& w : of_type(items, "write")) {
    slow_ns += u64(w["latency_ns"]);
    const json wait = named_wait(w, "block-throttle");
    if (wait.is_null()) continue;
    ++named;
    EXPECT_GT(u64(wait["ns"]), 0u);
    EXPECT_LE(u64(wait["ns"]), u64(w["latency_ns"]));
  }
  EXPECT_GE(slow_ns, 1'000'000'000u) << "the limited writes took at least a second in all";
  EXPECT_GT(named, 0u) << "no write was named block-throttle";
}

// 256 MiB of buffered writes from a process in a memory cgroup limited to 32 MiB: the cgroup's
// failcnt (charges that hit the limit, each followed by the cgroup's own reclaim) says reclaim
// ran; the writes it ran in are named memcg-reclaim, and no more of them than the charges that
// failed. Every write is kept (--min-latency 1us): a reclaim takes microseconds on an idle box,
// so which writes pass a millisecond threshold is down to the box's noise.
TEST_F(WhyBlocked, MemcgReclaimIsNamedUnderAMemoryLimit) {
  ScratchFs ext4("ext4", "mkfs.ext4 -q -F -O has_journal");
  ASSERT_TRUE(ext4.ready());
  LimitedCgroup cgroup("memory", "memory");
  if (!cgroup.ready()) GTEST_SKIP() << "no memory controller (cgroup2 or v1) to limit with";
  constexpr std::uint64_t kLimit = 32 << 20;
  constexpr int kMib = 256;
  ASSERT_TRUE(
      cgroup.set(cgroup.v2() ? "memory.max" : "memory.limit_in_bytes", std::to_string(kLimit)));
  auto r = trace("1us", {"in-cgroup", cgroup.procs(), "buffered-stream", ext4.file("big"),
                         std::to_string(kMib)});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(reported_number(r.out, "writes"), static_cast<std::uint64_t>(kMib)) << r.out;

  // The cgroup's own account: the limit was reached (and reclaimed from) over and over.
  std::uint64_t failed_charges = 0;
  if (cgroup.v2()) {
    const std::string events = cgroup.read("memory.events");
    const auto at = events.find("max ");
    ASSERT_NE(at, std::string::npos) << events;
    failed_charges = std::stoull(events.substr(at + 4));
  } else {
    failed_charges = std::stoull(cgroup.read("memory.failcnt"));
    EXPECT_LE(std::stoull(cgroup.read("memory.max_usage_in_bytes")), kLimit);
  }
  EXPECT_GT(failed_charges, 0u);

  std::size_t named = 0, file_writes = 0;
  for (const auto& w : of_type(items, "write")) {
    if (w["path"] != ext4.file("big")) continue;
    ++file_writes;
    const json wait = named_wait(w, "memcg-reclaim");
    if (wait.is_null()) continue;
    ++named;
    EXPECT_GT(u64(wait["ns"]), 0u);
    EXPECT_LE(u64(wait["ns"]), u64(w["latency_ns"]));
    const std::string evidence = wait["evidence"];
    EXPECT_TRUE(evidence.find("memcg_reclaim") != std::string::npos ||
                slept_in(w, "try_to_free_mem_cgroup_pages"))
        << wait.dump();
  }
  EXPECT_EQ(file_writes, static_cast<std::size_t>(kMib));
  EXPECT_GT(named, 0u) << "no write was named memcg-reclaim";
  EXPECT_LE(named, failed_charges) << "more writes reclaimed than charges failed";
}

}  // namespace
}  // namespace wp::testing
