#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Golden test of `writepath report`: each checked-in trace file (*.wpt), reported in every
# deterministic format, must print exactly its checked-in expected output. Any difference
# fails and is shown as a unified diff. No root needed: report reads a file, nothing more.
# Usage: bash tests/golden/check.sh WRITEPATH [--update]
#   --update  rewrites the expected files from the current output, for when the output
#             changed on purpose; review the change with `git diff tests/golden` before
#             committing it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
writepath=${1:?usage: check.sh WRITEPATH [--update]}
update=${2:-}
# perfetto embeds the machine's clock snapshot and html its generation time: not golden.
formats=(json text)
declare -A extension=([json]=jsonl [text]=txt)

shopt -s nullglob
traces=("$here"/*.wpt)
((${#traces[@]})) || { echo "golden: no trace files in $here" >&2; exit 1; }

failed=0
actual=$(mktemp -d)
trap 'rm -rf "$actual"' EXIT
for trace in "${traces[@]}"; do
  name=$(basename "$trace" .wpt)
  for format in "${formats[@]}"; do
    expected=$here/$name.${extension[$format]}
    got=$actual/$name.${extension[$format]}
    if ! "$writepath" report "$trace" --format "$format" >"$got" 2>"$actual/err"; then
      echo "golden: writepath report $name.wpt --format $format failed: $(cat "$actual/err")" >&2
      failed=1
      continue
    fi
    if [[ $update == --update ]]; then
      cp "$got" "$expected"
      echo "golden: wrote $(basename "$expected")"
    elif ! diff -u --label "expected $(basename "$expected")" \
      --label "actual report --format $format" \
      "$expected" "$got"; then
      echo "golden: $name.wpt --format $format differs from $(basename "$expected")" \
        "(if on purpose: bash tests/golden/check.sh $writepath --update)" >&2
      failed=1
    fi
  done
done
((failed == 0)) && [[ $update != --update ]] && echo "golden: ${#traces[@]} trace(s) × ${#formats[@]} formats match"
exit "$failed"
