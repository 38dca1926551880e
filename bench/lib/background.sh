# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Sourced by bench/lib.sh: a tracer in the background (writepath trace -p 1, serve, bpftrace)
# while a workload runs, started, waited for until it is attached, and stopped. One at a time:
# its pid is bg_pid, which the EXIT trap stops.
# shellcheck disable=SC2154 # wp and attach_timeout are bench/lib.sh's, set before any call

bg_pid=""
stop_background() {
  if [[ -n $bg_pid ]] && kill -0 "$bg_pid" 2>/dev/null; then
    kill -TERM "$bg_pid" 2>/dev/null || true
    wait "$bg_pid" 2>/dev/null || true
  fi
  bg_pid=""
}

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
# LOG PROGRAM EVENT: start bpftrace running PROGRAM in the background; return once it has a
# program on tracepoint EVENT, or fail as bg_start does. Stop it with bg_stop INT.
bpftrace_start() {
  # Background jobs of a script inherit SIGINT ignored; bpftrace must see the Ctrl-C.
  bg_start "$1" "Attaching" env --default-signal=INT bpftrace -e "$2" &&
    { wait_attached "$bg_pid" "$3" || { stop_background; false; }; }
}
# SIGNAL: stop the background tracer with SIGNAL and wait for it to write its output.
bg_stop() {
  kill -s "$1" "$bg_pid" 2>/dev/null || true
  wait "$bg_pid" 2>/dev/null || true
  bg_pid=""
}

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
serve_start() {  # LOG [SERVE_OPTION…]
  local log=$1
  shift
  serve_port=$(free_port)
  "$wp" serve --listen "127.0.0.1:$serve_port" "$@" >"$log" 2>&1 &
  bg_pid=$!
  bg_wait_ready "$log" "writepath serve did not answer on 127.0.0.1:$serve_port" \
    curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$serve_port/metrics" || return 1
  wait_attached "$bg_pid" prog_id || { stop_background; return 1; }
}
scrape() {  # FILE: /metrics of the running serve into FILE
  curl -sf --max-time 10 -o "$1" "http://127.0.0.1:$serve_port/metrics"
}
