#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# writepath's benchmarks, side by side with bpftrace and perf trace. Sections, each a script of
# its own in bench/sections/ (NAME.sh, runnable alone: bash bench/sections/NAME.sh [BUILD_DIR]):
#   side-by-side  ns/op of five loops untraced, then the ratio to untraced under each tracer
#   variants      the write-syscall hook's variants: bystander and traced-write cost of each
#   soak          a steady logger under the agent: its peak RSS over time and records lost
#   saturation    writers flat out: events/s the agent consumes and records lost
#   replay        writepath report of a 1 M-write recording: events/s and peak RSS
#   scenarios     load scenarios whose point is a speed or size ratio (warm over cold read,
#                 eager over lazy load, the throttled logger's p99 over p50): the ratios
#   stacks        --min-latency's off-CPU stacks on vs --no-stacks, on slow fdatasyncs and on
#                 fast cached pwrites, beside an offcputime-like bpftrace (kstack on sched_switch)
#   serve         the always-on agent beside trace and a bpftrace histogram (traced writes and a
#                 bystander), a bystander's cached pread and pwrite under serve without and
#                 with --reads, then its RSS over a long soak while /metrics is scraped
#   profile       where the agent's time goes: perf record (cpu-clock) of writepath report of a
#                 recording of REPLAY_COUNT writes, in json and text, the hottest symbols
#   containers    the same cached pwrite loop on the host and in a container (a docker-named
#                 cgroup, its own mount namespace, its file on a bind-mounted volume), traced
#                 in JSON: ns/op ratios, the agent's CPU seconds, lost records; with BASELINE,
#                 that build's trace of the container beside this one's
#   namespace     a rename loop beside the cached pwrite and appending write loops: each untraced, traced, and as a
#                 bystander of `trace -p 1`; the added ns per traced rename against per traced
#                 write, and the programs' own time per op (kernel.bpf_stats_enabled); then
#                 renames and cached pwrites alternating in one traced process, their
#                 programs' time per call from the same run (the issue's cost target), and
#                 the same loop under a bpftrace that counts renames by their names
#   programs      each BPF program's ns per run as the kernel counts it (kernel.bpf_stats_enabled,
#                 on for this section only) and the program time per op: a traced cached pwrite,
#                 a bystander's write(2) to /dev/null and getppid under trace -p 1 and serve
# Usage: bash bench/run.sh [all|SECTION…] [BUILD_DIR]   (build dir default `build`)
# The machine is shared and noisy, so runs are interleaved (column order reversed every other
# round) and each figure is the median over rounds of the ratio to the untraced run of the
# same round. Sizes scale with ROUNDS, COUNT, GETPPID_COUNT, FSYNC_COUNT, SOAK_SECONDS,
# SOAK_RATE, SAT_COUNT, REPLAY_COUNT, SCENARIO_ROUNDS, STACKS_MIN_LATENCY, SERVE_SOAK_SECONDS
# (defaults in bench/lib.sh: about 30 minutes for `all`). A section that fails its bound (serve's
# RSS) says so in one line and the run exits non-zero after the summary.
# BASELINE=OTHER_BUILD_DIR adds that build's writepath to the side-by-side section, as
# "baseline trace" and "baseline bystander" columns run in the same interleaved rounds: a
# change's before and after, measured together.
set -euo pipefail

all_sections=(side-by-side variants soak saturation replay scenarios stacks serve containers namespace programs profile)
sections=()
other_args=()  # what is not a section's name: options and the build directory
for arg in "$@"; do
  case $arg in
    all) sections+=("${all_sections[@]}") ;;
    side-by-side | variants | soak | saturation | replay | scenarios | stacks | serve | containers | namespace | programs | profile)
      sections+=("$arg") ;;
    *) other_args+=("$arg") ;;
  esac
done
((${#sections[@]})) || sections=("${all_sections[@]}")

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
parse_args "${other_args[@]}"
bench_setup
# Each section's script defines its function, section_NAME; it runs the section itself only
# when it is the script run, not when sourced here.
for section in "${all_sections[@]}"; do
  # shellcheck source=/dev/null # bench/sections/NAME.sh, each checked on its own
  source "$here/bench/sections/$section.sh"
done
for section in "${sections[@]}"; do
  "section_${section//-/_}"
done
bench_report
