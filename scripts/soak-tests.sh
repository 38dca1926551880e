#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make soak-tests`: the integration suite REPEATS times over, as `make test` runs it, then each
# test that failed: how many of the runs it failed and the first of its failures (the gtest
# assertion and the lines after it). A failure that shows once in five runs is one that will
# cost some future change a full rerun: make it fail never, or say why it did.
# Each run's ctest log and JUnit report stay in BUILD_DIR/soak/.
# Usage: scripts/soak-tests.sh BUILD_DIR [REPEATS] [JOBS]
set -uo pipefail
build=$(cd "${1:?usage: soak-tests.sh BUILD_DIR [REPEATS] [JOBS]}" && pwd)
repeats=${2:-5}
jobs=${3:-$(nproc)}
out=$build/soak
rm -rf "$out"
mkdir -p "$out"

for ((run = 1; run <= repeats; run++)); do
  start=$SECONDS
  (cd "$build" && ctest -L integration -j "$jobs" --output-on-failure \
    --output-junit "$out/run-$run.xml") >"$out/run-$run.log" 2>&1
  rc=$?
  echo "soak: run $run of $repeats: $(grep -E '^[0-9]+% tests passed' "$out/run-$run.log" ||
    echo "ctest exited $rc") ($((SECONDS - start))s)"
done

python3 - "$out" "$repeats" <<'PY'
import glob
import re
import sys
import xml.etree.ElementTree as ET

out, repeats = sys.argv[1], int(sys.argv[2])
failures = {}  # test -> [(run, first message)]
for run in range(1, repeats + 1):
    try:
        suite = ET.parse(f"{out}/run-{run}.xml").getroot()
    except (OSError, ET.ParseError) as e:
        print(f"soak: run {run}: no JUnit report ({e})")
        failures.setdefault("(the run itself)", []).append((run, str(e)))
        continue
    for case in suite.iter("testcase"):
        if case.get("status") != "fail" and case.find("failure") is None:
            continue
        output = case.findtext("system-out") or ""
        lines = output.splitlines()
        # The first gtest assertion: its "file:line: Failure" line and what it printed after,
        # up to the next blank line or gtest line; else the output's last lines.
        first = next((i for i, l in enumerate(lines) if re.search(r":\d+: Failure$", l)), None)
        if first is not None:
            end = first + 1
            while end < len(lines) and lines[end].strip() and not lines[end].startswith("["):
                end += 1
            message = lines[first:min(end, first + 12)]
        else:
            message = lines[-8:] or [case.find("failure").get("message", "failed")]
        failures.setdefault(case.get("name"), []).append((run, "\n      ".join(message)))

if not failures:
    print(f"soak: {repeats} runs of the integration suite, no test failed")
    sys.exit(0)
print(f"soak: {repeats} runs of the integration suite; tests that failed:")
for name, runs in sorted(failures.items(), key=lambda kv: (-len(kv[1]), kv[0])):
    print(f"  {name}: failed {len(runs)} of {repeats} (runs {', '.join(str(r) for r, _ in runs)})")
    print(f"    first (run {runs[0][0]}): {runs[0][1]}")
print(f"soak: the runs' logs: {out}/run-N.log")
sys.exit(1)
PY
