#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# variants: the write-syscall hook's variants: bystander and traced-write cost of each. Each
# variant writepath doctor names, by the flag that chooses it: getppid under `trace -p 1` (what
# an untraced process pays) and a cached 4 KiB pwrite under `trace -- CMD`, as ratios to
# untraced, ABBA within each round.
# Usage: bash bench/sections/variants.sh [BUILD_DIR]   (build dir default `build`)
# Sizes: ROUNDS, COUNT, GETPPID_COUNT (defaults in bench/lib.sh).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# The write-syscall hook's variants, by the flag that chooses each: per-syscall tracepoints (the
# default) and the raw sys_enter/sys_exit pair (--raw-syscalls).
variant_flags=("" "--raw-syscalls")
chosen_variant() {  # FLAGS: the write-syscall variant doctor reports with them
  # awk reads doctor's whole report: a reader that stops at the first match (grep -m1) would
  # kill doctor with SIGPIPE, and pipefail would end the run.
  "$wp" doctor ${1:+"$1"} 2>&1 | awk '/write\/sync syscalls/ && !found {
    sub(/.*write\/sync syscalls +/, ""); sub(/ +$/, ""); print; found = 1 }'
}

section_variants() {
  echo "== hook variants: $rounds rounds; pwrite COUNT=$count, getppid GETPPID_COUNT=$getppid_count"
  local rows=()
  for flags in "${variant_flags[@]}"; do
    local variant
    variant=$(chosen_variant "$flags")
    [[ -n $variant ]] || continue
    echo "variant: $variant (${flags:-default})"
    local by_ratios=() tr_ratios=()
    hook_flags=$flags
    for ((r = 0; r < rounds; r++)); do
      local u_g b_g u_p t_p
      # ABBA within the round: untraced, traced, traced, untraced; order flips every round.
      if ((r % 2 == 0)); then
        u_g=$(run_column untraced getppid)
        b_g=$(run_column wp-bystander getppid)
        t_p=$(run_column wp-trace pwrite)
        u_p=$(run_column untraced pwrite)
      else
        u_p=$(run_column untraced pwrite)
        t_p=$(run_column wp-trace pwrite)
        b_g=$(run_column wp-bystander getppid)
        u_g=$(run_column untraced getppid)
      fi
      by_ratios+=("$(ratio "$b_g" "$u_g")")
      tr_ratios+=("$(ratio "$t_p" "$u_p")")
      echo "round $r: getppid untraced $u_g, bystander $b_g ns/op ($(fmt_ratio "${by_ratios[-1]}")); pwrite untraced $u_p, traced $t_p ns/op ($(fmt_ratio "${tr_ratios[-1]}"))"
    done
    hook_flags=""
    rows+=("| $variant | ${flags:-(default)} | $(fmt_ratio "$(median "${by_ratios[@]}")") | $(fmt_ratio "$(median "${tr_ratios[@]}")") |")
  done
  {
    echo "### Write-syscall hook variants (median of $rounds rounds; lower is better)"
    echo
    echo "| variant (writepath doctor) | flag | getppid, bystander of trace -p 1 | cached pwrite, trace -- CMD |"
    echo "|---|---|---:|---:|"
    printf '%s\n' "${rows[@]}"
    echo
  } >>"$summary"
}

run_if_alone variants "$@"
