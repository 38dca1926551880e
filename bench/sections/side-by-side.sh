#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# side-by-side: ns/op of the loops untraced, then the ratio to untraced under each tracer:
# `writepath trace -- CMD`, a bystander of `trace -p 1`, `record`, `trace --min-latency 10ms`,
# a machine-wide bpftrace pwrite64 latency histogram, bpftrace's write(2) histogram of pid 1
# and `perf trace -e pwrite64 -- CMD`; on a cached 4 KiB pwrite loop, a getppid() loop,
# 4 KiB pwrite + fdatasync on ext4 with journal, 64 B write(2)s to /dev/null, and a cached
# 4 KiB pread loop (writepath traces it with --reads; its bpftrace and perf columns watch pread64),
# and a major-fault loop (--reads; bpftrace counts mm_filemap_fault, perf trace -F maj).
# BASELINE=OTHER_BUILD_DIR adds that build's writepath, as "baseline trace" and "baseline
# bystander" columns run in the same interleaved rounds: a change's before and after, measured
# together.
# Usage: bash bench/sections/side-by-side.sh [BUILD_DIR]   (build dir default `build`)
# Sizes: ROUNDS, COUNT, GETPPID_COUNT, FSYNC_COUNT (defaults in bench/lib.sh). WORKLOADS
# picks some of the loops (default all: "pwrite getppid fdatasync devnull pread fault"); FAULT_COUNT.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

side_by_side_columns=(untraced wp-trace wp-bystander wp-record wp-min-latency bpftrace bpftrace-write-pid1 perf-trace)
declare -A column_title=(
  [untraced]="untraced ns/op"
  [wp-trace]="writepath trace"
  [wp-bystander]="bystander of trace -p 1"
  [wp-record]="writepath record"
  [wp-min-latency]="trace --min-latency 10ms"
  [bpftrace]="bpftrace pwrite64 hist"
  [bpftrace-write-pid1]="bpftrace write(2) hist of pid 1"
  [perf-trace]="perf trace -e pwrite64"
  [base-trace]="baseline trace"
  [base-bystander]="baseline bystander"
)

section_side_by_side() {
  echo "== side by side: $rounds rounds; pwrite COUNT=$count, getppid GETPPID_COUNT=$getppid_count, pwrite+fdatasync FSYNC_COUNT=$fsync_count"
  local columns=("${side_by_side_columns[@]}")
  [[ -z $base_wp ]] || columns+=(base-trace base-bystander)
  local header="| workload | ${column_title[untraced]} |" rule="|---|---:|"
  for c in "${columns[@]:1}"; do header+=" ${column_title[$c]} |"; rule+="---:|"; done
  local rows=() lost_notes=()
  local workloads
  read -r -a workloads <<<"${WORKLOADS:-pwrite getppid fdatasync devnull pread fault}"
  for workload in "${workloads[@]}"; do
    declare -A ns_of=() lost_of=()
    local order
    for ((r = 0; r < rounds; r++)); do
      mapfile -t order < <(column_order "$r" "${columns[@]}")
      declare -A this=()
      for c in "${order[@]}"; do
        this[$c]=$(run_column "$c" "$workload")
        ns_of[$c]+="${this[$c]} "
        case $c in
          wp-trace | wp-min-latency) lost_of[$c]+="$(summary_field lost "$work/$c.out") " ;;
          wp-bystander) lost_of[$c]+="$(summary_field lost "$work/$c.out") " ;;
        esac
      done
      local line="round $r $workload: untraced ${this[untraced]} ns/op"
      for c in "${columns[@]:1}"; do
        line+=", $c ${this[$c]} ($(fmt_ratio "$(ratio "${this[$c]}" "${this[untraced]}")"))"
      done
      echo "$line"
      unset this
    done
    local row
    row="| $workload | $(fmt_ns "$(median_of "${ns_of[untraced]}")") |"
    for c in "${columns[@]:1}"; do
      row+=" $(fmt_ratio "$(median_ratio "${ns_of[$c]}" "${ns_of[untraced]}")") |"
    done
    rows+=("$row")
    local note="$workload:"
    for c in wp-trace wp-bystander wp-min-latency; do
      local total=0
      for l in ${lost_of[$c]:-}; do [[ $l =~ ^[0-9]+$ ]] && total=$((total + l)); done
      note+=" $c $total"
    done
    lost_notes+=("$note")
    unset ns_of lost_of
  done
  {
    echo "### Side by side (median of $rounds interleaved rounds; ratio = time per op / untraced)"
    echo
    echo "$header"
    echo "$rule"
    printf '%s\n' "${rows[@]}"
    echo
    echo "pwrite: 4 KiB pwrite over a cached 1 MiB file, $count per run; getppid: $getppid_count"
    echo "calls; fdatasync: 4 KiB pwrite + fdatasync, $fsync_count per run, ext4 with journal on a"
    echo "loop device; devnull: 64 B write(2) to /dev/null, $getppid_count per run (a write the trace"
    echo "does not follow: a bystander's socket, pipe or terminal write); pread: 4 KiB pread over a"
    echo "cached 1 MiB file, $count per run (writepath traced with --reads, the baseline as it is;"
    echo "bpftrace and perf watch pread64); fault: $fault_count major faults of a 4 MiB mapping"
    echo "per run, its pages dropped before each pass, MADV_RANDOM (traced with --reads; bpftrace"
    echo "counts mm_filemap_fault, perf trace -F maj). Records lost by writepath, all rounds: $(printf '%s; ' "${lost_notes[@]}" | sed 's/; $//')."
    echo
  } >>"$summary"
}

run_if_alone side-by-side "$@"
