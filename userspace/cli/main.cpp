// SPDX-License-Identifier: Apache-2.0
// CLI11 wiring only: parse, then hand over to the agent.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <iostream>
#include <map>
#include <optional>

#include "agent/demo.h"
#include "agent/doctor.h"
#include "agent/report.h"
#include "agent/trace_session.h"
#include "cli/completion.h"
#include "cli/parse.h"
#include "cli/usage.h"
#include "cli/version.h"
#include "common/errors.h"
#include "loadgen/run_load.h"
#include "loadgen/scenario.h"
#include "serve/serve_session.h"

namespace {

// A scenario's command line under `load` or `demo`: its own options and the workspace's,
// kept as the user typed them (demo passes them on to `writepath load`).
struct ScenarioCommand {
  wp::loadgen::Scenario* scenario = nullptr;
  CLI::App* app = nullptr;
  std::vector<std::pair<const wp::loadgen::Param*, std::string>> values;  // given ones
  std::vector<wp::loadgen::Param> params;
  std::optional<std::string> dir, fs, fs_size;
  bool keep = false, json = false;
  std::optional<std::string> result_file;
};

void add_scenario_options(ScenarioCommand& cmd, std::map<std::string, std::string>& raw) {
  for (const auto& param : cmd.params)
    cmd.app->add_option("--" + param.flag, raw[param.flag], wp::param_help(param))
        ->type_name(wp::param_type_name(param));
  cmd.app
      ->add_option("--dir", cmd.dir,
                   "Run in this new or empty directory (default: a scratch filesystem)")
      ->type_name("DIR");
  cmd.app->add_option("--fs", cmd.fs, "Scratch filesystem type (default: ext4)")
      ->type_name("NAME")
      ->check(wp::one_of({"ext4", "xfs"}));
  cmd.app
      ->add_option("--fs-size", cmd.fs_size,
                   "Scratch filesystem size, at least 64M (e.g. 1G; default: what the scenario "
                   "needs)")
      ->type_name("SIZE");
  cmd.app->add_flag("--keep", cmd.keep, "Keep the files (and scratch filesystem) afterwards");
}

// Parses the given option values into the scenario (range-checked); throws Failure(2).
void apply_params(ScenarioCommand& cmd, const std::map<std::string, std::string>& raw) {
  for (const auto& param : cmd.params) {
    const std::string& text = raw.at(param.flag);
    if (text.empty()) continue;
    const std::optional<std::uint64_t> value = wp::parse_param(param, text);
    if (!value)
      throw wp::Failure(wp::kExitUsage, wp::param_error(cmd.scenario->name(), param, text));
    *param.value = *value;
    cmd.values.emplace_back(&param, text);
  }
}

wp::loadgen::WorkspaceOptions workspace_options(const ScenarioCommand& cmd) {
  wp::loadgen::WorkspaceOptions w;
  w.dir = cmd.dir;
  if (cmd.fs) w.fs = *cmd.fs;
  if (cmd.fs_size) {
    auto size = wp::size_option("--fs-size", *cmd.fs_size, "G");
    if (!size || *size < (64u << 20))
      throw wp::Failure(wp::kExitUsage,
                        fmt::format("--fs-size {}: expected a size of at least 64M", *cmd.fs_size));
    w.fs_size = *size;
  }
  w.keep = cmd.keep;
  return w;
}

// The `writepath load SCENARIO …` arguments that reproduce this command line.
std::vector<std::string> load_arguments(const ScenarioCommand& cmd) {
  std::vector<std::string> args;
  for (const auto& [param, text] : cmd.values) {
    args.push_back("--" + param->flag);
    args.push_back(text);
  }
  if (cmd.dir) args.insert(args.end(), {"--dir", *cmd.dir});
  if (cmd.fs) args.insert(args.end(), {"--fs", *cmd.fs});
  if (cmd.fs_size) args.insert(args.end(), {"--fs-size", *cmd.fs_size});
  if (cmd.keep) args.push_back("--keep");
  return args;
}

// -T is a column of the text output; --live a form of the JSON stream.
// --no-stacks turns off a part of --min-latency's causes: alone it means nothing.
void check_stacks_flag(const wp::TraceOptions& options) {
  if (!options.stacks && !options.min_latency_ns)
    throw wp::Failure(wp::kExitUsage,
                      "--no-stacks: only with --min-latency (the slow calls' stacks it turns off)");
}

void check_time_flags(wp::OutputFormat format, bool timestamps, bool json_live) {
  if (timestamps && format != wp::OutputFormat::Text)
    throw wp::Failure(wp::kExitUsage,
                      "-T/--timestamp: only with --format text (JSON items carry \"time\")");
  if (json_live && format != wp::OutputFormat::Json)
    throw wp::Failure(wp::kExitUsage, "--live: only with --format json (text is live already)");
}

// The sink for --format NAME. The HTML report is one page written when the trace ends, not a
// stream: it goes to a file (-o), never to a terminal.
wp::OutputFormat output_format(const std::string& name, const std::string& output) {
  if (name == "html") {
    if (output.empty()) throw wp::Failure(wp::kExitUsage, "--format html needs -o FILE");
    return wp::OutputFormat::Html;
  }
  // A Perfetto trace is binary, written once at the end.
  if (name == "perfetto") {
    if (output.empty()) throw wp::Failure(wp::kExitUsage, "--format perfetto needs -o FILE");
    return wp::OutputFormat::Perfetto;
  }
  return name == "json" ? wp::OutputFormat::Json : wp::OutputFormat::Text;
}

// --buffer-size: a size from one page to 1 GiB ("" is the default).
std::uint64_t ring_buffer_bytes(const std::string& text,
                                std::uint64_t default_bytes = wp::kDefaultRingBytes) {
  if (text.empty()) return default_bytes;
  auto size = wp::size_option("--buffer-size", text, "M");
  if (!size || *size < 4096 || *size > (1ull << 30))
    throw wp::Failure(wp::kExitUsage,
                      fmt::format("--buffer-size {}: expected a size from 4K to 1G", text));
  return *size;
}

// `writepath serve`'s options as typed (durations and sizes are parsed after CLI11).
struct ServeArgs {
  wp::ServeOptions options;
  std::string slow, duration, buffer_size;
  bool no_stacks = false;
  bool no_fentry = false;
};

CLI::App* add_serve(CLI::App& app, ServeArgs& a) {
  auto* serve = app.add_subcommand(
      "serve", "Export write-path metrics for Prometheus on /metrics, always on");
  serve
      ->add_option("--listen", a.options.listen,
                   "HOST:PORT of /metrics (default: 127.0.0.1:9441; another host's address is "
                   "your explicit choice)")
      ->type_name("HOST:PORT");
  serve
      ->add_option("--slow", a.slow,
                   "Also write each call at least this slow as one JSON line, with its causes "
                   "(e.g. 100ms)")
      ->type_name("DURATION");
  serve
      ->add_option("--slow-log", a.options.slow_log,
                   "Where --slow writes, appending; SIGHUP reopens it (default: stdout)")
      ->type_name("FILE");
  serve
      ->add_option("--slow-rate", a.options.slow_rate,
                   "At most this many slow calls a second are written, the rest counted "
                   "(default: 10)")
      ->type_name("N")
      ->check(CLI::Range(1u, 100000u));
  serve
      ->add_option("--cgroup-labels", a.options.max_cgroups,
                   "Cgroups labelled by path, the most active first; the rest are \"other\" "
                   "(default: 20)")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1000}));
  serve->add_flag("--comm-labels", a.options.comm_labels,
                  "Label write, sync and read metrics by process name too (capped like cgroups)");
  serve->add_flag("--reads", a.options.reads,
                  "Also count read bytes by source (page cache or device) and major faults on "
                  "file mappings, per device and cgroup; hooks every read syscall of the "
                  "machine, so off by default");
  serve
      ->add_option("--durability-sample", a.options.durability_sample,
                   "Follow 1 in N plain writes to the disk, for the time-to-durable histogram "
                   "(default: 16; 1: every write, as trace does)")
      ->type_name("N")
      ->check(CLI::Range(1u, 1000000u));
  serve
      ->add_option("--buffer-size", a.buffer_size,
                   fmt::format("Kernel ring buffer size, 4K to 1G (default: {})",
                               wp::size_text(wp::kServeRingBytes)))
      ->type_name("SIZE");
  serve->add_option("--duration", a.duration, "Stop after this long (default: until SIGTERM)")
      ->type_name("DURATION");
  serve->add_flag("--no-stacks", a.no_stacks,
                  "With --slow: without the kernel stacks the slow calls slept with");
  serve->add_flag("--no-fentry", a.no_fentry,
                  "Use tracepoints even where fentry attaches (to compare the two plans' cost)");
  return serve;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"writepath: follow each write from the syscall to the disk's cache flush"};
  app.require_subcommand(1);
  app.set_version_flag("--version", wp::version_text(),
                       "Print the version, the git commit built and the libbpf version");
  app.footer(
      "DURATION: a number and a unit: ns, us, ms, s, m, h (500us, 10ms, 1.5s); SIZE: B, K, M, "
      "G, T (4096B, 4K, 32M). 0 needs no unit.");

  auto* doctor =
      app.add_subcommand("doctor", "What works on this kernel, what falls back, and why");
  bool doctor_no_fentry = false;
  bool doctor_raw_syscalls = false;
  doctor->add_flag("--no-fentry", doctor_no_fentry, "Show the plan without fentry/fexit hooks");
  doctor->add_flag("--raw-syscalls", doctor_raw_syscalls,
                   "Show the plan with the raw sys_enter/sys_exit pair");

  // trace and record share their filters.
  wp::TraceOptions trace_options, record_options;
  std::string min_latency, duration, format = "text";
  std::string record_min_latency, record_duration;
  std::string buffer_size, record_buffer_size;
  auto add_filters = [](CLI::App* cmd, wp::TraceOptions& o, std::string& min_lat, std::string& dur,
                        std::string& buffer) {
    cmd->add_option("-p,--pid", o.pids,
                    "Trace this process's threads (repeatable; --children: and its descendants; "
                    "default: every process)")
        ->type_name("PID");
    cmd->add_option("--comm", o.comm, "Trace processes with this command name")->type_name("NAME");
    cmd->add_flag("--children", o.children,
                  "Also trace the descendants of the -p/--comm processes: those alive now and "
                  "those they fork");
    auto* cgroup = cmd->add_option("--cgroup", o.cgroup,
                                   "Trace this cgroup (v2) and those below it: its directory, or "
                                   "its path under the cgroup2 root (/system.slice/x.service); "
                                   "default: every cgroup")
                       ->type_name("PATH");
    auto* container =
        cmd->add_option("--container", o.container,
                        "Trace this container: its id or a prefix of it (docker, containerd, "
                        "CRI-O, podman), or its name (systemd-nspawn, LXC)")
            ->type_name("ID")
            ->excludes(cgroup);
    auto* pod = cmd->add_option("--pod", o.pod,
                                "Trace this Kubernetes pod's containers: the pod's uid or a "
                                "prefix of it, or its name (NAME or NAMESPACE/NAME)")
                    ->type_name("POD")
                    ->excludes(cgroup)
                    ->excludes(container);
    cmd->add_option("--namespace", o.k8s_namespace,
                    "Trace the pods of this Kubernetes namespace that are on this node")
        ->type_name("NAMESPACE")
        ->excludes(cgroup)
        ->excludes(container)
        ->excludes(pod);
    cmd->add_option("--dev", o.dev,
                    "Only this block device (NAME or MAJ:MIN), or the MAJ:MIN stat() reports "
                    "for a btrfs mount")
        ->type_name("DEV");
    cmd->add_option("--file", o.file, "Only writes, syncs and reads of this file")
        ->type_name("FILE");
    cmd->add_flag("--reads", o.reads,
                  "Also trace reads: an item for each read, pread64, readv, preadv and preadv2 "
                  "of a regular file, its pages from the page cache or the device");
    cmd->add_option("--min-latency", min_lat,
                    "Only items at least this slow (e.g. 10ms; default: off, every item)")
        ->type_name("DURATION");
    cmd->add_option("-d,--duration", dur,
                    "Stop after this long (e.g. 30s; default: until Ctrl-C or the command "
                    "exits)")
        ->type_name("DURATION");
    cmd->add_flag("--no-fentry", o.no_fentry,
                  "Use tracepoints even where fentry/fexit hooks attach");
    // A callback, not a negated flag: CLI11 names a negated flag "--no-stacks{false}" in the
    // help, which the man page and completion would have to spell.
    cmd->add_flag_callback(
        "--no-stacks", [&stacks = o.stacks] { stacks = false; },
        "With --min-latency: no kernel stacks, wakers or lock/reclaim waits of the "
        "slow calls, only their on-CPU/throttled/writeback/blocked/runnable split");
    cmd->add_flag("--raw-syscalls", o.raw_syscalls,
                  "Hook the raw sys_enter/sys_exit pair instead of each write syscall's "
                  "tracepoints: cheaper per traced write, dearer for every other syscall on "
                  "the machine");
    cmd->add_option("--buffer-size", buffer,
                    fmt::format("Kernel ring buffer size, 4K to 1G, rounded up to a power of "
                                "two; raise it if records are lost (default: {})",
                                wp::size_text(wp::kDefaultRingBytes)))
        ->type_name("SIZE");
    cmd->add_option("command", o.command, "-- CMD ARGS…: trace this command and its children")
        ->type_name("CMD");
  };
  auto* trace = app.add_subcommand("trace", "Trace writes and fsyncs live");
  add_filters(trace, trace_options, min_latency, duration, buffer_size);
  trace->add_option("--format", format, "Output format (default: text)")
      ->type_name("NAME")
      ->check(wp::one_of({"text", "json", "html", "perfetto"}));
  trace->add_option("-o,--output", trace_options.output, "Write to FILE instead of stdout")
      ->type_name("FILE");
  trace
      ->add_option("--save", trace_options.record_path,
                   "Also record the raw trace to FILE (for writepath report)")
      ->type_name("FILE");
  bool json_live = false;
  trace->add_flag("-T,--timestamp", trace_options.timestamps,
                  "Text: a wall-clock column (HH:MM:SS.uuuuuu, local time)");
  trace->add_flag("--live", json_live,
                  "JSON: an object per event of an item (returned, written, durable, ...), "
                  "keyed by its id, instead of one object per complete item");

  wp::TraceOptions audit_options;
  std::string audit_min_latency, audit_duration, audit_buffer_size, audit_format = "text";
  auto* audit = app.add_subcommand(
      "audit", "Trace and print only crash-consistency hazards; exit 3 when there are any");
  add_filters(audit, audit_options, audit_min_latency, audit_duration, audit_buffer_size);
  audit->add_option("--format", audit_format, "Output format: text or json (default: text)")
      ->type_name("NAME")
      ->check(wp::one_of({"text", "json"}));
  audit->add_option("-o,--output", audit_options.output, "Write to FILE instead of stdout")
      ->type_name("FILE");

  auto* record = app.add_subcommand("record", "Record a trace to a file for writepath report");
  add_filters(record, record_options, record_min_latency, record_duration, record_buffer_size);
  record->add_option("-o,--output", record_options.record_path, "The trace file to write")
      ->type_name("FILE")
      ->required();

  wp::ReportOptions report_options;
  std::string report_format = "text", report_min_latency;
  auto* report = app.add_subcommand("report", "Print a recorded trace as trace would have");
  report->add_option("file", report_options.path, "A file written by writepath record")->required();
  report->add_option("--format", report_format, "Output format (default: text)")
      ->type_name("NAME")
      ->check(wp::one_of({"text", "json", "html", "perfetto"}));
  report->add_option("-o,--output", report_options.output, "Write to FILE instead of stdout")
      ->type_name("FILE");
  report
      ->add_option("--min-latency", report_min_latency,
                   "Only items at least this slow (e.g. 10ms; default: the --min-latency it was "
                   "recorded with)")
      ->type_name("DURATION");
  report->add_flag("-T,--timestamp", report_options.timestamps,
                   "Text: a wall-clock column (HH:MM:SS.uuuuuu, local time)");

  // load and demo: one subcommand per scenario.
  auto scenarios = wp::loadgen::make_scenarios();
  auto* load = app.add_subcommand(
      "load", "Run a write-path scenario (fsync, O_DIRECT, atomic save, ...) and measure it");
  auto* demo = app.add_subcommand("demo", "Run a scenario under the tracer and explain it");
  load->require_subcommand(1);
  demo->require_subcommand(1);
  demo->fallthrough();  // -o, --format and --no-fentry may follow the scenario
  wp::TraceOptions demo_trace;
  std::string demo_format = "json";
  demo->add_option("--format", demo_format,
                   "Format of the full trace written with -o (default: json)")
      ->type_name("NAME")
      ->check(wp::one_of({"text", "json", "html", "perfetto"}));
  demo->add_option("-o,--output", demo_trace.output, "Also write the full trace to FILE")
      ->type_name("FILE");
  demo->add_flag("--no-fentry", demo_trace.no_fentry, "Use tracepoints even where fentry attaches");
  std::vector<ScenarioCommand> commands;
  std::vector<std::map<std::string, std::string>> raw_values;
  commands.reserve(2 * scenarios.size());
  raw_values.reserve(2 * scenarios.size());
  for (auto* parent : {load, demo}) {
    for (auto& scenario : scenarios) {
      // Options bind to these elements' addresses: the vectors were reserved, never grow.
      ScenarioCommand& cmd = commands.emplace_back();
      cmd.scenario = scenario.get();
      cmd.params = scenario->params();
      cmd.app = parent->add_subcommand(scenario->name(), scenario->summary());
      add_scenario_options(cmd, raw_values.emplace_back());
      if (parent == load) {
        cmd.app->add_flag("--json", cmd.json, "Print the figures as one JSON object");
        cmd.app->add_option("--result-file", cmd.result_file)->group("");  // used by demo
      }
    }
  }

  ServeArgs serve_args;
  auto* serve = add_serve(app, serve_args);

  // Hidden: the build writes the bash completion script with it, from the very definitions above.
  auto* completion = app.add_subcommand("completion", "Print a shell completion script")->group("");
  std::string completion_shell;
  completion->add_option("shell", completion_shell, "Only bash")
      ->required()
      ->check(CLI::IsMember({"bash"}));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "writepath: " << wp::usage_error(app, e) << "\n";
    return wp::kExitUsage;
  }

  if (*completion) {
    std::cout << wp::bash_completion(app);
    return 0;
  }
  try {
    for (std::size_t i = 0; i < commands.size(); ++i) {
      ScenarioCommand& cmd = commands[i];
      if (!*cmd.app) continue;
      apply_params(cmd, raw_values[i]);
      if (*load) {
        wp::loadgen::LoadOptions options;
        options.workspace = workspace_options(cmd);
        options.json = cmd.json;
        options.result_file = cmd.result_file;
        return wp::loadgen::run_load(*cmd.scenario, options);
      }
      workspace_options(cmd);  // bad values fail here, before anything is traced
      demo_trace.format = output_format(demo_format, demo_trace.output);
      return wp::run_demo(*cmd.scenario, load_arguments(cmd), demo_trace);
    }
    if (*doctor)
      return wp::run_doctor(std::cout,
                            wp::HookPrefs{.fentry = !doctor_no_fentry,
                                          .raw_syscalls = doctor_raw_syscalls,
                                          .reads = true,  // as trace plans
                                          .disabled_programs = wp::disabled_programs_from_env()});
    if (*trace) {
      if (auto ns = wp::duration_option("--min-latency", min_latency))
        trace_options.min_latency_ns = *ns;
      check_stacks_flag(trace_options);
      trace_options.duration_ns = wp::duration_option("--duration", duration, "s");
      trace_options.format = output_format(format, trace_options.output);
      check_time_flags(trace_options.format, trace_options.timestamps, json_live);
      // Text is live on a trace: each item when its call returns, then its update lines.
      trace_options.live = trace_options.format == wp::OutputFormat::Text || json_live;
      trace_options.buffer_bytes = ring_buffer_bytes(buffer_size);
      return wp::run_trace(trace_options);
    }
    if (*audit) {
      if (auto ns = wp::duration_option("--min-latency", audit_min_latency))
        audit_options.min_latency_ns = *ns;
      check_stacks_flag(audit_options);
      audit_options.duration_ns = wp::duration_option("--duration", audit_duration, "s");
      audit_options.format =
          audit_format == "json" ? wp::OutputFormat::Json : wp::OutputFormat::Text;
      audit_options.buffer_bytes = ring_buffer_bytes(audit_buffer_size);
      audit_options.audit = true;
      return wp::run_trace(audit_options);
    }
    if (*record) {
      if (auto ns = wp::duration_option("--min-latency", record_min_latency))
        record_options.min_latency_ns = *ns;
      check_stacks_flag(record_options);
      record_options.duration_ns = wp::duration_option("--duration", record_duration, "s");
      record_options.buffer_bytes = ring_buffer_bytes(record_buffer_size);
      // Raw records to the trace file only: decoding and stitching wait for `report`, which
      // applies --min-latency (kept in the file's header) to what it prints.
      record_options.record_only = true;
      return wp::run_trace(record_options);
    }
    if (*serve) {
      wp::ServeOptions& o = serve_args.options;
      wp::parse_listen(o.listen);  // a bad address is a usage error before anything else
      if (auto ns = wp::duration_option("--slow", serve_args.slow)) o.slow_ns = *ns;
      if (serve_args.no_stacks && !o.slow_ns)
        throw wp::Failure(wp::kExitUsage,
                          "--no-stacks: only with --slow (the slow calls' stacks it turns off)");
      if (!o.slow_log.empty() && !o.slow_ns)
        throw wp::Failure(wp::kExitUsage, "--slow-log: only with --slow (what it writes)");
      o.stacks = !serve_args.no_stacks;
      o.fentry = !serve_args.no_fentry;
      o.duration_ns = wp::duration_option("--duration", serve_args.duration, "s");
      o.buffer_bytes = ring_buffer_bytes(serve_args.buffer_size, wp::kServeRingBytes);
      return wp::run_serve(o);
    }
    if (*report) {
      if (auto ns = wp::duration_option("--min-latency", report_min_latency))
        report_options.min_latency_ns = *ns;
      report_options.format = output_format(report_format, report_options.output);
      check_time_flags(report_options.format, report_options.timestamps, false);
      return wp::run_report(report_options);
    }
  } catch (const wp::Failure& e) {
    std::cerr << "writepath: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "writepath: " << e.what() << "\n";
    return wp::kExitRuntime;
  }
  return wp::kExitUsage;
}
