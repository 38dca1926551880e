// SPDX-License-Identifier: Apache-2.0
// The chapter's model load, traced one way at a time (writepath load mmap-load --ways), from
// the workspace's ext4 and through FUSE (bindfs with one-page readahead, --storage fuse): the
// fault and read items of the model file held to the load's own counters (getrusage major
// faults, /proc/self/io read_bytes), and the diagnosis naming page-per-page faulting where
// the storage answered each fault alone, and nowhere else.
#include <algorithm>
#include <sstream>

#include "harness.h"

namespace {

using namespace wp::testing;

struct TracedLoad {
  json figures;                         // the load's own (load --json)
  std::uint64_t major = 0;              // fault items of the model file, major
  std::vector<std::uint64_t> major_at;  // when each major fault item of any file began
  std::uint64_t pages_in = 0;           // pages its items brought in (their own and readahead)
  std::vector<std::string> findings;    // the summary's read_findings of the file
};

TracedLoad traced_load(const std::string& storage, const std::string& way) {
  const std::string trace =
      (fs::temp_directory_path() / ("wp_read_load_" + std::to_string(::getpid()) + ".jsonl"))
          .string();
  const RunResult r =
      run({writepath(), "trace", "--reads",   "--format", "json",      "-o", trace,           "--",
           writepath(), "load",  "mmap-load", "--json",   "--tensors", "8",  "--tensor-size", "1M",
           "--storage", storage, "--ways",    way});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  TracedLoad out;
  const json doc = json::parse(r.out, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    ADD_FAILURE() << "expected the load's JSON, got: " << r.out;
    return out;
  }
  out.figures = doc["figures"];
  const std::string file = out.figures.value("file", "");
  for (const json& item : json_lines(slurp(trace))) {
    const std::string type = item.value("type", "");
    if ((type == "fault" || type == "read") && item["path"] == file) {
      if (type == "fault" && item["fault"]["major"].get<bool>()) ++out.major;
      out.pages_in += u64(item["pages_from_device"]) + u64(item["readahead_pages"]);
    } else if (type == "summary") {
      for (const json& finding : item["read_findings"])
        if (finding["path"] == file) out.findings.push_back(finding["finding"]);
    }
  }
  fs::remove(trace);
  return out;
}

bool names(const TracedLoad& load, const std::string& finding) {
  return std::find(load.findings.begin(), load.findings.end(), finding) != load.findings.end();
}

TEST(ReadLoad, PagePerPageFaultingIsNamedOnTheFuseLazyLoadAndNotOnTheLocalEagerOne) {
  WP_REQUIRE_ROOT();
  if (::system("command -v bindfs >/dev/null") != 0) GTEST_SKIP() << "no bindfs";
  const TracedLoad fuse_lazy = traced_load("fuse", "lazy");
  const TracedLoad local_lazy = traced_load("local", "lazy");
  const TracedLoad local_eager = traced_load("local", "eager");
  const TracedLoad fuse_eager = traced_load("fuse", "eager");
  for (const auto* load : {&fuse_lazy, &local_lazy, &local_eager, &fuse_eager}) {
    const json& f = load->figures;
    const std::string way = f.contains("lazy") ? "lazy" : "eager";
    ASSERT_TRUE(f.contains(way)) << f.dump();
    // The load's own getrusage count of its major faults, all on the model file; and its own
    // cachestat(2) of the file right after the load: every page it left cached, one of its
    // items brought in (the load started from a cold cache; a busy machine may have evicted
    // some since, hence at most).
    EXPECT_EQ(load->major, u64(f[way]["major_faults"])) << f.dump();
    EXPECT_LE(u64(f[way]["cached_pages_after"]), load->pages_in) << f.dump();
    if (u64(f[way]["cached_pages_after"]) != load->pages_in)
      std::cout << way << ": " << u64(f[way]["cached_pages_after"]) << " of the " << load->pages_in
                << " pages brought in left cached (evicted since)\n";
    // What the items brought in is what the loader read from storage, where the kernel counts
    // it (FUSE's page cache fills are the daemon's reads, not the loader's): to the page, as
    // the kernel counts the file's last page by its blocks.
    if (f["storage"] == "local") {
      const std::uint64_t storage = u64(f[way]["read_bytes"]);
      EXPECT_LE(load->pages_in * 4096, storage + 4095) << f.dump();
      EXPECT_GE(load->pages_in * 4096, storage) << f.dump();
    }
  }
  // Through FUSE with a one-page window the lazy load faulted page by page: one tensor of
  // 1 MiB, 256 pages, each a major fault.
  EXPECT_GE(fuse_lazy.major, 256u);
  EXPECT_TRUE(names(fuse_lazy, "page-per-page-faults")) << fuse_lazy.figures.dump();
  // A local lazy load is not page by page where its device reads ahead more than two pages
  // (the load's own figure of its scratch device's read_ahead_kb).
  if (local_lazy.figures.value("read_ahead_bytes", std::uint64_t{0}) > 2 * 4096) {
    EXPECT_FALSE(names(local_lazy, "page-per-page-faults"));
  }
  EXPECT_FALSE(names(local_eager, "page-per-page-faults"));
  EXPECT_FALSE(names(fuse_eager, "page-per-page-faults"));
  EXPECT_TRUE(names(local_eager, "cold-storage"));
}

// The chapter's loaders on a file of 16 MiB, each traced from a cold page cache (vmtouch -e
// evicts it, and cachestat(2) says so): numpy's memmap viewing 2 MiB of it in place (the lazy
// load: faults), vmtouch -t (prefetch: it maps the file and touches every page), then numpy's
// fromfile (the eager load: read calls) from the cache vmtouch filled. Each held to the
// loader's own getrusage major faults, to cachestat, and to where its pages must come from.
TEST(ReadLoad, NumpyAndVmtouchLoadsAreHeldToTheirOwnCountsAndTheCache) {
  WP_REQUIRE_ROOT();
  if (::system("command -v vmtouch >/dev/null && /usr/bin/python3 -c 'import numpy' "
               "2>/dev/null") != 0)
    GTEST_SKIP() << "no vmtouch or python3-numpy";
  ScratchFs disk("ext4", mkfs_of("ext4"));
  ASSERT_TRUE(disk.ready());
  const std::string path = disk.file("model.bin");
  constexpr std::uint64_t kPages = 4096;
  ASSERT_TRUE(sh("head -c 16M /dev/urandom > " + path + " && sync " + path));
  const auto traced = [&](const std::vector<std::string>& command) {
    const std::string trace = disk.file("trace.jsonl");
    std::vector<std::string> argv = {writepath(), "trace", "--reads", "--format",
                                     "json",      "-o",    trace,     "--"};
    argv.insert(argv.end(), command.begin(), command.end());
    const RunResult r = run(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    TracedLoad out;
    out.figures = r.out;
    for (const json& item : json_lines(slurp(trace))) {
      const std::string type = item.value("type", "");
      if (type == "fault" && item["fault"]["major"].get<bool>())
        out.major_at.push_back(u64(item["start_ns"]));
      if ((type != "fault" && type != "read") || item["path"] != path) continue;
      if (type == "fault" && item["fault"]["major"].get<bool>()) ++out.major;
      out.pages_in += u64(item["pages_from_device"]) + u64(item["readahead_pages"]);
    }
    fs::remove(trace);
    return out;
  };
  const auto evict = [&] {
    EXPECT_TRUE(sh("vmtouch -q -e " + path));
    EXPECT_EQ(cachestat(path)->cache, 0u) << "vmtouch -e left pages cached";
  };
  const std::string majflt =
      "import resource; f = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_majflt; ";

  evict();
  // getrusage counts the process's major faults on any file: a page of numpy's own libraries
  // the machine paged out meanwhile (a DAMON pageout scheme runs here) faults in the sum too. So
  // the loader prints its count with the window it counted over (CLOCK_MONOTONIC, the trace's
  // clock), and the trace's major faults in that window, of any file, must match it; those of
  // the model file are at least one.
  const TracedLoad lazy = traced(
      {"/usr/bin/python3", "-c",
       majflt + "import time; import numpy as np; m = np.memmap('" + path +
           "', dtype=np.uint8, mode='r'); t = lambda: time.clock_gettime_ns(time.CLOCK_MONOTONIC); "
           "a = f(); t0 = t(); s = int(m[4 << 20:6 << 20].sum()); t1 = t(); "
           "print(f() - a, t0, t1)"});
  std::uint64_t loader_major = 0, from = 0, to = 0;
  std::istringstream(lazy.figures.get<std::string>()) >> loader_major >> from >> to;
  ASSERT_LT(from, to) << lazy.figures;
  const auto in_window = std::count_if(lazy.major_at.begin(), lazy.major_at.end(),
                                       [&](std::uint64_t at) { return at >= from && at <= to; });
  EXPECT_EQ(static_cast<std::uint64_t>(in_window), loader_major) << "lazy: " << lazy.figures;
  EXPECT_GE(lazy.major, 1u);
  EXPECT_LE(lazy.major, loader_major) << "lazy";
  // What the file keeps is what the load brought in, less what the machine evicted since (a
  // busy machine did: 4 pages of 1920 once, in make test beside the other tests).
  const auto kept = [&](std::uint64_t brought_in, const char* load) {
    const std::uint64_t cached = cachestat(path)->cache;
    EXPECT_LE(cached, brought_in) << load;
    if (cached != brought_in)
      std::cout << load << ": the file keeps " << cached << " of the " << brought_in
                << " pages it brought in\n";
    return cached;
  };
  kept(lazy.pages_in, "lazy");

  evict();
  const TracedLoad prefetch = traced({"vmtouch", "-q", "-t", path});
  // Every page, brought in by vmtouch's faults (again, where evicted before it touched it).
  EXPECT_GE(prefetch.pages_in, kPages) << "vmtouch -t";
  const std::uint64_t cached_before_eager = kept(prefetch.pages_in, "vmtouch -t");

  // The eager load after the prefetch brings in what the cache no longer held, each page once.
  const TracedLoad eager = traced(
      {"/usr/bin/python3", "-c",
       "import numpy as np; print(int(np.fromfile('" + path + "', dtype=np.uint8).sum() > 0))"});
  EXPECT_GE(eager.pages_in, kPages - cached_before_eager) << "eager";
  EXPECT_LE(eager.pages_in, kPages) << "eager";
}

}  // namespace
