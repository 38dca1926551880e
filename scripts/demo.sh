#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make demo`: trace a buffered write + fsync and an O_DIRECT write on a scratch ext4 (with
# journal) that is created here and removed afterwards, and print their stitched timelines.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
bin="$here/$build"

if [[ $(id -u) -ne 0 ]]; then
  echo "demo: needs root (BPF tracing and a loop-device filesystem); try: sudo make demo" >&2
  exit 1
fi
source "$here/scripts/scratch-fs.sh"
scratch_fs_create 128M
echo "== scratch ext4 with journal on $SCRATCH_LOOP, mounted at $SCRATCH_MNT"
echo "== 4 x 4 KiB buffered pwrite + fsync, then 2 x 4 KiB O_DIRECT pwrite"
echo
"$bin/writepath" trace -- sh -c "
  '$bin/wp_workload' buffered-fsync '$SCRATCH_MNT/journal.log' 4 &&
  '$bin/wp_workload' direct '$SCRATCH_MNT/direct.dat' 2"
