#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# writepath's benchmarks, side by side with bpftrace and perf trace. Sections:
#   side-by-side  ns/op of three loops untraced, then the ratio to untraced under each tracer
#   variants      the write-syscall hook's variants: bystander and traced-write cost of each
#   soak          a steady logger under the agent: its peak RSS over time and records lost
#   saturation    writers flat out: events/s the agent consumes and records lost
#   replay        writepath report of a 1 M-write recording: events/s and peak RSS
#   scenarios     load scenarios whose point is a speed or size ratio (warm over cold read,
#                 eager over lazy load, the throttled logger's p99 over p50): the ratios
#   stacks        --min-latency's off-CPU stacks on vs --no-stacks, on slow fdatasyncs and on
#                 fast cached pwrites, beside an offcputime-like bpftrace (kstack on sched_switch)
#   serve         the always-on agent beside trace and a bpftrace histogram (traced writes and a
#                 bystander), then its RSS over a long soak while /metrics is scraped
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
# (defaults below: about 30 minutes for `all`). A section that fails its bound (serve's RSS)
# says so in one line and the run exits non-zero after the summary.
# BASELINE=OTHER_BUILD_DIR adds that build's writepath to the side-by-side section, as
# "baseline trace" and "baseline bystander" columns run in the same interleaved rounds: a
# change's before and after, measured together.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
all_sections=(side-by-side variants soak saturation replay scenarios stacks serve containers namespace programs profile)
sections=()
build=build
for arg in "$@"; do
  case $arg in
    all) sections+=("${all_sections[@]}") ;;
    side-by-side | variants | soak | saturation | replay | scenarios | stacks | serve | containers | namespace | programs | profile)
      sections+=("$arg") ;;
    -h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench: unknown option $arg" >&2; exit 2 ;;
    *) build=$arg ;;
  esac
done
((${#sections[@]})) || sections=("${all_sections[@]}")
if [[ $build == /* ]]; then bin=$build; else bin=$here/$build; fi

rounds=${ROUNDS:-5}
count=${COUNT:-200000}                 # cached 4 KiB pwrites per run (side-by-side, variants)
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
serve_rss_limit_kib=$((100 * 1024))           # the soak fails if the agent ends above this

if [[ ! $serve_soak_seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "bench: SERVE_SOAK_SECONDS must be a whole number of seconds above 0, not '$serve_soak_seconds'" >&2
  exit 2
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "bench: tracing needs root" >&2
  exit 1
fi
for exe in writepath wp_bench_pwrite wp_bench_getppid wp_bench_logger wp_bench_write wp_bench_json_rewrite wp_bench_rename; do
  if [[ ! -x $bin/$exe ]]; then
    echo "bench: $bin/$exe is missing; build it first (make build BUILD=$build)" >&2
    exit 1
  fi
done
bash "$here/bench/setup.sh"
wp=$bin/writepath

source "$here/scripts/scratch-fs.sh"
# The soak logger keeps its rotated files (4.8 GB at 20k writes/s for 60 s): a sparse 8G image.
scratch_fs_create "${SCRATCH_SIZE:-8G}"
# Trace output goes to $work, on the filesystem holding /tmp: never the measured one.
work=$SCRATCH_DIR/work
mkdir -p "$work"
summary=$work/summary.md
: >"$summary"

# ---- background tracers ----------------------------------------------------------------------
bg_pid=""
stop_background() {
  if [[ -n $bg_pid ]] && kill -0 "$bg_pid" 2>/dev/null; then
    kill -TERM "$bg_pid" 2>/dev/null || true
    wait "$bg_pid" 2>/dev/null || true
  fi
  bg_pid=""
}
# kernel.bpf_stats_enabled as it was before the programs section switched it on ("": untouched).
bpf_stats_was=""
restore_bpf_stats() { [[ -z $bpf_stats_was ]] || sysctl -qw kernel.bpf_stats_enabled="$bpf_stats_was"; }
trap 'stop_background; restore_bpf_stats; scratch_fs_remove' EXIT

# LOG PATTERN CMD…: start CMD in the background; return once PATTERN shows in its output (the
# tracer says it is attached), or fail if it exits or takes longer than attach_timeout.
bg_start() {
  local log=$1 pattern=$2
  shift 2
  : >"$log"  # exists before the first grep below, however late the job opens it
  "$@" >"$log" 2>&1 &
  bg_pid=$!
  bg_wait_ready "$log" "$1 did not attach" grep -q -- "$pattern" "$log"
}
# LOG WHAT CHECK…: wait until CHECK succeeds; fail, saying WHAT and LOG's last lines, if the
# background tracer exits first or attach_timeout passes.
bg_wait_ready() {
  local log=$1 what=$2 deadline=$((SECONDS + attach_timeout))
  shift 2
  until "$@"; do
    if ! kill -0 "$bg_pid" 2>/dev/null || ((SECONDS >= deadline)); then
      echo "bench: $what: $(tail -n 2 "$log" | tr '\n' ' ')" >&2
      stop_background
      return 1
    fi
    sleep 0.02
  done
}
# PID EVENT: wait until process PID has a BPF program on tracepoint EVENT (bpftool perf lists
# it). bpftrace prints "Attaching N probes..." before it attaches, so that line alone is early.
wait_attached() {
  local deadline=$((SECONDS + attach_timeout))
  until bpftool perf show 2>/dev/null | grep -E "^pid $1 " | grep -q -- "$2"; do
    if ! kill -0 "$1" 2>/dev/null || ((SECONDS >= deadline)); then
      echo "bench: pid $1 never attached to $2" >&2
      return 1
    fi
    sleep 0.02
  done
}
# SIGNAL: stop the background tracer with SIGNAL and wait for it to write its output.
bg_stop() {
  kill -s "$1" "$bg_pid" 2>/dev/null || true
  wait "$bg_pid" 2>/dev/null || true
  bg_pid=""
}

# ---- figures -----------------------------------------------------------------------------------
median() {
  local values
  values=$(printf '%s\n' "$@" | grep -E '^[0-9.eE+-]+$' || true)
  [[ -n $values ]] || { echo "fail"; return; }
  sort -g <<<"$values" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
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
fmt_ratio() { [[ $1 == fail ]] && echo "fail" || awk -v r="$1" 'BEGIN {printf "%.2f×", r}'; }
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

# ROUND WORKLOAD AFTER COLUMN…: one round of WORKLOAD under each COLUMN in column_order,
# appending each ns/op to the caller's ns_of[COLUMN] and then calling AFTER COLUMN (the
# caller's per-run figures: its output is in $work/COLUMN.out); prints the round's line.
run_round() {
  local round=$1 workload=$2 after=$3 order c ns line="round $1 $2:"
  shift 3
  mapfile -t order < <(column_order "$round" "$@")
  for c in "${order[@]}"; do
    ns=$(run_column "$c" "$workload")
    ns_of[$c]+="$ns "
    line+=" $c $ns"
    "$after" "$c"
  done
  echo "$line ns/op"
}

# ---- section 1: side by side -------------------------------------------------------------------
columns=(untraced wp-trace wp-bystander wp-record wp-min-latency bpftrace bpftrace-write-pid1 perf-trace)
declare -A column_title=(
  [untraced]="untraced ns/op"
  [wp-trace]="writepath trace"
  [wp-bystander]="bystander of trace -p 1"
  [wp-record]="writepath record"
  [wp-min-latency]="trace --min-latency 10ms"
  [bpftrace]="bpftrace pwrite64 hist"
  [bpftrace-write-pid1]="bpftrace write(2) hist of pid 1"
  [perf-trace]="perf trace -e pwrite64"
  [base-trace]="baseline trace"
  [base-bystander]="baseline bystander"
)
base_wp=""
if [[ -n ${BASELINE:-} ]]; then
  base_wp=$BASELINE/writepath
  [[ -x $base_wp ]] || { echo "bench: BASELINE=$BASELINE has no writepath" >&2; exit 1; }
  columns+=(base-trace base-bystander)
fi
bpftrace_program='tracepoint:syscalls:sys_enter_pwrite64 { @s[tid] = nsecs; }
tracepoint:syscalls:sys_exit_pwrite64 /@s[tid]/ { @ = hist(nsecs - @s[tid]); delete(@s[tid]); }'
# What `trace -p 1` does for write(2), as bpftrace would: both syscall tracepoints of write(2)
# run a program on every process's write, which returns at once for any other pid. The floor
# for any tool that follows write(2) through syscall tracepoints, next to which the bystander
# column is judged (the pwrite64 histogram puts no program on write(2) at all).
bpftrace_write_program='tracepoint:syscalls:sys_enter_write /pid == 1/ { @s[tid] = nsecs; }
tracepoint:syscalls:sys_exit_write /@s[tid]/ { @ = hist(nsecs - @s[tid]); delete(@s[tid]); }'
# offcputime's core as a one-liner: the kernel stack of every thread switched out, counted.
offcpu_program='tracepoint:sched:sched_switch { @[kstack] = count(); }'

workload_cmd() {  # WORKLOAD: the loop program's command line, in the array `cmd`
  case $1 in
    pwrite) cmd=("$bin/wp_bench_pwrite" "$SCRATCH_MNT/cached.dat" "$count" 1) ;;
    getppid) cmd=("$bin/wp_bench_getppid" "$getppid_count") ;;
    fdatasync) cmd=("$bin/wp_bench_pwrite" "$SCRATCH_MNT/synced.dat" "$fsync_count" 1 fdatasync) ;;
    devnull) cmd=("$bin/wp_bench_write" "$getppid_count") ;;  # 64 B write(2)s to /dev/null
  esac
}

# COLUMN WORKLOAD: run the workload once under COLUMN; print its ns/op, or "fail".
run_column() {
  local column=$1 cmd out="$work/$1.out" ns=""
  workload_cmd "$2"
  case $column in
    untraced) ns=$("${cmd[@]}" 2>"$work/err") || ns="" ;;
    wp-trace) ns=$("$wp" trace $hook_flags -o "$out" -- "${cmd[@]}" 2>"$work/err") || ns="" ;;
    base-trace) ns=$("$base_wp" trace -o "$out" -- "${cmd[@]}" 2>"$work/err") || ns="" ;;
    base-bystander)
      if bg_start "$work/bystander.log" "writepath: tracing" "$base_wp" trace -p 1 -o "$out"; then
        ns=$("${cmd[@]}" 2>"$work/err") || ns=""
        bg_stop TERM
      fi ;;
    wp-record) ns=$("$wp" record -o "$work/side.wpt" -- "${cmd[@]}" 2>"$work/err") || ns="" ;;
    wp-min-latency)
      ns=$("$wp" trace --min-latency 10ms -o "$out" -- "${cmd[@]}" 2>"$work/err") || ns="" ;;
    wp-stacks)
      ns=$("$wp" trace --min-latency "$stacks_min_latency" --format json -o "$out" -- "${cmd[@]}" \
        2>"$work/err") || ns="" ;;
    wp-no-stacks)
      ns=$("$wp" trace --min-latency "$stacks_min_latency" --no-stacks --format json -o "$out" \
        -- "${cmd[@]}" 2>"$work/err") || ns="" ;;
    bpftrace-offcpu)
      if bg_start "$out" "Attaching" env --default-signal=INT bpftrace -e "$offcpu_program" &&
        { wait_attached "$bg_pid" sched_switch || { stop_background; false; }; }; then
        ns=$("${cmd[@]}" 2>"$work/err") || ns=""
        bg_stop INT
      fi ;;
    wp-bystander)
      if bg_start "$work/bystander.log" "writepath: tracing" "$wp" trace $hook_flags -p 1 -o "$out"; then
        ns=$("${cmd[@]}" 2>"$work/err") || ns=""
        bg_stop TERM
      fi ;;
    bpftrace)
      # Background jobs of a script inherit SIGINT ignored; bpftrace must see the Ctrl-C.
      if bg_start "$out" "Attaching" env --default-signal=INT bpftrace -e "$bpftrace_program" &&
        { wait_attached "$bg_pid" sys_exit_pwrite64 || { stop_background; false; }; }; then
        ns=$("${cmd[@]}" 2>"$work/err") || ns=""
        bg_stop INT
      fi ;;
    bpftrace-write-pid1)
      if bg_start "$out" "Attaching" env --default-signal=INT bpftrace -e "$bpftrace_write_program" &&
        { wait_attached "$bg_pid" sys_exit_write || { stop_background; false; }; }; then
        ns=$("${cmd[@]}" 2>"$work/err") || ns=""
        bg_stop INT
      fi ;;
    wp-serve)
      # Its last scrape goes to $out: the agent's own counters for the run.
      if serve_start "$work/serve.log"; then
        ns=$("${cmd[@]}" 2>"$work/err") || ns=""
        scrape "$out" || : >"$out"
        bg_stop TERM
      fi ;;
    perf-trace) ns=$(perf trace -e pwrite64 -o "$out" -- "${cmd[@]}" 2>"$work/err") || ns="" ;;
  esac
  if [[ ! $ns =~ ^[0-9.]+$ ]]; then
    echo "bench: $column on $2 failed: $(tail -n 2 "$work/err" | tr '\n' ' ')" >&2
    ns=fail
  fi
  echo "$ns"
}

side_by_side() {
  echo "== side by side: $rounds rounds; pwrite COUNT=$count, getppid GETPPID_COUNT=$getppid_count, pwrite+fdatasync FSYNC_COUNT=$fsync_count"
  local header="| workload | ${column_title[untraced]} |" rule="|---|---:|"
  for c in "${columns[@]:1}"; do header+=" ${column_title[$c]} |"; rule+="---:|"; done
  local rows=() lost_notes=()
  for workload in pwrite getppid fdatasync devnull; do
    declare -A ns_of=() lost_of=()
    local order
    for ((r = 0; r < rounds; r++)); do
      mapfile -t order < <(column_order "$r" "${columns[@]}")
      declare -A this=()
      for c in "${order[@]}"; do
        this[$c]=$(run_column "$c" "$workload")
        ns_of[$c]+="${this[$c]} "
        case $c in
          wp-trace | wp-min-latency) lost_of[$c]+="$(summary_field lost "$work/$c.out") " ;;
          wp-bystander) lost_of[$c]+="$(summary_field lost "$work/$c.out") " ;;
        esac
      done
      local line="round $r $workload: untraced ${this[untraced]} ns/op"
      for c in "${columns[@]:1}"; do
        line+=", $c ${this[$c]} ($(fmt_ratio "$(ratio "${this[$c]}" "${this[untraced]}")"))"
      done
      echo "$line"
      unset this
    done
    local row
    row="| $workload | $(fmt_ns "$(median ${ns_of[untraced]})") |"
    for c in "${columns[@]:1}"; do
      row+=" $(fmt_ratio "$(median_ratio "${ns_of[$c]}" "${ns_of[untraced]}")") |"
    done
    rows+=("$row")
    local note="$workload:"
    for c in wp-trace wp-bystander wp-min-latency; do
      local total=0
      for l in ${lost_of[$c]:-}; do [[ $l =~ ^[0-9]+$ ]] && total=$((total + l)); done
      note+=" $c $total"
    done
    lost_notes+=("$note")
    unset ns_of lost_of
  done
  {
    echo "### Side by side (median of $rounds interleaved rounds; ratio = time per op / untraced)"
    echo
    echo "$header"
    echo "$rule"
    printf '%s\n' "${rows[@]}"
    echo
    echo "pwrite: 4 KiB pwrite over a cached 1 MiB file, $count per run; getppid: $getppid_count"
    echo "calls; fdatasync: 4 KiB pwrite + fdatasync, $fsync_count per run, ext4 with journal on a"
    echo "loop device; devnull: 64 B write(2) to /dev/null, $getppid_count per run (a write the trace"
    echo "does not follow: a bystander's socket, pipe or terminal write). Records lost by writepath, all rounds: $(printf '%s; ' "${lost_notes[@]}" | sed 's/; $//')."
    echo
  } >>"$summary"
}

# ---- section 2: hook variants ----------------------------------------------------------------
# The write-syscall hook's variants, by the flag that chooses each: per-syscall tracepoints (the
# default) and the raw sys_enter/sys_exit pair (--raw-syscalls).
variant_flags=("" "--raw-syscalls")
hook_flags=""  # the variant run_column's writepath commands use (empty: the default)
chosen_variant() {  # FLAGS: the write-syscall variant doctor reports with them
  # awk reads doctor's whole report: a reader that stops at the first match (grep -m1) would
  # kill doctor with SIGPIPE, and pipefail would end the run.
  "$wp" doctor $1 2>&1 | awk '/write\/sync syscalls/ && !found {
    sub(/.*write\/sync syscalls +/, ""); sub(/ +$/, ""); print; found = 1 }'
}

variants() {
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

# ---- section 3: soak ------------------------------------------------------------------------
# MODE: run the logger under MODE for soak_seconds, sampling the agent's memory every second.
soak_run() {
  local mode=$1 out="$work/soak.$1" args label
  case $mode in
    json) args=(trace --format json -o "$out") label="trace --format json -o F" ;;
    min-latency) args=(trace --min-latency 50ms -o "$out") label="trace --min-latency 50ms" ;;
    record) args=(record -o "$out") label="record -o F" ;;
  esac
  mkdir -p "$SCRATCH_MNT/soak"
  "$wp" "${args[@]}" -- "$bin/wp_bench_logger" "$SCRATCH_MNT/soak" "$soak_rate" "$soak_seconds" \
    >"$work/soak.logger" 2>"$work/soak.err" &
  local pid=$! t=0 hwm="" rss="" rss10="" status
  while status=$(cat "/proc/$pid/status" 2>/dev/null) && [[ $status == *VmHWM* ]]; do
    hwm=$(awk '/^VmHWM/ {print $2}' <<<"$status")
    rss=$(awk '/^VmRSS/ {print $2}' <<<"$status")
    ((t == 10)) && rss10=$rss
    sleep 1
    t=$((t + 1))
  done
  local rc=0
  wait "$pid" || rc=$?
  local lost events
  if [[ $mode == record ]]; then
    lost=$(recording_field lost "$out"); events=$(recording_field events "$out")
  else
    lost=$(summary_field lost "$out"); events=$(summary_field events "$out")
  fi
  local achieved
  achieved=$(sed -nE 's/.*\(([0-9]+) writes\/s\).*/\1/p' "$work/soak.logger")
  ((rc == 0)) || echo "bench: soak $mode exited $rc: $(tail -n 2 "$work/soak.err" | tr '\n' ' ')" >&2
  echo "soak $mode: peak RSS $(mib "$hwm"), RSS at 10 s $(mib "${rss10:-n/a}"), at end $(mib "$rss"), events ${events:-?}, lost ${lost:-?}, logger ${achieved:-?} writes/s"
  soak_rows+=("| $label | $(mib "$hwm") | $(mib "${rss10:-n/a}") | $(mib "$rss") | ${events:-?} | ${lost:-?} | ${achieved:-?} |")
  rm -f "$out"
}

soak() {
  echo "== soak: SOAK_SECONDS=$soak_seconds at SOAK_RATE=$soak_rate writes/s, per mode"
  soak_rows=()
  for mode in json min-latency record; do soak_run "$mode"; done
  {
    echo "### Soak: logger appending 4 KiB at $soak_rate writes/s for $soak_seconds s, never syncing"
    echo
    echo "| mode | peak RSS (VmHWM) | RSS at 10 s | RSS at end | events | lost | logger writes/s |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    printf '%s\n' "${soak_rows[@]}"
    echo
  } >>"$summary"
}

# ---- section 4: saturation ------------------------------------------------------------------
saturation() {
  local writers_list=(1) rows=()
  (($(nproc) > 1)) && writers_list+=("$(nproc)")
  echo "== saturation: SAT_COUNT=$sat_count cached pwrites per writer, writers ${writers_list[*]}"
  for writers in "${writers_list[@]}"; do
    for mode in record json; do
      local out="$work/sat.$mode" args label
      if [[ $mode == record ]]; then
        args=(record -o "$out") label="record -o F"
      else
        args=(trace --format json -o "$out") label="trace --format json -o F"
      fi
      "$wp" "${args[@]}" -- sh -c "for i in \$(seq $writers); do
          '$bin/wp_bench_pwrite' '$SCRATCH_MNT/sat.'\$i $sat_count 1 & done; wait" \
        >"$work/sat.writers" 2>"$work/sat.err" &
      local pid=$!
      until grep -q "writepath: tracing" "$work/sat.err" || ! kill -0 "$pid" 2>/dev/null; do sleep 0.02; done
      local start end rc=0
      start=$(now)
      wait "$pid" || rc=$?
      end=$(now)
      ((rc == 0)) || echo "bench: saturation $mode exited $rc: $(tail -n 2 "$work/sat.err" | tr '\n' ' ')" >&2
      local events lost writes_ns rate
      if [[ $mode == record ]]; then
        events=$(recording_field events "$out"); lost=$(recording_field lost "$out")
      else
        events=$(summary_field events "$out"); lost=$(summary_field lost "$out")
      fi
      local -a sat_writers
      read -ra sat_writers < <(tr '\n' ' ' <"$work/sat.writers")
      writes_ns=$(fmt_ns "$(median "${sat_writers[@]}")")
      rate=$(awk -v e="${events:-0}" -v a="$start" -v b="$end" 'BEGIN {printf "%.0f", e / (b - a)}')
      echo "saturation $writers writer(s) under $label: events ${events:-?} in $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}') s of tracing = $rate events/s, lost ${lost:-?}, writers' median $writes_ns ns/write"
      rows+=("| $writers | $label | $writes_ns | ${events:-?} | $rate | ${lost:-?} |")
      rm -f "$out" "$SCRATCH_MNT"/sat.*
    done
  done
  {
    echo "### Saturation: each writer does $sat_count cached 4 KiB pwrites flat out"
    echo
    echo "| writers | mode | writer ns/write | events | events/s (attached → exit) | lost |"
    echo "|---:|---|---:|---:|---:|---:|"
    printf '%s\n' "${rows[@]}"
    echo
  } >>"$summary"
}

# ---- section 5: replay ----------------------------------------------------------------------
replay() {
  echo "== replay: a recording of REPLAY_COUNT=$replay_count cached pwrites"
  local rec="$work/replay.wpt" rows=()
  "$wp" record -o "$rec" -- "$bin/wp_bench_pwrite" "$SCRATCH_MNT/replay.dat" "$replay_count" 1 \
    >/dev/null 2>"$work/replay.err" ||
    echo "bench: recording for replay failed: $(tail -n 2 "$work/replay.err" | tr '\n' ' ')" >&2
  local events
  events=$(recording_field events "$rec")
  echo "recording: $(du -h "$rec" | cut -f1), events ${events:-?}, lost $(recording_field lost "$rec")"
  # "stitch only": decoded and stitched, every item dropped by --min-latency before it is
  # formatted (the summary alone is written): the agent's rate without its output.
  for format in "stitch only" json text perfetto; do
    local out="$work/replay.${format// /-}" secs kib rate args=(--format "$format")
    [[ $format == "stitch only" ]] && args=(--format json --min-latency 1h)
    if /usr/bin/time -f '%e %M' -o "$work/replay.time" "$wp" report "$rec" "${args[@]}" \
      -o "$out" 2>"$work/replay.err"; then
      read -r secs kib <"$work/replay.time"
      rate=$(awk -v e="${events:-0}" -v s="$secs" 'BEGIN {printf "%.0f", (s > 0 ? e / s : 0)}')
    else
      echo "bench: report --format $format failed: $(tail -n 2 "$work/replay.err" | tr '\n' ' ')" >&2
      secs=fail kib=fail rate=fail
    fi
    echo "report ($format): $secs s, $rate events/s, peak RSS $(mib "$kib"), output $(du -h "$out" 2>/dev/null | cut -f1)"
    rows+=("| $format | $secs | $rate | $(mib "$kib") |")
    # The yardstick for json: RapidJSON's Writer alone writing the same objects to a file beside.
    if [[ $format == json && $secs != fail ]]; then
      local objects rj_secs
      if read -r objects rj_secs < <("$bin/wp_bench_json_rewrite" "$out" "$out.rapidjson" 2>"$work/replay.err"); then
        echo "RapidJSON Writer alone, the same $objects objects: $rj_secs s; report json / it: $(fmt_ratio "$(ratio "$secs" "$rj_secs")")"
        rows+=("| RapidJSON Writer alone, the same $objects objects (report json ÷ it: $(fmt_ratio "$(ratio "$secs" "$rj_secs")")) | $rj_secs | — | — |")
      else
        echo "bench: wp_bench_json_rewrite failed: $(tail -n 1 "$work/replay.err")" >&2
      fi
      rm -f "$out.rapidjson"
    fi
    rm -f "$out"
  done
  {
    echo "### Replay: writepath report of a recording of $replay_count writes (${events:-?} events)"
    echo
    echo "| format | seconds | events/s | peak RSS |"
    echo "|---|---:|---:|---:|"
    printf '%s\n' "${rows[@]}"
    echo
  } >>"$summary"
  rm -f "$rec" "$SCRATCH_MNT/replay.dat"
}

# ---- section 6: scenarios ---------------------------------------------------------------------
# How much faster or smaller one way is than the other depends on the disk, its readahead and
# the page cache: figures to read, not to pass or fail (the integration tests check the counts).
# Each scenario makes its own scratch filesystem; a ratio is the median over rounds.
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

scenarios() {
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

# ---- section 7: stacks ----------------------------------------------------------------------
# What --min-latency's off-CPU stacks cost over --no-stacks: on fdatasyncs that all pass the
# threshold and sleep (each sleep a stack taken in sched_switch, its waker's in sched_waking),
# and on cached pwrites that never do (a fast call must pay nothing more). The peer takes a
# stack on every context switch of the machine.
stacks_columns=(untraced wp-no-stacks wp-stacks bpftrace-offcpu)
declare -A stacks_title=(
  [wp-no-stacks]="--min-latency --no-stacks"
  [wp-stacks]="--min-latency (stacks)"
  [bpftrace-offcpu]="bpftrace kstack on sched_switch"
)
count_slow_calls() {  # COLUMN: the slow calls its trace kept (its items): the stacks were taken
  [[ $1 == wp-* ]] && slow_of[$1]+="$(grep -c '"causes"' "$work/$1.out" 2>/dev/null || echo 0) "
  return 0
}
stacks() {
  echo "== stacks: $rounds rounds; --min-latency $stacks_min_latency; pwrite COUNT=$count, pwrite+fdatasync FSYNC_COUNT=$fsync_count"
  local columns=("${stacks_columns[@]}") no_stacks=1
  if ! "$wp" trace --help 2>&1 | grep -q -- '--no-stacks'; then
    # Without the option stacks cannot be turned off: that column is left out.
    no_stacks=0
    columns=(untraced wp-stacks bpftrace-offcpu)
    echo "bench: this writepath has no --no-stacks; its column is left out" >&2
  fi
  local rows=() notes=()
  for workload in fdatasync pwrite; do
    declare -A ns_of=() slow_of=()
    for ((r = 0; r < rounds; r++)); do run_round "$r" "$workload" count_slow_calls "${columns[@]}"; done
    local row
    row="| $workload | $(fmt_ns "$(median ${ns_of[untraced]})") |"
    for c in "${stacks_columns[@]:1}"; do
      if [[ -z ${ns_of[$c]:-} ]]; then row+=" n/a |"; continue; fi
      row+=" $(fmt_ratio "$(median_ratio "${ns_of[$c]}" "${ns_of[untraced]}")") |"
    done
    if ((no_stacks)); then
      row+=" $(fmt_ratio "$(median_ratio "${ns_of[wp-stacks]}" "${ns_of[wp-no-stacks]}")") |"
    else
      row+=" n/a |"
    fi
    rows+=("$row")
    local kept
    kept="$workload: slow calls kept per run $(median ${slow_of[wp-stacks]:-}) (stacks)"
    ((no_stacks)) && kept+=", $(median ${slow_of[wp-no-stacks]:-}) (--no-stacks)"
    notes+=("$kept")
    unset ns_of slow_of
  done
  {
    echo "### Off-CPU stacks (median of $rounds interleaved rounds; ratio = time per op / untraced)"
    echo
    echo "| workload | untraced ns/op | ${stacks_title[wp-no-stacks]} | ${stacks_title[wp-stacks]} | ${stacks_title[bpftrace-offcpu]} | stacks / --no-stacks |"
    echo "|---|---:|---:|---:|---:|---:|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "--min-latency $stacks_min_latency. fdatasync: 4 KiB pwrite + fdatasync, $fsync_count per run,"
    echo "ext4 with journal on a loop device (every fdatasync is slow and sleeps); pwrite: 4 KiB"
    echo "pwrite over a cached 1 MiB file, $count per run (all but a few fast). $(printf '%s; ' "${notes[@]}" | sed 's/; $//')."
    ((no_stacks)) || echo "This writepath has no --no-stacks: that column is n/a."
    echo
  } >>"$summary"
}

# ---- section 8: serve -----------------------------------------------------------------------
# The always-on agent watches every write of the machine, so its cost is paid by processes
# nobody asked about: the table puts it beside trace (asked about the loop, or about PID 1 for
# the bystander row) and beside what an operator would run instead, a machine-wide bpftrace
# write latency histogram. The soak then runs it under a steady logger for a long time while
# /metrics is scraped as Prometheus would, and fails if the agent ends above its RSS bound.
serve_columns=(untraced wp-trace wp-serve bpftrace)
serve_scrape_every=15  # seconds between scrapes: Prometheus's usual interval
serve_rss_every=10     # seconds between samples of the agent's VmRSS

free_port() {  # a loopback TCP port nothing listens on, below the ephemeral range
  local port
  while :; do
    port=$((10000 + RANDOM % 20000))
    [[ -z $(ss -Htln "sport = :$port") ]] && { echo "$port"; return; }
  done
}
# LOG: start `writepath serve` on a free port (in serve_port) in the background; return once
# /metrics answers and its programs are attached, or fail if it exits or takes longer than
# attach_timeout.
serve_port=""
serve_start() {
  local log=$1
  serve_port=$(free_port)
  "$wp" serve --listen "127.0.0.1:$serve_port" >"$log" 2>&1 &
  bg_pid=$!
  bg_wait_ready "$log" "writepath serve did not answer on 127.0.0.1:$serve_port" \
    curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$serve_port/metrics" || return 1
  wait_attached "$bg_pid" prog_id || { stop_background; return 1; }
}
scrape() {  # FILE: /metrics of the running serve into FILE
  curl -sf --max-time 10 -o "$1" "http://127.0.0.1:$serve_port/metrics"
}
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
    rows+=("| $label | $(fmt_ns "$(median ${ns_of[untraced]})") | $(fmt_ratio "$(median_ratio "${ns_of[$traced]}" "${ns_of[untraced]}")") | $(fmt_ratio "$(median_ratio "${ns_of[wp-serve]}" "${ns_of[untraced]}")") | $(fmt_ratio "$(median_ratio "${ns_of[bpftrace]}" "${ns_of[untraced]}")") | $(fmt_ratio "$(median_ratio "${ns_of[wp-serve]}" "${ns_of[$traced]}")") |")
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

serve_section() {
  if ! "$wp" serve --help >/dev/null 2>&1; then
    failures+=("serve: $wp has no serve command")
    printf '### writepath serve\n\n%s has no serve command: not measured.\n\n' "$wp" >>"$summary"
    return
  fi
  serve_side_by_side
  serve_soak
}

# ---- section: containers ----------------------------------------------------------------------
# A container is made as a runtime makes one: a cgroup named as docker names its scopes, entered
# before `unshare` gives the loop its own mount namespace, with a volume bind-mounted at /mnt.
# Its items carry the container and the file's host path; the host loop's carry neither. Each
# is traced as `trace -- CMD` (which follows the loop, the shell's grandchild), in JSON.
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
containers_section() {
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
  local order run
  for ((r = 0; r < rounds; r++)); do
    mapfile -t order < <(column_order "$r" "${runs[@]}")
    local line="round $r:"
    for run in "${order[@]}"; do
      local fig
      read -r -a fig <<<"$(container_run "${run%%:*}" "${run##*:}")"
      ns_of[$run]+="${fig[0]} "
      cpu_of[$run]+="${fig[1]} "
      lost_of[$run]+="${fig[2]} "
      line+=" $run ${fig[0]} ns/op ${fig[1]} s cpu ${fig[2]} lost;"
    done
    echo "$line"
  done
  rmdir "$container_dir" 2>/dev/null || true
  local rows=()
  for run in "${runs[@]:2}"; do
    local where=${run##*:} tracer=${run%%:*}
    local title="this build"
    [[ $tracer == base ]] && title="baseline ($BASELINE)"
    rows+=("| $title | $where | $(fmt_ratio "$(median_ratio "${ns_of[$run]}" "${ns_of[untraced:$where]}")") | $(median ${cpu_of[$run]}) | $(median ${lost_of[$run]}) |")
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

# ---- section: namespace -----------------------------------------------------------------------
# What a traced rename costs against a traced write, and what an untraced one pays: the rename
# loop and the cached pwrite loop, each untraced, under `trace -- CMD` (JSON; every rename an
# item the hazard rules hold to the end) and as a bystander of `trace -p 1`, interleaved.
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
namespace_section() {
  echo "== namespace: $rounds rounds; $count renames, cached pwrites and appending writes per run"
  local runs=(untraced:rename traced:rename bystander:rename untraced:pwrite traced:pwrite
    bystander:pwrite untraced:append traced:append bystander:append)
  declare -A ns_of=()
  local order run
  for ((r = 0; r < rounds; r++)); do
    mapfile -t order < <(column_order "$r" "${runs[@]}")
    local line="round $r:"
    for run in "${order[@]}"; do
      local ns
      ns=$(namespace_run "${run%%:*}" "${run##*:}")
      ns_of[$run]+="$ns "
      line+=" $run $ns ns/op;"
    done
    echo "$line"
  done
  local rows=() loop
  for loop in rename pwrite append; do
    local base traced added
    base=$(median ${ns_of[untraced:$loop]})
    traced=$(median ${ns_of[traced:$loop]})
    
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
    echo "### Namespace calls (median of $rounds interleaved rounds; $count ops per run)"
    echo
    echo "| loop | untraced ns/op | traced (trace -- CMD) | added ns per traced op | bystander of trace -p 1 |"
    echo "|---|---:|---:|---:|---:|"
    printf '%s
' "${rows[@]}"
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
    # shellcheck disable=SC2086
    echo "| $label | $(fmt_ns "$(median ${pair_renames[$tracer]})") | $(fmt_ns "$(median ${pair_pwrites[$tracer]})") | $(fmt_ratio "$(median ${pair_ratios[$tracer]})") ($spread) |"
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
  # Background jobs of a script inherit SIGINT ignored; bpftrace must see the Ctrl-C.
  if bg_start "$work/pair-bpftrace.log" "Attaching" env --default-signal=INT bpftrace -e "$bpftrace_pair_program" &&
    { wait_attached "$bg_pid" sys_enter_pwrite64 || { stop_background; false; }; }; then
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

# ---- section: programs ------------------------------------------------------------------------
# The kernel's own count of each program's runs and time (bpftop's source), read from bpftool
# before and after one workload while a tracer runs: where a traced call's cost goes, and what
# an untraced write pays. Counting adds two clock reads to every run, so this section measures
# no ratios; it restores kernel.bpf_stats_enabled when done.
program_counters() {  # MIN_ID: [{name, runs, ns}] of the wp_ programs loaded after MIN_ID
  bpftool prog show -j | jq -c --argjson min "$1" \
    '[.[] | select(.id > $min and (.name | startswith("wp_")))
      | {name, runs: (.run_cnt // 0), ns: (.run_time_ns // 0)}]'
}
# CASE OPS MIN_ID CMD…: run CMD (OPS operations) under the tracer already running; one table row.
program_row() {
  local case=$1 ops=$2 min_id=$3 before after
  shift 3
  before=$(program_counters "$min_id")
  "$@" >/dev/null 2>"$work/err" || { echo "bench: programs: $case failed: $(tail -n 1 "$work/err")" >&2; return; }
  after=$(program_counters "$min_id")
  jq -rn --argjson b "$before" --argjson a "$after" --arg case "$case" --argjson ops "$ops" '
    ($b | map({(.name): .}) | add // {}) as $base
    | [$a[] | {name, runs: (.runs - ($base[.name].runs // 0)), ns: (.ns - ($base[.name].ns // 0))}
       | select(.runs > 0)] | sort_by(-.ns) as $d
    | "| \($case) | \((($d | map(.ns) | add // 0) / $ops) | floor) | " +
      ([$d[:4][] | "\(.name) \((.ns / .runs) | floor) ns × \((.runs / $ops * 100 | round) / 100)"]
       | join(", ")) + " |"'
}
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
# Records a trace of an idle process decodes (`trace --comm nosuchcomm -d 2s`) beside noisy
# bystanders on the scratch file system: a log rotator (2 MiB dirty files unlinked or truncated
# before writeback), a flat-out writer that syncs, an O_DIRECT writer. With the filters in
# every hook, only the requests in flight as the hooks attach pass.
idle_trace_records() {
  local dir=$SCRATCH_MNT/idle events
  mkdir -p "$dir"
  rm -f "$dir/stop"
  (cd "$dir" && {
    (i=0; while [[ ! -e stop ]]; do head -c 2M /dev/zero >log.$((i % 4))
      if ((i % 2)); then truncate -s 0 log.$((i % 4)); else rm -f log.$((i % 4)); fi; i=$((i + 1)); done) &
    (while [[ ! -e stop ]]; do dd if=/dev/zero of=big bs=1M count=32 status=none; sync -f big; done) &
    (while [[ ! -e stop ]]; do dd if=/dev/zero of=direct bs=64k count=32 oflag=direct status=none; done) &
    wait
  }) &
  local noise=$!
  sleep 1
  "$wp" trace --comm nosuchcomm -d 2s --format json -o "$work/idle.jsonl" 2>"$work/err" || true
  touch "$dir/stop"
  wait "$noise" 2>/dev/null || true
  events=$(summary_field events "$work/idle.jsonl")
  echo "| records decoded by \`trace --comm nosuchcomm -d 2s\` beside a log rotator, a syncing writer and an O_DIRECT writer | ${events:-fail} |"
}
programs() {
  echo "== programs: pwrite COUNT=$count, write and getppid GETPPID_COUNT=$getppid_count"
  local min_id rows=() idle
  bpf_stats_was=$(sysctl -n kernel.bpf_stats_enabled)  # put back on any exit (the EXIT trap)
  sysctl -qw kernel.bpf_stats_enabled=1
  min_id=$(bpftool prog show -j | jq '[.[].id] | max // 0')
  workload_cmd pwrite
  rows+=("$(program_row_traced "traced cached 4 KiB pwrite (trace -- CMD)" "$count" "${cmd[@]}")")
  if bg_start "$work/programs.log" "writepath: tracing" "$wp" trace -p 1 -o "$work/programs.out"; then
    rows+=("$(program_row "bystander 64 B write(2) to /dev/null (trace -p 1)" "$getppid_count" "$min_id" "$bin/wp_bench_write" "$getppid_count")")
    rows+=("$(program_row "bystander getppid (trace -p 1)" "$getppid_count" "$min_id" "$bin/wp_bench_getppid" "$getppid_count")")
    bg_stop TERM
  fi
  if serve_start "$work/programs.log"; then
    rows+=("$(program_row "bystander 64 B write(2) to /dev/null (serve)" "$getppid_count" "$min_id" "$bin/wp_bench_write" "$getppid_count")")
    rows+=("$(program_row "cached 4 KiB pwrite (serve)" "$count" "$min_id" "${cmd[@]}")")
    bg_stop TERM
  fi
  restore_bpf_stats
  bpf_stats_was=""
  idle=$(idle_trace_records)
  {
    echo "### BPF program time per op (kernel.bpf_stats_enabled; the four costliest programs)"
    echo
    echo "| workload | program ns per op | program: ns per run × runs per op |"
    echo "|---|---:|---|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "| filters in every hook | records |"
    echo "|---|---:|"
    echo "$idle"
    echo
  } >>"$summary"
}

# ---- section: profile -------------------------------------------------------------------------
# The agent's own hot spots, for whoever makes it faster next: perf's cpu-clock samples of
# `writepath report` over a recording (the stitching and formatting a live trace does too, with
# no kernel in the way), the top symbols by self time.
profile() {
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

failures=()  # one line each: a section that failed its bound
started=$SECONDS
for section in "${sections[@]}"; do
  case $section in
    side-by-side) side_by_side ;;
    variants) variants ;;
    soak) soak ;;
    saturation) saturation ;;
    replay) replay ;;
    scenarios) scenarios ;;
    stacks) stacks ;;
    serve) serve_section ;;
    containers) containers_section ;;
    namespace) namespace_section ;;
    programs) programs ;;
    profile) profile ;;
  esac
done

echo
echo "## writepath bench summary ($(uname -r), $(nproc) CPUs, $((SECONDS - started)) s)"
echo
cat "$summary"
if ((${#failures[@]})); then
  printf 'bench: %s\n' "${failures[@]}" >&2
  exit 1
fi
