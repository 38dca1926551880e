#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# containers: the same cached pwrite loop on the host and in a container (a docker-named
# cgroup, its own mount namespace, its file on a bind-mounted volume), traced in JSON: ns/op
# ratios, the agent's CPU seconds, lost records; with BASELINE, that build's trace of the
# container beside this one's.
# A container is made as a runtime makes one: a cgroup named as docker names its scopes, entered
# before `unshare` gives the loop its own mount namespace, with a volume bind-mounted at /mnt.
# Its items carry the container and the file's host path; the host loop's carry neither. Each
# is traced as `trace -- CMD` (which follows the loop, the shell's grandchild), in JSON.
# Usage: bash bench/sections/containers.sh [BUILD_DIR]   (build dir default `build`)
# Sizes: ROUNDS, COUNT; BASELINE=OTHER_BUILD_DIR (defaults in bench/lib.sh).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

container_cmd() {  # WHERE: the loop's command line, in the array `cmd`
  local loop="$bin/wp_bench_pwrite"
  case $1 in
    host) cmd=(sh -c "exec $loop $SCRATCH_MNT/host.dat $count 1") ;;
    container)
      cmd=(sh -c "echo \$\$ > $container_dir/cgroup.procs && exec unshare --mount --fork sh -c \
'mount --bind $SCRATCH_MNT/volume /mnt && exec $loop /mnt/c.dat $count 1'") ;;
  esac
}
# TRACER WHERE: one run; prints "NS_PER_OP CPU_SECONDS LOST" ("fail" for a failed run).
container_run() {
  local tracer=$1 where=$2 ns out="$work/container-$1-$2.out" times="$work/container.time"
  container_cmd "$where"
  case $tracer in
    untraced) ns=$("${cmd[@]}" 2>"$work/err") || ns=""; echo "${ns:-fail} 0 0"; return ;;
    wp) exe=$wp ;;
    base) exe=$base_wp ;;
  esac
  ns=$(/usr/bin/time -f "%U %S" -o "$times" "$exe" trace --format json -o "$out" \
    -- "${cmd[@]}" 2>"$work/err") || ns=""
  local cpu lost
  cpu=$(tail -n 1 "$times" | awk '{printf "%.2f", $1 + $2}' 2>/dev/null || echo fail)
  lost=$(summary_field lost "$out")
  echo "${ns:-fail} ${cpu:-fail} ${lost:-0}"
}
container_round_run() {  # TRACER:WHERE: one run, into the caller's *_of and round line
  local fig
  read -r -a fig <<<"$(container_run "${1%%:*}" "${1##*:}")"
  ns_of[$1]+="${fig[0]} "
  cpu_of[$1]+="${fig[1]} "
  lost_of[$1]+="${fig[2]} "
  line+=" $1 ${fig[0]} ns/op ${fig[1]} s cpu ${fig[2]} lost;"
}
section_containers() {
  echo "== containers: $rounds rounds; pwrite COUNT=$count on the host and in a container"
  local cgroot
  cgroot=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
  if [[ -z $cgroot ]] || ! command -v unshare >/dev/null; then
    echo "containers: skipped (needs cgroup2 and unshare)"
    return
  fi
  container_dir="$cgroot/system.slice/docker-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n').scope"
  mkdir -p "$container_dir" "$SCRATCH_MNT/volume"
  local runs=(untraced:host untraced:container wp:host wp:container)
  [[ -n $base_wp ]] && runs+=(base:host base:container)
  declare -A ns_of=() cpu_of=() lost_of=()
  interleaved_rounds container_round_run "${runs[@]}"
  rmdir "$container_dir" 2>/dev/null || true
  local rows=() run
  for run in "${runs[@]:2}"; do
    local where=${run##*:} tracer=${run%%:*}
    local title="this build"
    [[ $tracer == base ]] && title="baseline ($BASELINE)"
    rows+=("| $title | $where | $(fmt_ratio "$(median_ratio "${ns_of[$run]}" "${ns_of[untraced:$where]}")") | $(median_of "${cpu_of[$run]}") | $(median_of "${lost_of[$run]}") |")
  done
  {
    echo "### Containers (median of $rounds interleaved rounds; $count cached pwrites, trace --format json)"
    echo
    echo "| tracer | loop | ratio to untraced | agent CPU s | records lost |"
    echo "|---|---|---:|---:|---:|"
    printf '%s\n' "${rows[@]}"
    echo
  } >>"$summary"
}

run_if_alone containers "$@"
