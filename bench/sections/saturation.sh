#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# saturation: writers flat out: events/s the agent consumes and records lost. One writer, then
# one per core, each doing SAT_COUNT cached 4 KiB pwrites, under `record` and `trace --format
# json`.
# Usage: bash bench/sections/saturation.sh [BUILD_DIR]   (build dir default `build`)
# Sizes: SAT_COUNT (defaults in bench/lib.sh).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

section_saturation() {
  local writers_list=(1) rows=()
  (($(nproc) > 1)) && writers_list+=("$(nproc)")
  echo "== saturation: SAT_COUNT=$sat_count cached pwrites per writer, writers ${writers_list[*]}"
  for writers in "${writers_list[@]}"; do
    for mode in record json; do
      local out="$work/sat.$mode" args label
      if [[ $mode == record ]]; then
        args=(record -o "$out") label="record -o F"
      else
        args=(trace --format json -o "$out") label="trace --format json -o F"
      fi
      "$wp" "${args[@]}" -- sh -c "for i in \$(seq $writers); do
          '$bin/wp_bench_pwrite' '$SCRATCH_MNT/sat.'\$i $sat_count 1 & done; wait" \
        >"$work/sat.writers" 2>"$work/sat.err" &
      local pid=$!
      # (-s: the job may not have opened sat.err yet)
      until grep -qs "writepath: tracing" "$work/sat.err" || ! kill -0 "$pid" 2>/dev/null; do sleep 0.02; done
      local start end rc=0
      start=$(now)
      wait "$pid" || rc=$?
      end=$(now)
      ((rc == 0)) || echo "bench: saturation $mode exited $rc: $(tail -n 2 "$work/sat.err" | tr '\n' ' ')" >&2
      local events lost writes_ns rate
      if [[ $mode == record ]]; then
        events=$(recording_field events "$out"); lost=$(recording_field lost "$out")
      else
        events=$(summary_field events "$out"); lost=$(summary_field lost "$out")
      fi
      local -a sat_writers
      mapfile -t sat_writers <"$work/sat.writers"  # each writer's ns/write, a line each
      writes_ns=$(fmt_ns "$(median "${sat_writers[@]}")")
      rate=$(awk -v e="${events:-0}" -v a="$start" -v b="$end" 'BEGIN {printf "%.0f", e / (b - a)}')
      echo "saturation $writers writer(s) under $label: events ${events:-?} in $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}') s of tracing = $rate events/s, lost ${lost:-?}, writers' median $writes_ns ns/write"
      rows+=("| $writers | $label | $writes_ns | ${events:-?} | $rate | ${lost:-?} |")
      rm -f "$out" "$SCRATCH_MNT"/sat.*
    done
  done
  {
    echo "### Saturation: each writer does $sat_count cached 4 KiB pwrites flat out"
    echo
    echo "| writers | mode | writer ns/write | events | events/s (attached → exit) | lost |"
    echo "|---:|---|---:|---:|---:|---:|"
    printf '%s\n' "${rows[@]}"
    echo
  } >>"$summary"
}

run_if_alone saturation "$@"
