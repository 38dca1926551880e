// SPDX-License-Identifier: Apache-2.0
// atomic-save: saving a checkpoint so that a crash leaves the old file or the new one, never
// half of one: write a temporary file, fsync it, rename it over the target, fsync the
// directory. Against the naive overwrite in place (O_TRUNC, write, close), which is faster
// because nothing of it is durable when it returns. --unsafe RULE makes the safe save commit
// one mistake of analyze/hazards.h on purpose, so that `writepath audit` has it to find.
#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "common/units.h"
#include "loadgen/context.h"
#include "loadgen/measure.h"
#include "loadgen/scenarios/scenarios.h"

namespace wp::loadgen {
namespace {

// --unsafe: the mistakes the safe save can make, by the hazard rule that names each.
enum Unsafe : std::uint64_t {
  kSafe,
  kRenameUnsynced,  // no fsync of the temporary file before the rename
  kWriteAfterSync,  // its last chunk written again after its fsync, before the rename
  kNameNotDurable,  // no fsync of the directory after the rename
  kWrongSync,       // sync_file_range where the fsync belongs
};

class AtomicSave : public Scenario {
 public:
  std::string name() const override { return "atomic-save"; }
  std::string summary() const override {
    return "save a checkpoint crash-safely (temp, fsync, rename, fsync dir) vs overwrite in place";
  }
  std::vector<Param> params() override {
    return {
        {"size", "checkpoint size", ParamKind::Size, &size_, 1, 16ull << 30},
        {"rounds", "saves of each kind (medians reported)", ParamKind::Count, &rounds_, 1, 1000},
        {"unsafe",
         "make the safe save commit this mistake (a rule writepath audit reports)",
         ParamKind::Choice,
         &unsafe_,
         0,
         4,
         {"none", "rename-of-unsynced-data", "write-after-fsync-before-rename", "name-not-durable",
          "sync-of-the-wrong-thing"}}};
  }
  // At the rename: the new temporary file and the old target, plus the naive file.
  std::uint64_t space_needed() const override { return 3 * size_; }

  ScenarioResult run(LoadContext& ctx) override {
    auto phase = ctx.measured_phase("checkpointer");  // all of the run is measured
    Workspace& workspace = ctx.workspace();
    const auto temp = workspace.path("checkpoint.tmp");
    const auto target = workspace.path("checkpoint");
    const auto naive = workspace.path("checkpoint-naive");
    std::vector<char> content(size_);

    // Each round saves different content, so each save really replaces the last one.
    std::vector<Nanos> safe_ns, file_fsync_ns, dir_fsync_ns, naive_ns;
    std::uint64_t safe_fsyncs = 0;
    auto progress = ctx.progress("save", 2 * rounds_);
    for (std::uint64_t round = 0; round < rounds_; ++round) {
      fill_pattern(content, 1000 + round);
      Stopwatch save;
      {
        UniqueFd fd = open_file(temp, O_WRONLY | O_CREAT | O_TRUNC);
        write_chunks(ctx, fd.get(), content);
        Stopwatch fsync_time;
        if (unsafe_ == kWrongSync) {
          // Writes the pages and waits for them: no metadata, no cache flush.
          if (::sync_file_range(fd.get(), 0, 0,
                                SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                                    SYNC_FILE_RANGE_WAIT_AFTER) != 0)
            throw LoadError(fmt::format("sync_file_range: {}", std::strerror(errno)));
        } else if (unsafe_ != kRenameUnsynced) {
          fsync_or_throw(fd.get(), "fsync of the temporary file");
          file_fsync_ns.push_back(fsync_time.elapsed_ns());
          ++safe_fsyncs;
        }
        if (unsafe_ == kWriteAfterSync) {
          const std::uint64_t last = (content.size() - 1) / kChunkBytes * kChunkBytes;
          write_all(fd.get(), content.data() + last, content.size() - last,
                    static_cast<off_t>(last));
        }
      }
      if (std::rename(temp.c_str(), target.c_str()) != 0)
        throw LoadError(fmt::format("rename {} to {}: {}", temp.string(), target.string(),
                                    std::strerror(errno)));
      if (unsafe_ != kNameNotDurable) {
        // The rename is an entry in the directory: durable only once the directory is.
        UniqueFd dir = open_file(workspace.dir(), O_RDONLY | O_DIRECTORY);
        Stopwatch fsync_time;
        fsync_or_throw(dir.get(), "fsync of the directory");
        dir_fsync_ns.push_back(fsync_time.elapsed_ns());
        ++safe_fsyncs;
      }
      safe_ns.push_back(save.elapsed_ns());
      expect_content(target, content);
      progress.update(round + 1);
    }
    // The naive saves after all the safe ones: their writeback, left to the kernel, must not
    // land inside a safe save's fsyncs.
    for (std::uint64_t round = 0; round < rounds_; ++round) {
      fill_pattern(content, 2000 + round);
      Stopwatch save;
      {
        UniqueFd fd = open_file(naive, O_WRONLY | O_CREAT | O_TRUNC);
        write_chunks(ctx, fd.get(), content);
      }
      naive_ns.push_back(save.elapsed_ns());
      expect_content(naive, content);
      progress.update(rounds_ + round + 1);
    }

    const LatencySummary safe = summarize(safe_ns);
    const LatencySummary unsafe = summarize(naive_ns);
    ScenarioResult r;
    r.figures["size_bytes"] = size_;
    r.figures["rounds"] = rounds_;
    r.figures["safe_median_ns"] = safe.p50;
    r.figures["safe_max_ns"] = safe.max;
    r.figures["safe_file_fsync_median_ns"] = summarize(file_fsync_ns).p50;
    r.figures["safe_dir_fsync_median_ns"] = summarize(dir_fsync_ns).p50;
    r.figures["safe_fsyncs"] = safe_fsyncs;
    r.figures["safe_fsyncs_per_round"] = safe_fsyncs / rounds_;
    r.figures["naive_median_ns"] = unsafe.p50;
    r.figures["naive_max_ns"] = unsafe.max;
    r.figures["naive_fsyncs"] = 0;
    r.figures["naive_fsyncs_per_round"] = 0;
    r.figures["unsafe"] = unsafe_;
    if (unsafe_ == kSafe)
      r.lines.push_back(fmt::format(
          "safe save of {}: median {} (file fsync {}, directory fsync {}), 2 fsyncs each",
          human_size(), human_duration(safe.p50), human_duration(summarize(file_fsync_ns).p50),
          human_duration(summarize(dir_fsync_ns).p50)));
    else
      r.lines.push_back(
          fmt::format("save of {} made unsafe on purpose ({}): median {}, {} "
                      "fsync{} each",
                      human_size(), params()[2].choices[unsafe_], human_duration(safe.p50),
                      safe_fsyncs / rounds_, safe_fsyncs / rounds_ == 1 ? "" : "s"));
    r.lines.push_back(fmt::format("naive overwrite: median {}, no fsync: not durable on return",
                                  human_duration(unsafe.p50)));
    r.lines.push_back(fmt::format(
        "{} rounds each; the safe save costs {:.1f}× the naive one", rounds_,
        unsafe.p50 ? static_cast<double>(safe.p50) / static_cast<double>(unsafe.p50) : 0.0));
    return r;
  }

 private:
  std::string human_size() const {
    return size_ % (1u << 20) == 0 ? fmt::format("{} MiB", size_ >> 20)
                                   : fmt::format("{} B", size_);
  }

  static void write_chunks(LoadContext& ctx, int fd, const std::vector<char>& content) {
    for (std::uint64_t done = 0; done < content.size(); done += kChunkBytes) {
      ctx.check_interrupt();
      write_all(fd, content.data() + done,
                std::min<std::uint64_t>(kChunkBytes, content.size() - done),
                static_cast<off_t>(done));
    }
  }

  // The saved file holds this round's bytes (read back from the page cache: a check of the
  // save's logic, not of the disk).
  static void expect_content(const std::filesystem::path& path, const std::vector<char>& content) {
    std::vector<char> back(content.size());
    UniqueFd fd = open_file(path, O_RDONLY);
    read_all(fd.get(), back.data(), back.size(), 0);
    if (crc32(back.data(), back.size()) != crc32(content.data(), content.size()))
      throw LoadError(fmt::format("{} does not hold what was just saved", path.string()));
  }

  std::uint64_t size_ = 4u << 20;
  std::uint64_t rounds_ = 5;
  std::uint64_t unsafe_ = kSafe;
};

}  // namespace

std::unique_ptr<Scenario> make_atomic_save() {
  return std::make_unique<AtomicSave>();
}

}  // namespace wp::loadgen
