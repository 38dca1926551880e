#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/vm/run.sh [BUILD_DIR]   (make bench-vm)
# A deterministic cost meter: guest instructions per system call, untraced, beside the floor
# (empty programs on the same hooks), as a bystander of `writepath trace -p 1` and of
# `writepath serve`, and traced, for both hook plans (trampolines, and --no-fentry), on
# Debian's 6.1 and 6.12 kernels. It boots the VM suite's guests (tests/vm: setup.sh,
# mkinitramfs.sh, run.sh; the kernels cached in BUILD_DIR/vm-cache and vm-cache-6.12) with one
# vCPU under QEMU's -icount shift=0,sleep=on: the guest clock then advances 1 ns per guest
# instruction, so loops timed inside the guest (bench/vm/guest.sh, bench/vm/syscall_rows.c)
# count instructions, the same on every run, on any host, however busy. The guest runs the
# dynamic writepath (serve is not in the static one) with its shared libraries.
# Each kernel's table: BUILD_DIR/bench-vm/table-SERIES.md (printed too); its console log:
# BUILD_DIR/bench-vm/SERIES/console.log. Run by hand; not a test.
# WRITEPATH_VM_KERNELS picks the series ("6.1", "6.12", default both); BENCH_VM_COUNT calls per
# row (100000), BENCH_VM_SYNC_COUNT pwrite + fdatasync pairs (2000), BENCH_VM_PROGRAM_COUNT
# calls per row of the per-program pass (20000; 0: none); BENCH_VM_ROWS and
# BENCH_VM_PLANS (comma-separated, see guest.sh) narrow a run; BENCH_VM_TIMEOUT bounds a guest
# (seconds, default 5400).
set -euo pipefail

here=$(dirname "$(realpath "$0")")
repo=$(realpath "$here/../..")
build=$(realpath "${1:-build}")
out=$build/bench-vm
started=$SECONDS

cmake --build "$build" -j "$(nproc)" --target bench_vm_binaries >/dev/null
mkdir -p "$out"

append="wp.count=${BENCH_VM_COUNT:-100000} wp.sync_count=${BENCH_VM_SYNC_COUNT:-2000}"
append+=" wp.program_count=${BENCH_VM_PROGRAM_COUNT:-20000}"
[[ -z ${BENCH_VM_ROWS:-} ]] || append+=" wp.rows=$BENCH_VM_ROWS"
[[ -z ${BENCH_VM_PLANS:-} ]] || append+=" wp.plans=$BENCH_VM_PLANS"

failed=0
for series in ${WRITEPATH_VM_KERNELS:-6.1 6.12}; do
  suffix=
  [[ $series == 6.1 ]] || suffix=-$series
  cache=$build/vm-cache$suffix work=$out/$series
  rc=0
  bash "$repo/tests/vm/setup.sh" "$cache" "$series" || rc=$?
  if ((rc == 77)); then continue; elif ((rc != 0)); then failed=1 && continue; fi

  mkdir -p "$work"
  WRITEPATH_VM_GUEST_SCRIPT=$here/guest.sh \
    WRITEPATH_VM_FILES="$build/writepath=bin/writepath
      $build/wp_bench_syscall_rows_static=bin/wp_bench_syscall_rows
      $build/wp_bench_floor_static=bin/wp_bench_floor" \
    bash "$repo/tests/vm/mkinitramfs.sh" "$cache" "$work/root" "$work/initramfs.gz" \
    "$build/writepath_static" "$build/wp_workload_static" "$build/wp_oracle_writer_static"

  booted=$SECONDS
  rc=0
  WRITEPATH_VM_SMP=1 WRITEPATH_VM_QEMU_ARGS="-icount shift=0,sleep=on" \
    WRITEPATH_VM_APPEND="$append" \
    bash "$repo/tests/vm/run.sh" "$cache" "$work/initramfs.gz" "$work/console.log" \
    "${BENCH_VM_TIMEOUT:-5400}" || rc=$?
  ((rc == 0)) || failed=1
  table=$out/table-$series.md
  bash "$here/table.sh" "$work/console.log" >"$table"
  echo
  cat "$table"
  echo
  echo "bench-vm: kernel $(cat "$cache/kernel-release"), guest $((SECONDS - booted)) s" \
    "(table: $table; log: $work/console.log)"
done
echo "bench-vm: wall $((SECONDS - started)) s"
((failed == 0))
