#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make test's gates on the tree itself (ctest label lint):
#   format      the C/C++ of userspace/, tests/ and bench/ is as clang-format (.clang-format)
#               leaves it; bpf/ keeps the kernel's style (tabs), as the kernel's BPF code does
#   scripts     the shell scripts: no warning or error of shellcheck (its notes are advice)
# Usage: tests/lint_check.sh format|shellcheck [SOURCE_DIR]; names each file at fault, exits 1.
set -euo pipefail
what=${1:?usage: lint_check.sh format|shellcheck [SOURCE_DIR]}
cd "${2:-$(dirname "$0")/..}"

list() {  # PATTERN…: the tree's files matching, as git lists them (a tarball: find)
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -- "$@"
  else
    local p
    for p in "$@"; do find . -path "./$p" -type f -printf '%P\n'; done
  fi
}

case $what in
  format)
    command -v clang-format >/dev/null || { echo "lint: clang-format not installed (make deps)"; exit 1; }
    mapfile -t files < <(list 'userspace/*.cpp' 'userspace/*.h' 'tests/*.cpp' 'tests/*.h' \
      'tests/*.c' 'bench/*.c' 'bench/*.cpp')
    ((${#files[@]})) || { echo "lint: no C/C++ files found"; exit 1; }
    bad=$(clang-format --dry-run "${files[@]}" 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning:.*/\1/p' | sort -u)
    if [[ -n $bad ]]; then
      echo "lint: not formatted (clang-format -i FILE):"
      sed 's/^/  /' <<<"$bad"
      exit 1
    fi
    echo "lint: ${#files[@]} C/C++ files formatted"
    ;;
  shellcheck)
    command -v shellcheck >/dev/null || { echo "lint: shellcheck not installed (make deps)"; exit 1; }
    mapfile -t files < <(list '*.sh' '.ci/run')
    ((${#files[@]})) || { echo "lint: no scripts found"; exit 1; }
    if ! shellcheck -S warning -f gcc "${files[@]}"; then
      echo "lint: shellcheck warnings above"
      exit 1
    fi
    echo "lint: ${#files[@]} scripts pass shellcheck -S warning"
    ;;
  *) echo "lint: unknown check '$what' (format, shellcheck)"; exit 2 ;;
esac
