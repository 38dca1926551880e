// Crash-consistency hazards: what an item shows that a crash now could turn into lost or
// half-made data, each by a named rule. Pure: an item in, its hazards out. Rules that need
// only one item (and what the stitcher already linked to it) are decided here as the item is
// emitted; each rule's reason, the file systems it concerns, where it comes from and its fix
// are in hazard_rules().
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>

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

// Sets `item.hazards` from what the item itself shows (the item as emitted, complete or at
// the end of the trace).
void add_hazards(Timeline& item);

// Hazards by rule, over a trace: the summary's "hazards".
class HazardSummary {
 public:
  void add(const Timeline& item);
  const std::map<std::string, std::uint64_t>& by_rule() const { return by_rule_; }

 private:
  std::map<std::string, std::uint64_t> by_rule_;
};

}  // namespace wp
