#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Every source, script and build file of the tree names its licence in its first lines: the
# BPF programs GPL-2.0-only (the kernel allows GPL-only helpers to GPL-compatible programs
# only), the record layout both sides compile GPL-2.0-only OR Apache-2.0, the rest
# Apache-2.0 (LICENSE). Data (golden outputs, recordings, JSON) and generated files carry none.
# Usage: tests/spdx_check.sh [SOURCE_DIR]; lists each file that lacks the right line, exits 1.
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

# What needs a header: by name, as git lists the tree (a tarball without .git: every file).
needs_header() {
  case $1 in
    vmlinux/*) return 1 ;;  # generated from the kernel's BTF (`make vmlinux`)
    LICENSES/* | LICENSE) return 1 ;;
    *.c | *.cpp | *.h | *.sh | *.cmake | *.proto | *.js | *.css | *.html | *.yml | *.yaml | \
      *.service | *.1 | CMakeLists.txt | Makefile | .ci/run | deploy/logrotate/* | \
      tests/fuzz/*.txt | .clang-format | .gitignore) return 0 ;;
  esac
  return 1
}

expected_for() {
  case $1 in
    bpf/writepath.h | bpf/record_tables.h) echo "GPL-2.0-only OR Apache-2.0" ;;
    bpf/*) echo "GPL-2.0-only" ;;
    *) echo "Apache-2.0" ;;
  esac
}

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files)
else
  mapfile -t files < <(find . -type f -not -path './build*' -printf '%P\n')
fi
missing=0 checked=0
for f in "${files[@]}"; do
  [[ -f $f ]] || continue
  needs_header "$f" || continue
  checked=$((checked + 1))
  want="SPDX-License-Identifier: $(expected_for "$f")"
  # The exact identifier, ended by the line or a comment's close.
  if ! head -n 5 "$f" | grep -Eq "$want( *(\*/|-->))?\$"; then
    echo "spdx: $f: no \"$want\" in its first 5 lines"
    missing=$((missing + 1))
  fi
done
if ((checked == 0)); then
  echo "spdx: no files found to check" >&2
  exit 1
fi
if ((missing)); then
  echo "spdx: $missing of $checked files lack their licence line (see LICENSE)"
  exit 1
fi
echo "spdx: $checked files carry their licence line"
