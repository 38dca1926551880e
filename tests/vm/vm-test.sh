#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/vm/vm-test.sh [BUILD_DIR]   (make vm-test)
# The VM suite: builds the static writepath and wp_workload, and for each of Debian bookworm's
# kernels (6.1, its own, and 6.12, which it also ships) fetches it (setup.sh, cached in
# BUILD_DIR/vm-cache for 6.1 and BUILD_DIR/vm-cache-6.12), packs the guest's initramfs, boots
# it with an emulated NVMe disk (run.sh) and checks the console log on the host (vm_tests).
# A kernel whose package cannot be downloaded is skipped with one line, unless
# WRITEPATH_REQUIRE_VM=1. WRITEPATH_VM_KERNELS picks the series ("6.1", "6.12", default both).
# Files of the last run stay in BUILD_DIR/vm-run (6.1) and BUILD_DIR/vm-run-6.12 (console.log).
set -euo pipefail

here=$(dirname "$(realpath "$0")")
build=$(realpath "${1:-build}")
started=$(date +%s.%N)

since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

cmake --build "$build" -j "$(nproc)" --target vm_binaries >/dev/null

# One kernel: 0 passed, 77 skipped (setup.sh said why), anything else failed.
one_kernel() {
  local series=$1 suffix=
  [[ $series == 6.1 ]] || suffix=-$series
  local cache=$build/vm-cache$suffix work=$build/vm-run$suffix
  local setup_rc=0
  bash "$here/setup.sh" "$cache" "$series" || setup_rc=$?
  case $setup_rc in
    0) ;;
    77) return 77 ;;
    *) return 1 ;;
  esac

  mkdir -p "$work"
  # serve is in the dynamic build only (prometheus-cpp has no static library): it goes along
  # with its shared libraries.
  WRITEPATH_VM_FILES="$build/writepath=bin/writepath-serve" \
    bash "$here/mkinitramfs.sh" "$cache" "$work/root" "$work/initramfs.gz" \
    "$build/writepath_static" "$build/wp_workload_static" "$build/wp_oracle_writer_static" \
    "$build/wp_attached_hooks_static"

  local booted vm_rc=0 vm_seconds
  booted=$(date +%s.%N)
  # A guard against a hung guest, not a measure: alone a guest takes about 7 minutes here, and
  # beside the integration tests (make test runs them together) both guests passed 8 minutes.
  bash "$here/run.sh" "$cache" "$work/initramfs.gz" "$work/console.log" 1500 || vm_rc=$?
  vm_seconds=$(since "$booted")

  # The very binary the guest ran, on this (6.18) kernel: CO-RE, one build for every kernel.
  "$work/root/bin/writepath" doctor >"$work/host-doctor.txt" 2>&1 || true

  # Checked even when the guest failed: what it printed before says the most.
  local tests_rc=0
  WRITEPATH_VM_LOG=$work/console.log WRITEPATH_VM_GUEST_BINARY=$work/root/bin/writepath \
    WRITEPATH_VM_HOST_DOCTOR=$work/host-doctor.txt \
    WRITEPATH_BUILD=$build "$build/vm_tests" || tests_rc=$?

  local verdict=passed
  ((vm_rc == 0 && tests_rc == 0)) || verdict=FAILED
  echo "vm-test: $verdict, kernel $(cat "$cache/kernel-release"), guest ${vm_seconds}s" \
    "(log: $work/console.log)"
  [[ $verdict == passed ]]
}

failed=0
for series in ${WRITEPATH_VM_KERNELS:-6.1 6.12}; do
  rc=0
  one_kernel "$series" || rc=$?
  ((rc == 0 || rc == 77)) || failed=1
done
echo "vm-test: suite wall $(since "$started")s"
((failed == 0))
