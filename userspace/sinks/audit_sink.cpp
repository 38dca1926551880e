// SPDX-License-Identifier: Apache-2.0
#include "sinks/audit_sink.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>

#include "analyze/hazards.h"
#include "common/units.h"
#include "sinks/json_sink.h"
#include "sinks/text_sink.h"

namespace wp {
namespace {

// Evidence items a text block lists per hazard.
constexpr std::size_t kShownEvidence = 4;

std::string call_state(const SyscallEvent& call) {
  return call.ret < 0 ? fmt::format("failed {}", errno_name(static_cast<int>(call.ret)))
                      : std::string("returned");
}

AuditSink::Evidence evidence_of(const Timeline& item) {
  const SyscallEvent& call = call_of(item);
  AuditSink::Evidence e{.id = id_of(item),
                        .kind = "",
                        .syscall = call_name(call),
                        .pid = call.pid,
                        .tid = call.tid,
                        .comm = call.comm,
                        .what = call.path,
                        .state = "",
                        .start_ns = call.start_ns,
                        .end_ns = call_end(call),
                        .durable_ns = std::nullopt};
  if (const auto* write = std::get_if<WriteTimeline>(&item)) {
    e.kind = "write";
    e.state = write_state_name(write->state);
    e.durable_ns = write->durable_ns;
    e.what += fmt::format(" off {} {}", call.pos, human_bytes(bytes_written(call)));
  } else if (const auto* ns = std::get_if<NameChangeTimeline>(&item)) {
    e.kind = "namespace";
    e.state = call_state(call);
    const auto shown = [&](std::size_t i) {
      return ns->paths[i].empty() ? ns->names[i] : ns->paths[i];
    };
    if (call.path.empty()) e.what = shown(0);
    if (ns->op == NameChangeOp::Rename || ns->op == NameChangeOp::Link) e.what += " -> " + shown(1);
  } else {
    e.kind = "sync";
    e.state = call_state(call);
  }
  return e;
}

nlohmann::ordered_json evidence_json(const AuditSink::Evidence& e) {
  nlohmann::ordered_json j = {{"id", e.id},
                              {"type", e.kind},
                              {"syscall", e.syscall},
                              {"pid", e.pid},
                              {"tid", e.tid},
                              {"comm", e.comm},
                              {"what", e.what},
                              {"state", e.state},
                              {"start_ns", e.start_ns},
                              {"end_ns", e.end_ns},
                              {"latency_ns", e.end_ns - e.start_ns}};
  if (e.durable_ns) j["durable_ns"] = *e.durable_ns;
  return j;
}

}  // namespace

const AuditSink::Evidence* AuditSink::find(std::uint64_t id) const {
  const auto it = evidence_.find(id);
  return it == evidence_.end() ? nullptr : &it->second;
}

void AuditSink::timeline(const Timeline& item) {
  const SyscallEvent& call = call_of(item);
  if (items_++ == 0 || call.start_ns < origin_) origin_ = call.start_ns;
  Evidence e = evidence_of(item);
  std::visit(
      [&](const auto& t) {
        for (const Hazard& h : t.hazards) findings_.push_back({h, e});
      },
      item);
  if (max_evidence_ == 0) return;
  if (evidence_.size() >= max_evidence_) {
    evidence_.erase(evidence_order_.front());
    evidence_order_.pop_front();
  }
  evidence_order_.push_back(e.id);
  evidence_.emplace(e.id, std::move(e));
}

void AuditSink::summary(const TraceSummary& totals) {
  // By rule, in the rules' documented order; within a rule in item order.
  std::stable_sort(findings_.begin(), findings_.end(),
                   [](const Finding& a, const Finding& b) { return a.item.id < b.item.id; });
  const auto at = [this](Nanos t) { return human_duration(t > origin_ ? t - origin_ : 0); };
  const auto line = [&](const Evidence& e) {
    return fmt::format("#{} {} pid {}/{} ({}) {}  at +{}, {}: {}", e.id, e.syscall, e.pid, e.tid,
                       printable_comm(e.comm), printable_comm(e.what), at(e.start_ns),
                       human_duration(e.end_ns - e.start_ns), e.state);
  };
  std::uint64_t total = 0;
  for (const HazardRuleInfo& rule : hazard_rules()) {
    std::vector<const Finding*> of_rule;
    for (const Finding& f : findings_)
      if (f.hazard.rule == rule.name) of_rule.push_back(&f);
    total += of_rule.size();
    for (const Finding* f : of_rule) {
      if (!json_) continue;
      nlohmann::ordered_json related = nlohmann::ordered_json::array();
      for (std::uint64_t id : f->hazard.related)
        if (const Evidence* e = find(id)) related.push_back(evidence_json(*e));
      out_ << json_line({{"type", "hazard"},
                         {"rule", rule.name},
                         {"detail", f->hazard.detail},
                         {"item", evidence_json(f->item)},
                         {"related", related},
                         {"why", rule.why},
                         {"fix", rule.fix},
                         {"file_systems", rule.file_systems},
                         {"reference", rule.reference}})
           << "\n";
    }
    if (json_ || of_rule.empty()) continue;
    out_ << fmt::format("{} ({})\n  why: {}\n  fix: {}\n  where: {}\n  see: {}\n", rule.name,
                        of_rule.size(), rule.why, rule.fix, rule.file_systems, rule.reference);
    for (const Finding* f : of_rule) {
      out_ << "  " << line(f->item) << "\n";
      out_ << "      " << f->hazard.detail << "\n";
      // The first few pieces of evidence and the last (a sync the writes came after is
      // listed last); JSON has them all.
      const auto& related = f->hazard.related;
      for (std::size_t i = 0; i < related.size(); ++i) {
        if (related.size() > kShownEvidence && i + 1 >= kShownEvidence && i + 1 < related.size()) {
          if (i + 1 == kShownEvidence)
            out_ << fmt::format("      ... {} more\n", related.size() - kShownEvidence);
          continue;
        }
        if (const Evidence* e = find(related[i]))
          out_ << "      " << line(*e) << "\n";
        else
          out_ << fmt::format("      #{} (no longer remembered)\n", related[i]);
      }
    }
    out_ << "\n";
  }
  // A hazard of a rule this build does not document (a newer recording) is still counted.
  const std::uint64_t undocumented = findings_.size() - total;
  if (json_) {
    const auto counts = [](const std::map<std::string, std::uint64_t>& of) {
      nlohmann::ordered_json out = nlohmann::ordered_json::object();
      for (const auto& [name, n] : of) out[name] = n;
      return out;
    };
    out_ << json_line({{"type", "audit_summary"},
                       {"hazards", findings_.size()},
                       {"by_rule", counts(totals.hazards)},
                       {"by_file", counts(totals.hazards_by_file)},
                       {"by_process", counts(totals.hazards_by_process)},
                       {"items", items_},
                       {"writes", totals.writes},
                       {"syncs", totals.fsyncs},
                       {"namespace_calls", totals.name_change_calls},
                       {"lost_records", totals.lost}})
         << "\n";
    return;
  }
  if (undocumented) out_ << fmt::format("{} hazards of rules not known here\n", undocumented);
  if (findings_.empty())
    out_ << fmt::format(
        "no crash-consistency hazard in {} items ({} writes, {} syncs, {} "
        "namespace calls)\n",
        items_, totals.writes, totals.fsyncs, totals.name_change_calls);
  else
    out_ << fmt::format("{} crash-consistency hazard{} in {} items\n", findings_.size(),
                        findings_.size() == 1 ? "" : "s", items_);
  const auto listed = [](const std::map<std::string, std::uint64_t>& of) {
    std::vector<std::string> parts;
    for (const auto& [name, n] : of) parts.push_back(fmt::format("{} ({})", name, n));
    return fmt::format("{}", fmt::join(parts, ", "));
  };
  if (!totals.hazards_by_process.empty())
    out_ << fmt::format("  by process: {}\n  by file: {}\n", listed(totals.hazards_by_process),
                        listed(totals.hazards_by_file));
  if (totals.lost)
    out_ << fmt::format("{} records were lost: a hazard may have gone unseen\n", totals.lost);
}

}  // namespace wp
