#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Holds real `--format json` output to docs/reference/writepath.schema.json: traces buffered,
# fsynced, O_DIRECT, mapped, io_uring and renaming workloads on a scratch ext4 with a journal
# (trace, trace --live, trace --min-latency with stacks, audit), validates every line, and
# fails on a line whose type the schema does not describe or a described type never seen.
# The golden test's checked-in output and the examples of docs/reference/json-lines.md are
# validated too. Needs root (without it only the examples are checked) and python3-jsonschema.
# Usage: bash tests/docs/schema_check.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: schema_check.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
schema=$root/docs/reference/writepath.schema.json

if ! python3 -c 'import jsonschema' 2>/dev/null; then
  echo "docs.json_schema: python3-jsonschema is missing (scripts/install-deps.sh installs it)" >&2
  exit 1
fi

# The examples of docs/reference/json-lines.md (its ```json blocks) are lines of the golden
# test's expected output, which the golden test holds to real `writepath report` output, and
# match the schema. No root needed.
python3 - "$schema" "$root/docs/reference/json-lines.md" "$root/tests/golden/"*.jsonl <<'PY'
import json
import re
import sys

import jsonschema

schema, page, goldens = sys.argv[1], sys.argv[2], sys.argv[3:]
validator = jsonschema.Draft202012Validator(json.load(open(schema)))
real = [json.loads(line) for name in goldens for line in open(name) if line.strip()]
blocks = re.findall(r"^```json\n(.*?)^```", open(page).read(), flags=re.M | re.S)
failures = 0 if blocks else 1
if not blocks:
    print(f"{page}: no ```json example to check")
for number, block in enumerate(blocks, 1):
    example = json.loads(block)
    if example not in real:
        print(f"{page}: example {number} is not a line of tests/golden/*.jsonl")
        failures += 1
    for error in validator.iter_errors(example):
        print(f"{page}: example {number}: {error.message[:300]}")
        failures += 1
sys.exit(1 if failures else 0)
PY

if [[ $(id -u) -ne 0 ]]; then
  echo "docs.json_schema: the examples match; the traces skipped (they need root)"
  exit 0
fi

# shellcheck source=scripts/scratch-fs.sh
source "$root/scripts/scratch-fs.sh"
scratch_fs_create 256M
out=$SCRATCH_DIR/out
mkdir -p "$out"
wp=$build/writepath
work=$build/wp_workload
m=$SCRATCH_MNT

mixed="$work buffered-fsync $m/a 4 && $work direct $m/b 2 && $work mmap-msync $m/c 4 2 \
  && $work rename-over $m/d 2 && $work uring-mix $m/e 4 inline && $work unlinked $m/f 2"
"$wp" trace --format json -o "$out/trace.jsonl" -- sh -c "$mixed"
"$wp" trace --format json --live -o "$out/live.jsonl" -- sh -c "$work buffered $m/g 4 && $work buffered-fsync $m/h 2"
"$wp" trace --format json --min-latency 1us -o "$out/slow.jsonl" -- "$work" fsync-each "$m/i" 4
"$wp" trace --reads --format json -o "$out/reads.jsonl" -- sh -c "cat $m/a $m/c >/dev/null"
mkdir "$m/save"
"$wp" trace --format json -o "$out/atomic-save.jsonl" -- \
  "$wp" load atomic-save --dir "$m/save/run" --size 64K --rounds 2 --unsafe rename-of-unsynced-data >/dev/null
rc=0
"$wp" audit --format json -o "$out/audit.jsonl" -- sh -c "cd $m && echo old > k && echo new > k.tmp && mv k.tmp k" || rc=$?
[[ $rc -eq 3 ]] || { echo "docs.json_schema: writepath audit exited $rc, expected 3 (hazards found)" >&2; exit 1; }

python3 - "$schema" "$out"/*.jsonl "$root/tests/golden/"*.jsonl <<'PY'
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
described = set(schema["properties"]["type"]["enum"])
seen, failures = {}, 0
# What the workloads must have shown, so that those parts of the schema are exercised.
wanted = {
    "a --live object": lambda o: "event" in o,
    "a slow call's causes with sleep stacks": lambda o: bool((o.get("causes") or {}).get("stacks")),
    "a block request": lambda o: bool(o.get("requests")),
    "a journal commit": lambda o: bool(o.get("journal_commits")),
    "an io_uring op": lambda o: o.get("io_uring") is not None,
    "a store into a mapping": lambda o: o.get("syscall") == "mmap",
    "a rename": lambda o: o.get("op") == "rename",
    "a hazard on an item": lambda o: o.get("type") != "hazard" and bool(o.get("hazards")),
    "a file's reads in the summary": lambda o: bool(o.get("read_files")),
}
found = set()
for name in sys.argv[2:]:
    with open(name) as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            item = json.loads(line)
            kind = item.get("type")
            seen[kind] = seen.get(kind, 0) + 1
            found.update(what for what, test in wanted.items() if test(item))
            if kind not in described:
                print(f"{name}:{number}: line type {kind!r} is not described by the schema")
                failures += 1
                continue
            for error in validator.iter_errors(item):
                where = "/".join(str(p) for p in error.absolute_path) or "(line)"
                print(f"{name}:{number}: {kind} {where}: {error.message[:300]}")
                failures += 1
missing = described - set(seen)
for kind in sorted(missing):
    print(f"no {kind!r} line in the output: the schema's description of it went untested")
    failures += 1
for what in wanted:
    if what not in found:
        print(f"no line shows {what}: that part of the schema went untested")
        failures += 1
print("lines by type:", ", ".join(f"{k} {n}" for k, n in sorted(seen.items(), key=str)))
sys.exit(1 if failures else 0)
PY
echo "docs.json_schema: every line matches docs/reference/writepath.schema.json"
