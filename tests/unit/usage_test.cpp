// SPDX-License-Identifier: Apache-2.0
#include "cli/usage.h"

#include <gtest/gtest.h>

#include <memory>

namespace wp {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("trace", "trace"), 0u);
  EXPECT_EQ(edit_distance("trce", "trace"), 1u);    // a letter left out
  EXPECT_EQ(edit_distance("tracee", "trace"), 1u);  // one too many
  EXPECT_EQ(edit_distance("trade", "trace"), 1u);   // one wrong
  EXPECT_EQ(edit_distance("rtace", "trace"), 1u);   // two neighbours swapped: one slip
  EXPECT_EQ(edit_distance("dmeo", "demo"), 1u);
  EXPECT_EQ(edit_distance("rtcae", "trace"), 2u);  // two slips
  EXPECT_EQ(edit_distance("", "doctor"), 6u);
  EXPECT_EQ(edit_distance("report", "record"), 2u);
}

TEST(DidYouMean, NearestRealNameWhenItIsNearEnough) {
  const std::vector<std::string> commands = {"doctor", "trace", "record", "report", "load", "demo"};
  EXPECT_EQ(did_you_mean("trce", commands), "trace");
  EXPECT_EQ(did_you_mean("reprot", commands), "report");
  EXPECT_EQ(did_you_mean("doctr", commands), "doctor");
  EXPECT_EQ(did_you_mean("bananas", commands), std::nullopt);
  EXPECT_EQ(did_you_mean("xyz", commands), std::nullopt);
  const std::vector<std::string> options = {"--format", "--output", "-o", "--min-latency"};
  EXPECT_EQ(did_you_mean("--formt", options), "--format");
  EXPECT_EQ(did_you_mean("--min-latncy", options), "--min-latency");
  EXPECT_EQ(did_you_mean("-x", options), std::nullopt);  // too short to tell a typo
}

// A command line shaped like writepath's: subcommands with options of their own.
struct Cli {
  std::unique_ptr<CLI::App> root = std::make_unique<CLI::App>("test");
  std::string format, min_latency, scenario_size;
  std::vector<std::string> command;
  CLI::App* trace = nullptr;
  CLI::App* load = nullptr;
  Cli() {
    root->require_subcommand(1);
    trace = root->add_subcommand("trace", "");
    trace->add_option("--format", format);
    trace->add_option("--min-latency", min_latency);
    trace->add_option("command", command);
    root->add_subcommand("report", "");
    load = root->add_subcommand("load", "");
    load->require_subcommand(1);
    load->add_subcommand("write-fsync", "")->add_option("--size", scenario_size);
    load->add_subcommand("wal", "");
  }
  // The usage line for `args`, or "parsed" when they were fine.
  std::string error_of(std::vector<std::string> args) {
    args.insert(args.begin(), "./build/writepath");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    try {
      root->parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::ParseError& e) {
      return usage_error(*root, e);
    }
    return "parsed";
  }
};

TEST(UsageError, UnknownCommandGetsTheNearestOne) {
  EXPECT_EQ(Cli().error_of({"trce"}),
            "unknown command 'trce'; did you mean 'trace'? (see writepath --help)");
  EXPECT_EQ(
      Cli().error_of({"load", "write-fsyn"}),
      "unknown command 'write-fsyn'; did you mean 'write-fsync'? (see writepath load --help)");
  // Nothing near: the commands it could have been.
  EXPECT_EQ(Cli().error_of({"frobnicate"}),
            "unknown command 'frobnicate'; writepath takes: trace, report, load (see writepath "
            "--help)");
}

TEST(UsageError, UnknownOptionPointsAtItsSubcommandsHelp) {
  EXPECT_EQ(Cli().error_of({"trace", "--formt", "json"}),
            "unknown option '--formt' for 'writepath trace'; did you mean '--format'? (see "
            "writepath trace --help)");
  EXPECT_EQ(Cli().error_of({"trace", "--formt=json"}),
            "unknown option '--formt' for 'writepath trace'; did you mean '--format'? (see "
            "writepath trace --help)");
  EXPECT_EQ(Cli().error_of({"load", "write-fsync", "--sise", "1M"}),
            "unknown option '--sise' for 'writepath load write-fsync'; did you mean '--size'? "
            "(see writepath load write-fsync --help)");
  // An option of another subcommand is unknown here, and none of this one's is near it.
  EXPECT_EQ(Cli().error_of({"report", "--min-latency", "1ms"}),
            "unknown option '--min-latency' for 'writepath report' (see writepath report --help)");
}

TEST(UsageError, ValueOutsideItsChoicesGetsTheNearestOne) {
  Cli cli;
  cli.trace->get_option("--format")->check(one_of({"text", "json", "html", "perfetto"}));
  EXPECT_EQ(cli.error_of({"trace", "--format", "jsn"}),
            "--format: jsn is not one of text, json, html, perfetto; did you mean 'json'? (see "
            "writepath trace --help)");
  Cli again;
  again.trace->get_option("--format")->check(one_of({"text", "json"}));
  EXPECT_EQ(again.error_of({"trace", "--format", "yaml"}),
            "--format: yaml is not one of text, json (see writepath trace --help)");
  Cli fine;
  fine.trace->get_option("--format")->check(one_of({"text", "json"}));
  EXPECT_EQ(fine.error_of({"trace", "--format", "json"}), "parsed");
}

TEST(UsageError, MissingCommandListsTheCommands) {
  EXPECT_EQ(Cli().error_of({}),
            "'writepath' needs a command: trace, report, load (see writepath --help)");
  EXPECT_EQ(Cli().error_of({"load"}),
            "'writepath load' needs a command: write-fsync, wal (see writepath load --help)");
}

TEST(UsageError, OtherErrorsKeepTheirTextAndGetTheHelpPointer) {
  EXPECT_EQ(Cli().error_of({"trace", "--format"}).find("--format"), 0u);
  EXPECT_NE(Cli().error_of({"trace", "--format"}).find("(see writepath trace --help)"),
            std::string::npos);
  EXPECT_EQ(Cli().error_of({"trace", "--format", "json"}), "parsed");
}

}  // namespace
}  // namespace wp
