# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Sourced helper: a scratch ext4 filesystem *with a journal* on a loop device, removed on exit.
# The dev box's root filesystem has no journal, so fsync there would show no journal phase.
# Usage: source scripts/scratch-fs.sh; scratch_fs_create SIZE; ... "$SCRATCH_MNT" ...
set -euo pipefail

SCRATCH_DIR=""
SCRATCH_LOOP=""
SCRATCH_MNT=""

scratch_fs_remove() {
  if [[ -n "$SCRATCH_MNT" ]] && mountpoint -q "$SCRATCH_MNT"; then umount "$SCRATCH_MNT"; fi
  if [[ -n "$SCRATCH_LOOP" ]]; then losetup -d "$SCRATCH_LOOP" 2>/dev/null || true; fi
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
  SCRATCH_MNT="$SCRATCH_DIR/mnt"
  mkdir -p "$SCRATCH_MNT"
  mount "$SCRATCH_LOOP" "$SCRATCH_MNT"
}
