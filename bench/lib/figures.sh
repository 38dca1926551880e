# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Sourced by bench/lib.sh: the figures of a run. The machine is shared and noisy, so each
# figure is a median over rounds, a ratio within one round; formatting for the tables; events
# and lost records from a trace's summary or a recording's.
# shellcheck disable=SC2154 # wp and work are bench/lib.sh's, set before any call

median() {
  local values
  values=$(printf '%s\n' "$@" | grep -E '^[0-9.eE+-]+$' || true)
  [[ -n $values ]] || { echo "fail"; return; }
  sort -g <<<"$values" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
# "V1 V2 …" (one figure a round, as the sections gather them): their median.
median_of() {
  # shellcheck disable=SC2086 # the figures, split on spaces and newlines alike
  median $1
}
ratio() {  # A B: A / B, or "fail" when either is not a number
  awk -v a="$1" -v b="$2" 'BEGIN {
    if (a !~ /^[0-9.eE+-]+$/ || b !~ /^[0-9.eE+-]+$/ || b == 0) print "fail"; else printf "%.3f\n", a / b }'
}
# "A1 A2 …" "B1 B2 …" (one figure a round): the median over rounds of Ai / Bi. Runs of one
# round are close in time, so the machine's drift cancels.
median_ratio() {
  local a b ratios=() r
  read -ra a <<<"$1"
  read -ra b <<<"$2"
  for ((r = 0; r < ${#a[@]}; r++)); do ratios+=("$(ratio "${a[r]}" "${b[r]:-}")"); done
  median "${ratios[@]}"
}
# ROUND COLUMN…: the columns in the order round ROUND runs them, reversed every other round
# so that no column always runs first (on a cold cache) or last.
column_order() {
  local round=$1
  shift
  if ((round % 2 == 0)); then printf '%s\n' "$@"; else printf '%s\n' "$@" | tac; fi
}
fmt_ratio() { if [[ $1 == fail ]]; then echo "fail"; else awk -v r="$1" 'BEGIN {printf "%.2f×", r}'; fi; }
fmt_ns() { [[ $1 =~ ^[0-9.eE+-]+$ ]] && awk -v v="$1" 'BEGIN {printf (v >= 100 ? "%.0f" : "%.1f"), v}' || echo "$1"; }
mib() { [[ $1 =~ ^[0-9]+$ ]] && awk -v k="$1" 'BEGIN {printf "%.1f MiB", k / 1024}' || echo "$1"; }
# Events and lost records from a trace's summary: JSON Lines' last line, or the text summary.
summary_field() {  # FIELD FILE
  local line label=$1
  # The text summary calls the JSON summary's "events" kernel records.
  [[ $1 == events ]] && label="kernel records"
  line=$(tail -n 1 "$2" 2>/dev/null || true)
  if [[ $line == *'"type":"summary"'* ]]; then
    sed -nE "s/.*\"$1\":([0-9]+).*/\1/p" <<<"$line"
  else
    grep -oE "$label [0-9]+" "$2" 2>/dev/null | tail -n 1 | awk '{print $NF}'
  fi
}
# FIELD FILE.wpt: the same from a recording, through writepath report (its summary only).
recording_field() {
  "$wp" report "$2" --format json --min-latency 1000s 2>/dev/null | tail -n 1 >"$work/recording-summary.json" || true
  summary_field "$1" "$work/recording-summary.json"
}
now() { date +%s.%N; }
