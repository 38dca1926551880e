#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make test`'s runs: ctest, then the VM suite; whatever failed is named again at the very end,
# where a person reads first (ctest's own list scrolls away under the VM suite's output).
# Usage: scripts/run-tests.sh BUILD_DIR JOBS
set -uo pipefail
build=${1:?usage: run-tests.sh BUILD_DIR JOBS}
jobs=${2:-2}

ctest_rc=0
(cd "$build" && ctest --output-on-failure -j "$jobs") || ctest_rc=$?
vm_rc=0
bash "$(dirname "$0")/../tests/vm/vm-test.sh" "$build" || vm_rc=$?

if ((ctest_rc == 0 && vm_rc == 0)); then
  echo "make test: passed"
  exit 0
fi
echo "make test: FAILED"
failed_log=$build/Testing/Temporary/LastTestsFailed.log
if ((ctest_rc != 0)); then
  if [[ -s $failed_log ]]; then
    sed 's/^[0-9]*:/  ctest: /' "$failed_log"
  else
    echo "  ctest (exit $ctest_rc)"
  fi
fi
((vm_rc == 0)) || echo "  vm-test (exit $vm_rc; its log is above)"
exit 1
