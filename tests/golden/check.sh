#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Golden tests of the report pipeline, compared byte for byte with checked-in output:
#  - cases/*.wps: event scripts (one kernel event per line, docs/reference/event-script.md),
#    each run through the pipeline by script_report in json, text and Perfetto decoded into a
#    summary (perfetto_summary.h: tracks, slices, annotations, flows), against cases/NAME.jsonl,
#    NAME.txt and NAME.perfetto.summary; one case ($full_perfetto_case below) also as the
#    whole trace in text protobuf (NAME.perfetto.txt), the check of the encoding itself;
#  - *.wpt: recorded trace files, through `writepath report` in json and text (perfetto embeds
#    the machine's clock snapshot and html its generation time: not golden).
# The text output's legend is the same in every case: it is compared with text-legend.txt
# wherever it appears and kept in the expected files as one line that names that file.
# Each stitching rule family has at least one case (the families below, a case's name starts
# with its family), and there are at least 30 cases. No root needed.
# Usage: bash tests/golden/check.sh WRITEPATH SCRIPT_REPORT [--update]
#   --update  rewrites the expected files from the current output, for when the output
#             changed on purpose; review the change with `git diff tests/golden` before
#             committing it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
writepath=${1:?usage: check.sh WRITEPATH SCRIPT_REPORT [--update]}
script_report=${2:?usage: check.sh WRITEPATH SCRIPT_REPORT [--update]}
update=${3:-}
families=(write batch split flush journal uring aio mmap discard loss cause namespace read)
# The case whose whole Perfetto trace is also compared, as text protobuf: what the summaries
# read through and do not show (interning, sequence flags, clock ids, packet order, value
# types). Small, with flows (call → request → flush), two processes' thread tracks, a disk and
# its lane, a nested phase, and string, unsigned and signed annotations.
full_perfetto_case=write-durable-by-later-flush
min_cases=30

failed=0
actual=$(mktemp -d)
trap 'rm -rf "$actual"' EXIT

# fold_legend FILE: each legend block of a text output (its first line and the indented
# lines under it) that equals text-legend.txt becomes the line "$legend_line"; a legend
# that differs stays whole, for the diff to show.
legend_line="legend: as text-legend.txt"
fold_legend() {
  awk -v legend_file="$here/text-legend.txt" -v marker="$legend_line" '
    BEGIN { while ((getline line < legend_file) > 0) legend = legend line "\n" }
    function flush() { printf "%s", (block == legend ? marker "\n" : block); block = ""; inside = 0 }
    /^legend:/ { if (inside) flush(); inside = 1; block = $0 "\n"; next }
    inside && /^        / { block = block $0 "\n"; next }
    inside { flush() }
    { print }
    END { if (inside) flush() }' "$1" >"$1.folded"
  mv "$1.folded" "$1"
}

# compare EXPECTED GOT WHAT: the diff, or the update.
compare() {
  local expected=$1 got=$2 what=$3
  if [[ $update == --update ]]; then
    cp "$got" "$expected"
    echo "golden: wrote ${expected#"$here"/}"
  elif [[ ! -f $expected ]]; then
    echo "golden: $what has no expected output ${expected#"$here"/}" \
      "(bash tests/golden/check.sh WRITEPATH SCRIPT_REPORT --update writes it)" >&2
    failed=1
  elif ! diff -u --label "expected ${expected#"$here"/}" --label "actual $what" \
    "$expected" "$got"; then
    echo "golden: $what differs from ${expected#"$here"/}" \
      "(if on purpose: bash tests/golden/check.sh WRITEPATH SCRIPT_REPORT --update)" >&2
    failed=1
  fi
}

shopt -s nullglob
traces=("$here"/*.wpt)
cases=("$here"/cases/*.wps)
((${#traces[@]})) || { echo "golden: no trace files in $here" >&2; exit 1; }
if ((${#cases[@]} < min_cases)); then
  echo "golden: ${#cases[@]} event-script cases in $here/cases, at least $min_cases wanted" >&2
  failed=1
fi
for family in "${families[@]}"; do
  found=("$here"/cases/"$family"-*.wps)
  ((${#found[@]})) || { echo "golden: no case of the $family family (cases/$family-*.wps)" >&2; failed=1; }
done

declare -A trace_extension=([json]=jsonl [text]=txt)
for trace in "${traces[@]}"; do
  name=$(basename "$trace" .wpt)
  for format in json text; do
    got=$actual/$name.${trace_extension[$format]}
    if ! "$writepath" report "$trace" --format "$format" >"$got" 2>"$actual/err"; then
      echo "golden: writepath report $name.wpt --format $format failed: $(cat "$actual/err")" >&2
      failed=1
      continue
    fi
    [[ $format == text ]] && fold_legend "$got"
    compare "$here/$name.${trace_extension[$format]}" "$got" "report $name.wpt --format $format"
  done
done

[[ -f $here/cases/$full_perfetto_case.wps ]] ||
  { echo "golden: the full Perfetto case cases/$full_perfetto_case.wps is missing" >&2; failed=1; }
for stale in "$here"/cases/*.perfetto.txt; do
  [[ $(basename "$stale" .perfetto.txt) == "$full_perfetto_case" ]] && continue
  if [[ $update == --update ]]; then
    rm "$stale"
    echo "golden: removed ${stale#"$here"/}"
  else
    echo "golden: ${stale#"$here"/} is compared by no case (only $full_perfetto_case is)" >&2
    failed=1
  fi
done

declare -A case_extension=([json]=jsonl [text]=txt [perfetto-summary]=perfetto.summary
  [perfetto]=perfetto.txt)
for case in "${cases[@]}"; do
  name=$(basename "$case" .wps)
  formats=(json text perfetto-summary)
  [[ $name == "$full_perfetto_case" ]] && formats+=(perfetto)
  for format in "${formats[@]}"; do
    got=$actual/$name.${case_extension[$format]}
    if ! "$script_report" "$case" "$format" >"$got" 2>"$actual/err"; then
      echo "golden: script_report cases/$name.wps $format failed: $(cat "$actual/err")" >&2
      failed=1
      continue
    fi
    [[ $format == text ]] && fold_legend "$got"
    compare "$here/cases/$name.${case_extension[$format]}" "$got" "cases/$name.wps as $format"
  done
done

if ((failed == 0)) && [[ $update != --update ]]; then
  echo "golden: ${#cases[@]} event scripts × 3 formats (and $full_perfetto_case's whole" \
    "Perfetto trace) and ${#traces[@]} trace file(s) × 2 formats match"
fi
exit "$failed"
