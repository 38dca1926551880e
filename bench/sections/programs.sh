#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# programs: each BPF program's ns per run as the kernel counts it (kernel.bpf_stats_enabled, on
# for this section only) and the program time per op: a traced cached pwrite, a bystander's
# write(2) to /dev/null and getppid under trace -p 1 and serve; then the records a trace of an
# idle process decodes beside noisy bystanders.
# The kernel's own count of each program's runs and time (bpftop's source), read from bpftool
# before and after one workload while a tracer runs: where a traced call's cost goes, and what
# an untraced write pays. Counting adds two clock reads to every run, so this section measures
# no ratios; it restores kernel.bpf_stats_enabled when done.
# Usage: bash bench/sections/programs.sh [BUILD_DIR]   (build dir default `build`)
# Sizes: COUNT, GETPPID_COUNT (defaults in bench/lib.sh).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

program_counters() {  # MIN_ID: [{name, runs, ns}] of the wp_ programs loaded after MIN_ID
  bpftool prog show -j | jq -c --argjson min "$1" \
    '[.[] | select(.id > $min and (.name | startswith("wp_")))
      | {name, runs: (.run_cnt // 0), ns: (.run_time_ns // 0)}]'
}
# CASE OPS MIN_ID CMD…: run CMD (OPS operations) under the tracer already running; one table row.
program_row() {
  local case=$1 ops=$2 min_id=$3 before after
  shift 3
  before=$(program_counters "$min_id")
  "$@" >/dev/null 2>"$work/err" || { echo "bench: programs: $case failed: $(tail -n 1 "$work/err")" >&2; return; }
  after=$(program_counters "$min_id")
  jq -rn --argjson b "$before" --argjson a "$after" --arg case "$case" --argjson ops "$ops" '
    ($b | map({(.name): .}) | add // {}) as $base
    | [$a[] | {name, runs: (.runs - ($base[.name].runs // 0)), ns: (.ns - ($base[.name].ns // 0))}
       | select(.runs > 0)] | sort_by(-.ns) as $d
    | "| \($case) | \((($d | map(.ns) | add // 0) / $ops) | floor) | " +
      ([$d[:4][] | "\(.name) \((.ns / .runs) | floor) ns × \((.runs / $ops * 100 | round) / 100)"]
       | join(", ")) + " |"'
}
# Records a trace of an idle process decodes (`trace --comm nosuchcomm -d 2s`) beside noisy
# bystanders on the scratch file system: a log rotator (2 MiB dirty files unlinked or truncated
# before writeback), a flat-out writer that syncs, an O_DIRECT writer. With the filters in
# every hook, only the requests in flight as the hooks attach pass.
idle_trace_records() {
  local dir=$SCRATCH_MNT/idle events
  mkdir -p "$dir"
  rm -f "$dir/stop"
  (cd "$dir" && {
    (i=0; while [[ ! -e stop ]]; do head -c 2M /dev/zero >log.$((i % 4))
      if ((i % 2)); then truncate -s 0 log.$((i % 4)); else rm -f log.$((i % 4)); fi; i=$((i + 1)); done) &
    (while [[ ! -e stop ]]; do dd if=/dev/zero of=big bs=1M count=32 status=none; sync -f big; done) &
    (while [[ ! -e stop ]]; do dd if=/dev/zero of=direct bs=64k count=32 oflag=direct status=none; done) &
    wait
  }) &
  local noise=$!
  sleep 1
  "$wp" trace --comm nosuchcomm -d 2s --format json -o "$work/idle.jsonl" 2>"$work/err" || true
  touch "$dir/stop"
  wait "$noise" 2>/dev/null || true
  events=$(summary_field events "$work/idle.jsonl")
  echo "| records decoded by \`trace --comm nosuchcomm -d 2s\` beside a log rotator, a syncing writer and an O_DIRECT writer | ${events:-fail} |"
}
section_programs() {
  echo "== programs: pwrite COUNT=$count, write and getppid GETPPID_COUNT=$getppid_count"
  local min_id rows=() idle
  bpf_stats_was=$(sysctl -n kernel.bpf_stats_enabled)  # put back on any exit (the EXIT trap)
  sysctl -qw kernel.bpf_stats_enabled=1
  min_id=$(bpftool prog show -j | jq '[.[].id] | max // 0')
  workload_cmd pwrite
  rows+=("$(program_row_traced "traced cached 4 KiB pwrite (trace -- CMD)" "$count" "${cmd[@]}")")
  if bg_start "$work/programs.log" "writepath: tracing" "$wp" trace -p 1 -o "$work/programs.out"; then
    rows+=("$(program_row "bystander 64 B write(2) to /dev/null (trace -p 1)" "$getppid_count" "$min_id" "$bin/wp_bench_write" "$getppid_count")")
    rows+=("$(program_row "bystander getppid (trace -p 1)" "$getppid_count" "$min_id" "$bin/wp_bench_getppid" "$getppid_count")")
    bg_stop TERM
  fi
  if serve_start "$work/programs.log"; then
    rows+=("$(program_row "bystander 64 B write(2) to /dev/null (serve)" "$getppid_count" "$min_id" "$bin/wp_bench_write" "$getppid_count")")
    rows+=("$(program_row "cached 4 KiB pwrite (serve)" "$count" "$min_id" "${cmd[@]}")")
    bg_stop TERM
  fi
  restore_bpf_stats
  bpf_stats_was=""
  idle=$(idle_trace_records)
  {
    echo "### BPF program time per op (kernel.bpf_stats_enabled; the four costliest programs)"
    echo
    echo "| workload | program ns per op | program: ns per run × runs per op |"
    echo "|---|---:|---|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "| filters in every hook | records |"
    echo "|---|---:|"
    echo "$idle"
    echo
  } >>"$summary"
}

run_if_alone programs "$@"
