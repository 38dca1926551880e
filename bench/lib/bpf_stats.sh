# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Sourced by bench/lib.sh: the kernel's own count of each BPF program's runs and time
# (kernel.bpf_stats_enabled), which the namespace and programs sections switch on while they
# read it and put back after, and on any exit (the EXIT trap): counting adds two clock reads to
# every run of every program on the machine.
# shellcheck disable=SC2154 # wp and work are bench/lib.sh's, set before any call

# kernel.bpf_stats_enabled as it was before a section (programs, namespace) switched it on
# ("": untouched).
bpf_stats_was=""
restore_bpf_stats() { [[ -z $bpf_stats_was ]] || sysctl -qw kernel.bpf_stats_enabled="$bpf_stats_was"; }

# CASE OPS CMD…: CMD (OPS operations) under `writepath trace -- CMD`; one table row from the
# trace's own summary (bpf_cost: the kernel's counts for the programs of that trace).
program_row_traced() {
  local case=$1 ops=$2 out="$work/programs.jsonl"
  shift 2
  "$wp" trace --format json -o "$out" -- "$@" >/dev/null 2>"$work/err" ||
    { echo "bench: programs: $case failed: $(tail -n 1 "$work/err")" >&2; return; }
  tail -n 1 "$out" | jq -r --arg case "$case" --argjson ops "$ops" '
    if .bpf_cost == null then "| \($case) | n/a | this writepath'"'"'s summary has no bpf_cost |" else
    (.bpf_cost.programs // []) as $d
    | "| \($case) | \((($d | map(.ns) | add // 0) / $ops) | floor) | " +
      ([$d[:4][] | "\(.name) \(.ns_per_run) ns × \((.runs / $ops * 100 | round) / 100)"]
       | join(", ")) + " |" end'
}
