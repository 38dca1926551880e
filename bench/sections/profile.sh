#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# profile: where the agent's time goes: perf record (cpu-clock) of writepath report of a
# recording of REPLAY_COUNT writes, in json and text, the hottest symbols.
# The agent's own hot spots, for whoever makes it faster next: perf's cpu-clock samples of
# `writepath report` over a recording (the stitching and formatting a live trace does too, with
# no kernel in the way), the top symbols by self time.
# Usage: bash bench/sections/profile.sh [BUILD_DIR]   (build dir default `build`)
# Sizes: REPLAY_COUNT (defaults in bench/lib.sh).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

section_profile() {
  echo "== profile: writepath report of a recording of REPLAY_COUNT=$replay_count cached pwrites"
  local rec="$work/profile.wpt" format
  "$wp" record -o "$rec" -- "$bin/wp_bench_pwrite" "$SCRATCH_MNT/profile.dat" "$replay_count" 1 \
    >/dev/null 2>"$work/err" || { echo "bench: profile: recording failed: $(tail -n 1 "$work/err")" >&2; return; }
  {
    echo "### Where the agent's time goes (perf record -e cpu-clock of writepath report, self time)"
    echo
    for format in json text; do
      perf record -q -e cpu-clock -o "$work/profile.data" -- "$wp" report "$rec" --format "$format" \
        -o /dev/null 2>"$work/err" >/dev/null || { echo "report --format $format: perf record failed"; continue; }
      echo "report --format $format:"
      echo
      echo '```'
      # (head closes the pipe early: the writers' SIGPIPE is no failure of the section)
      { perf report -i "$work/profile.data" --no-children --sort sym --stdio 2>/dev/null |
        grep -E '^ +[0-9.]+%' | head -n 15 | cut -c1-140; } || true
      echo '```'
      echo
    done
  } >>"$summary"
  rm -f "$rec" "$work/profile.data" "$SCRATCH_MNT/profile.dat"
}

run_if_alone profile "$@"
