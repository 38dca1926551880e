// CLI11 wiring only: parse, then hand over to the agent.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <iostream>

#include "agent/doctor.h"
#include "agent/errors.h"
#include "agent/trace_session.h"
#include "cli/parse.h"

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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"writepath: follow each write from the syscall to the disk's cache flush"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "writepath 0.1.0");

  auto* doctor =
      app.add_subcommand("doctor", "What works on this kernel, what falls back, and why");
  bool doctor_no_fentry = false;
  doctor->add_flag("--no-fentry", doctor_no_fentry, "Show the plan without fentry/fexit hooks");

  wp::TraceOptions trace_options;
  std::string min_latency, duration, format = "text";
  auto* trace = app.add_subcommand("trace", "Trace writes and fsyncs live");
  trace->add_option("-p,--pid", trace_options.pids, "Trace this process (repeatable)");
  trace->add_option("--comm", trace_options.comm, "Trace processes with this command name");
  trace->add_option("--cgroup", trace_options.cgroup, "Trace this cgroup (v2 path)");
  trace->add_option("--dev", trace_options.dev, "Only this block device (NAME or MAJ:MIN)");
  trace->add_option("--file", trace_options.file, "Only writes and syncs of this file");
  trace->add_option("--min-latency", min_latency, "Only items at least this slow")
      ->check(DurationValidator());
  trace->add_option("-d,--duration", duration, "Stop after this long")->check(DurationValidator());
  trace->add_option("--format", format, "Output format")->check(CLI::IsMember({"text", "json"}));
  trace->add_option("-o,--output", trace_options.output, "Write to FILE instead of stdout");
  trace->add_flag("--no-fentry", trace_options.no_fentry,
                  "Use tracepoints even where fentry/fexit hooks attach");
  trace->add_option("command", trace_options.command,
                    "-- CMD ARGS…: trace this command and its children");

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
    if (*doctor) return wp::run_doctor(std::cout, !doctor_no_fentry);
    if (*trace) {
      if (!min_latency.empty()) trace_options.min_latency_ns = *wp::parse_duration(min_latency);
      if (!duration.empty()) trace_options.duration_ns = wp::parse_duration(duration);
      trace_options.format = format == "json" ? wp::OutputFormat::Json : wp::OutputFormat::Text;
      return wp::run_trace(trace_options);
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
