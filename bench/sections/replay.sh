#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# replay: writepath report of a 1 M-write recording: events/s and peak RSS, in json, text and
# perfetto, and stitching alone (decoded and stitched, every item dropped by --min-latency 1h
# before it is formatted); beside json, RapidJSON's Writer alone writing the same objects.
# Usage: bash bench/sections/replay.sh [BUILD_DIR]   (build dir default `build`)
# Sizes: REPLAY_COUNT, the writes recorded (defaults in bench/lib.sh).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

section_replay() {
  echo "== replay: a recording of REPLAY_COUNT=$replay_count cached pwrites"
  local rec="$work/replay.wpt" rows=()
  "$wp" record -o "$rec" -- "$bin/wp_bench_pwrite" "$SCRATCH_MNT/replay.dat" "$replay_count" 1 \
    >/dev/null 2>"$work/replay.err" ||
    echo "bench: recording for replay failed: $(tail -n 2 "$work/replay.err" | tr '\n' ' ')" >&2
  local events
  events=$(recording_field events "$rec")
  echo "recording: $(du -h "$rec" | cut -f1), events ${events:-?}, lost $(recording_field lost "$rec")"
  # "stitch only": decoded and stitched, every item dropped by --min-latency before it is
  # formatted (the summary alone is written): the agent's rate without its output.
  for format in "stitch only" json text perfetto; do
    local out="$work/replay.${format// /-}" secs kib rate args=(--format "$format")
    [[ $format == "stitch only" ]] && args=(--format json --min-latency 1h)
    if /usr/bin/time -f '%e %M' -o "$work/replay.time" "$wp" report "$rec" "${args[@]}" \
      -o "$out" 2>"$work/replay.err"; then
      read -r secs kib <"$work/replay.time"
      rate=$(awk -v e="${events:-0}" -v s="$secs" 'BEGIN {printf "%.0f", (s > 0 ? e / s : 0)}')
    else
      echo "bench: report --format $format failed: $(tail -n 2 "$work/replay.err" | tr '\n' ' ')" >&2
      secs=fail kib=fail rate=fail
    fi
    echo "report ($format): $secs s, $rate events/s, peak RSS $(mib "$kib"), output $(du -h "$out" 2>/dev/null | cut -f1)"
    rows+=("| $format | $secs | $rate | $(mib "$kib") |")
    # The yardstick for json: RapidJSON's Writer alone writing the same objects to a file beside.
    if [[ $format == json && $secs != fail ]]; then
      local objects rj_secs
      if read -r objects rj_secs < <("$bin/wp_bench_json_rewrite" "$out" "$out.rapidjson" 2>"$work/replay.err"); then
        echo "RapidJSON Writer alone, the same $objects objects: $rj_secs s; report json / it: $(fmt_ratio "$(ratio "$secs" "$rj_secs")")"
        rows+=("| RapidJSON Writer alone, the same $objects objects (report json ÷ it: $(fmt_ratio "$(ratio "$secs" "$rj_secs")")) | $rj_secs | — | — |")
      else
        echo "bench: wp_bench_json_rewrite failed: $(tail -n 1 "$work/replay.err")" >&2
      fi
      rm -f "$out.rapidjson"
    fi
    rm -f "$out"
  done
  {
    echo "### Replay: writepath report of a recording of $replay_count writes (${events:-?} events)"
    echo
    echo "| format | seconds | events/s | peak RSS |"
    echo "|---|---:|---:|---:|"
    printf '%s\n' "${rows[@]}"
    echo
  } >>"$summary"
  rm -f "$rec" "$SCRATCH_MNT/replay.dat"
}

run_if_alone replay "$@"
