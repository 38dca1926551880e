// SPDX-License-Identifier: Apache-2.0
// writepath audit's output: only the crash-consistency hazards, one block per rule with the
// rule's reason, its fix, and per hazard the item that shows it and the items it names as
// evidence (their times and states); JSON: an object per hazard, then a summary. Every item
// passes through to keep its evidence, a few fields each.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "sinks/sink.h"

namespace wp {

class AuditSink : public Sink {
 public:
  // `json`: JSON Lines instead of text. `max_evidence`: items remembered as evidence (the
  // oldest forgotten first).
  AuditSink(std::ostream& out, bool json, std::size_t max_evidence = 1u << 20)
      : out_(out), json_(json), max_evidence_(max_evidence) {}

  void timeline(const Timeline& item) override;
  void summary(const TraceSummary& totals) override;
  void flush() override { out_.flush(); }

  // What is known of an item, enough to show it as evidence.
  struct Evidence {
    std::uint64_t id = 0;
    std::string kind;     // "write", "sync", "namespace"
    std::string syscall;  // "pwrite64", "renameat2"
    std::uint32_t pid = 0;
    std::uint32_t tid = 0;
    std::string comm;
    std::string what;   // the file, or the names a name-change call acted on
    std::string state;  // a write's final state, else "returned" / "failed ERRNO"
    Nanos start_ns = 0;
    Nanos end_ns = 0;
    // A write's: when it became durable. Its state is its last, so a write a hazard found
    // not durable can say "durable" when a later flush (anyone's sync) came before the end.
    std::optional<Nanos> durable_ns;
  };
  struct Finding {
    Hazard hazard;
    Evidence item;
  };

 private:
  const Evidence* find(std::uint64_t id) const;

  std::ostream& out_;
  bool json_;
  std::size_t max_evidence_;
  std::unordered_map<std::uint64_t, Evidence> evidence_;
  std::deque<std::uint64_t> evidence_order_;
  std::vector<Finding> findings_;
  std::uint64_t items_ = 0;
  Nanos origin_ = 0;  // the first item's start: times are shown from it
};

}  // namespace wp
