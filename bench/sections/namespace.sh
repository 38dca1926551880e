#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# namespace: a rename loop beside the cached pwrite and appending write loops: each untraced,
# traced, and as a bystander of `trace -p 1`; the added ns per traced rename against per traced
# write, and the programs' own time per op (kernel.bpf_stats_enabled); then renames and cached
# pwrites alternating in one traced process, their programs' time per call from the same run
# (the issue's cost target), and the same loop under a bpftrace that counts renames by their
# names.
# What a traced rename costs against a traced write, and what an untraced one pays: the rename
# loop and the cached pwrite loop, each untraced, under `trace -- CMD` (JSON; every rename an
# item the hazard rules hold to the end) and as a bystander of `trace -p 1`, interleaved.
# Usage: bash bench/sections/namespace.sh [BUILD_DIR]   (build dir default `build`)
# Sizes: ROUNDS, COUNT (defaults in bench/lib.sh).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

namespace_run() {  # TRACER LOOP: one run's ns/op ("fail" for a failed run)
  local ns cmd
  case $2 in
    rename) cmd=("$bin/wp_bench_rename" "$SCRATCH_MNT" "$count") ;;
    pwrite) cmd=("$bin/wp_bench_pwrite" "$SCRATCH_MNT/ns.dat" "$count" 1) ;;
    append) : >"$SCRATCH_MNT/ns-append.dat"
      cmd=("$bin/wp_bench_write" "$count" "$SCRATCH_MNT/ns-append.dat" 4096) ;;
  esac
  case $1 in
    untraced) ns=$("${cmd[@]}" 2>"$work/err") || ns="" ;;
    traced) ns=$("$wp" trace --format json -o "$work/ns.jsonl" -- "${cmd[@]}" 2>"$work/err") || ns="" ;;
    bystander)
      if bg_start "$work/ns.log" "writepath: tracing" "$wp" trace -p 1 -o "$work/ns-bystander.out"; then
        ns=$("${cmd[@]}" 2>"$work/err") || ns=""
        bg_stop TERM
      fi ;;
  esac
  echo "${ns:-fail}"
}
namespace_round_run() {  # TRACER:LOOP: one run, into the caller's ns_of and round line
  local ns
  ns=$(namespace_run "${1%%:*}" "${1##*:}")
  ns_of[$1]+="$ns "
  line+=" $1 $ns ns/op;"
}
section_namespace() {
  echo "== namespace: $rounds rounds; $count renames, cached pwrites and appending writes per run"
  local runs=(untraced:rename traced:rename bystander:rename untraced:pwrite traced:pwrite
    bystander:pwrite untraced:append traced:append bystander:append)
  declare -A ns_of=()
  interleaved_rounds namespace_round_run "${runs[@]}"
  local rows=() loop
  for loop in rename pwrite append; do
    local base traced added
    base=$(median_of "${ns_of[untraced:$loop]}")
    traced=$(median_of "${ns_of[traced:$loop]}")
    added=$(awk -v t="$traced" -v b="$base" 'BEGIN {if (t + 0 > 0 && b + 0 > 0) printf "%.0f", t - b; else print "fail"}')
    rows+=("| $loop | $(fmt_ns "$base") | $(fmt_ratio "$(median_ratio "${ns_of[traced:$loop]}" "${ns_of[untraced:$loop]}")") | $added | $(fmt_ratio "$(median_ratio "${ns_of[bystander:$loop]}" "${ns_of[untraced:$loop]}")") |")
  done
  # The programs' own time per op, as the kernel counts it.
  local prows=()
  bpf_stats_was=$(sysctl -n kernel.bpf_stats_enabled)
  sysctl -qw kernel.bpf_stats_enabled=1
  prows+=("$(program_row_traced "traced rename (trace -- CMD)" "$count" "$bin/wp_bench_rename" "$SCRATCH_MNT" "$count")")
  prows+=("$(program_row_traced "traced cached 4 KiB pwrite (trace -- CMD)" "$count" "$bin/wp_bench_pwrite" "$SCRATCH_MNT/ns.dat" "$count" 1)")
  : >"$SCRATCH_MNT/ns-append.dat"
  prows+=("$(program_row_traced "traced appending 4 KiB write (trace -- CMD)" "$count" "$bin/wp_bench_write" "$count" "$SCRATCH_MNT/ns-append.dat" 4096)")
  rm -f "$SCRATCH_MNT/ns-append.dat"
  # The target's own measure: a rename and a cached pwrite alternating in one traced process,
  # each call's program time from the same run, one ratio a round (see pair_ratio_row).
  local pair_row
  pair_row=$(pair_ratio_row)
  restore_bpf_stats
  bpf_stats_was=""
  {
    echo "### Name-change calls (median of $rounds interleaved rounds; $count ops per run)"
    echo
    echo "| loop | untraced ns/op | traced (trace -- CMD) | added ns per traced op | bystander of trace -p 1 |"
    echo "|---|---:|---:|---:|---:|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "| workload | program ns per op | program: ns per run × runs per op |"
    echo "|---|---:|---|"
    printf '%s\n' "${prows[@]}"
    echo
    echo "| one traced process, rename and cached 4 KiB pwrite alternating | rename programs ns per call | pwrite programs ns per call | rename / pwrite (min–max over rounds) |"
    echo "|---|---:|---:|---:|"
    echo "$pair_row"
    echo
  } >>"$summary"
}
# The same loop under bpftrace, one entry probe a call: a rename counted by both its names (as
# a tool that tells renames apart must read them), a pwrite counted by its fd.
bpftrace_pair_program='tracepoint:syscalls:sys_enter_rename { @n[str(args->oldname), str(args->newname)] = count(); }
tracepoint:syscalls:sys_enter_pwrite64 { @w[args->fd] = count(); }'
# A program's cost depends on the machine's state at the moment (the host's other guests, how
# cold the ring buffer's lines are, how promptly the agent reads): between two runs it drifts
# by a third here. Calls alternating in one process run under the same state, so their ratio
# holds still: one run a round, the median and spread of the ratios over rounds.
pair_ratio_row() {
  local r out="$work/pair.jsonl" line
  local -A pair_renames=() pair_pwrites=() pair_ratios=()
  for ((r = 0; r < rounds; r++)); do
    local tracer
    for tracer in $(column_order "$r" writepath bpftrace); do
      line=$(pair_run "$tracer")
      [[ $line == fail ]] && continue
      pair_renames[$tracer]+="${line% *} "
      pair_pwrites[$tracer]+="${line#* } "
      pair_ratios[$tracer]+="$(ratio "${line% *}" "${line#* }") "
    done
  done
  rm -f "$SCRATCH_MNT/ns-pair.dat"
  for tracer in writepath bpftrace; do
    local label="$tracer (trace -- CMD)"
    [[ $tracer == bpftrace ]] && label="bpftrace: rename counted by its names, pwrite by its fd"
    if [[ -z ${pair_ratios[$tracer]:-} ]]; then
      echo "| $label | fail | fail | fail |"
      continue
    fi
    local spread
    # shellcheck disable=SC2086 # one figure a round, space-separated
    spread=$(printf '%s\n' ${pair_ratios[$tracer]} | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.2f–%.2f", lo, hi}')
    echo "| $label | $(fmt_ns "$(median_of "${pair_renames[$tracer]}")") | $(fmt_ns "$(median_of "${pair_pwrites[$tracer]}")") | $(fmt_ratio "$(median_of "${pair_ratios[$tracer]}")") ($spread) |"
  done
}
# TRACER: one run of the pair loop under TRACER; "RENAME_NS PWRITE_NS" per call, or "fail".
pair_run() {
  local out="$work/pair.jsonl" loop=("$bin/wp_bench_rename" "$SCRATCH_MNT" "$count" "$SCRATCH_MNT/ns-pair.dat")
  if [[ $1 == writepath ]]; then
    if ! "$wp" trace --format json -o "$out" -- "${loop[@]}" >/dev/null 2>"$work/err"; then
      echo "bench: namespace: the rename and pwrite pair failed: $(tail -n 1 "$work/err")" >&2
      echo fail
      return
    fi
    # Per call: each syscall's two programs (entry, exit) over the loop's calls.
    tail -n 1 "$out" | jq -r --argjson n "$count" '(.bpf_cost.programs // []) as $p
      | ([$p[] | select(.name | test("_rename$")) | .ns] | add // 0) as $rn
      | ([$p[] | select(.name | test("_pwrite64$")) | .ns] | add // 0) as $pw
      | if $rn > 0 and $pw > 0 then "\($rn / $n) \($pw / $n)" else "fail" end'
    return
  fi
  local line=fail
  if bpftrace_start "$work/pair-bpftrace.log" "$bpftrace_pair_program" sys_enter_pwrite64; then
    # The counters are read while bpftrace still holds its programs: the newest of each name
    # (cut to 15 bytes) is its. Machine-wide renames and pwrites beside the loop are averaged in.
    if "${loop[@]}" >/dev/null 2>"$work/err"; then
      line=$(bpftool prog show -j | jq -r '[.[] | select(.type == "tracepoint")] as $p
        | ([$p[] | select(.name == "sys_enter_renam")] | max_by(.id)) as $r
        | ([$p[] | select(.name == "sys_enter_pwrit")] | max_by(.id)) as $w
        | if $r != null and $w != null and ($r.run_cnt // 0) > 0 and ($w.run_cnt // 0) > 0
          then "\($r.run_time_ns / $r.run_cnt) \($w.run_time_ns / $w.run_cnt)" else "fail" end')
    fi
    bg_stop INT
  fi
  echo "$line"
}

run_if_alone namespace "$@"
