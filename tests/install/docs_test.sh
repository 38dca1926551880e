#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The man page and the bash completion against the binary's own --help: every subcommand and
# scenario, and every long option each one's --help lists, must be in the man page and be
# offered by the completion for that command. A new option without docs fails here.
# Usage: docs_test.sh WRITEPATH MAN_PAGE COMPLETION_SCRIPT
set -euo pipefail
writepath=$1 man_page=$2 completion=$3

# The man page's source with roff's escapes undone: \- is -, font changes vanish.
man_text=$(sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$man_page")
# shellcheck source=/dev/null
source "$completion"

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The names listed under a --help section ("Options:", "Subcommands:"): the first word of each
# line indented by two spaces, up to the next unindented line.
section() {
  awk -v want="$1" '/^[^ ]/ { on = ($0 == want) ; next } on && /^  [^ ]/ { print $1 }'
}

# Completion candidates after `writepath WORDS... CURRENT`.
completions() {
  COMP_WORDS=(writepath "$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _writepath
  printf '%s\n' "${COMPREPLY[@]}"
}

in_man() { grep -Eq -- "(^|[^A-Za-z0-9-])$1([^A-Za-z0-9-]|$)" <<<"$man_text"; }

commands=0 options=0
check_command() {  # the words of a command, "" for the top level
  local help offered name
  # shellcheck disable=SC2086
  help=$("$writepath" $1 --help)
  commands=$((commands + 1))
  # shellcheck disable=SC2086
  offered=$(completions $1 --)
  for name in $(section Options: <<<"$help" | tr ',' '\n' | grep -- '^--'); do
    options=$((options + 1))
    in_man "$name" || fail "writepath $1: $name is not in the man page"
    grep -qx -- "$name" <<<"$offered" || fail "writepath $1: completion does not offer $name"
  done
  # shellcheck disable=SC2086
  offered=$(completions $1 '')
  for name in $(section Subcommands: <<<"$help"); do
    in_man "$name" || fail "writepath $1: subcommand $name is not in the man page"
    grep -qx -- "$name" <<<"$offered" || fail "writepath $1: completion does not offer $name"
    check_command "${1:+$1 }$name"
  done
}
check_command ""

# The walk itself must have seen the CLI: the subcommands and a scenario's options.
((commands > 6 && options > 30)) || fail "only $commands commands and $options options found in --help"
echo "docs_test: $commands commands, $options long options checked, $failures missing"
((failures == 0))
