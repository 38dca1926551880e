#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the trace-file fuzzer with clang (libFuzzer + AddressSanitizer + UBSan) and runs it
# for a short while from the checked-in corpus.
# Usage: run.sh BUILD_DIR SECONDS SOURCES…   (SOURCES: wp_core's, as CMake passes them)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(realpath "${1:-build}")
seconds=${2:-20}
shift 2
out=$build/fuzz
mkdir -p "$out/corpus"
us=$src/userspace
sources=("$here/trace_file_fuzz.cpp" "$@")
if [[ ! -x $out/trace_file_fuzz ||
      -n $(find "${sources[@]}" "$here/ubsan-ignore.txt" -newer "$out/trace_file_fuzz") ]]; then
  clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -fsanitize-ignorelist="$here/ubsan-ignore.txt" \
    -DFMT_HEADER_ONLY -I"$us" -I"$src/bpf" -isystem "$build/proto" "${sources[@]}" -lprotobuf \
    -o "$out/trace_file_fuzz"
fi
cp -n "$here"/corpus/* "$out/corpus/" 2>/dev/null || true
# Fails (leaving crash-*/leak-* files in $out) on the first crash, leak or UB.
cd "$out"
rc=0
./trace_file_fuzz -max_total_time="$seconds" -print_final_stats=1 -max_len=65536 corpus \
  >fuzz.log 2>&1 || rc=$?
grep -E "^(stat::number_of_executed_units|stat::new_units_added|#[0-9]+ +DONE)|ERROR|SUMMARY" \
  fuzz.log || true
echo "fuzz: trace-file reader, ${seconds}s: $( ((rc == 0)) && echo "no crash" || echo "FAILED (rc $rc, see $out/fuzz.log)")"
exit "$rc"
