#!/usr/bin/env bash
# tests/vm/vm-test.sh [BUILD_DIR]   (make vm-test)
# The VM suite: builds the static writepath and wp_workload, fetches Debian's 6.1 kernel
# (setup.sh, cached in BUILD_DIR/vm-cache), packs the guest's initramfs, boots it with an
# emulated NVMe disk (run.sh) and checks the console log on the host (vm_tests).
# Skips with one line and exit 0 when the kernel package cannot be downloaded, unless
# WRITEPATH_REQUIRE_VM=1. Files of the last run stay in BUILD_DIR/vm-run (console.log).
set -euo pipefail

here=$(dirname "$(realpath "$0")")
build=$(realpath "${1:-build}")
cache=$build/vm-cache
work=$build/vm-run
started=$(date +%s.%N)

since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
elapsed() { since "$started"; }

cmake --build "$build" -j "$(nproc)" \
  --target writepath writepath_static wp_workload_static wp_oracle_writer_static vm_tests >/dev/null

setup_rc=0
bash "$here/setup.sh" "$cache" || setup_rc=$?
case $setup_rc in
  0) ;;
  77) exit 0 ;;  # setup.sh said why, in one line
  *) exit 1 ;;
esac

mkdir -p "$work"
bash "$here/mkinitramfs.sh" "$cache" "$work/root" "$work/initramfs.gz" \
  "$build/writepath_static" "$build/wp_workload_static" "$build/wp_oracle_writer_static"

booted=$(date +%s.%N)
vm_rc=0
bash "$here/run.sh" "$cache" "$work/initramfs.gz" "$work/console.log" 240 || vm_rc=$?
vm_seconds=$(since "$booted")

# The very binary the guest ran, on this (6.18) kernel: CO-RE, one build for both.
"$work/root/bin/writepath" doctor >"$work/host-doctor.txt" 2>&1 || true

# Checked even when the guest failed: what it printed before says the most.
tests_rc=0
WRITEPATH_VM_LOG=$work/console.log WRITEPATH_VM_GUEST_BINARY=$work/root/bin/writepath \
  WRITEPATH_VM_HOST_DOCTOR=$work/host-doctor.txt \
  WRITEPATH_BUILD=$build "$build/vm_tests" || tests_rc=$?

verdict=passed
((vm_rc == 0 && tests_rc == 0)) || verdict=FAILED
echo "vm-test: $verdict, kernel $(cat "$cache/kernel-release"), guest ${vm_seconds}s," \
  "suite wall $(elapsed)s (log: $work/console.log)"
[[ $verdict == passed ]]
