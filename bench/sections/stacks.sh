#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# stacks: --min-latency's off-CPU stacks on vs --no-stacks, on slow fdatasyncs and on fast
# cached pwrites, beside an offcputime-like bpftrace (kstack on sched_switch), as ratios to
# untraced; plus stacks over --no-stacks and the slow calls each kept.
# What --min-latency's off-CPU stacks cost over --no-stacks: on fdatasyncs that all pass the
# threshold and sleep (each sleep a stack taken in sched_switch, its waker's in sched_waking),
# and on cached pwrites that never do (a fast call must pay nothing more). The peer takes a
# stack on every context switch of the machine.
# Usage: bash bench/sections/stacks.sh [BUILD_DIR]   (build dir default `build`)
# Sizes: ROUNDS, COUNT, FSYNC_COUNT, STACKS_MIN_LATENCY (defaults in bench/lib.sh).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

stacks_columns=(untraced wp-no-stacks wp-stacks bpftrace-offcpu)
declare -A stacks_title=(
  [wp-no-stacks]="--min-latency --no-stacks"
  [wp-stacks]="--min-latency (stacks)"
  [bpftrace-offcpu]="bpftrace kstack on sched_switch"
)
count_slow_calls() {  # COLUMN: the slow calls its trace kept (its items): the stacks were taken
  [[ $1 == wp-* ]] && slow_of[$1]+="$(grep -c '"causes"' "$work/$1.out" 2>/dev/null || echo 0) "
  return 0
}
section_stacks() {
  echo "== stacks: $rounds rounds; --min-latency $stacks_min_latency; pwrite COUNT=$count, pwrite+fdatasync FSYNC_COUNT=$fsync_count"
  local columns=("${stacks_columns[@]}") no_stacks=1
  if ! "$wp" trace --help 2>&1 | grep -q -- '--no-stacks'; then
    # Without the option stacks cannot be turned off: that column is left out.
    no_stacks=0
    columns=(untraced wp-stacks bpftrace-offcpu)
    echo "bench: this writepath has no --no-stacks; its column is left out" >&2
  fi
  local rows=() notes=()
  for workload in fdatasync pwrite; do
    declare -A ns_of=() slow_of=()
    for ((r = 0; r < rounds; r++)); do run_round "$r" "$workload" count_slow_calls "${columns[@]}"; done
    local row
    row="| $workload | $(fmt_ns "$(median_of "${ns_of[untraced]}")") |"
    for c in "${stacks_columns[@]:1}"; do
      if [[ -z ${ns_of[$c]:-} ]]; then row+=" n/a |"; continue; fi
      row+=" $(fmt_ratio "$(median_ratio "${ns_of[$c]}" "${ns_of[untraced]}")") |"
    done
    if ((no_stacks)); then
      row+=" $(fmt_ratio "$(median_ratio "${ns_of[wp-stacks]}" "${ns_of[wp-no-stacks]}")") |"
    else
      row+=" n/a |"
    fi
    rows+=("$row")
    local kept
    kept="$workload: slow calls kept per run $(median_of "${slow_of[wp-stacks]:-}") (stacks)"
    ((no_stacks)) && kept+=", $(median_of "${slow_of[wp-no-stacks]:-}") (--no-stacks)"
    notes+=("$kept")
    unset ns_of slow_of
  done
  {
    echo "### Off-CPU stacks (median of $rounds interleaved rounds; ratio = time per op / untraced)"
    echo
    echo "| workload | untraced ns/op | ${stacks_title[wp-no-stacks]} | ${stacks_title[wp-stacks]} | ${stacks_title[bpftrace-offcpu]} | stacks / --no-stacks |"
    echo "|---|---:|---:|---:|---:|---:|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "--min-latency $stacks_min_latency. fdatasync: 4 KiB pwrite + fdatasync, $fsync_count per run,"
    echo "ext4 with journal on a loop device (every fdatasync is slow and sleeps); pwrite: 4 KiB"
    echo "pwrite over a cached 1 MiB file, $count per run (all but a few fast). $(printf '%s; ' "${notes[@]}" | sed 's/; $//')."
    ((no_stacks)) || echo "This writepath has no --no-stacks: that column is n/a."
    echo
  } >>"$summary"
}

run_if_alone stacks "$@"
