#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/vm/mkinitramfs.sh CACHE_DIR ROOT_DIR OUT.cpio.gz WRITEPATH WP_WORKLOAD WP_ORACLE_WRITER
#   [STATIC_BINARY...]
# Builds the guest's whole userland as one initramfs: busybox, dmsetup with its libraries, the
# kernel modules setup.sh picked, /init, /guest-tests.sh and the statically linked test
# binaries (the three named, and any more after them, in /bin under their names less _static).
# ROOT_DIR is the staging tree; it is kept, so the host can check what the guest ran
# (bin/writepath).
# Optional, for other guests on the same stage (bench/vm/run.sh):
#   WRITEPATH_VM_GUEST_SCRIPT  the script installed as /guest-tests.sh instead of this suite's
#   WRITEPATH_VM_FILES         "SRC=DEST ..." copied last (DEST under ROOT_DIR, so one may replace
#                              a binary above); an executable is stripped of its debug info
#                              and, when dynamically linked, brings its libraries as dmsetup does
set -euo pipefail

here=$(dirname "$(realpath "$0")")
cache=$(realpath "${1:?usage: mkinitramfs.sh CACHE_DIR ROOT_DIR OUT.cpio.gz WRITEPATH WP_WORKLOAD WP_ORACLE_WRITER}")
root=$(realpath -m "${2:?}")
out=$(realpath -m "${3:?}")
writepath=${4:?}
workload=${5:?}
oracle_writer=${6:?}
shift 6
extras=("$@")

for binary in "$writepath" "$workload" "$oracle_writer" "${extras[@]}"; do
  if ! file -b "$binary" | grep -q 'statically linked'; then
    echo "vm-test: $binary is not statically linked (the guest has no shared libraries)" >&2
    exit 1
  fi
done

rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,mnt,lib/modules}
cp "$cache/busybox" "$root/bin/busybox"
cp "$cache"/modules/* "$root/lib/modules/"
install -m 755 "$here/init.sh" "$root/init"
install -m 755 "${WRITEPATH_VM_GUEST_SCRIPT:-$here/guest-tests.sh}" "$root/guest-tests.sh"

# BINARY: the shared libraries and the dynamic loader it names, at the paths ldd names.
copy_libraries() {
  local lib
  for lib in $(ldd "$1" | grep -o '/[^ ]*'); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
}
# dmsetup (the guest's device-mapper test) is the host's dynamic binary: its libraries and
# the dynamic loader go along, at the paths ldd names.
dmsetup=$(command -v dmsetup || true)
if [[ -z $dmsetup ]]; then
  echo "vm-test: no dmsetup on this machine (Debian package dmsetup)" >&2
  exit 1
fi
cp "$dmsetup" "$root/bin/dmsetup"
copy_libraries "$dmsetup"
# Debug info is most of writepath's size and the kernel unpacks the archive under TCG.
strip --strip-debug -o "$root/bin/writepath" "$writepath"
strip --strip-debug -o "$root/bin/wp_workload" "$workload"
strip --strip-debug -o "$root/bin/wp_oracle_writer" "$oracle_writer"
for binary in "${extras[@]}"; do
  strip --strip-debug -o "$root/bin/$(basename "$binary" _static)" "$binary"
done

for spec in ${WRITEPATH_VM_FILES:-}; do
  src=${spec%%=*} dest=$root/${spec#*=}
  mkdir -p "$(dirname "$dest")"
  if [[ -x $src ]] && file -b "$src" | grep -q '^ELF'; then
    strip --strip-debug -o "$dest" "$src"
    if file -b "$src" | grep -q 'dynamically linked'; then copy_libraries "$src"; fi
  else
    cp "$src" "$dest"
  fi
done

# No /dev/console needed: the kernel's built-in initramfs has one, unpacked before this.
(cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 >"$out"
