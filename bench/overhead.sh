#!/usr/bin/env bash
# Overhead of tracing on a 4 KiB buffered pwrite loop, measured as interleaved A/B runs
# (A untraced, B under `writepath trace`; ABBA order so drift hits both sides alike), on a
# scratch ext4 with journal. Prints per-run figures, then medians, the ratio, the per-write
# overhead, and the event rate the agent kept up with (and whether it lost any).
#   ROUNDS=7 COUNT=200000 bash bench/overhead.sh [build-dir]
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
bin="$here/$build"
rounds=${ROUNDS:-7}
count=${COUNT:-200000}
window_mib=${WINDOW_MIB:-64}

source "$here/scripts/scratch-fs.sh"
scratch_fs_create 1G
file="$SCRATCH_MNT/bench.dat"
trace_out="$SCRATCH_DIR/trace.jsonl"

untraced() {
  rm -f "$file"; sync
  "$bin/wp_bench_pwrite" "$file" "$count" "$window_mib"
}
traced() {
  rm -f "$file"; sync
  # The trace goes to the scratch dir's parent fs (tmpfs or root), not the measured one.
  "$bin/writepath" trace --format json -o "$trace_out" -- \
    "$bin/wp_bench_pwrite" "$file" "$count" "$window_mib" 2>/dev/null
  tail -n 1 "$trace_out" > "$SCRATCH_DIR/summary.$1"
}

a=(); b=(); events=(); lost=()
for ((i = 0; i < rounds; i++)); do
  if ((i % 2 == 0)); then
    a+=("$(untraced)"); b+=("$(traced "$i")")
  else
    b+=("$(traced "$i")"); a+=("$(untraced)")
  fi
  s=$(cat "$SCRATCH_DIR/summary.$i")
  events+=("$(sed -E 's/.*"events":([0-9]+).*/\1/' <<<"$s")")
  lost+=("$(sed -E 's/.*"lost":([0-9]+).*/\1/' <<<"$s")")
  echo "round $i: untraced ${a[-1]} ns/write, traced ${b[-1]} ns/write, events ${events[-1]}, lost ${lost[-1]}"
done

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
ma=$(median "${a[@]}"); mb=$(median "${b[@]}"); me=$(median "${events[@]}")
# Each round's traced/untraced ratio: pairs runs made back to back, so slow drift cancels.
ratios=(); for ((i = 0; i < rounds; i++)); do ratios+=("$(awk -v a="${a[i]}" -v b="${b[i]}" 'BEGIN {print b / a}')"); done
mr=$(median "${ratios[@]}")
total_lost=0; for l in "${lost[@]}"; do total_lost=$((total_lost + l)); done
awk -v a="$ma" -v b="$mb" -v r="$mr" -v e="$me" -v n="$count" -v lost="$total_lost" 'BEGIN {
  printf "median untraced %.1f ns/write, traced %.1f ns/write\n", a, b
  printf "median paired ratio %.3f (%+.1f%%), overhead %+.1f ns per 4 KiB buffered write\n", r, (r - 1) * 100, b - a
  printf "events per run %d, rate during the loop %.0f events/s, lost %d over all runs\n", e, e / (n * b / 1e9), lost
}'

# Sustained rate: as many writers as cores, all traced, writing as fast as they can.
writers=$(nproc)
rm -f "$SCRATCH_MNT"/burst.*; sync
start=$(date +%s%N)
"$bin/writepath" trace --format json -o "$trace_out" -- sh -c "
  for i in \$(seq $writers); do '$bin/wp_bench_pwrite' '$SCRATCH_MNT/burst.'\$i $count $window_mib >/dev/null & done; wait" \
  2>/dev/null
end=$(date +%s%N)
s=$(tail -n 1 "$trace_out")
ev=$(sed -E 's/.*"events":([0-9]+).*/\1/' <<<"$s")
lo=$(sed -E 's/.*"lost":([0-9]+).*/\1/' <<<"$s")
awk -v e="$ev" -v lost="$lo" -v w="$writers" -v ns=$((end - start)) 'BEGIN {
  printf "%d writers: %d events in %.2fs of tracing (%.0f events/s incl. start-up), lost %d\n", w, e, ns / 1e9, e / (ns / 1e9), lost
}'
