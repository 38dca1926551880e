#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make test`, phase by phase: the Debian packages, the build (the VM suite's binaries with the
# rest), the unit tests, then the integration tests (in parallel but for those that need the
# machine alone: cmake/integration_tests.cmake) while the VM suite's guests run beside them
# (QEMU mostly waits on its guest's timers and disk, as the tests on theirs). At the end, each
# phase's wall time, and whatever failed: ctest's own list scrolls away under the rest.
# Usage: scripts/run-tests.sh BUILD_DIR JOBS [INTEGRATION_JOBS]   (MAKE: the make to call back)
set -uo pipefail
build=${1:?usage: run-tests.sh BUILD_DIR JOBS [INTEGRATION_JOBS]}
jobs=${2:-2}
integration_jobs=${3:-$jobs}
here=$(cd "$(dirname "$0")/.." && pwd)
make=${MAKE:-make}

phases=()
# phase NAME SECONDS: one line of the closing table.
phase() { phases+=("$(printf '%-12s %3dm%02ds' "$1" $(($2 / 60)) $(($2 % 60)))${3:+  $3}"); }
timed() { # timed NAME CMD…: runs it, records its wall time, returns its status
  local name=$1 start=$SECONDS rc=0
  shift
  "$@" || rc=$?
  phase "$name" $((SECONDS - start))
  return $rc
}
report_times() {
  echo "make test: phase times (wall clock)"
  printf '  %s\n' "${phases[@]}"
}
started=$SECONDS

build_all() {
  "$make" -C "$here" --no-print-directory BUILD="$build" JOBS="$jobs" build &&
    cmake --build "$build" -j "$jobs" --target vm_binaries
}
# ctest_run LABEL_OPTION JOBS: the tests of (-L) or but (-LE) the label integration.
ctest_run() { (cd "$build" && ctest --output-on-failure -j "$2" "$1" integration); }

timed deps "$make" -C "$here" --no-print-directory BUILD="$build" test-deps || exit 1
timed build build_all || { report_times; exit 1; }
bash "$here/scripts/test-env.sh"

failed_log=$build/Testing/Temporary/LastTestsFailed.log
unit_failed=$build/Testing/Temporary/UnitTestsFailed.log
rm -f "$unit_failed"
unit_rc=0
timed unit ctest_run -LE "$jobs" || { unit_rc=$?; cp "$failed_log" "$unit_failed" 2>/dev/null; }

# The VM suite's output goes to its log, shown once the integration tests are done (whole if
# it failed), so the two do not interleave.
vm_log=$build/vm-test.log
vm_start=$SECONDS
bash "$here/tests/vm/vm-test.sh" "$build" >"$vm_log" 2>&1 &
vm_pid=$!
integration_rc=0
timed integration ctest_run -L "$integration_jobs" || integration_rc=$?
vm_rc=0
wait "$vm_pid" || vm_rc=$?
phase vm $((SECONDS - vm_start)) "(beside the integration tests)"
if ((vm_rc == 0)); then
  grep '^vm-test:' "$vm_log"
else
  cat "$vm_log"
fi
phase total $((SECONDS - started))
report_times

if ((unit_rc == 0 && integration_rc == 0 && vm_rc == 0)); then
  echo "make test: passed"
  exit 0
fi
echo "make test: FAILED"
# ctest_failed RC LIST: the tests a ctest run names in LIST, or its exit status.
ctest_failed() {
  (($1 == 0)) && return
  if [[ -s $2 ]]; then sed 's/^[0-9]*:/  ctest: /' "$2"; else echo "  ctest (exit $1)"; fi
}
ctest_failed "$unit_rc" "$unit_failed"
ctest_failed "$integration_rc" "$failed_log"
((vm_rc == 0)) || echo "  vm-test (exit $vm_rc; its log is above, and in $vm_log)"
exit 1
