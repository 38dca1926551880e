#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The documentation's own checks: every relative Markdown link in README.md and docs/ points
# at a file that exists, the README stays at most 12 KB and docs/ARCHITECTURE.md at most
# 20,000 bytes (longer text belongs in docs/guide/ or docs/reference/).
# Usage: bash tests/docs/links_check.sh [SOURCE_DIR]
set -euo pipefail
cd "${1:-$(dirname "$0")/../..}"

failed=0
check_size() {
  local file=$1 limit=$2 size
  size=$(wc -c <"$file")
  if ((size > limit)); then
    echo "$file: $size bytes, more than $limit" >&2
    failed=1
  fi
}
check_size README.md 12000
check_size docs/ARCHITECTURE.md 20000

mapfile -t pages < <(find README.md docs -name '*.md' | sort)
for page in "${pages[@]}"; do
  dir=$(dirname "$page")
  # Inline links outside code spans: ](target) or ](target "title"). The backquotes are sed's.
  # shellcheck disable=SC2016
  while IFS= read -r target; do
    target=${target%% *}
    target=${target%%#*}
    [[ -z $target || $target == *://* || $target == mailto:* ]] && continue
    if [[ ! -e $dir/$target ]]; then
      echo "$page: link to $target, which does not exist" >&2
      failed=1
    fi
  done < <(sed 's/`[^`]*`//g' "$page" | grep -o '](\([^)]*\))' | sed 's/^](\(.*\))$/\1/')
done
((failed == 0)) && echo "docs.links: ${#pages[@]} pages, every relative link resolves"
exit "$failed"
