# SPDX-License-Identifier: Apache-2.0
# The integration tests as ctest runs them: each gtest case a test of its own (label
# integration), in parallel under `ctest -j`. Each test process makes its own loop devices, file
# systems, cgroups and files, and asserts on its own workload's records only (the checks of
# tests/integration/beside_check.sh hold them to that beside another writepath), so most can run
# beside each other. Those that cannot are named here by gtest filter, with the reason:
#  - alone (RUN_SERIAL): what they change or measure is the whole machine's;
#  - a RESOURCE_LOCK each: what a group shares with each other and nothing else.
# A test that fails only beside others belongs here, with what it shares.

# gtest_discover_tests' TEST_FILTER (each group below a discovery of its own) is CMake 3.25's.
if(CMAKE_VERSION VERSION_LESS 3.25)
  message(FATAL_ERROR "the integration tests' grouping needs CMake 3.25 (Debian 12's)")
endif()

set(INTEGRATION_ALONE
    # Global sysctls: vm.dirty_* (the dirty-throttle scenario lowers them, and puts back what it
    # read: two at once would leave one's limits behind), kernel.bpf_stats_enabled.
    "LoadDirtyThrottle.*" "DemoScope.DirtyThrottleTracesItsTwoThreadsAndTheLoggerStallsInDirtyThrottling"
    "WhyBlocked.DirtyThrottleIsNamedWithBalanceDirtyPages"
    "Serve.DirtyThrottlePausesAreCountedAsTraceCountsThem"
    "SlowCalls.CausesAddUpAndShowDirtyThrottling"
    "ScratchExt4.BpfCostIsTheKernelsCountOfEveryProgramRun"
    # The load runs' loop devices, found as those of load scratch directories made since the
    # test began: another test's load run beside it would make one too.
    "LoadWriteFsync.FsyncLeavesNoDirtyPagesOfItsOwn"
    "LoadWorkspace.InterruptTearsTheScratchFilesystemDown"
    # Unmounts tracefs (in a mount namespace of its own) and so traces with the raw syscall
    # pair, which puts every thread of the machine, other tests' too, on the slow syscall path.
    "Privilege.WithoutTracefsDoctorMountsNothingAndTraceFallsBack"
    # What every process does: the journal commits of every disk under a process filter that
    # lets them through.
    "KernelFilter.ATraceOfAnIdleProcessDecodesAlmostNothingBesideNoisyBystanders"
    # Compares a WAL's fdatasync median alone with the same beside its own bulk writer: another
    # test's I/O during the alone phase would make the neighbour look harmless.
    "LoadNoisyNeighbour.FiguresAgreeWithWhatWasAskedAndTheWritersOwnCounts"
    # A sync far slower than its WAL's usual must name the bulk writer the test started: every
    # loop device's image shares the host's disk, so another test's I/O would slow it too.
    "Neighbours.*"
    # Wall-clock bounds: a 1 s timer's span within 0.2 s, a live line within 1 s of its write.
    "Duration.*" "LiveOutput.BufferedWriteLineArrivesWithinASecondWhileTheCommandRuns")

# RESOURCE_LOCK name, then the filters of the tests that share it.
set(INTEGRATION_LOCK_CONTAINERS
    # doctor counts the containers in the cgroup hierarchy, where each of these makes some.
    container_cgroups "ContainerTrace.*")
set(INTEGRATION_LOCK_CONTROLLERS
    # A controller enabled in the cgroup2 root's subtree_control for the test, disabled after.
    cgroup2_subtree_control "WhyBlocked.BlockThrottleIsNamedUnderAWriteLimit"
    "WhyBlocked.MemcgReclaimIsNamedUnderAMemoryLimit")

set(integration_properties LABELS integration SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]"
                           ENVIRONMENT WRITEPATH_BUILD=${CMAKE_BINARY_DIR})
set(integration_grouped ${INTEGRATION_ALONE})
function(integration_tests_group filters)
  list(JOIN filters ":" filter)
  gtest_discover_tests(integration_tests DISCOVERY_MODE PRE_TEST TEST_PREFIX "integration."
                       TEST_FILTER "${filter}" PROPERTIES ${integration_properties} ${ARGN})
endfunction()
integration_tests_group("${INTEGRATION_ALONE}" RUN_SERIAL TRUE)
foreach(group INTEGRATION_LOCK_CONTAINERS INTEGRATION_LOCK_CONTROLLERS)
  list(POP_FRONT ${group} lock)
  # A test already alone needs no lock.
  list(JOIN INTEGRATION_ALONE ":" alone)
  list(JOIN ${group} ":" locked)
  integration_tests_group("${locked}-${alone}" RESOURCE_LOCK ${lock})
  list(APPEND integration_grouped ${${group}})
endforeach()
list(JOIN integration_grouped ":" grouped)
integration_tests_group("*-${grouped}")
