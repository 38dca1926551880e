# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Sourced helper: a scratch ext4 filesystem *with a journal* on a loop device, removed on exit.
# The dev box's root filesystem has no journal, so fsync there would show no journal phase.
# Usage: source scripts/scratch-fs.sh; scratch_fs_create SIZE; ... "$SCRATCH_MNT" ...
set -euo pipefail

SCRATCH_DIR=""
SCRATCH_LOOP=""
SCRATCH_MNT=""
SCRATCH_QUEUE_FOUND=() # KNOB=VALUE: the loop device's queue as it was attached

# A loop device keeps the queue knobs its last user set across detach and re-attach: a fresh
# one's are set (a volatile write cache, no scheduler, requests up to 1280 KiB), and the
# device's own put back before it is detached.
scratch_queue_set() {
  local queue=/sys/block/${SCRATCH_LOOP#/dev/}/queue knob value found
  for knob in "write_cache=write back" "scheduler=none" "max_sectors_kb=1280"; do
    value=${knob#*=} knob=${knob%%=*}
    found=$(<"$queue/$knob")
    [[ $knob == scheduler ]] && found=$(sed -n 's/.*\[\(.*\)\].*/\1/p' <<<"$found")
    SCRATCH_QUEUE_FOUND+=("$knob=$found")
    echo "$value" >"$queue/$knob"
  done
}

scratch_queue_restore() {
  local knob
  for knob in "${SCRATCH_QUEUE_FOUND[@]}"; do
    echo "${knob#*=}" >"/sys/block/${SCRATCH_LOOP#/dev/}/queue/${knob%%=*}" 2>/dev/null || true
  done
  SCRATCH_QUEUE_FOUND=()
}

scratch_fs_remove() {
  if [[ -n "$SCRATCH_MNT" ]] && mountpoint -q "$SCRATCH_MNT"; then umount "$SCRATCH_MNT"; fi
  if [[ -n "$SCRATCH_LOOP" ]]; then
    scratch_queue_restore
    losetup -d "$SCRATCH_LOOP" 2>/dev/null || true
  fi
  if [[ -n "$SCRATCH_DIR" ]]; then rm -rf "$SCRATCH_DIR"; fi
}

scratch_fs_create() {
  local size=${1:-256M}
  SCRATCH_DIR=$(mktemp -d /tmp/writepath-scratch.XXXXXX)
  trap scratch_fs_remove EXIT
  trap 'exit 130' INT TERM
  truncate -s "$size" "$SCRATCH_DIR/fs.img"
  mkfs.ext4 -q -F -O has_journal "$SCRATCH_DIR/fs.img"
  SCRATCH_LOOP=$(losetup --find --show "$SCRATCH_DIR/fs.img")
  scratch_queue_set
  SCRATCH_MNT="$SCRATCH_DIR/mnt"
  mkdir -p "$SCRATCH_MNT"
  mount "$SCRATCH_LOOP" "$SCRATCH_MNT"
}
