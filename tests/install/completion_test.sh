#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The bash completion script as bash loads it: registered for writepath, and completing what a
# user types (subcommands, scenarios, option values, file names, the command after --).
# Usage: completion_test.sh COMPLETION_SCRIPT
set -euo pipefail
completion=$(realpath "$1")

registered=$(bash -c "source '$completion' && complete -p writepath")
[[ $registered == "complete -F _writepath writepath" ]] || {
  echo "FAIL: not registered: $registered"
  exit 1
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/traces.d"
touch "$work/app.wpt" "$work/app.json"
cd "$work"

# shellcheck source=/dev/null
source "$completion"
failures=0
# The candidates after `writepath WORDS...`, sorted, on one line.
candidates() {
  COMP_WORDS=(writepath "$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _writepath
  printf '%s\n' "${COMPREPLY[@]}" | sort -u | xargs
}
# expect "WANTED CANDIDATES" WORDS...: exactly these.
expect() {
  local wanted=$1 got
  shift
  got=$(candidates "$@")
  [[ $got == "$wanted" ]] && return
  echo "FAIL: writepath $*<TAB>: got '$got', want '$wanted'"
  failures=$((failures + 1))
}
# expect_among CANDIDATE WORDS...: this one among them.
expect_among() {
  local wanted=$1 got
  shift
  got=$(candidates "$@")
  [[ " $got " == *" $wanted "* ]] && return
  echo "FAIL: writepath $*<TAB>: got '$got', want '$wanted' among them"
  failures=$((failures + 1))
}

expect "trace" tr
expect "audit demo doctor load record report serve trace" ""
expect "--format" trace --fo
expect "html json perfetto text" trace --format ""
expect "json" trace --format j
expect "json" trace --format = j          # --format=j: bash splits off the '='
expect "html json perfetto text" report app.wpt --format ""
expect "app.json app.wpt traces.d" trace -o ""
expect "app.wpt" trace --save app.w
expect "app.json app.wpt traces.d" report ""  # report's FILE
expect "app.wpt" record -p 1 --children -o app.w
expect "traces.d" load wal --dir t
expect "ext4 xfs" load wal --fs ""
expect "--fs --fs-size" demo wal --fs
expect "--output" demo odirect --out       # demo's own options follow the scenario
expect "--tensor-size --tensors" load mmap-load --ten
expect_among "$$" trace -p 1 --pid "$$"   # PIDs from /proc
expect "" trace --pid x
expect "--no-fentry --no-stacks" trace --raw-syscalls --children --no
expect "group-commit" load gr
expect "kv-tier" demo --format json kv
expect_among "bash" trace -- bas          # after --: a command
expect "app.json app.wpt" trace -- ls app.  # then its arguments: files
expect "" trace --min-latency ""          # a duration: nothing to offer
expect "" load wal --result-               # hidden from --help, hidden from completion
expect "" compl                              # likewise the completion subcommand itself

echo "completion_test: $failures failures"
((failures == 0))
