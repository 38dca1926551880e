// SPDX-License-Identifier: Apache-2.0
// Writes through overlayfs (every container's root): stitched to the upper file's pages,
// requests, journal and flushes, shown as the application sees the file and as the disk does,
// and selected by --dev and --file given either. Truths: dd's own counts and exit status,
// stat() of the overlay file and of its upper file, and the disk's /proc/diskstats.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <optional>
#include <set>

#include "harness.h"
#include "oracle.h"

namespace wp::testing {
namespace {

std::string dev_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";
  return std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
}

std::uint64_t ino_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

std::string join(const std::vector<std::string>& lines) {
  std::string s;
  for (std::size_t i = 0; i < lines.size() && i < 10; ++i) s += "\n  " + lines[i];
  return s;
}

// The disk's requests the items name, each once: when the trace's total for the disk is not
// what diskstats counted, the requests it saw. (A total of 12 against diskstats' 11 was a jbd2
// commit whose flush sequence had not ended when the trace did: block_tracker.cpp counts such
// a request at its sequence's end, as the kernel's accounting does.)
std::string requests_of(const std::vector<json>& items, const std::string& disk) {
  std::set<std::string> seen;
  std::string s;
  for (const json& item : items) {
    if (!item.contains("requests") || !item["requests"].is_array()) continue;
    for (const json& r : item["requests"])
      if (r.value("dev", "") == disk && seen.insert(r.dump()).second) s += "\n  " + r.dump();
  }
  return s;
}

// An overlay mount whose lower, upper and work directories are on a fresh journaled ext4.
class OverlayOnExt4 : public ::testing::Test {
 protected:
  void SetUp() override {
    WP_REQUIRE_ROOT();
    ASSERT_TRUE(disk_.ready());
    for (const char* d : {"lower", "upper", "work", "merged"})
      fs::create_directories(disk_.file(d));
    mount_overlay();
  }
  void TearDown() override {
    overlay_.reset();
    // A failing test keeps its raw records: `writepath report --format json` replays them.
    if (HasFailure() && fs::exists(records()))
      std::printf("[ records  ] kept in %s\n", records().c_str());
    else
      fs::remove(records());
  }

  static std::string records() {
    return (fs::temp_directory_path() / ("wp_overlay_" + std::to_string(::getpid()) + ".wpt"))
        .string();
  }

  // The overlay of the disk's lower, upper and work directories at merged().
  void mount_overlay() {
    overlay_.emplace("mount -t overlay overlay -o lowerdir=" + disk_.file("lower") + ",upperdir=" +
                         disk_.file("upper") + ",workdir=" + disk_.file("work") + " " + merged(),
                     merged());
    ASSERT_TRUE(overlay_->ok());
  }

  std::string merged() const { return disk_.file("merged"); }
  std::string merged(const std::string& name) const { return merged() + "/" + name; }
  std::string upper(const std::string& name) const { return disk_.file("upper/" + name); }

  // `writepath trace SELECT… --format json -- CMD…`: its items. The disk's diskstats from as
  // CMD started to as it ended, read by the traced shell that runs it, in `disk_inside`; from
  // before the tracer attached to after it detached in `disk_outside`. The disk completes
  // requests of its own between the two (a journal commit of what the test did before, due 5 s
  // later), and the tracer takes seconds to attach on a busy machine: the trace's totals are
  // at least the one and at most the other (oracle::check_disk_totals).
  std::vector<json> trace(const std::vector<std::string>& select,
                          const std::vector<std::string>& command) {
    const std::string stats =
        (fs::temp_directory_path() / ("wp_overlay_diskstats_" + std::to_string(::getpid())))
            .string();
    std::vector<std::string> argv = {writepath(), "trace"};
    argv.insert(argv.end(), select.begin(), select.end());
    for (const std::string& a :
         {std::string("--format"), std::string("json"), std::string("--save"), records(),
          std::string("--"), std::string("sh"), std::string("-c"),
          std::string("cat /proc/diskstats > \"$0.start\" && \"$@\"; rc=$?; "
                      "cat /proc/diskstats > \"$0.end\"; exit $rc")})
      argv.push_back(a);
    argv.push_back(stats);
    argv.insert(argv.end(), command.begin(), command.end());
    const DiskCounters before = disk_counters(disk_.loop_name());
    RunResult res = run(argv);
    const DiskCounters after = disk_counters(disk_.loop_name());
    const DiskCounters start = disk_counters_in(slurp(stats + ".start"), disk_.loop_name());
    const DiskCounters end = disk_counters_in(slurp(stats + ".end"), disk_.loop_name());
    fs::remove(stats + ".start");
    fs::remove(stats + ".end");
    disk_inside = {end.writes - start.writes, end.write_sectors - start.write_sectors,
                   end.flushes - start.flushes};
    disk_outside = {after.writes - before.writes, after.write_sectors - before.write_sectors,
                    after.flushes - before.flushes};
    EXPECT_EQ(res.exit_code, 0) << res.err;
    return json_lines(res.out);
  }

  static std::vector<std::string> dd(const std::string& path, int count,
                                     const std::string& conv = "fsync") {
    return {"dd",           "if=/dev/zero", "of=" + path, "bs=4k", "count=" + std::to_string(count),
            "conv=" + conv, "status=none"};
  }

  ScratchFs disk_{"ext4",
                  "mkfs.ext4 -q -F -O has_journal -E lazy_itable_init=0,lazy_journal_init=0"};
  std::optional<Mounted> overlay_;
  DiskCounters disk_inside, disk_outside;
};

// dd conv=fsync through the overlay: every write durable by the fsync's end, the fsync with
// the upper file system's journal commit and the disk's flushes; each item names the overlay
// file as stat() does and the upper file as stat() of it does; the summary's flushes of the
// disk are the ones diskstats counted.
TEST_F(OverlayOnExt4, WritesAreDurableWithTheUpperJournalAndFlush) {
  const std::string path = merged("f");
  const std::vector<json> items = trace({}, dd(path, 8));
  const oracle::FileItems f = oracle::items_of(items, path);
  ASSERT_EQ(f.writes.size(), 8u);  // dd's count
  ASSERT_EQ(f.syncs.size(), 1u);
  EXPECT_EQ(f.syncs[0]["ret"], 0);
  const auto v = oracle::check_sync_contract(f);
  EXPECT_TRUE(v.empty()) << join(v);
  EXPECT_TRUE(oracle::check_pages(f).empty()) << join(oracle::check_pages(f));

  const std::string view_dev = dev_of(path), backing_dev = dev_of(upper("f"));
  ASSERT_NE(view_dev, backing_dev) << "an overlay reports a device of its own";
  EXPECT_EQ(backing_dev, disk_.disk());
  for (const json& item : {f.writes.front(), f.writes.back(), f.syncs[0]}) {
    EXPECT_EQ(item["dev"], view_dev) << item.dump();
    EXPECT_EQ(item["ino"], ino_of(path)) << item.dump();
    ASSERT_TRUE(item["backing"].is_object()) << item.dump();
    EXPECT_EQ(item["backing"]["dev"], backing_dev) << item.dump();
    EXPECT_EQ(item["backing"]["ino"], ino_of(upper("f"))) << item.dump();
  }
  for (const json& w : f.writes) {
    EXPECT_EQ(w["state"], "durable") << w.dump();
    for (const json& r : w["requests"]) EXPECT_EQ(r["dev"], disk_.disk()) << w.dump();
  }
  const json& sync = f.syncs[0];
  EXPECT_GT(sync["phases"]["journal_ns"].get<std::uint64_t>(), 0u) << sync.dump();
  EXPECT_GT(sync["phases"]["flush_ns"].get<std::uint64_t>(), 0u) << sync.dump();
  ASSERT_FALSE(sync["journal_commits"].empty()) << sync.dump();
  EXPECT_EQ(sync["journal_commits"][0]["dev"], disk_.disk()) << sync.dump();
  EXPECT_FALSE(sync["flushes"].empty()) << sync.dump();

  // Nothing else writes to this disk: the trace counts every request it completed while dd ran.
  const json& summary = items.back();
  ASSERT_EQ(summary["type"], "summary");
  const auto totals = oracle::check_disk_totals(summary, disk_.disk(), disk_inside, disk_outside);
  EXPECT_TRUE(totals.empty()) << join(totals) << "\nthe items' requests of " << disk_.disk() << ":"
                              << requests_of(items, disk_.disk()) << "\n"
                              << summary.dump();
  // The pure cache flushes the fsync lists (a journal block's PREFLUSH is issued as one of
  // them) are among those the disk completed.
  std::uint64_t pure = 0;
  for (const json& fl : sync["flushes"]) pure += fl["sector"].is_null() ? 1 : 0;
  EXPECT_GT(pure, 0u) << sync.dump();
  EXPECT_GE(disk_inside.flushes, pure) << sync.dump();
}

// A file only in the lower layer is copied up when opened for writing: the open writes the copy
// into a new upper file (another inode than the one stat() of the overlay file reports) and
// syncs it before it returns, and that copy is an item of its own (syscall openat, COPY_UP):
// the lower file's bytes from offset 0, durable by the open's return. dd's writes land in the
// copy and are durable by its fsync. Truths: the sizes of the lower files the test made, stat()
// of the upper files after, dd's counts, the disk's diskstats.
TEST_F(OverlayOnExt4, AnOpenThatCopiesUpIsAWriteOfTheCopyDurableByItsReturn) {
  constexpr std::uint64_t kSize = 65536, kOddSize = 200000;  // 16 pages; 48 pages and a part
  ASSERT_TRUE(sh("head -c " + std::to_string(kSize) + " /dev/urandom > " + disk_.file("lower/old") +
                 " && head -c " + std::to_string(kOddSize) + " /dev/urandom > " +
                 disk_.file("lower/odd") + " && sync"));
  // The overlay was mounted before the lower files existed: remount it so it sees them.
  overlay_.reset();
  mount_overlay();
  const std::string path = merged("old"), odd = merged("odd");
  ASSERT_FALSE(fs::exists(upper("old")));
  const std::vector<json> items =
      trace({}, {"sh", "-c",
                 "dd if=/dev/zero of=" + path +
                     " bs=4k count=2 seek=3 conv=notrunc,fsync status=none && "
                     "dd if=/dev/zero of=" +
                     odd + " bs=4k count=1 conv=notrunc status=none && " +
                     // Opened for writing again: already in the upper layer, nothing to copy.
                     "dd if=/dev/zero of=" + path + " bs=4k count=1 conv=notrunc status=none"});
  ASSERT_TRUE(fs::exists(upper("old")) && fs::exists(upper("odd"))) << "dd's opens copied up";
  EXPECT_EQ(fs::file_size(upper("old")), kSize);
  EXPECT_EQ(fs::file_size(upper("odd")), kOddSize);

  const oracle::FileItems f = oracle::items_of(items, path);
  ASSERT_EQ(f.writes.size(), 4u);  // the copy-up, then dd's 2 writes, then 1
  ASSERT_EQ(f.syncs.size(), 1u);
  EXPECT_TRUE(oracle::check_sync_contract(f).empty()) << join(oracle::check_sync_contract(f));
  EXPECT_TRUE(oracle::check_pages(f).empty()) << join(oracle::check_pages(f));
  std::size_t copies = 0;
  for (const json& w : f.writes) copies += oracle::is_write_call(w) ? 0 : 1;
  EXPECT_EQ(copies, 1u) << "only the first open copied the file up";

  for (const auto& [file, size] : {std::pair{path, kSize}, std::pair{odd, kOddSize}}) {
    const json copy = oracle::items_of(items, file).writes.at(0);
    SCOPED_TRACE(copy.dump());
    EXPECT_EQ(copy["syscall"], "openat");
    EXPECT_EQ(copy["call_flags"], json::array({"COPY_UP"}));
    EXPECT_EQ(copy["offset"], 0);
    EXPECT_EQ(copy["bytes"], size);
    EXPECT_EQ(copy["pages"], (size + 4095) / 4096);
    EXPECT_EQ(copy["pages_dirtied"], (size + 4095) / 4096);
    EXPECT_EQ(copy["ino"], ino_of(file));
    EXPECT_EQ(copy["backing"]["ino"], ino_of(file == path ? upper("old") : upper("odd")));
    EXPECT_EQ(copy["backing"]["dev"], disk_.disk());
    // The overlay syncs the copy before the open returns (not mounted volatile).
    EXPECT_EQ(copy["state"], "durable");
    EXPECT_LE(copy["durable_ns"].get<std::int64_t>(), copy["end_ns"].get<std::int64_t>());
    std::uint64_t bytes = 0;
    for (const json& r : copy["requests"]) {
      EXPECT_EQ(r["dev"], disk_.disk());
      EXPECT_LE(r["complete_ns"].get<std::int64_t>(), copy["end_ns"].get<std::int64_t>());
      bytes += r["bytes"].get<std::uint64_t>();
    }
    EXPECT_GE(bytes, size);
  }
  for (const json& w : f.writes) {
    EXPECT_EQ(w["ino"], ino_of(path)) << w.dump();
    EXPECT_EQ(w["backing"]["ino"], ino_of(upper("old"))) << w.dump();
  }
  EXPECT_EQ(f.writes[1]["offset"], 3 * 4096);
  // Every write request the disk completed while the command ran is in the summary, the
  // copies' among them.
  const json& summary = items.back();
  const auto totals = oracle::check_disk_totals(summary, disk_.disk(), disk_inside, disk_outside);
  EXPECT_TRUE(totals.empty()) << join(totals) << "\nthe items' requests of " << disk_.disk() << ":"
                              << requests_of(items, disk_.disk()) << "\n"
                              << summary.dump();
}

// --dev takes the overlay's own device or its disk; --file the overlay path or the upper one;
// another disk or file selects none of these writes.
TEST_F(OverlayOnExt4, DevAndFileAcceptTheOverlayAndItsBacking) {
  const std::string path = merged("sel");
  ASSERT_TRUE(sh("echo x > " + path));  // copied up: the upper file exists
  const std::string other = disk_.file("other");
  ASSERT_TRUE(sh("echo x > " + other));
  std::string vda_dev;
  for (const auto& d : {"vda", "sda", "nvme0n1"})
    if (fs::exists(std::string("/sys/block/") + d + "/dev")) {
      vda_dev = slurp(std::string("/sys/block/") + d + "/dev");
      while (!vda_dev.empty() && vda_dev.back() == '\n') vda_dev.pop_back();
      break;
    }
  struct Case {
    std::vector<std::string> select;
    std::size_t writes;
  };
  std::vector<Case> cases = {{{"--dev", dev_of(path)}, 4},
                             {{"--dev", disk_.disk()}, 4},
                             {{"--file", path}, 4},
                             {{"--file", upper("sel")}, 4},
                             {{"--file", other}, 0}};
  if (!vda_dev.empty()) cases.push_back({{"--dev", vda_dev}, 0});
  for (const Case& c : cases) {
    const std::vector<json> items = trace(c.select, dd(path, 4, "notrunc,fsync"));
    const oracle::FileItems f = oracle::items_of(items, path);
    EXPECT_EQ(f.writes.size(), c.writes) << c.select[0] << " " << c.select[1];
    EXPECT_EQ(f.syncs.size(), c.writes ? 1u : 0u) << c.select[0] << " " << c.select[1];
    for (const json& w : f.writes) EXPECT_EQ(w["state"], "durable") << w.dump();
  }
}

// A container's view: a process in its own mount and PID namespaces whose root is the overlay
// (the host's /usr and /dev bound in) writes /data with dd conv=fsync. Its 8 writes are
// durable, its fsync has the upper journal and a flush, and the items name the file as dd sees
// it from the root it was chroot'ed into (/data), not as its namespace shows it.
TEST_F(OverlayOnExt4, AContainerRootOnAnOverlayIsStitchedToItsDisk) {
  for (const char* l : {"bin", "lib", "lib64", "sbin"})
    ASSERT_TRUE(sh(std::string("ln -sfn usr/") + l + " " + disk_.file("lower/") + l));
  for (const char* d : {"usr", "dev"}) fs::create_directories(disk_.file("lower/") + d);
  overlay_.reset();  // the container mounts its own
  const std::string root = merged();
  const std::string script =
      "mount -t overlay overlay -o lowerdir=" + disk_.file("lower") +
      ",upperdir=" + disk_.file("upper") + ",workdir=" + disk_.file("work") + " " + root +
      " && mount --bind /usr " + root + "/usr && mount --bind /dev " + root +
      "/dev && exec chroot " + root +
      " /usr/bin/dd if=/dev/zero of=/data bs=4k count=8 conv=fsync status=none";
  const std::vector<json> items = trace({}, {"unshare", "--mount", "--pid", "--fork",
                                             "--propagation", "private", "sh", "-c", script});
  std::vector<json> writes, syncs;
  for (const json& o : items) {
    if (o.value("comm", "") != "dd" || !o["backing"].is_object()) continue;
    if (o["type"] == "write") writes.push_back(o);
    if (o["type"] == "fsync") syncs.push_back(o);
  }
  ASSERT_EQ(writes.size(), 8u) << items.size() << " items";
  ASSERT_EQ(syncs.size(), 1u);
  EXPECT_EQ(syncs[0]["ret"], 0);
  const std::uint64_t upper_ino = ino_of(upper("data"));  // left behind in the upper layer
  ASSERT_NE(upper_ino, 0u);
  for (const json& w : writes) {
    EXPECT_EQ(w["state"], "durable") << w.dump();
    EXPECT_EQ(w["path"], "/data") << w.dump();
    EXPECT_EQ(w["backing"]["dev"], disk_.disk()) << w.dump();
    EXPECT_EQ(w["backing"]["ino"], upper_ino) << w.dump();
    EXPECT_NE(w["dev"], disk_.disk()) << w.dump();
  }
  EXPECT_GT(syncs[0]["phases"]["journal_ns"].get<std::uint64_t>(), 0u) << syncs[0].dump();
  EXPECT_FALSE(syncs[0]["flushes"].empty()) << syncs[0].dump();
}

}  // namespace
}  // namespace wp::testing
