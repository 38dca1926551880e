#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make install DESTDIR=…` (default PREFIX /usr/local; package_test.sh covers /usr): the
# binary stripped and running, its split debug information where its build ID and debuglink
# say (gdb finds it), the man page rendering without warnings, the completion loading in bash,
# the systemd unit naming the installed binary and the deploy/ files under share/writepath/.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(realpath "$1") source=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

check_tree() {  # ROOT PREFIX
  local root=$1 prefix=$2 bin id debug man completion
  bin=$root$prefix/bin/writepath
  [[ -x $bin ]] || { fail "$bin not installed"; return; }
  file -b "$bin" | grep -q ', stripped' || fail "$bin not stripped: $(file -b "$bin")"
  readelf -S "$bin" | grep -q '\.debug_info' && fail "$bin still has .debug_info"
  "$bin" --version | grep -q '^writepath ' || fail "$bin --version: $("$bin" --version 2>&1)"

  id=$(readelf -n "$bin" | sed -n 's/.*Build ID: //p')
  debug=$root$prefix/lib/debug/.build-id/${id:0:2}/${id:2}.debug
  [[ -f $debug ]] || { fail "no debug file $debug"; return; }
  readelf -S "$debug" | grep -q '\.debug_info' || fail "$debug holds no .debug_info"
  readelf -n "$debug" | grep -q "Build ID: $id" || fail "$debug is not the binary's"
  readelf --string-dump=.gnu_debuglink "$bin" | grep -q "${id:2}.debug" ||
    fail "$bin has no debuglink to ${id:2}.debug"
  # The installed binary is the built one, less its debug sections: same code.
  cmp -s <(objcopy -O binary --only-section=.text "$bin" /dev/stdout) \
    <(objcopy -O binary --only-section=.text "$build/writepath" /dev/stdout) ||
    fail "$bin's code differs from $build/writepath"

  # gdb finds the debug information through the build ID, under the prefix's debug directory.
  gdb -batch -nx -iex "set debug-file-directory $root$prefix/lib/debug" -ex 'info line main' \
    "$bin" 2>&1 | grep -q 'Line [0-9]* of "' || fail "gdb finds no line info for main in $bin"

  man=$root$prefix/share/man/man1/writepath.1
  [[ -f $man ]] || { fail "no man page $man"; return; }
  local warnings
  warnings=$(MANWIDTH=80 man -l "$man" 2>&1 >/dev/null)
  [[ -z $warnings ]] || fail "man -l $man: $warnings"
  warnings=$(groff -ww -z -man "$man" 2>&1)
  [[ -z $warnings ]] || fail "groff -ww: $warnings"
  MANWIDTH=80 man -l "$man" 2>/dev/null | grep -q '^EXIT STATUS' || fail "man page renders no EXIT STATUS"

  completion=$root$prefix/share/bash-completion/completions/writepath
  [[ -f $completion ]] || { fail "no completion $completion"; return; }
  [[ $(bash -c "source '$completion'; complete -p writepath") == "complete -F _writepath writepath" ]] ||
    fail "$completion does not register _writepath"
  local first
  first=$(bash -c "source '$completion'; COMP_WORDS=(writepath tr); COMP_CWORD=1; _writepath; echo \"\${COMPREPLY[*]}\"")
  [[ $first == trace ]] || fail "writepath tr<TAB> completes to '$first'"

  # writepath serve's unit runs the binary of this prefix; the deploy files come along.
  local unit=$root$prefix/lib/systemd/system/writepath-serve.service
  [[ -f $unit ]] || { fail "no systemd unit $unit"; return; }
  grep -qx "ExecStart=$prefix/bin/writepath serve .*" "$unit" ||
    fail "$unit: $(grep ExecStart= "$unit")"
  local file
  for file in grafana/writepath.json systemd/writepath-serve.service logrotate/writepath \
    kubernetes/writepath-daemonset.yaml prometheus/prometheus.yml; do
    cmp -s "$root$prefix/share/writepath/deploy/$file" "$source/deploy/$file" ||
      fail "share/writepath/deploy/$file not installed as deploy/$file"
  done
}

# The Makefile's target, as a user runs it: default PREFIX, DESTDIR honoured.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$source" --no-print-directory install BUILD="$build" DESTDIR="$tmp/make" >"$tmp/make.log" 2>&1 ||
  { cat "$tmp/make.log"; fail "make install failed"; }
check_tree "$tmp/make" /usr/local
# Nothing outside the prefix.
extra=$(cd "$tmp/make" && find . -type f | grep -v '^\./usr/local/' || true)
[[ -z $extra ]] || fail "installed outside /usr/local: $extra"

echo "install_test: $(du -k "$tmp/make/usr/local/bin/writepath" | cut -f1) KiB stripped," \
  "$(du -k "$build/writepath" | cut -f1) KiB built; $failures failures"
((failures == 0))
