#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The VM cost meter's guest (bench/vm/run.sh packs it as /guest-tests.sh; busybox sh, one vCPU
# whose clock counts its instructions). Each row of wp_bench_syscall_rows runs in each mode:
#   untraced                 nothing attached
#   floor-fentry             empty fentry + fexit programs on the kernel functions the default
#                            plan hooks for the row (wp_bench_floor -f)
#   floor-tracepoint         one empty program on syscalls:sys_enter_writev (wp_bench_floor -t)
#   bystander-trace:PLAN     the loop beside `writepath trace -p 1`
#   bystander-serve:PLAN     the loop beside `writepath serve`
#   traced:PLAN              `writepath trace -- LOOP` (one trace of a shell running every row)
#   untraced-again           untraced once more, last: the run's own reproducibility
#   programs-MODE            for the bystander and traced modes, the rows again (wp.program_count
#                            calls) with the kernel counting each program's runs and run time
#                            (wp_bench_floor -s): where those modes' instructions go
# PLAN is fentry (the default plan) or tracepoint (--no-fentry). Each run prints its
#   ROW MODE ROW COUNT INSTRUCTIONS_PER_CALL IDLE_PER_CALL
# line (and, in a programs- mode, PROG MODE ROW NAME RUNS INSTRUCTIONS for each program that
# ran); a run that fails prints WP-BENCH-FAIL MODE ROW RC and its stderr. The kernel command
# line (run.sh's WRITEPATH_VM_APPEND) sizes it: wp.count= calls per row (default 100000),
# wp.sync_count= for pwrite-fdatasync (2000), wp.program_count= for the programs- modes
# (20000; 0 leaves them out), wp.rows= and wp.plans= (comma-separated) narrow it.
dev=/dev/nvme0n1
mnt=/mnt
wp=/bin/writepath
rows_bin=/bin/wp_bench_syscall_rows

info() { echo "WP-INFO $*"; }
param() {  # NAME DEFAULT: wp.NAME=VALUE from the kernel command line
  value=$(tr ' ' '\n' </proc/cmdline | sed -n "s/^wp\\.$1=//p" | tail -n 1)
  echo "${value:-$2}"
}
count=$(param count 100000)
sync_count=$(param sync_count 2000)
program_count=$(param program_count 20000)
rows=$(param rows getppid,write-null,pipe,pwrite,pwrite-fdatasync,rename,pread | tr ',' ' ')
plans=$(param plans fentry,tracepoint | tr ',' ' ')

count_of() {  # MODE ROW
  case $1 in
    programs-*) if [ "$2" = pwrite-fdatasync ]; then echo $((sync_count / 5 + 1)); else echo "$program_count"; fi ;;
    *) if [ "$2" = pwrite-fdatasync ]; then echo "$sync_count"; else echo "$count"; fi ;;
  esac
}
# The kernel functions the default plan hooks for ROW (the floor's trampolines).
floor_functions() {
  case $1 in
    write-null | pipe | pwrite) echo vfs_write ;;
    pwrite-fdatasync) echo vfs_write vfs_fsync_range ;;
    rename) echo __x64_sys_rename ;;
    pread) echo __x64_sys_pread64 ;;
  esac
}

# MODE ROW CMD...: CMD (ending in the loop) with the page cache's dirty pages written first,
# so the timed loop does not pay for the previous run's writeback; its ROW line to the console.
measure() {
  mode=$1 row=$2
  shift 2
  sync
  timeout 1200 "$@" >/tmp/row.out 2>/tmp/row.err
  rc=$?
  if [ $rc = 0 ] && grep -q '^ROW ' /tmp/row.out; then
    grep '^ROW ' /tmp/row.out
    grep '^PROG ' /tmp/row.out | sed "s/^PROG /PROG $mode $row /"
  else
    echo "WP-BENCH-FAIL $mode $row $rc"
    sed "s/^/WP-BENCH-ERR $mode $row /" /tmp/row.err /tmp/row.out | tail -n 20
    # The kernel's messages are off the console (init.sh): the last ones may say why.
    dmesg | tail -n 20 | sed "s/^/WP-BENCH-DMESG $mode $row /"
  fi
}
loop() {  # MODE ROW: the loop's own command line
  case $1 in programs-*) printf '/bin/wp_bench_floor -s -- ' ;; esac
  echo "$rows_bin $1 $2 $(count_of "$1" "$2") $mnt"
}

# LOG PATTERN CMD...: CMD in the background (bg_pid) once PATTERN is in its output (it has
# attached); 1 if it exits first or takes more than 600 s of guest time.
bg_start() {
  log=$1 pattern=$2
  shift 2
  "$@" >"$log" 2>&1 &
  bg_pid=$!
  i=0
  until grep -q -- "$pattern" "$log"; do
    if ! kill -0 $bg_pid 2>/dev/null || [ $i -ge 6000 ]; then
      echo "WP-BENCH-FAIL $* did not attach"
      sed 's/^/WP-BENCH-ERR /' "$log" | tail -n 20
      bg_stop
      return 1
    fi
    sleep 0.1
    i=$((i + 1))
  done
}
bg_stop() {
  kill -INT $bg_pid 2>/dev/null
  wait $bg_pid 2>/dev/null
}

untraced() {  # MODE
  for row in $rows; do
    # shellcheck disable=SC2046 # the loop's words
    measure "$1" "$row" $(loop "$1" "$row")
  done
}
# MODE: the rows again with each program's counts, unless wp.program_count=0.
programs() {
  [ "$program_count" -gt 0 ] && untraced "programs-$1"
  return 0
}

# `guest.sh rows MODE`: the rows alone, as the command `writepath trace --` runs.
if [ "${1:-}" = rows ]; then
  untraced "$2"
  programs "$2"
  exit 0
fi

mkdir -p $mnt
mount -t ext4 $dev $mnt || {
  echo "WP-FAIL cannot mount $dev"
  exit 4
}
ip link set lo up || echo "WP-WARN no loopback: serve cannot listen"

# What each plan hooks, as the guest's writepath says.
for plan in $plans; do
  flag=
  [ "$plan" = tracepoint ] && flag=--no-fentry
  $wp doctor $flag 2>&1 | sed "s/^/WP-DOCTOR $plan /"
done
serve_flag_tracepoint=
if $wp serve --help 2>&1 | grep -q -- --no-fentry; then
  serve_flag_tracepoint=--no-fentry
else
  info "serve has no --no-fentry: its tracepoint column is not measured"
fi

info "untraced uptime $(cut -d' ' -f1 /proc/uptime)"
untraced untraced

info "floor uptime $(cut -d' ' -f1 /proc/uptime)"
for row in $rows; do
  functions=$(floor_functions "$row")
  [ -n "$functions" ] || continue # getppid: no function; the floor is untraced
  set --
  for f in $functions; do set -- "$@" -f "$f"; done
  # shellcheck disable=SC2046 # the loop's words
  measure floor-fentry "$row" /bin/wp_bench_floor "$@" -- $(loop floor-fentry "$row")
done
for row in $rows; do
  # shellcheck disable=SC2046 # the loop's words
  measure floor-tracepoint "$row" /bin/wp_bench_floor -t syscalls:sys_enter_writev -- \
    $(loop floor-tracepoint "$row")
done

for plan in $plans; do
  info "$plan uptime $(cut -d' ' -f1 /proc/uptime)"
  flag=
  [ "$plan" = tracepoint ] && flag=--no-fentry
  # shellcheck disable=SC2086 # flag: one word or none
  if bg_start /tmp/bg.log "writepath: tracing" $wp trace $flag -p 1 -o /dev/null; then
    untraced "bystander-trace:$plan"
    programs "bystander-trace:$plan"
    bg_stop
  fi
  serve_flag=
  [ "$plan" = tracepoint ] && serve_flag=$serve_flag_tracepoint
  if [ "$plan" = fentry ] || [ -n "$serve_flag" ]; then
    # shellcheck disable=SC2086 # serve_flag: one word or none
    if bg_start /tmp/bg.log "writepath: serving" $wp serve $serve_flag --listen 127.0.0.1:9441; then
      untraced "bystander-serve:$plan"
      programs "bystander-serve:$plan"
      bg_stop
    fi
  fi
  # One trace for every row (each a process of its own, traced as a child of the shell):
  # loading and attaching the programs takes a while under TCG.
  # shellcheck disable=SC2086 # flag: one word or none
  $wp trace $flag -o /dev/null -- /bin/sh /guest-tests.sh rows "traced:$plan" 2>/tmp/trace.err ||
    echo "WP-BENCH-FAIL traced:$plan all $?"
  sed "s/^/WP-BENCH-LOG traced:$plan /" /tmp/trace.err
done

info "again uptime $(cut -d' ' -f1 /proc/uptime)"
untraced untraced-again
umount $mnt
exit 0
