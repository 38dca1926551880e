# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Sourced by bench/lib.sh: a column is one way to run a workload (untraced, or under one
# tracer), and a round runs a workload under each column in turn. The sections side-by-side,
# variants, stacks and serve are tables of these.
# shellcheck disable=SC2154 # wp, bin, work, base_wp and the sizes are bench/lib.sh's

# The bpftrace column: a machine-wide pwrite64 latency histogram, what one would run instead.
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

hook_flags=""  # the variant run_column's writepath commands use (empty: the default)

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
