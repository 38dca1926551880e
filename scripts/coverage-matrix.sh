#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the tracer reports for each write path on each file system, next to an independent count.
# For every file system (ext4 with a journal, xfs, btrfs: each on its own loop device) and every
# fio engine (psync, io_uring buffered and direct, libaio direct, mmap), fio writes FIO_SIZE in 4 KiB
# blocks with an fsync after each write, under `writepath trace --format json`. One row per pair:
#   fio writes/syncs   fio's own JSON report (jobs[0].write.total_ios, jobs[0].sync.total_ios)
#   traced             write items and sync items the tracer reported for fio's process
#   direct / pages     write items marked direct; pages dirtied over all write items
#   durable            write items whose state is durable
#   journal>0          sync items whose journal phase is non-zero
#   flushes            distinct flush requests in the sync items vs the loop device's
#                      /proc/diskstats flush count over the run
# Usage: sudo bash scripts/coverage-matrix.sh [BUILD_DIR]   (FSES, ENGINES, FIO_SIZE override)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
[[ $build == /* ]] || build=$here/$build
wp=$build/writepath
read -ra fses <<<"${FSES:-ext4 xfs btrfs}"
read -ra engines <<<"${ENGINES:-psync io_uring io_uring-direct libaio-direct mmap}"
fio_size=${FIO_SIZE:-1M}

if [[ $(id -u) -ne 0 ]]; then
  echo "coverage-matrix: tracing needs root" >&2
  exit 1
fi
[[ -x $wp ]] || { echo "coverage-matrix: $wp is missing; run make build" >&2; exit 1; }
for tool in fio python3 mkfs.xfs mkfs.btrfs; do
  command -v "$tool" >/dev/null || { echo "coverage-matrix: $tool is missing; run make deps" >&2; exit 1; }
done

work=$(mktemp -d /tmp/writepath-matrix.XXXXXX)
loop=""
cleanup() {
  mountpoint -q "$work/mnt" 2>/dev/null && umount "$work/mnt"
  [[ -n $loop ]] && losetup -d "$loop" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

make_fs() { # FS: a fresh file system of that kind mounted on $work/mnt
  mountpoint -q "$work/mnt" 2>/dev/null && umount "$work/mnt"
  [[ -n $loop ]] && losetup -d "$loop"
  rm -f "$work/fs.img"
  truncate -s 1G "$work/fs.img"
  case $1 in
    ext4) mkfs.ext4 -q -F -O has_journal "$work/fs.img" ;;
    xfs) mkfs.xfs -q -f "$work/fs.img" ;;
    btrfs) mkfs.btrfs -q -f "$work/fs.img" >/dev/null ;;
  esac
  loop=$(losetup --find --show "$work/fs.img")
  mkdir -p "$work/mnt"
  mount "$loop" "$work/mnt"
}

flushes_done() { # /proc/diskstats field 16 (flush requests completed; $19 counting major, minor, name) of the loop device
  awk -v name="${loop#/dev/}" '$3 == name { print $19 }' /proc/diskstats
}

printf '%-6s %-16s %11s %11s %9s %7s %8s %10s %15s\n' fs engine "fio w/s" "traced w/s" direct \
  pages durable journal\>0 "flushes tr/dsk"
for fs in "${fses[@]}"; do
  make_fs "$fs"
  for engine in "${engines[@]}"; do
    ioengine=${engine%-direct}
    direct=0
    [[ $engine == *-direct ]] && direct=1
    rm -rf "$work/mnt/job" && mkdir "$work/mnt/job"
    # Lay the file out first so the traced run measures overwrites, not allocation.
    fio --name=lay --directory="$work/mnt/job" --size="$fio_size" --bs=64k --rw=write \
      --ioengine=psync --end_fsync=1 --output=/dev/null
    before=$(flushes_done)
    # fio's report goes through a pipe, so that writing it is not a traced file write.
    "$wp" trace --format json -o "$work/trace.jsonl" -- \
      fio --name=lay --directory="$work/mnt/job" --size="$fio_size" --bs=4k --rw=write \
      --ioengine="$ioengine" --direct=$direct --fsync=1 --overwrite=1 \
      --output-format=json 2>"$work/trace.err" | cat >"$work/fio.json" ||
      { echo "coverage-matrix: $fs/$engine: trace failed: $(tail -1 "$work/trace.err")" >&2; continue; }
    after=$(flushes_done)
    python3 - "$work/fio.json" "$work/trace.jsonl" "$fs" "$engine" $((after - before)) <<'EOF'
import json, sys
fio_path, trace_path, fs, engine, disk_flushes = sys.argv[1:6]
job = json.load(open(fio_path))["jobs"][0]
fio_writes, fio_syncs = job["write"]["total_ios"], job.get("sync", {}).get("total_ios", 0)
writes, syncs, flushes = [], [], set()
for line in open(trace_path):
    item = json.loads(line)
    kind = item.get("type")
    if kind == "write":
        writes.append(item)
    elif kind not in ("summary", None) and "phases" in item:
        syncs.append(item)
        for f in item.get("flushes") or []:
            if f.get("bytes") == 0:  # a pure flush request, as diskstats counts them
                flushes.add((f["dev"], f.get("issue_ns"), f.get("complete_ns")))
direct = sum(1 for w in writes if w.get("direct"))
pages = sum(w.get("pages_dirtied") or 0 for w in writes)
durable = sum(1 for w in writes if w.get("state") == "durable")
journal = sum(1 for s in syncs if (s["phases"] or {}).get("journal_ns"))
print(f"{fs:<6} {engine:<16} {fio_writes:>5}/{fio_syncs:<5} {len(writes):>5}/{len(syncs):<5} "
      f"{direct:>9} {pages:>7} {durable:>8} {journal:>10} {len(flushes):>7}/{disk_flushes:<7}")
EOF
  done
done
