# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Sourced by bench/lib.sh: a column is one way to run a workload (untraced, or under one
# tracer), and a round runs a workload under each column in turn. The sections side-by-side,
# variants, stacks and serve are tables of these.
# shellcheck disable=SC2154 # wp, bin, work, base_wp and the sizes are bench/lib.sh's

# The bpftrace columns: each one's program, and the tracepoint that shows it attached.
declare -gA bpftrace_column_program=() bpftrace_column_event=()
# bpftrace: a machine-wide pwrite64 latency histogram, what one would run instead (pread64's
# on the pread loop: the same hook as the calls timed).
bpftrace_column_program[bpftrace]='tracepoint:syscalls:sys_enter_pwrite64 { @s[tid] = nsecs; }
tracepoint:syscalls:sys_exit_pwrite64 /@s[tid]/ { @ = hist(nsecs - @s[tid]); delete(@s[tid]); }'
bpftrace_column_event[bpftrace]=sys_exit_pwrite64
# What `trace -p 1` does for write(2), as bpftrace would: both syscall tracepoints of write(2)
# run a program on every process's write, which returns at once for any other pid. The floor
# for any tool that follows write(2) through syscall tracepoints, next to which the bystander
# column is judged (the pwrite64 histogram puts no program on write(2) at all).
bpftrace_column_program[bpftrace-write-pid1]='tracepoint:syscalls:sys_enter_write /pid == 1/ { @s[tid] = nsecs; }
tracepoint:syscalls:sys_exit_write /@s[tid]/ { @ = hist(nsecs - @s[tid]); delete(@s[tid]); }'
bpftrace_column_event[bpftrace-write-pid1]=sys_exit_write
# offcputime's core as a one-liner: the kernel stack of every thread switched out, counted.
bpftrace_column_program[bpftrace-offcpu]='tracepoint:sched:sched_switch { @[kstack] = count(); }'
bpftrace_column_event[bpftrace-offcpu]=sched_switch
# On the fault loop the pwrite64 column counts its major faults by the hook writepath names
# them with (a fault has no exit to time): filemap_fault calls per thread.
bpftrace_column_program[bpftrace-fault]='tracepoint:filemap:mm_filemap_fault { @[tid] = count(); }'
bpftrace_column_event[bpftrace-fault]=mm_filemap_fault

hook_flags=""  # the variant run_column's writepath commands use (empty: the default)

workload_cmd() {  # WORKLOAD: the loop program's command line, in the array `cmd`
  case $1 in
    pwrite) cmd=("$bin/wp_bench_pwrite" "$SCRATCH_MNT/cached.dat" "$count" 1) ;;
    pread) cmd=("$bin/wp_bench_pread" "$SCRATCH_MNT/read.dat" "$count" 1) ;;
    fault) cmd=("$bin/wp_bench_fault" "$SCRATCH_MNT/mapped.dat" "$fault_count" 4) ;;
    getppid) cmd=("$bin/wp_bench_getppid" "$getppid_count") ;;
    fdatasync) cmd=("$bin/wp_bench_pwrite" "$SCRATCH_MNT/synced.dat" "$fsync_count" 1 fdatasync) ;;
    devnull) cmd=("$bin/wp_bench_write" "$getppid_count") ;;  # 64 B write(2)s to /dev/null
  esac
}

# COLUMN WORKLOAD: run the workload once under COLUMN; print its ns/op, or "fail".
run_column() {
  local column=$1 cmd out="$work/$1.out" ns="" syscall=pwrite64 program=$1
  workload_cmd "$2"
  [[ $2 != pread ]] || syscall=pread64  # the call the pwrite64 columns watch, on the read loop
  [[ $2 != fault || $1 != bpftrace ]] || program=bpftrace-fault
  # This build's writepath follows the read loop's calls and the fault loop's faults (--reads);
  # a baseline's may not know the flag, and then its columns are what reads cost before.
  local reads=()
  [[ $2 != pread && $2 != fault ]] || reads=(--reads)
  case $column in
    untraced) ns=$("${cmd[@]}" 2>"$work/err") || ns="" ;;
    wp-trace) ns=$("$wp" trace ${hook_flags:+"$hook_flags"} "${reads[@]}" -o "$out" -- "${cmd[@]}" 2>"$work/err") || ns="" ;;
    base-trace) ns=$("$base_wp" trace -o "$out" -- "${cmd[@]}" 2>"$work/err") || ns="" ;;
    base-bystander)
      if bg_start "$work/bystander.log" "writepath: tracing" "$base_wp" trace -p 1 -o "$out"; then
        ns=$("${cmd[@]}" 2>"$work/err") || ns=""
        bg_stop TERM
      fi ;;
    wp-record) ns=$("$wp" record "${reads[@]}" -o "$work/side.wpt" -- "${cmd[@]}" 2>"$work/err") || ns="" ;;
    wp-min-latency)
      ns=$("$wp" trace "${reads[@]}" --min-latency 10ms -o "$out" -- "${cmd[@]}" 2>"$work/err") || ns="" ;;
    wp-stacks)
      ns=$("$wp" trace --min-latency "$stacks_min_latency" --format json -o "$out" -- "${cmd[@]}" \
        2>"$work/err") || ns="" ;;
    wp-no-stacks)
      ns=$("$wp" trace --min-latency "$stacks_min_latency" --no-stacks --format json -o "$out" \
        -- "${cmd[@]}" 2>"$work/err") || ns="" ;;
    wp-bystander)
      if bg_start "$work/bystander.log" "writepath: tracing" "$wp" trace ${hook_flags:+"$hook_flags"} "${reads[@]}" -p 1 -o "$out"; then
        ns=$("${cmd[@]}" 2>"$work/err") || ns=""
        bg_stop TERM
      fi ;;
    bpftrace | bpftrace-write-pid1 | bpftrace-offcpu)
      if bpftrace_start "$out" "${bpftrace_column_program[$program]//pwrite64/$syscall}" \
        "${bpftrace_column_event[$program]//pwrite64/$syscall}"; then
        ns=$("${cmd[@]}" 2>"$work/err") || ns=""
        bg_stop INT
      fi ;;
    wp-serve | wp-serve-reads)
      # Its last scrape goes to $out: the agent's own counters for the run. serve counts reads
      # only when told to (--reads): the loop is then a bystander whose reads it counts.
      local serve_reads=()
      [[ $column != wp-serve-reads ]] || serve_reads=(--reads)
      if serve_start "$work/serve.log" "${serve_reads[@]}"; then
        ns=$("${cmd[@]}" 2>"$work/err") || ns=""
        scrape "$out" || : >"$out"
        bg_stop TERM
      fi ;;
    perf-trace)
      if [[ $2 == fault ]]; then  # perf trace's own major-fault events, no syscall
        ns=$(perf trace --no-syscalls -F maj -o "$out" -- "${cmd[@]}" 2>"$work/err") || ns=""
      else
        ns=$(perf trace -e "$syscall" -o "$out" -- "${cmd[@]}" 2>"$work/err") || ns=""
      fi ;;
  esac
  if [[ ! $ns =~ ^[0-9.]+$ ]]; then
    echo "bench: $column on $2 failed: $(tail -n 2 "$work/err" | tr '\n' ' ')" >&2
    ns=fail
  fi
  echo "$ns"
}

# RUN_ONE RUN…: `rounds` rounds of RUN_ONE RUN for each RUN, in column_order; RUN_ONE keeps its
# figures and adds them to the round's `line`, printed when the round is done.
interleaved_rounds() {
  local run_one=$1 order run r line
  shift
  for ((r = 0; r < rounds; r++)); do
    mapfile -t order < <(column_order "$r" "$@")
    line="round $r:"
    for run in "${order[@]}"; do "$run_one" "$run"; done
    echo "$line"
  done
}

# ROUND WORKLOAD AFTER COLUMN…: one round of WORKLOAD under each COLUMN in column_order,
# appending each ns/op to the caller's ns_of[COLUMN] and then calling AFTER COLUMN (the
# caller's per-run figures: its output is in $work/COLUMN.out); prints the round's line.
run_round() {
  local round=$1 workload=$2 after=$3 order c ns line="round $1 $2:"
  shift 3
  mapfile -t order < <(column_order "$round" "$@")
  for c in "${order[@]}"; do
    ns=$(run_column "$c" "$workload")
    # shellcheck disable=SC2004 # the caller's ns_of is associative, keyed by column
    ns_of[$c]+="$ns "
    line+=" $c $ns"
    "$after" "$c"
  done
  echo "$line ns/op"
}
