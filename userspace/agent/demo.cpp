// SPDX-License-Identifier: Apache-2.0
#include "agent/demo.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "agent/explain/explain.h"
#include "common/errors.h"

namespace wp {
namespace fs = std::filesystem;

namespace {

// A temporary file removed on scope exit.
class TempFile {
 public:
  TempFile() {
    char templ[] = "/tmp/writepath-demo.XXXXXX";
    int fd = ::mkstemp(templ);
    if (fd < 0) throw Failure(kExitRuntime, "cannot create a temporary file");
    ::close(fd);
    path_ = templ;
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

int run_demo(loadgen::Scenario& scenario, const std::vector<std::string>& load_args,
             TraceOptions trace) {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw Failure(kExitRuntime, "cannot find the writepath binary (/proc/self/exe)");

  TempFile result;
  trace.command = {self.string(), "load", scenario.name()};
  trace.command.insert(trace.command.end(), load_args.begin(), load_args.end());
  trace.command.push_back("--result-file");
  trace.command.push_back(result.path().string());
  if (trace.output.empty()) trace.output = "/dev/null";  // the explanation is the output
  // Every call is kept, and those over a millisecond say where their time went.
  if (!trace.causes_min_ns) trace.causes_min_ns = explain::kStallNs;
  trace.reads = explain::explains_reads(scenario.name());

  // Only the scenario's measured part is traced: the load marks it (loadgen/trace_phase.h),
  // after its scratch filesystem and files are made and before its result file and teardown.
  trace.command_marks_phase = true;
  std::vector<Timeline> seen;
  trace.observer = [&seen](const Timeline& item) { seen.push_back(item); };
  int rc = run_trace(trace);
  if (rc != 0) return rc;

  std::ifstream in(result.path());
  loadgen::ScenarioResult figures;
  try {
    auto doc = nlohmann::ordered_json::parse(in);
    figures.figures = doc.at("figures");
  } catch (const std::exception&) {
    throw Failure(kExitRuntime, "the scenario left no result to explain");
  }
  std::cout << "what the tracer saw:\n";
  for (const auto& line : explain::explain_run(scenario.name(), figures, seen))
    std::cout << "  " << line << "\n";
  return 0;
}

}  // namespace wp
