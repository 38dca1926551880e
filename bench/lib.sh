# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Sourced by bench/run.sh and by each section's script (bench/sections/NAME.sh): the sizes, the
# command line, the setup every section needs (root, the built programs, the peer tracers, a
# scratch filesystem, the summary file), and the summary at the end. The helpers are in
# bench/lib/: background.sh (tracers run beside a workload), figures.sh (medians, ratios,
# formatting, a trace's summary), columns.sh (a workload run under each tracer), bpf_stats.sh
# (the kernel's own count of the programs' time).
# shellcheck disable=SC2034 # the sizes and paths set here are read by the sections' scripts
# run.sh sources this file and then every section's script, which sources it again: once only.
[[ -z ${bench_lib_sourced:-} ]] || return 0
bench_lib_sourced=1

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=build  # the build directory, relative to the repository or absolute
bin=""       # the same as an absolute path, once bench_setup has checked it
failures=()  # one line each: a section that failed its bound

rounds=${ROUNDS:-5}
count=${COUNT:-200000}                 # cached 4 KiB pwrites per run (side-by-side, variants)
fault_count=${FAULT_COUNT:-4096}       # major faults per run of the fault loop (side-by-side)
getppid_count=${GETPPID_COUNT:-1000000}
fsync_count=${FSYNC_COUNT:-500}        # pwrite + fdatasync pairs per run
soak_seconds=${SOAK_SECONDS:-60}
soak_rate=${SOAK_RATE:-20000}          # logger writes/s
sat_count=${SAT_COUNT:-1000000}        # cached pwrites per writer
replay_count=${REPLAY_COUNT:-1000000}  # writes in the recording report replays
scenario_rounds=${SCENARIO_ROUNDS:-3}  # runs of each load scenario
attach_timeout=${ATTACH_TIMEOUT:-60}   # seconds a background tracer may take to attach
# The stacks section's threshold: every fdatasync on the loop device is slower, no cached
# pwrite is (so the pwrite loop's calls cost the check at their exit and nothing more).
stacks_min_latency=${STACKS_MIN_LATENCY:-100us}
serve_soak_seconds=${SERVE_SOAK_SECONDS:-600}  # serve under the logger, scraped every 15 s

# shellcheck source=bench/lib/background.sh
source "$here/bench/lib/background.sh"
# shellcheck source=bench/lib/figures.sh
source "$here/bench/lib/figures.sh"
# shellcheck source=bench/lib/columns.sh
source "$here/bench/lib/columns.sh"
# shellcheck source=bench/lib/bpf_stats.sh
source "$here/bench/lib/bpf_stats.sh"
# shellcheck source=scripts/scratch-fs.sh
source "$here/scripts/scratch-fs.sh"

# The header of the script that was run, its leading comment lines, without their '#'.
usage() {
  awk 'NR == 1 || /SPDX-License-Identifier/ {next} !/^#/ {exit} {sub(/^# ?/, ""); print}' "$0"
}

# ARG…: the command line left once run.sh has taken the sections' names from it: -h prints the
# usage, any other option is an error, and anything else is the build directory.
parse_args() {
  local arg
  for arg in "$@"; do
    case $arg in
      -h | --help) usage; exit 0 ;;
      -*) echo "bench: unknown option $arg" >&2; exit 2 ;;
      *) build=$arg ;;
    esac
  done
}

# What every section needs, once a run: the sizes checked, root, the built programs, the peers
# (bench/setup.sh), a scratch filesystem and the summary file, then BASELINE's writepath.
bench_setup() {
  if [[ $build == /* ]]; then bin=$build; else bin=$here/$build; fi
  if [[ ! $serve_soak_seconds =~ ^[1-9][0-9]*$ ]]; then
    echo "bench: SERVE_SOAK_SECONDS must be a whole number of seconds above 0, not '$serve_soak_seconds'" >&2
    exit 2
  fi
  if [[ $(id -u) -ne 0 ]]; then
    echo "bench: tracing needs root" >&2
    exit 1
  fi
  local exe
  for exe in writepath wp_bench_pwrite wp_bench_pread wp_bench_fault wp_bench_getppid wp_bench_logger wp_bench_write wp_bench_json_rewrite wp_bench_rename; do
    if [[ ! -x $bin/$exe ]]; then
      echo "bench: $bin/$exe is missing; build it first (make build BUILD=$build)" >&2
      exit 1
    fi
  done
  bash "$here/bench/setup.sh"
  wp=$bin/writepath

  # The soak logger keeps its rotated files (4.8 GB at 20k writes/s for 60 s): a sparse 8G image.
  scratch_fs_create "${SCRATCH_SIZE:-8G}"
  # Trace output goes to $work, on the filesystem holding /tmp: never the measured one.
  work=$SCRATCH_DIR/work
  mkdir -p "$work"
  summary=$work/summary.md
  : >"$summary"
  trap 'stop_background; restore_bpf_stats; scratch_fs_remove' EXIT

  # BASELINE=OTHER_BUILD_DIR: that build's writepath, run beside this one's (side-by-side,
  # containers).
  base_wp=""
  if [[ -n ${BASELINE:-} ]]; then
    base_wp=$BASELINE/writepath
    [[ -x $base_wp ]] || { echo "bench: BASELINE=$BASELINE has no writepath" >&2; exit 1; }
  fi
  started=$SECONDS
}

# The summary of the sections run; then each bound a section failed, in one line, and exit 1.
bench_report() {
  echo
  echo "## writepath bench summary ($(uname -r), $(nproc) CPUs, $((SECONDS - started)) s)"
  echo
  cat "$summary"
  if ((${#failures[@]})); then
    printf 'bench: %s\n' "${failures[@]}" >&2
    exit 1
  fi
}

# SECTION ARG…, the last line of each section's script: when that script is the one run (not
# sourced by run.sh), take its `[BUILD_DIR]`, set up, run SECTION and print the summary.
run_if_alone() {
  [[ ${BASH_SOURCE[1]} == "$0" ]] || return 0
  local section=$1
  shift
  parse_args "$@"
  bench_setup
  "section_${section//-/_}"
  bench_report
}
