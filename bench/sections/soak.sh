#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# soak: a steady logger under the agent: its peak RSS over time and records lost. The logger
# appends 4 KiB at SOAK_RATE writes/s for SOAK_SECONDS, never syncing, under `trace --format
# json`, `trace --min-latency 50ms` and `record`: peak RSS, RSS at 10 s and at the end (flat or
# growing), events and records lost.
# Usage: bash bench/sections/soak.sh [BUILD_DIR]   (build dir default `build`)
# Sizes: SOAK_SECONDS, SOAK_RATE (defaults in bench/lib.sh).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# MODE: run the logger under MODE for soak_seconds, sampling the agent's memory every second.
soak_run() {
  local mode=$1 out="$work/soak.$1" args label
  case $mode in
    json) args=(trace --format json -o "$out") label="trace --format json -o F" ;;
    min-latency) args=(trace --min-latency 50ms -o "$out") label="trace --min-latency 50ms" ;;
    record) args=(record -o "$out") label="record -o F" ;;
  esac
  mkdir -p "$SCRATCH_MNT/soak"
  "$wp" "${args[@]}" -- "$bin/wp_bench_logger" "$SCRATCH_MNT/soak" "$soak_rate" "$soak_seconds" \
    >"$work/soak.logger" 2>"$work/soak.err" &
  local pid=$! t=0 hwm="" rss="" rss10="" status
  while status=$(cat "/proc/$pid/status" 2>/dev/null) && [[ $status == *VmHWM* ]]; do
    hwm=$(awk '/^VmHWM/ {print $2}' <<<"$status")
    rss=$(awk '/^VmRSS/ {print $2}' <<<"$status")
    ((t == 10)) && rss10=$rss
    sleep 1
    t=$((t + 1))
  done
  local rc=0
  wait "$pid" || rc=$?
  local lost events
  if [[ $mode == record ]]; then
    lost=$(recording_field lost "$out"); events=$(recording_field events "$out")
  else
    lost=$(summary_field lost "$out"); events=$(summary_field events "$out")
  fi
  local achieved
  achieved=$(sed -nE 's/.*\(([0-9]+) writes\/s\).*/\1/p' "$work/soak.logger")
  ((rc == 0)) || echo "bench: soak $mode exited $rc: $(tail -n 2 "$work/soak.err" | tr '\n' ' ')" >&2
  echo "soak $mode: peak RSS $(mib "$hwm"), RSS at 10 s $(mib "${rss10:-n/a}"), at end $(mib "$rss"), events ${events:-?}, lost ${lost:-?}, logger ${achieved:-?} writes/s"
  soak_rows+=("| $label | $(mib "$hwm") | $(mib "${rss10:-n/a}") | $(mib "$rss") | ${events:-?} | ${lost:-?} | ${achieved:-?} |")
  rm -f "$out"
}

section_soak() {
  echo "== soak: SOAK_SECONDS=$soak_seconds at SOAK_RATE=$soak_rate writes/s, per mode"
  soak_rows=()
  for mode in json min-latency record; do soak_run "$mode"; done
  {
    echo "### Soak: logger appending 4 KiB at $soak_rate writes/s for $soak_seconds s, never syncing"
    echo
    echo "| mode | peak RSS (VmHWM) | RSS at 10 s | RSS at end | events | lost | logger writes/s |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    printf '%s\n' "${soak_rows[@]}"
    echo
  } >>"$summary"
}

run_if_alone soak "$@"
