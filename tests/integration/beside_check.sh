#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the integration tests that count records, filter in the kernel or set up io_uring while
# another writepath works on the same machine: a `serve` and a machine-wide `trace`, both
# attached, and a writer syncing 64 MiB files beside them. Each test asserts on its own
# workload's records only, so each must pass as it does alone; the bystander writepaths must
# run throughout and stop cleanly, the trace having seen the writer.
# Usage: bash tests/integration/beside_check.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: beside_check.sh BUILD_DIR}" && pwd)
if [ "$(id -u)" != 0 ]; then
  echo "integration.beside_another_writepath: needs root, skipped"
  exit 0
fi

work=$(mktemp -d /var/tmp/wp_beside.XXXXXX)
serve_pid='' trace_pid='' writer_pid=''
cleanup() {
  touch "$work/stop"
  for pid in $writer_pid $serve_pid $trace_pid; do kill -INT "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# A port nobody else in the suite uses; serve fails at once if it is taken.
"$build/writepath" serve --listen 127.0.0.1:19447 >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
"$build/writepath" trace --format json -o "$work/trace.jsonl" >"$work/trace.out" \
  2>"$work/trace.err" &
trace_pid=$!
(
  while [ ! -e "$work/stop" ]; do
    dd if=/dev/zero of="$work/bystander" bs=1M count=64 conv=fsync status=none
  done
) &
writer_pid=$!

# Both attached before any test starts: serve answers /metrics and the trace said so.
for _ in $(seq 1 150); do
  if grep -q "tracing" "$work/trace.err" 2>/dev/null &&
    curl -fsS -o /dev/null http://127.0.0.1:19447/metrics 2>/dev/null; then
    break
  fi
  sleep 0.2
done
if ! curl -fsS -o /dev/null http://127.0.0.1:19447/metrics; then
  echo "beside: writepath serve did not answer: $(tail -1 "$work/serve.err")" >&2
  exit 1
fi
if ! grep -q "tracing" "$work/trace.err"; then
  echo "beside: the bystander trace did not attach: $(tail -1 "$work/trace.err")" >&2
  exit 1
fi

tests='MinLatency.*:UringExt4.*:KernelFilter.*:Duration.*:AppOracle.Sqlite3*'
status=0
(cd "$build" && WRITEPATH_BUILD="$build" ./integration_tests --gtest_filter="$tests" \
  --gtest_brief=1) || status=$?

# The bystanders ran throughout: still running now, then stop cleanly on SIGINT.
for pid in $serve_pid $trace_pid; do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "beside: a bystander writepath (pid $pid) died during the tests:" \
      "$(tail -1 "$work/serve.err") $(tail -1 "$work/trace.err")" >&2
    status=1
  fi
done
touch "$work/stop"
wait "$writer_pid" || true
kill -INT "$serve_pid" "$trace_pid"
wait "$serve_pid" || { echo "beside: serve exited $?: $(tail -1 "$work/serve.err")" >&2; status=1; }
wait "$trace_pid" || { echo "beside: trace exited $?: $(tail -1 "$work/trace.err")" >&2; status=1; }
serve_pid='' trace_pid='' writer_pid=''
# The machine-wide trace saw the bystander writer's writes (dd's own records).
if ! grep -q '"comm":"dd"' "$work/trace.jsonl"; then
  echo "beside: the bystander trace has no write of the dd beside it" >&2
  status=1
fi
exit "$status"
