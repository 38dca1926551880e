#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# serve: the always-on agent beside trace and a bpftrace histogram (traced writes and a
# bystander), what --reads adds to a bystander's cached pread (beside its pwrite), then its RSS
# over a long soak while /metrics is scraped.
# The always-on agent watches every write of the machine, so its cost is paid by processes
# nobody asked about: the table puts it beside trace (asked about the loop, or about PID 1 for
# the bystander row) and beside what an operator would run instead, a machine-wide bpftrace
# write latency histogram. The soak then runs it under a steady logger for a long time while
# /metrics is scraped as Prometheus would, and fails if the agent ends above its RSS bound.
# Usage: bash bench/sections/serve.sh [BUILD_DIR]   (build dir default `build`)
# Sizes: ROUNDS, COUNT, FSYNC_COUNT, GETPPID_COUNT, SOAK_RATE, SERVE_SOAK_SECONDS (defaults in
# bench/lib.sh).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

serve_columns=(untraced wp-trace wp-serve bpftrace)
serve_scrape_every=15  # seconds between scrapes: Prometheus's usual interval
serve_rss_every=10     # seconds between samples of the agent's VmRSS
serve_rss_limit_kib=$((100 * 1024))  # the soak fails if the agent ends above this

metric_sum() {  # NAME FILE: NAME's samples in a scrape, summed over their label sets
  awk -v n="$1" 'index($0, n " ") == 1 || index($0, n "{") == 1 {s += $NF; found = 1}
    END {if (found) printf "%.0f\n", s}' "$2" 2>/dev/null
}
sum_of() { local t=0 v; for v in "$@"; do [[ $v =~ ^[0-9]+$ ]] && t=$((t + v)); done; echo "$t"; }

note_serve_counters() {  # COLUMN: serve's own counters at the end of its run
  if [[ $1 == wp-serve ]]; then
    events+=("$(metric_sum writepath_events_total "$work/wp-serve.out")")
    lost+=("$(metric_sum writepath_lost_events_total "$work/wp-serve.out")")
  fi
}
serve_side_by_side() {
  echo "== serve side by side: $rounds rounds; pwrite COUNT=$count, pwrite+fdatasync FSYNC_COUNT=$fsync_count, getppid GETPPID_COUNT=$getppid_count"
  local rows=() notes=()
  for workload in pwrite fdatasync getppid; do
    local columns=("${serve_columns[@]}") label=$workload
    # The bystander: trace is asked about PID 1 while the loop runs; serve and bpftrace watch
    # the whole machine either way.
    [[ $workload == getppid ]] && columns=(untraced wp-bystander wp-serve bpftrace) label="getppid (bystander)"
    declare -A ns_of=()
    local events=() lost=()
    for ((r = 0; r < rounds; r++)); do run_round "$r" "$workload" note_serve_counters "${columns[@]}"; done
    local traced=${columns[1]}
    rows+=("| $label | $(fmt_ns "$(median_of "${ns_of[untraced]}")") | $(fmt_ratio "$(median_ratio "${ns_of[$traced]}" "${ns_of[untraced]}")") | $(fmt_ratio "$(median_ratio "${ns_of[wp-serve]}" "${ns_of[untraced]}")") | $(fmt_ratio "$(median_ratio "${ns_of[bpftrace]}" "${ns_of[untraced]}")") | $(fmt_ratio "$(median_ratio "${ns_of[wp-serve]}" "${ns_of[$traced]}")") |")
    notes+=("$workload: events $(median "${events[@]}") per run, lost $(sum_of "${lost[@]}")")
    unset ns_of
  done
  {
    echo "### writepath serve beside trace and bpftrace (median of $rounds interleaved rounds; ratio = time per op / untraced)"
    echo
    echo "| workload | untraced ns/op | writepath trace | writepath serve | bpftrace pwrite64 hist | serve / trace |"
    echo "|---|---:|---:|---:|---:|---:|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "pwrite: 4 KiB pwrite over a cached 1 MiB file, $count per run; fdatasync: 4 KiB pwrite +"
    echo "fdatasync, $fsync_count per run, ext4 with journal on a loop device; both under \`trace -- CMD\`."
    echo "getppid: $getppid_count calls by a process no tracer is asked about (trace: \`trace -p 1\`)."
    echo "serve: \`serve --listen 127.0.0.1:PORT\` with its defaults, machine-wide, started and"
    echo "answering /metrics before the loop, SIGTERM after it; bpftrace: the pwrite64 latency"
    echo "hist(), machine-wide. serve's counters at the end of each run (writepath_events_total,"
    echo "writepath_lost_events_total, all rounds): $(printf '%s; ' "${notes[@]}" | sed 's/; $//')."
    echo
  } >>"$summary"
}

# What --reads adds to the bystander's calls: a cached pread (every read of the machine now
# runs the read syscall programs and is counted) beside a cached pwrite (which serve counts
# either way), under serve without and with --reads.
serve_reads_side_by_side() {
  echo "== serve --reads: $rounds rounds; pread and pwrite COUNT=$count"
  local rows=() workload
  for workload in pread pwrite; do
    declare -A ns_of=()
    for ((r = 0; r < rounds; r++)); do run_round "$r" "$workload" true untraced wp-serve wp-serve-reads; done
    rows+=("| $workload | $(fmt_ns "$(median_of "${ns_of[untraced]}")") | $(fmt_ratio "$(median_ratio "${ns_of[wp-serve]}" "${ns_of[untraced]}")") | $(fmt_ratio "$(median_ratio "${ns_of[wp-serve-reads]}" "${ns_of[untraced]}")") | $(fmt_ratio "$(median_ratio "${ns_of[wp-serve-reads]}" "${ns_of[wp-serve]}")") |")
    unset ns_of
  done
  {
    echo "### writepath serve --reads: a bystander's cached reads and writes (median of $rounds interleaved rounds; ratio = time per op / untraced)"
    echo
    echo "| workload | untraced ns/op | serve | serve --reads | --reads / without |"
    echo "|---|---:|---:|---:|---:|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "pread: 4 KiB pread64 over a cached 1 MiB file, pwrite: 4 KiB pwrite over a cached 1 MiB file,"
    echo "$count per run each, by a process no one asked about; serve machine-wide with its defaults,"
    echo "then with --reads."
    echo
  } >>"$summary"
}

serve_soak() {
  echo "== serve soak: SERVE_SOAK_SECONDS=$serve_soak_seconds, logger at SOAK_RATE=$soak_rate writes/s; /metrics every ${serve_scrape_every} s, VmRSS every ${serve_rss_every} s"
  local title="### writepath serve soak: logger at $soak_rate writes/s for $serve_soak_seconds s, /metrics scraped every $serve_scrape_every s"
  if ! serve_start "$work/serve-soak.log"; then
    failures+=("serve soak: writepath serve did not start")
    printf '%s\n\nwritepath serve did not start.\n\n' "$title" >>"$summary"
    return
  fi
  local agent=$bg_pid
  mkdir -p "$SCRATCH_MNT/soak"
  # The logger keeps its rotated files until it exits (4.8 GB a minute at 20k writes/s): it
  # runs in chunks of at most 60 s, each removing its files, so a long soak fits the scratch fs.
  (
    left=$serve_soak_seconds
    while ((left > 0)); do
      chunk=$((left < 60 ? left : 60))
      "$bin/wp_bench_logger" "$SCRATCH_MNT/soak" "$soak_rate" "$chunk" || exit 1
      left=$((left - chunk))
    done
  ) >"$work/serve-soak.logger" 2>"$work/serve-soak.err" &
  local logger=$! start=$SECONDS next_rss=0 next_scrape=0 samples=() scrapes=0 scrape_failures=0
  local rss
  while kill -0 "$logger" 2>/dev/null && kill -0 "$agent" 2>/dev/null; do
    local t=$((SECONDS - start))
    if ((t >= next_rss)); then
      rss=$(awk '/^VmRSS/ {print $2}' "/proc/$agent/status" 2>/dev/null || true)
      [[ -n $rss ]] && samples+=("$rss")
      next_rss=$((next_rss + serve_rss_every))
    fi
    if ((t >= next_scrape)); then
      if scrape "$work/serve-soak.metrics"; then scrapes=$((scrapes + 1)); else scrape_failures=$((scrape_failures + 1)); fi
      next_scrape=$((next_scrape + serve_scrape_every))
    fi
    sleep 0.5
  done
  local logger_rc=0
  wait "$logger" || logger_rc=$?
  ((logger_rc == 0)) || echo "bench: serve soak logger exited $logger_rc: $(tail -n 2 "$work/serve-soak.err" | tr '\n' ' ')" >&2
  # The last sample and scrape after the load, then the agent's own shutdown.
  local hwm="" agent_rc=0
  if kill -0 "$agent" 2>/dev/null; then
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$agent/status" 2>/dev/null || true)
    [[ -n $rss ]] && samples+=("$rss")
    hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$agent/status" 2>/dev/null || true)
    if scrape "$work/serve-soak.metrics"; then scrapes=$((scrapes + 1)); else scrape_failures=$((scrape_failures + 1)); fi
    kill -TERM "$agent" 2>/dev/null || true
  else
    failures+=("serve soak: writepath serve exited during the soak: $(tail -n 1 "$work/serve-soak.log")")
  fi
  wait "$agent" || agent_rc=$?
  bg_pid=""
  ((agent_rc == 0)) || echo "bench: serve soak: writepath serve exited $agent_rc: $(tail -n 2 "$work/serve-soak.log" | tr '\n' ' ')" >&2

  local n=${#samples[@]} first=n/a peak=n/a last=n/a growth=n/a
  if ((n > 0)); then
    first=${samples[0]} last=${samples[n - 1]}
    peak=$(printf '%s\n' "${samples[@]}" | sort -n | tail -n 1)
  fi
  if ((n >= 2)); then  # mean RSS of the second half of the samples over the first half's
    growth=$(printf '%s\n' "${samples[@]}" | awk -v h=$((n / 2)) '
      {v[NR] = $1} END {
        for (i = 1; i <= h; i++) a += v[i]
        for (i = NR - h + 1; i <= NR; i++) b += v[i]
        a /= h; b /= h
        printf "%+.1f MiB (%+.1f%%)", (b - a) / 1024, (a > 0 ? 100 * (b - a) / a : 0) }')
  fi
  local metrics=$work/serve-soak.metrics events lost series gauge achieved
  events=$(metric_sum writepath_events_total "$metrics")
  lost=$(metric_sum writepath_lost_events_total "$metrics")
  gauge=$(metric_sum writepath_agent_resident_memory_bytes "$metrics")
  series=$(grep -cv '^#' "$metrics" 2>/dev/null || echo 0)
  achieved=$(awk '/writes in/ {w += $1; s += $4} END {if (s > 0) printf "%.0f", w / s}' "$work/serve-soak.logger")
  [[ -n $gauge ]] && gauge=$(mib $((gauge / 1024)))
  echo "serve soak: RSS first $(mib "$first"), peak $(mib "$peak") (VmHWM $(mib "${hwm:-n/a}")), last $(mib "$last"), second half over first $growth; $n samples; scrapes $scrapes ok, $scrape_failures failed; events ${events:-?}, lost ${lost:-?}, series $series, logger ${achieved:-?} writes/s"
  if [[ $last =~ ^[0-9]+$ ]] && ((last > serve_rss_limit_kib)); then
    failures+=("serve soak: the agent's last RSS $(mib "$last") is above $(mib "$serve_rss_limit_kib")")
  elif [[ ! $last =~ ^[0-9]+$ ]]; then
    failures+=("serve soak: no RSS sample of the agent")
  fi
  {
    echo "$title"
    echo
    echo "| first RSS | peak RSS | VmHWM | last RSS | 2nd half − 1st half (mean) | agent's RSS gauge | series | events | lost | scrapes ok / failed | logger writes/s |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    echo "| $(mib "$first") | $(mib "$peak") | $(mib "${hwm:-n/a}") | $(mib "$last") | $growth | ${gauge:-n/a} | $series | ${events:-?} | ${lost:-?} | $scrapes / $scrape_failures | ${achieved:-?} |"
    echo
    echo "VmRSS sampled every $serve_rss_every s ($n samples, the last after the load); the gauge,"
    echo "series (sample lines), events and lost are from the last scrape. Bound: last RSS ≤ $(mib "$serve_rss_limit_kib")."
    echo
  } >>"$summary"
}

section_serve() {
  if ! "$wp" serve --help >/dev/null 2>&1; then
    failures+=("serve: $wp has no serve command")
    printf '### writepath serve\n\n%s has no serve command: not measured.\n\n' "$wp" >>"$summary"
    return
  fi
  serve_side_by_side
  serve_reads_side_by_side
  serve_soak
}

run_if_alone serve "$@"
