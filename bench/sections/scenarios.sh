#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scenarios: load scenarios whose point is a speed or size ratio (warm over cold read, eager
# over lazy load, the throttled logger's p99 over p50, kv-tier's io_uring over pwrite): the
# ratios, each the median of SCENARIO_ROUNDS runs of `writepath load NAME --json`.
# How much faster or smaller one way is than the other depends on the disk, its readahead and
# the page cache: figures to read, not to pass or fail (the integration tests check the counts).
# Each scenario makes its own scratch filesystem; a ratio is the median over rounds.
# Usage: bash bench/sections/scenarios.sh [BUILD_DIR]   (build dir default `build`)
# Sizes: SCENARIO_ROUNDS (defaults in bench/lib.sh).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

scenario_ratio() {  # NAME JQ_EXPR ARGS…: NAME's ratio, one run per round, median
  local name=$1 expr=$2 values=() r value
  shift 2
  for ((r = 0; r < scenario_rounds; r++)); do
    if "$wp" load "$name" --json "$@" >"$work/scenario.json" 2>"$work/scenario.err"; then
      value=$(jq -r ".figures | $expr" "$work/scenario.json" 2>/dev/null) || value=fail
      values+=("$value")
    else
      echo "bench: load $name failed: $(tail -n 2 "$work/scenario.err" | tr '\n' ' ')" >&2
    fi
  done
  median "${values[@]}"
}

section_scenarios() {
  echo "== scenarios: SCENARIO_ROUNDS=$scenario_rounds runs of each"
  local rows=() warm eager_time eager_bytes stall kv_pwrite kv_uring uring_gain
  warm=$(scenario_ratio cold-warm '.warm_over_cold' --size 256M)
  echo "cold-warm 256M: warm read / cold read throughput $(fmt_ratio "$warm")"
  rows+=("| cold-warm --size 256M | warm read throughput / cold | $(fmt_ratio "$warm") |")
  eager_time=$(scenario_ratio mmap-load '.eager.load_ns / .lazy.load_ns' --tensors 32 --tensor-size 1M)
  eager_bytes=$(scenario_ratio mmap-load '.eager.read_bytes / .lazy.read_bytes' --tensors 32 --tensor-size 1M)
  echo "mmap-load 32×1M: eager / lazy load time $(fmt_ratio "$eager_time"), bytes read $(fmt_ratio "$eager_bytes")"
  rows+=("| mmap-load --tensors 32 --tensor-size 1M | eager load time / lazy | $(fmt_ratio "$eager_time") |")
  rows+=("| mmap-load --tensors 32 --tensor-size 1M | eager bytes read from storage / lazy | $(fmt_ratio "$eager_bytes") |")
  stall=$(scenario_ratio dirty-throttle '.log_p99_ns / .log_p50_ns' --flood 256M --duration 2s \
    --dirty-limit 4M --background 2M)
  echo "dirty-throttle: logger p99 / p50 $(fmt_ratio "$stall")"
  rows+=("| dirty-throttle --dirty-limit 4M --flood 256M | logger append p99 / p50 | $(fmt_ratio "$stall") |")
  # kv-tier's engines on the same blocks: O_DIRECT write throughput through a ring of 16 over
  # one pwrite a block (each figure the median of its own runs).
  kv_pwrite=$(scenario_ratio kv-tier '.direct.write_mib_s' --blocks 256)
  kv_uring=$(scenario_ratio kv-tier '.direct.write_mib_s' --blocks 256 --engine io_uring --iodepth 16)
  uring_gain=$(ratio "$kv_uring" "$kv_pwrite")
  echo "kv-tier 256×256k O_DIRECT: io_uring (iodepth 16) / pwrite write throughput $(fmt_ratio "$uring_gain")"
  rows+=("| kv-tier --blocks 256 | O_DIRECT write MiB/s, --engine io_uring --iodepth 16 / pwrite | $(fmt_ratio "$uring_gain") |")
  {
    echo "### Scenarios (median of $scenario_rounds runs; each on its own scratch ext4)"
    echo
    echo "| scenario | ratio | value |"
    echo "|---|---|---:|"
    printf '%s\n' "${rows[@]}"
    echo
  } >>"$summary"
}

run_if_alone scenarios "$@"
