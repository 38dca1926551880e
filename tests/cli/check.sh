#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The built binary's usage errors, help and --version, as a person sees them: each case runs
# `writepath ARGS…` and checks the exit code and that the output matches a regular expression
# (usage errors: exactly one line on stderr). No root needed: nothing here traces.
# Usage: bash tests/cli/check.sh WRITEPATH
set -uo pipefail

writepath=${1:?usage: check.sh WRITEPATH}
here=$(cd "$(dirname "$0")" && pwd)
golden=$here/../golden/fsync-4-writes.wpt
failed=0
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# expect CODE STREAM REGEX ARGS…: STREAM is stdout or stderr.
expect() {
  local code=$1 stream=$2 regex=$3
  shift 3
  "$writepath" "$@" </dev/null >"$out" 2>"$err"
  local got=$? file=$out
  [[ $stream == stderr ]] && file=$err
  local why=""
  if ((got != code)); then
    why="exit $got, expected $code"
  elif ! grep -Eq -- "$regex" "$file"; then
    why="$stream does not match /$regex/"
  elif [[ $stream == stderr ]] && (($(wc -l <"$err") != 1)); then
    why="stderr is $(wc -l <"$err") lines, expected one"
  fi
  if [[ -n $why ]]; then
    echo "cli: writepath $*: $why" >&2
    sed 's/^/  | /' "$file" | head -20 >&2
    failed=1
  fi
}

expect 2 stderr "^writepath: unknown command 'trce'; did you mean 'trace'\? \(see writepath --help\)$" trce
expect 2 stderr "^writepath: unknown option '--formt' for 'writepath trace'; did you mean '--format'\? \(see writepath trace --help\)$" \
  trace --formt json
expect 2 stderr "^writepath: unknown command 'write-fsyn'; did you mean 'write-fsync'\? \(see writepath load --help\)$" \
  load write-fsyn
expect 2 stderr "^writepath: unknown option '--sise' for 'writepath demo write-fsync'; did you mean '--size'\? \(see writepath demo write-fsync --help\)$" \
  demo write-fsync --sise 1M
expect 2 stderr "^writepath: --format: jsn is not one of text, json, html, perfetto; did you mean 'json'\? \(see writepath trace --help\)$" \
  trace --format jsn
expect 2 stderr "^writepath: 'writepath' needs a command: doctor, trace, audit, record, report, load, demo, serve \(see writepath --help\)$"
expect 2 stderr "^writepath: --min-latency 10: give a unit, e.g. 10ms \(units: ns, us, ms, s, m, h\)$" \
  trace --min-latency 10
expect 2 stderr "^writepath: --min-latency fast: not a duration" trace --min-latency fast
expect 2 stderr "^writepath: --duration 5: give a unit, e.g. 5s " record -o /dev/null -d 5
expect 2 stderr "^writepath: --min-latency 3: give a unit" report --min-latency 3 "$golden"
expect 2 stderr "^writepath: --buffer-size 32: give a unit, e.g. 32M or 32B for bytes" \
  trace --buffer-size 32
expect 2 stderr "^writepath: write-fsync --size 6000: give a unit, e.g. 6000K or 6000B for bytes" \
  load write-fsync --size 6000
expect 2 stderr "^writepath: --fs-size 2: give a unit, e.g. 2G " load write-fsync --fs-size 2
expect 2 stderr "^writepath: dirty-throttle --interval 5: give a unit, e.g. 5ms " \
  load dirty-throttle --interval 5
# A parse that fails before the command's "--" names the failure, not the separator.
expect 2 stderr "^writepath: --format: jsn is not one of text, json, html, perfetto; did you mean 'json'\? \(see writepath trace --help\)$" \
  trace --format jsn -- true
expect 2 stderr "^writepath: --output is required \(see writepath record --help\)$" record -- true
expect 2 stderr "^writepath: --pid abc: not a number \(see writepath trace --help\)$" trace -p abc
# Two letters swapped are one slip; with nothing near, the command's own list.
expect 2 stderr "^writepath: unknown command 'dmeo'; did you mean 'demo'\? \(see writepath --help\)$" dmeo
expect 2 stderr "^writepath: unknown command 'dmeo'; writepath demo takes: [a-z-]+(, [a-z-]+)+ \(see writepath demo --help\)$" \
  demo dmeo
# A command that cannot run is said before anything is traced, with the shells' 127.
expect 127 stderr "^writepath: /nonexistent/cmd: No such file or directory$" trace -- /nonexistent/cmd
expect 127 stderr "^writepath: no-such-command-wp: command not found$" record -o /dev/null -- no-such-command-wp
# report of trace's own JSON output says where a trace file comes from.
json_lines=$(mktemp)
echo '{"type":"write"}' >"$json_lines"
expect 1 stderr "^writepath: $json_lines: JSON Lines, not a writepath trace file: report reads recordings \(writepath record -o FILE, or trace --save FILE\)$" \
  report "$json_lines"
rm -f "$json_lines"
# Help speaks of what the tool does, not of a book the reader has not read.
expect 0 stdout "load +Run a write-path scenario" --help
if "$writepath" --help 2>&1 | grep -qi chapter; then
  echo "cli: writepath --help mentions a chapter" >&2
  failed=1
fi
# 0 is 0 in every unit.
expect 0 stdout '"type":"summary"' report --min-latency 0 --format json "$golden"
expect 0 stdout "^writepath [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{12}(-dirty)?|unknown), libbpf [0-9]+\.[0-9]+\)$" \
  --version
expect 0 stdout "--min-latency DURATION +Only items at least this slow \(e\.g\. 10ms; default: off" \
  trace --help
expect 0 stdout "--buffer-size SIZE .*\(default: 32M\)" record --help
expect 0 stdout "--size SIZE +bytes written in all \(size from 4K to 64G; default: 256M\)" \
  load write-fsync --help
expect 0 stdout "--interval DURATION .*default: 10ms\)" demo dirty-throttle --help
expect 0 stdout "--engine NAME .*default: pwrite\)" load kv-tier --help
expect 0 stdout "DURATION: a number and a unit" --help

((failed == 0)) && echo "cli: all cases pass"
exit $failed
