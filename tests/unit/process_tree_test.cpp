// SPDX-License-Identifier: Apache-2.0
#include "agent/process_tree.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace wp {
namespace {

namespace fs = std::filesystem;

// A postmaster (100) with backends, one of which forked a worker; an unrelated tree under 1.
std::vector<ProcessEntry> fake_table() {
  return {
      {1, 0, "init"},         {100, 1, "postgres"},    {101, 100, "postgres"},
      {102, 100, "postgres"}, {103, 101, "pg_worker"}, {200, 1, "bash"},
      {201, 200, "postgres"}, {202, 201, "psql"},      {300, 1, "cron"},
  };
}

auto pid_is(std::uint32_t pid) {
  return [pid](const ProcessEntry& p) { return p.pid == pid; };
}

TEST(ProcessTree, ParsesStatLineWhoseNameHoldsSpacesAndParentheses) {
  auto entry = parse_proc_stat("4242 (my (odd) name) S 17 4242 4242 0 -1 4194560 0 0");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->pid, 4242u);
  EXPECT_EQ(entry->ppid, 17u);
  EXPECT_EQ(entry->comm, "my (odd) name");
}

TEST(ProcessTree, MalformedStatLinesAreRefused) {
  EXPECT_FALSE(parse_proc_stat(""));
  EXPECT_FALSE(parse_proc_stat("x (a) S 1"));
  EXPECT_FALSE(parse_proc_stat("12 (a) S"));
  EXPECT_FALSE(parse_proc_stat("12 (a) S x1 0"));
  EXPECT_FALSE(parse_proc_stat("12 a S 1 0"));
}

TEST(ProcessTree, DescendantsOfAPidReachEveryGeneration) {
  EXPECT_EQ(descendants_of(fake_table(), pid_is(100)), (std::set<std::uint32_t>{101, 102, 103}));
  EXPECT_EQ(descendants_of(fake_table(), pid_is(103)), std::set<std::uint32_t>{});
  EXPECT_EQ(descendants_of(fake_table(), pid_is(999)), std::set<std::uint32_t>{});
}

// Roots by name: every process named postgres is a root, so the worker under a backend and the
// psql under the second tree's postgres are found; the roots themselves only as descendants.
TEST(ProcessTree, DescendantsOfEveryProcessOfAName) {
  auto named_postgres = [](const ProcessEntry& p) { return p.comm == "postgres"; };
  EXPECT_EQ(descendants_of(fake_table(), named_postgres),
            (std::set<std::uint32_t>{101, 102, 103, 202}));
}

TEST(ProcessTree, CycleFromPidReuseDoesNotLoop) {
  // Read while pids were reused: 10's parent is 11 and 11's is 10.
  std::vector<ProcessEntry> table = {{10, 11, "a"}, {11, 10, "b"}, {12, 12, "self"}};
  EXPECT_EQ(descendants_of(table, pid_is(10)), (std::set<std::uint32_t>{10, 11}));
  EXPECT_EQ(descendants_of(table, pid_is(12)), std::set<std::uint32_t>{});
}

TEST(ProcessTree, ParentsAreThePidsWithAChild) {
  EXPECT_EQ(parents_in(fake_table()), (std::set<std::uint32_t>{1, 100, 101, 200, 201}));
}

TEST(ProcessTree, ReadsAProcDirectory) {
  const fs::path proc = fs::temp_directory_path() / ("wp_proc_" + std::to_string(::getpid()));
  fs::create_directories(proc / "7");
  fs::create_directories(proc / "8");
  fs::create_directories(proc / "self");  // not a pid: skipped
  fs::create_directories(proc / "9");     // no stat (exited meanwhile): skipped
  std::ofstream(proc / "7" / "stat") << "7 (parent) S 1 7 7 0\n";
  std::ofstream(proc / "8" / "stat") << "8 (child) R 7 7 7 0\n";
  std::ofstream(proc / "self" / "stat") << "8 (child) R 7 7 7 0\n";
  auto table = read_process_table(proc);
  fs::remove_all(proc);
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(descendants_of(table, pid_is(7)), std::set<std::uint32_t>{8});
}

TEST(ProcessTree, ReadsTheRealProcAndFindsThisProcessUnderItsParent) {
  auto table = read_process_table();
  const auto self = static_cast<std::uint32_t>(::getpid());
  EXPECT_TRUE(descendants_of(table, pid_is(static_cast<std::uint32_t>(::getppid()))).count(self));
}

TEST(ChildrenHint, NamesThePidThatHasChildrenAndWasNotSeen) {
  const std::string hint = children_hint({100}, {100}, {});
  EXPECT_NE(hint.find("pid 100"), std::string::npos) << hint;
  EXPECT_NE(hint.find("--children"), std::string::npos) << hint;
}

TEST(ChildrenHint, SeveralSilentParentsAreNamedTogether) {
  EXPECT_NE(children_hint({5, 6}, {5, 6}, {}).find("pids 5, 6, which have"), std::string::npos);
}

TEST(ChildrenHint, NoneWhenThePidWasSeenOrHasNoChildren) {
  EXPECT_EQ(children_hint({100}, {100}, {100}), "");  // its own writes were traced
  EXPECT_EQ(children_hint({100}, {}, {}), "");        // no children: nothing to suggest
  EXPECT_EQ(children_hint({}, {100}, {}), "");        // no -p
}

TEST(ChildrenHint, OnlyTheSilentParentsOfSeveralPids) {
  const std::string hint = children_hint({5, 6, 7}, {5, 6}, {6});
  EXPECT_NE(hint.find("pid 5, which has"), std::string::npos) << hint;
  EXPECT_EQ(hint.find('6'), std::string::npos) << hint;
  EXPECT_EQ(hint.find('7'), std::string::npos) << hint;
}

}  // namespace
}  // namespace wp
