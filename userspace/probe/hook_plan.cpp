// SPDX-License-Identifier: Apache-2.0
#include "probe/hook_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <utility>

namespace wp {

const char* attach_kind_name(AttachKind kind) {
  switch (kind) {
    case AttachKind::Fentry: return "fentry";
    case AttachKind::TpBtf: return "tp_btf";
    case AttachKind::RawTp: return "raw_tp";
    case AttachKind::Tracepoint: return "tracepoint";
  }
  return "?";
}

namespace {

constexpr const char* kNoTracefs = "no tracefs";

std::string fentry_off_reason(const KernelFacts& facts, const PlanOptions& options) {
  if (!options.fentry) return "off (--no-fentry)";
  if (!facts.fentry_attaches()) return fmt::format("unavailable ({})", facts.fentry_error());
  return "";
}

// Why a variant cannot serve here, or "" when it can.
std::string unusable_reason(const Hook& hook, const HookVariant& v, const KernelFacts& facts,
                            const PlanOptions& options, const std::string& syscall_prefix) {
  for (const auto& program : v.programs)
    if (options.failed.count(program.name))
      return fmt::format("{} failed to load or attach", program.name);
  if (!v.kfunc.empty() && !facts.has_function(v.kfunc))
    return fmt::format("no kfunc {} in BTF", v.kfunc);
  for (const auto& name : v.enumerators)
    if (!facts.has_enumerator(name)) return fmt::format("no enumerator {} in BTF", name);
  for (const auto& [program, event] : v.programs) {
    if (v.kind == AttachKind::Fentry) {
      if (std::string off = fentry_off_reason(facts, options); !off.empty()) return off;
      if (v.syscall_entry && syscall_prefix.empty())
        return "no syscall entry functions (__x64_sys_*, __arm64_sys_*) in BTF";
      if (v.syscall_entry) {
        if (syscall_entry_function(facts, syscall_prefix, event).empty())
          return fmt::format("no function {}{} in BTF", syscall_prefix, event);
        continue;
      }
      if (!facts.has_function(event)) return fmt::format("no function {} in BTF", event);
      continue;
    }
    if (v.kind == AttachKind::Tracepoint) {
      // The write and read paths' syscalls have the raw pair to fall back on; the untraced
      // calls' counters have no raw form and stay on their own tracepoints.
      if (options.raw_syscalls && (hook.layer == "syscall" || hook.layer == "read") &&
          v.category == "syscalls")
        return "passed over (--raw-syscalls)";
      if (!facts.tracefs_available()) return std::string(kNoTracefs);
      if (!facts.tracepoint_exists(v.category, event))
        return fmt::format("no tracepoint {}:{}", v.category, event);
      continue;
    }
    int args = facts.tracepoint_args(event, v.module);
    if (args < 0) {
      if (!v.module.empty()) return fmt::format("no {} BTF for {}", v.module, event);
      return fmt::format("no btf_trace_{} in BTF", event);
    }
    if (v.args != kAnyArity && args != v.args)
      return fmt::format("{} takes {} args, not {}", event, args, v.args);
  }
  return "";
}

}  // namespace

std::string syscall_entry_prefix(const KernelFacts& facts) {
  // One architecture's wrappers per kernel (x86-64 also has __ia32_sys_* for 32-bit tasks: not
  // the calls of 64-bit processes). Decided by what BTF declares, not by the build's target.
  for (const char* prefix : {"__x64_sys_", "__arm64_sys_", "__riscv_sys_", "__s390x_sys_"})
    if (facts.has_function(std::string(prefix) + "write")) return prefix;
  return "";
}

std::string syscall_entry_function(const KernelFacts& facts, std::string_view prefix,
                                   const std::string& syscall) {
  if (prefix.empty()) return "";
  if (std::string wrapper = std::string(prefix) + syscall; facts.has_function(wrapper))
    return wrapper;
  // A syscall without arguments (SYSCALL_DEFINE0) gets its x86-64 wrapper as an alias of
  // __do_sys_NAME (__SYS_STUB0 in arch/x86/include/asm/syscall_wrapper.h), and pahole gives an
  // alias no BTF: the function itself serves, the same code, taking the (unused) registers too.
  // Only those: __do_sys_NAME of a syscall with arguments takes them, not the registers.
  static const std::set<std::string, std::less<>> kWithoutArguments = {"sync"};
  if (std::string body = "__do_sys_" + syscall;
      kWithoutArguments.contains(syscall) && facts.has_function(body))
    return body;
  return "";
}

std::string variant_summary(const HookVariant& v, std::string_view syscall_prefix) {
  const std::string first = v.syscall_entry
                                ? fmt::format("{}{}", syscall_prefix, v.programs.front().event)
                                : v.programs.front().event;
  std::string out = v.category.empty()
                        ? fmt::format("{} {}", attach_kind_name(v.kind), first)
                        : fmt::format("{} {}:{}", attach_kind_name(v.kind), v.category, first);
  if (v.programs.size() > 1) out += fmt::format(" (+{})", v.programs.size() - 1);
  if (!v.kfunc.empty()) out += fmt::format(" with {}", v.kfunc);
  return out;
}

bool HookPlan::runnable() const {
  for (const auto& c : choices)
    if (c.hook->required && !c.variant) return false;
  return true;
}

std::vector<const HookChoice*> HookPlan::unplanned(std::string_view layer) const {
  std::vector<const HookChoice*> out;
  for (const auto& c : choices)
    if (c.hook->layer == layer && !c.variant && !c.not_wanted) out.push_back(&c);
  return out;
}

std::set<std::string> HookPlan::programs() const {
  std::set<std::string> out;
  for (const auto& c : choices)
    if (c.variant)
      for (const auto& program : c.variant->programs) out.insert(program.name);
  return out;
}

std::uint32_t HookPlan::raw_syscall_slots() const {
  std::uint32_t slots = 0;
  for (const auto& c : choices)
    if (c.variant) slots |= c.variant->raw_syscall_slots;
  return slots;
}

bool HookPlan::traces_reads() const {
  return std::any_of(choices.begin(), choices.end(),
                     [](const HookChoice& c) { return c.variant && c.hook->layer == "read"; });
}

namespace {

bool on_syscall_tracepoints(const HookChoice& c) {
  return c.variant && (c.variant->category == "syscalls" || c.variant->category == "raw_syscalls");
}

}  // namespace

std::vector<std::string> HookPlan::syscall_tracepoint_hooks() const {
  std::vector<std::string> out;
  for (const auto& c : choices)
    if (on_syscall_tracepoints(c)) out.push_back(c.hook->name);
  return out;
}

std::string HookPlan::slow_syscall_path() const {
  const std::vector<std::string> hooks = syscall_tracepoint_hooks();
  if (hooks.empty()) return "";
  // Why the first of them was passed over for its trampolines: the same reason for the rest.
  const auto first = std::find_if(choices.begin(), choices.end(), on_syscall_tracepoints);
  const std::string& why = first->why;
  return fmt::format("{}{}", fmt::join(hooks, ", "), why.empty() ? "" : fmt::format(" ({})", why));
}

std::string HookPlan::syscall_plan() const {
  const std::string slow = slow_syscall_path();
  if (slow.empty())
    return "syscall plan: trampolines, no syscall tracepoint: only the callers of the hooked "
           "functions pay, every other syscall keeps the kernel's fast path";
  return fmt::format(
      "syscall plan: syscall tracepoints for {}: while they are attached every syscall of every "
      "thread on the machine takes the kernel's slow path",
      slow);
}

std::string HookPlan::summary(const HookChoice& choice) const {
  return choice.variant ? variant_summary(*choice.variant, syscall_prefix) : "-";
}

HookPlan plan_hooks(const KernelFacts& facts, const PlanOptions& options) {
  HookPlan plan;
  plan.syscall_prefix = syscall_entry_prefix(facts);
  for (const auto& hook : hook_table()) {
    HookChoice choice{&hook, nullptr, ""};
    if (hook.layer == "sched" && !options.causes) {
      choice.why = "only with --min-latency (slow-call causes)";
      plan.choices.push_back(std::move(choice));
      continue;
    }
    if (hook.layer == "offcpu" && (!options.causes || !options.stacks)) {
      choice.why =
          options.causes ? "off (--no-stacks)" : "only with --min-latency (slow-call causes)";
      plan.choices.push_back(std::move(choice));
      continue;
    }
    if ((hook.layer == "read" || hook.layer == "fault" || hook.layer == "readahead") &&
        !options.reads) {
      choice.why = "only with --reads";
      plan.choices.push_back(std::move(choice));
      continue;
    }
    if (hook.items_only && options.metrics) {
      choice.why = "trace's items only (serve counts without it)";
      choice.not_wanted = true;
      plan.choices.push_back(std::move(choice));
      continue;
    }
    if (hook.name == "blk-throttle" && !options.throtl_timer_known) {
      choice.why = "no throtl_pending_timer_fn in /proc/kallsyms";
      plan.choices.push_back(std::move(choice));
      continue;
    }
    for (const auto& v : hook.variants) {
      std::string reason = unusable_reason(hook, v, facts, options, plan.syscall_prefix);
      if (reason.empty()) {
        choice.variant = &v;
        if (v.syscall_entry)
          for (const auto& program : v.programs)
            plan.entry_functions[program.name] =
                syscall_entry_function(facts, plan.syscall_prefix, program.event);
        break;
      }
      if (reason == kNoTracefs) choice.for_want_of_tracefs = true;
      // Variants of one kind often fail for one reason (no tracefs for both per-syscall
      // variants): say it once.
      std::string passed = fmt::format("{}: {}", attach_kind_name(v.kind), reason);
      if (choice.why == passed || choice.why.ends_with("; " + passed)) continue;
      if (!choice.why.empty()) choice.why += "; ";
      choice.why += passed;
    }
    plan.choices.push_back(std::move(choice));
  }
  return plan;
}

std::vector<std::string> tracefs_costs(const HookPlan& plan) {
  // Hooks that pay the same cost share a line, in plan order.
  std::vector<std::pair<std::string, std::string>> costs;  // (cost, hooks)
  for (const auto& c : plan.choices) {
    if (!c.for_want_of_tracefs) continue;
    const std::string cost =
        !c.variant ? "not traced"
        : c.variant->raw_syscall_slots
            ? "via raw sys_enter/sys_exit (every syscall of every thread pays a filter)"
            : fmt::format("via {}", variant_summary(*c.variant));
    auto it = std::find_if(costs.begin(), costs.end(),
                           [&cost](const auto& entry) { return entry.first == cost; });
    if (it == costs.end())
      costs.emplace_back(cost, c.hook->name);
    else
      it->second += ", " + c.hook->name;
  }
  std::vector<std::string> out;
  for (const auto& [cost, hooks] : costs) out.push_back(fmt::format("{}: {}", hooks, cost));
  return out;
}

std::set<std::string> parse_program_list(std::string_view list) {
  std::set<std::string> out;
  for (std::size_t at = 0; at <= list.size();) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    if (comma > at) out.emplace(list.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

}  // namespace wp
