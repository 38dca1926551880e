// SPDX-License-Identifier: Apache-2.0
// The harness's loop devices: a loop device keeps the queue knobs its last user set across
// detach and re-attach, so a device some other program left in write-through mode would make
// every sync of a test durable "via no-write-cache" instead of "via flush". Attached through
// the harness, a device has the queue the tests rely on, whatever it was left with, and is
// given back with what it had.
#include "harness.h"

namespace wp::testing {
namespace {

// The loop device `losetup --find` would attach next ("/dev/loop4"), "" if none is free.
std::string next_free_loop() {
  FILE* p = ::popen("losetup --find", "r");
  if (p == nullptr) return "";
  char name[64] = {};
  if (std::fgets(name, sizeof(name), p) == nullptr) name[0] = 0;
  ::pclose(p);
  return std::string(name, strcspn(name, "\n"));
}

// Knob values a fresh loop device never has.
const std::vector<std::pair<std::string, std::string>> kLeftBehind = {
    {"write_cache", "write through"}, {"scheduler", "mq-deadline"}, {"max_sectors_kb", "64"}};

TEST(HarnessLoopDevice, AttachSetsTheQueueTheTestsRelyOnAndDetachPutsBackWhatItFound) {
  WP_REQUIRE_ROOT();
  // Another process may take the free device between the look and the attach: try again.
  for (int attempt = 0; attempt < 10; ++attempt) {
    const std::string node = next_free_loop();
    ASSERT_FALSE(node.empty()) << "no free loop device";
    const std::string name = fs::path(node).filename().string();
    const QueueKnobs as_found(name);  // this test's own change to the free device, undone
    for (const auto& [knob, value] : kLeftBehind)
      ASSERT_TRUE(as_found.set(knob, value)) << name << " queue/" << knob << " = " << value;
    {
      ScratchFs disk("ext4", "mkfs.ext4 -q -F -O has_journal");
      ASSERT_TRUE(disk.ready());
      if (disk.loop_name() != name) continue;
      for (const auto& [knob, value] : kLoopQueue)
        EXPECT_EQ(as_found.get(knob), value) << name << " queue/" << knob;
      // What the test sees: its fsync's flush makes the writes durable.
      const RunResult r =
          run({writepath(), "trace", "--format", "json", "--",
               (build_dir() / "wp_workload").string(), "buffered-fsync", disk.file("f"), "4"});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const auto writes = of_type(json_lines(r.out), "write");
      ASSERT_EQ(writes.size(), 4u) << r.out;
      for (const json& w : writes) EXPECT_EQ(w["durable_via"], "flush") << w.dump();
    }
    // Detached: the device says again what it said before the harness attached it.
    for (const auto& [knob, value] : kLeftBehind)
      EXPECT_EQ(as_found.get(knob), value) << name << " queue/" << knob;
    return;
  }
  FAIL() << "other processes took every free loop device this test looked at";
}

}  // namespace
}  // namespace wp::testing
