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
#include "cli/parse.h"
#include "common/errors.h"
#include "loadgen/run_load.h"
#include "loadgen/scenario.h"

namespace {

// A CLI11 validator for DURATION values ("500us", "10ms", "1s").
struct DurationValidator : CLI::Validator {
  DurationValidator() {
    name_ = "DURATION";
    func_ = [](const std::string& text) -> std::string {
      return wp::parse_duration(text) ? "" : "not a duration (e.g. 500us, 10ms, 1s): " + text;
    };
  }
};

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
    cmd.app->add_option("--" + param.flag, raw[param.flag], param.help);
  cmd.app->add_option("--dir", cmd.dir, "Run in this new or empty directory");
  cmd.app->add_option("--fs", cmd.fs, "Scratch filesystem type (ext4, xfs); default ext4")
      ->check(CLI::IsMember({"ext4", "xfs"}));
  cmd.app->add_option("--fs-size", cmd.fs_size, "Scratch filesystem size (e.g. 1G)");
  cmd.app->add_flag("--keep", cmd.keep, "Keep the files (and scratch filesystem) afterwards");
}

// Parses the given option values into the scenario (range-checked); throws Failure(2).
void apply_params(ScenarioCommand& cmd, const std::map<std::string, std::string>& raw) {
  for (const auto& param : cmd.params) {
    const std::string& text = raw.at(param.flag);
    if (text.empty()) continue;
    const std::optional<std::uint64_t> value = wp::parse_param(param, text);
    if (!value)
      throw wp::Failure(wp::kExitUsage,
                        fmt::format("{} --{} {}: expected {}", cmd.scenario->name(), param.flag,
                                    text, wp::param_expectation(param)));
    *param.value = *value;
    cmd.values.emplace_back(&param, text);
  }
}

wp::loadgen::WorkspaceOptions workspace_options(const ScenarioCommand& cmd) {
  wp::loadgen::WorkspaceOptions w;
  w.dir = cmd.dir;
  if (cmd.fs) w.fs = *cmd.fs;
  if (cmd.fs_size) {
    auto size = wp::parse_size(*cmd.fs_size);
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
std::uint64_t ring_buffer_bytes(const std::string& text) {
  if (text.empty()) return wp::kDefaultRingBytes;
  auto size = wp::parse_size(text);
  if (!size || *size < 4096 || *size > (1ull << 30))
    throw wp::Failure(wp::kExitUsage,
                      fmt::format("--buffer-size {}: expected a size from 4K to 1G", text));
  return *size;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"writepath: follow each write from the syscall to the disk's cache flush"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "writepath 0.1.0");

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
                    "Trace this process's threads (repeatable; --children: and its descendants)");
    cmd->add_option("--comm", o.comm, "Trace processes with this command name");
    cmd->add_flag("--children", o.children,
                  "Also trace the descendants of the -p/--comm processes: those alive now and "
                  "those they fork");
    cmd->add_option("--cgroup", o.cgroup,
                    "Trace this cgroup (v2) and those below it: its directory, or its path "
                    "under the cgroup2 root (/system.slice/x.service)");
    cmd->add_option("--dev", o.dev,
                    "Only this block device (NAME or MAJ:MIN), or the MAJ:MIN stat() reports "
                    "for a btrfs mount");
    cmd->add_option("--file", o.file, "Only writes and syncs of this file");
    cmd->add_option("--min-latency", min_lat, "Only items at least this slow")
        ->check(DurationValidator());
    cmd->add_option("-d,--duration", dur, "Stop after this long")->check(DurationValidator());
    cmd->add_flag("--no-fentry", o.no_fentry,
                  "Use tracepoints even where fentry/fexit hooks attach");
    cmd->add_flag("--raw-syscalls", o.raw_syscalls,
                  "Hook the raw sys_enter/sys_exit pair instead of each write syscall's "
                  "tracepoints: cheaper per traced write, dearer for every other syscall on "
                  "the machine");
    cmd->add_option("--buffer-size", buffer,
                    "Kernel ring buffer size (e.g. 32M, the default; rounded up to a power of "
                    "two); raise it if records are lost");
    cmd->add_option("command", o.command, "-- CMD ARGS…: trace this command and its children");
  };
  auto* trace = app.add_subcommand("trace", "Trace writes and fsyncs live");
  add_filters(trace, trace_options, min_latency, duration, buffer_size);
  trace->add_option("--format", format, "Output format")
      ->check(CLI::IsMember({"text", "json", "html", "perfetto"}));
  trace->add_option("-o,--output", trace_options.output, "Write to FILE instead of stdout");
  trace->add_option("--save", trace_options.record_path,
                    "Also record the raw trace to FILE (for writepath report)");

  auto* record = app.add_subcommand("record", "Record a trace to a file for writepath report");
  add_filters(record, record_options, record_min_latency, record_duration, record_buffer_size);
  record->add_option("-o,--output", record_options.record_path, "The trace file to write")
      ->required();

  wp::ReportOptions report_options;
  std::string report_format = "text", report_min_latency;
  auto* report = app.add_subcommand("report", "Print a recorded trace as trace would have");
  report->add_option("file", report_options.path, "A file written by writepath record")->required();
  report->add_option("--format", report_format, "Output format")
      ->check(CLI::IsMember({"text", "json", "html", "perfetto"}));
  report->add_option("-o,--output", report_options.output, "Write to FILE instead of stdout");
  report->add_option("--min-latency", report_min_latency, "Only items at least this slow")
      ->check(DurationValidator());

  // load and demo: one subcommand per scenario.
  auto scenarios = wp::loadgen::make_scenarios();
  auto* load = app.add_subcommand("load", "Run one of the chapter's scenarios and measure it");
  auto* demo = app.add_subcommand("demo", "Run a scenario under the tracer and explain it");
  load->require_subcommand(1);
  demo->require_subcommand(1);
  demo->fallthrough();  // -o, --format and --no-fentry may follow the scenario
  wp::TraceOptions demo_trace;
  std::string demo_format = "json";
  demo->add_option("--format", demo_format, "Format of the full trace written with -o")
      ->check(CLI::IsMember({"text", "json", "html", "perfetto"}));
  demo->add_option("-o,--output", demo_trace.output, "Also write the full trace to FILE");
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

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << fmt::format("writepath: {} (see writepath --help)\n", e.what());
    return wp::kExitUsage;
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
                                          .disabled_programs = wp::disabled_programs_from_env()});
    if (*trace) {
      if (!min_latency.empty()) trace_options.min_latency_ns = *wp::parse_duration(min_latency);
      if (!duration.empty()) trace_options.duration_ns = wp::parse_duration(duration);
      trace_options.format = output_format(format, trace_options.output);
      trace_options.buffer_bytes = ring_buffer_bytes(buffer_size);
      return wp::run_trace(trace_options);
    }
    if (*record) {
      if (!record_min_latency.empty())
        record_options.min_latency_ns = *wp::parse_duration(record_min_latency);
      if (!record_duration.empty())
        record_options.duration_ns = wp::parse_duration(record_duration);
      record_options.buffer_bytes = ring_buffer_bytes(record_buffer_size);
      // Raw records to the trace file only: decoding and stitching wait for `report`, which
      // applies --min-latency (kept in the file's header) to what it prints.
      record_options.record_only = true;
      return wp::run_trace(record_options);
    }
    if (*report) {
      if (!report_min_latency.empty())
        report_options.min_latency_ns = *wp::parse_duration(report_min_latency);
      report_options.format = output_format(report_format, report_options.output);
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
