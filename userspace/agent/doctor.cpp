// SPDX-License-Identifier: Apache-2.0
#include "agent/doctor.h"

#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <set>

#include "agent/cost_probe.h"
#include "agent/live_session.h"
#include "common/units.h"
#include "probe/bpf_session.h"
#include "probe/cgroups.h"
#include "probe/coverage.h"
#include "probe/devices.h"
#include "probe/hook_plan.h"
#include "probe/kernel_caps.h"

namespace wp {
namespace {

// Why a kernel with BTF refused the fentry probe, and what to do: nothing, the write path's
// syscall tracepoints do the same job at a higher cost per call.
std::string fentry_why(const KernelCaps& caps) {
  constexpr const char* kNext = "nothing to do: the write path uses syscall tracepoints instead";
  if (caps.fentry_error.find("Operation not permitted") == std::string::npos || !caps.privileges.ok)
    return kNext;
  // EPERM with the capabilities tracing needs: the kernel itself forbids trampolines.
  std::string lockdown;
  std::getline(std::ifstream("/sys/kernel/security/lockdown"), lockdown);
  const auto open = lockdown.find('['), close = lockdown.find(']');
  const std::string mode = open != std::string::npos && close > open
                               ? lockdown.substr(open + 1, close - open - 1)
                               : std::string("not reported");
  return fmt::format(
      "this kernel refuses BPF trampolines even with CAP_BPF and CAP_PERFMON (lockdown: {}; "
      "otherwise a build or host policy, e.g. a hypervisor that forbids patching kernel "
      "text); {}",
      mode, kNext);
}

// The cost measurement: enough calls a round that the clock's resolution and a helper's
// start are noise, few enough that doctor stays quick (about 0.1 s a round here).
constexpr std::uint32_t kCostCalls = 20000;
constexpr int kCostRounds = 3;

const char* mark(bool ok) {
  return ok ? "ok  " : "FAIL";
}

// What a trace stitches here (probe/coverage.h decides; this only lays it out).
void print_coverage(std::ostream& out, const Coverage& coverage) {
  out << "coverage (what a trace stitches here; the summary counts the untraced calls)\n";
  auto rows = [&out](const char* title, const std::vector<CoverageRow>& rows) {
    out << fmt::format("  [{}]\n", title);
    for (const auto& row : rows)
      out << fmt::format("  {:<10} {:<28} {}\n", coverage_status_name(row.status), row.what,
                         row.detail);
  };
  rows("write paths", coverage.write_paths);
  rows("file systems", coverage.file_systems);
}

// The capabilities tracing uses: which this process has, which it lacks and how to get them.
void print_privileges(std::ostream& out, const PrivilegeVerdict& verdict) {
  std::string present;
  for (Cap cap : verdict.present) present += fmt::format(" {}", cap_name(cap));
  if (verdict.ok) {
    out << fmt::format("  ok   capabilities:{}\n", present);
    return;
  }
  std::string missing;
  for (Cap cap : verdict.missing) missing += fmt::format(" {}", cap_name(cap));
  out << fmt::format("  FAIL capabilities: missing{}{}\n", missing,
                     present.empty() ? "" : ", present" + present);
}

// What `writepath serve` would attach: the hooks above, loaded again with the kernel's own
// aggregation on (its code is verified only then), and which hook feeds each metric.
// Which runtimes' containers the cgroup2 hierarchy holds: what --container and --pod can name.
void print_containers(std::ostream& out, const std::optional<ContainerCensus>& census) {
  if (!census) {
    out << "containers: no cgroup2 mounted; items name no container and --container, --pod "
           "cannot select one\n";
    return;
  }
  std::string found;
  for (const auto& [runtime, n] : census->by_runtime)
    found += fmt::format("{}{} {}", found.empty() ? "" : ", ", runtime, n);
  if (census->pods)
    found += fmt::format(" in {} pod{}", census->pods, census->pods == 1 ? "" : "s");
  out << fmt::format(
      "containers (cgroups under {}): {}\n", census->root,
      found.empty() ? "none running" : found + "; --container ID and --pod UID select them");
}

// serve plans no read hook.
HookPrefs without_reads(HookPrefs prefs) {
  prefs.reads = false;
  return prefs;
}

void print_serve(std::ostream& out, const KernelCaps& caps, const HookPrefs& prefs) {
  const LiveSession serve(caps, metrics_filter(kDefaultDurabilitySample),
                          LiveSessionOptions{.prefs = without_reads(prefs), .keep_failure = true});
  out << "serve (writepath serve: the hooks above, aggregating in the kernel)\n";
  if (!serve.attached()) {
    out << fmt::format("  FAIL {}\n", serve.error());
    return;
  }
  const auto attached = [&serve](const char* hook) {
    for (const auto& choice : serve.plan().choices)
      if (choice.hook->name == std::string(hook)) return choice.variant != nullptr;
    return false;
  };
  const struct {
    const char* hook;
    const char* what;
  } feeds[] = {
      {"write/sync syscalls", "write and sync latency, bytes, O_DIRECT writes that dirtied pages"},
      {"dirty throttling", "dirty-throttling pauses"},
      {"request complete", "request service and flush times (timed from the issue)"},
  };
  for (const auto& feed : feeds)
    out << fmt::format("  {} {:<22} {}\n", attached(feed.hook) ? "ok  " : "off ", feed.hook,
                       feed.what);
  out << fmt::format("  ok   {:<22} {}\n", "stitched",
                     "fsync phases, sampled writes' time to durable, io_uring and AIO calls");
}

// What the trace's programs cost a call here (agent/cost_probe.h), with the hook that decides
// it: the write syscalls' entry and exit run for every process's writes.
void print_cost(std::ostream& out, const TraceCost& cost, const HookPlan& plan) {
  std::string syscalls = "-";
  for (const auto& choice : plan.choices)
    if (choice.hook->name == std::string("write/sync syscalls") && choice.variant)
      syscalls = plan.summary(choice);
  out << fmt::format(
      "cost (measured now: {} calls a round, {} rounds untraced and traced, medians per call; "
      "write syscalls by {})\n",
      cost.calls, cost.rounds, syscalls);
  auto row = [&out, &cost](const char* what, const CallCost& c) {
    const double ratio =
        c.untraced_ns ? static_cast<double>(c.traced_ns) / static_cast<double>(c.untraced_ns) : 0;
    const auto added =
        static_cast<std::int64_t>(c.traced_ns) - static_cast<std::int64_t>(c.untraced_ns);
    std::string programs = "programs: not counted (kernel.bpf_stats_enabled is 0)";
    if (c.program_ns)
      programs = fmt::format("programs {} in {:.2f} runs ({})", human_duration(*c.program_ns),
                             c.program_runs.value_or(0), cost.counted_by);
    out << fmt::format(
        "  {:<44} {} alone, {} under the trace ({}{}, x{:.2f}); {}\n", what,
        human_duration(c.untraced_ns), human_duration(c.traced_ns), added < 0 ? "-" : "+",
        human_duration(static_cast<Nanos>(added < 0 ? -added : added)), ratio, programs);
  };
  row("traced process: cached 4 KiB pwrite", cost.traced_pwrite);
  row("another process: 64 B write(2) to /dev/null", cost.bystander_write);
}

}  // namespace

int run_doctor(std::ostream& out, const HookPrefs& prefs) {
  const bool allow_fentry = prefs.fentry;
  KernelCaps caps = detect_kernel_caps();
  out << fmt::format("kernel {}\n", caps.kernel_release);
  print_privileges(out, caps.privileges);
  out << fmt::format("  {} BTF /sys/kernel/btf/vmlinux{}\n", mark(caps.btf),
                     caps.btf ? "" : ": " + caps.btf_error);
  // tracefs is looked for where it is mounted, never mounted: its absence costs some hooks
  // (listed under the hooks), not tracing.
  out << fmt::format("  {} tracefs{}\n", caps.tracefs ? "ok  " : "no  ",
                     caps.tracefs ? " at " + caps.tracefs_path
                                  : " (" + caps.tracefs_error +
                                        "): classic tracepoints unavailable, tp_btf hooks only");
  out << fmt::format("  {} fentry/fexit{}\n", caps.fentry ? "ok  " : "no  ",
                     caps.fentry ? (allow_fentry ? "" : " (--no-fentry: not used)")
                                 : " (" + caps.fentry_error + "): " + fentry_why(caps));
  // The verdict, with its reason unless the lines above gave it.
  const auto cannot_run_here = [&out](const std::string& why) {
    out << fmt::format("tracing cannot run here{}{}\n", why.empty() ? "" : ": ", why);
    return 1;
  };
  if (!caps.privileges.ok) return cannot_run_here(caps.privileges.error);
  if (!caps.btf) return cannot_run_here("");

  // What a call costs is timed first without programs, by helpers forked before any is
  // attached; the session below follows one of them, as `trace -p` would.
  std::string cost_error;
  std::unique_ptr<CostProbe> cost = CostProbe::start(kCostCalls, cost_error);
  if (cost && !cost->measure_untraced(kCostRounds, cost_error)) cost.reset();

  // Plan, then really load and attach, dropping variants that fail, as `trace` does.
  KernelFilter filter;
  filter.filter_tgid = true;
  if (cost) filter.tgids = {static_cast<std::uint32_t>(cost->traced_pid())};
  LiveSession session(caps, filter, LiveSessionOptions{.prefs = prefs, .keep_failure = true});
  const HookPlan& plan = session.plan();

  out << "hooks\n";
  std::string layer;
  for (const auto& choice : plan.choices) {
    if (choice.hook->layer != layer) {
      layer = choice.hook->layer;
      out << fmt::format("  [{}]\n", layer);
    }
    const std::string used = plan.summary(choice);
    const char* state = choice.variant ? (choice.why.empty() ? "ok  " : "fall")
                                       : (choice.hook->required ? "FAIL" : "off ");
    out << fmt::format("  {} {:<22} {}\n", state, choice.hook->name, used);
    if (!choice.why.empty())
      out << fmt::format("         {:<22} passed over: {}\n", "", choice.why);
  }

  out << plan.syscall_plan() << "\n";

  if (const auto costs = tracefs_costs(plan); !costs.empty()) {
    out << fmt::format("no tracefs ({}): what it costs\n", caps.tracefs_error);
    for (const auto& cost : costs) out << fmt::format("  {}\n", cost);
  }

  print_coverage(out, coverage_of(plan, RunningKernelFacts(caps)));

  out << "devices\n";
  for (const auto& d : list_block_devices()) {
    if (d.dev != d.disk) continue;
    out << fmt::format("  {:<10} {:<8} write cache {}{}\n", d.name, dev_string(d.dev),
                       d.volatile_write_cache ? "volatile (flushes needed)" : "none/write-through",
                       d.fua ? ", FUA" : "");
  }

  if (!session.attached()) return cannot_run_here(session.error());
  if (cost && cost->measure_traced(kCostRounds, session.bpf(), cost_error)) {
    session.close();
    if (cost->measure_untraced(kCostRounds, cost_error)) print_cost(out, cost->result(), plan);
  }
  if (!cost_error.empty()) out << fmt::format("cost not measured: {}\n", cost_error);
  cost.reset();
  session.close();
  print_containers(out, count_containers(read_mountinfo()));
  print_serve(out, caps, prefs);
  out << "tracing can run here\n";
  return 0;
}

}  // namespace wp
