#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The machine the integration tests expect: tracefs mounted where systemd mounts it. Many tests
# exercise the classic tracepoints (dirty throttling, the untraced-call counters, doctor's
# coverage); writepath itself never mounts tracefs, so a bare machine (a container, a minimal
# VM without systemd) gets it mounted here, once, before the tests run.
set -euo pipefail
[[ $(id -u) -eq 0 ]] || exit 0
if ! awk '$3 == "tracefs" || ($3 == "debugfs" && $2 == "/sys/kernel/debug") {f = 1} END {exit !f}' /proc/mounts; then
  if mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; then
    echo "test-env: mounted tracefs on /sys/kernel/tracing (it was not mounted)"
  else
    echo "test-env: tracefs is not mounted and could not be; tests of classic tracepoints will fail"
  fi
fi
