// SPDX-License-Identifier: Apache-2.0
// Crash-consistency hazards: what an item shows that a crash now could turn into lost or
// half-made data, each by a named rule. Pure: an item in, its hazards out. Rules that need
// only one item (and what the stitcher already linked to it) are decided here as the item is
// emitted; each rule's reason, the file systems it concerns, where it comes from and its fix
// are in hazard_rules().
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "stitch/timeline.h"

namespace wp {

struct HazardRuleInfo {
  const char* name;          // "lost-but-acknowledged"
  const char* why;           // the reason it is a hazard
  const char* file_systems;  // where it applies
  const char* reference;     // where the failure is described
  const char* fix;           // what to change
};

// Every rule, in the order summaries list them.
std::span<const HazardRuleInfo> hazard_rules();

// The rules by their place in hazard_rules(), for the code that applies them.
enum class HazardRule : std::uint8_t {
  LostButAcknowledged,
  DirectNotDurable,
  RenameOfUnsyncedData,
  WriteAfterFsyncBeforeRename,
  NameNotDurable,
  SyncOfTheWrongThing,
};
// The rule's documented name, which a Hazard carries.
const char* hazard_rule_name(HazardRule rule);

// Sets `item.hazards` from what the item itself shows (the item as emitted, complete or at
// the end of the trace).
void add_hazards(Timeline& item);

// The rules that need the items around an item, not the item alone: a rename against the
// writes and syncs of the file it renames and the later syncs of its directory, a
// sync_file_range against the syncs that follow it. Pure: items in, the same items out, each
// with its hazards. Items whose hazards depend on what comes later (name-change items, and
// sync_file_range / msync(MS_ASYNC) syncs) are held and handed out at finish(), when the trace
// has said all it will; the rest pass at once. What is kept of each write and sync is a few
// numbers (its file, times, durability), bounded by `max_facts`; past `max_held` held items the
// oldest is handed out undecided (counted).
class HazardAuditor {
 public:
  using Out = std::function<void(Timeline&&)>;
  explicit HazardAuditor(std::size_t max_held = 1u << 16, std::size_t max_facts = 1u << 20)
      : max_held_(max_held), max_facts_(max_facts) {}

  // Sets the item's own hazards (add_hazards) and hands it to `out` now or at finish().
  void take(Timeline&& item, const Out& out);
  // Decides the held items against everything seen, and hands them out in id order.
  void finish(const Out& out);
  // Items handed out before they could be decided (over max_held).
  std::uint64_t undecided() const { return undecided_; }

  using FileKey = std::pair<std::uint64_t, std::uint64_t>;  // (dev, ino)
  enum class SyncKind : std::uint8_t { Full, Wrong, Global };
  // A file in one of its lifetimes (see decide()).
  struct GenKey {
    FileKey file;
    std::uint32_t gen = 0;
  };
  struct WriteFact {
    std::uint64_t id;
    FileKey file;
    std::uint32_t gen = 0;  // set by decide()
    Nanos start, end;
    std::optional<Nanos> durable;
    bool memory;  // a file system in memory: no crash hazard to speak of
  };
  struct SyncFact {
    std::uint64_t id;
    FileKey file;
    std::uint32_t gen = 0;  // set by decide()
    std::string path;
    Nanos start, end;
    SyncKind kind;
  };
  struct SendFact {  // a process's reply: its first socket send after it made a name
    std::uint64_t id;
    Nanos start;
    int fd;
  };
  struct PathFact {
    Nanos at;
    std::string path;
    FileKey file;
  };

 private:
  void decide();
  void hazards_of(NameChangeTimeline& item, const GenKey* file, std::optional<bool> replaced);
  void hazards_of(SyncTimeline& sync);
  const SyncFact* name_synced_after(Nanos after, FileKey dir, const std::string& dir_path,
                                    const GenKey* file) const;
  bool name_survives(const std::string& path, Nanos after) const;

  // What is kept of one file as items arrive: its latest writes and syncs (a file written a
  // million times keeps the last kFactsPerFile of each: the rules look at what was not yet
  // durable at a rename, the latest writes), and the path its last item had.
  static constexpr std::size_t kFactsPerFile = 256;
  struct FileFacts {
    std::deque<WriteFact> writes;
    std::deque<SyncFact> syncs;
    std::string last_path;
  };

  std::size_t max_held_, max_facts_;
  std::size_t facts_ = 0;  // kept in files_ and paths_
  std::deque<Timeline> held_;
  std::map<FileKey, FileFacts> files_;
  std::vector<PathFact> paths_;
  std::map<std::uint32_t, std::vector<SendFact>> sends_;  // by pid, in arrival order
  // files_ flattened by decide(): the facts the index points into.
  std::vector<WriteFact> writes_;
  std::vector<SyncFact> syncs_;
  // Per held item: whether its rename replaced a file the trace knew of (nullopt: unknown).
  std::vector<std::optional<bool>> replaced_;
  // File lifetimes that ended by an unlink of their last name (decide()): (file, generation).
  std::set<std::pair<FileKey, std::uint32_t>> deleted_;
  // What the rules look up, built once by decide() so that each held item costs a few lookups
  // (a rename loop holds tens of thousands): per file lifetime its writes and syncs in time
  // order, full syncs per file, per path and machine-wide in time order, and when each path
  // was removed.
  struct Index {
    std::map<std::pair<FileKey, std::uint32_t>, std::vector<const WriteFact*>> writes;
    std::map<std::pair<FileKey, std::uint32_t>, std::vector<const SyncFact*>> syncs;
    // Full syncs by file (any lifetime: a directory's) and by path, and sync/syncfs, each in
    // start order.
    std::map<FileKey, std::vector<const SyncFact*>> full_syncs;
    std::map<std::string, std::vector<const SyncFact*>> full_syncs_of_path;
    std::vector<const SyncFact*> global_syncs;
    std::map<std::string, std::vector<Nanos>> removed;  // path → unlink/rename-away times
    std::map<std::uint64_t, const SyncFact*> sync_by_id;
  };
  Index index_;
  std::uint64_t undecided_ = 0;
};

// Hazards over a trace, by rule, by file and by process: the summary's "hazards",
// "hazards_by_file" and "hazards_by_process".
class HazardSummary {
 public:
  void add(const Timeline& item);
  const std::map<std::string, std::uint64_t>& by_rule() const { return by_rule_; }
  // The file an item concerns: a rename's or link's new name, another name-change call's name,
  // else the call's file ("" when no path is known).
  const std::map<std::string, std::uint64_t>& by_file() const { return by_file_; }
  // "COMM PID" of the process that made the call.
  const std::map<std::string, std::uint64_t>& by_process() const { return by_process_; }

 private:
  std::map<std::string, std::uint64_t> by_rule_, by_file_, by_process_;
};

}  // namespace wp
