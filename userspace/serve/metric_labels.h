// SPDX-License-Identifier: Apache-2.0
// The bounded label values of the exporter: a cgroup (or a command name) gets a label value of
// its own when first seen while fewer than `capacity` have one, and keeps it for the agent's
// lifetime; every other one is "other". Sticky on purpose: a series that changed its label
// value would make counters go down, and the bound keeps the series count at most
// capacity + 1 per label whatever the workload does.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace wp {

inline constexpr const char* kOtherLabel = "other";

// How active a newcomer was in the batch it first appeared in: the most active of a batch get
// the free label values first.
struct LabelActivity {
  std::uint64_t observations = 0;
  std::uint64_t bytes = 0;
};

template <typename Key>
class StickyLabels {
 public:
  explicit StickyLabels(std::size_t capacity) : capacity_(capacity) {}

  // The label of a key seen before, or of a newcomer (a single one: it takes a free value if
  // any). `name` makes the label value of a key that gets one of its own.
  const std::string& label(const Key& key, const std::function<std::string()>& name) {
    if (auto it = labels_.find(key); it != labels_.end()) return it->second;
    return assign(key, name);
  }

  // Assigns the newcomers of one batch, most active first (observations, then bytes, then
  // key order, so that equal activity still decides the same way every time).
  void admit(const std::map<Key, LabelActivity>& batch,
             const std::function<std::string(const Key&)>& name) {
    std::vector<std::pair<Key, LabelActivity>> fresh;
    for (const auto& [key, activity] : batch)
      if (!labels_.contains(key)) fresh.emplace_back(key, activity);
    std::stable_sort(fresh.begin(), fresh.end(), [](const auto& a, const auto& b) {
      if (a.second.observations != b.second.observations)
        return a.second.observations > b.second.observations;
      return a.second.bytes > b.second.bytes;
    });
    for (const auto& entry : fresh) assign(entry.first, [&] { return name(entry.first); });
  }

  // Known keys only (after admit()); an unknown key is "other".
  const std::string& known(const Key& key) const {
    auto it = labels_.find(key);
    return it == labels_.end() ? other_ : it->second;
  }

  std::size_t own_values() const { return own_; }

 private:
  const std::string& assign(const Key& key, const std::function<std::string()>& name) {
    if (own_ < capacity_) {
      ++own_;
      return labels_.emplace(key, name()).first->second;
    }
    return labels_.emplace(key, other_).first->second;
  }

  std::size_t capacity_;
  std::size_t own_ = 0;
  const std::string other_ = kOtherLabel;
  // Every key seen, with its label ("other" included): remembering the keys that were refused
  // is what keeps them "other". It grows with the distinct cgroups (or names) seen, not with
  // the traffic.
  std::map<Key, std::string> labels_;
};

}  // namespace wp
