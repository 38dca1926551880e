#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/vm/setup.sh CACHE_DIR [SERIES]
# Fetches what the VM tests boot: Debian bookworm's current kernel of SERIES (6.1, the default:
# the package linux-image-amd64 depends on; 6.12: the one linux-image-6.12-amd64 depends on)
# and busybox-static, with `apt-get download` (extracted, never installed). The .debs stay in
# CACHE_DIR/debs, so later runs are offline; delete them to move to a newer kernel. One
# CACHE_DIR holds one series. Produces:
#   CACHE_DIR/vmlinux          uncompressed kernel (PVH entry: skips ~5 s of xz under TCG)
#   CACHE_DIR/modules/*.ko     nvme, ext4, dm and their dependencies, load.order lists them
#                              (uncompressed: 6.12's package ships .ko.xz)
#   CACHE_DIR/busybox          the guest's userland
#   CACHE_DIR/kernel-release   e.g. 6.1.0-57-amd64, 6.12.117+deb12-amd64
# Exit: 0 ready, 77 the packages cannot be downloaded (skip), 1 anything else.
# WRITEPATH_REQUIRE_VM=1 turns the skip into a failure.
set -euo pipefail

here=$(dirname "$(realpath "$0")")
cache=$(realpath -m "${1:?usage: setup.sh CACHE_DIR [SERIES]}")
series=${2:-6.1}
case $series in
  6.1) meta=linux-image-amd64 ;;
  *) meta=linux-image-$series-amd64 ;;
esac
debs=$cache/debs
mkdir -p "$debs"

# Modules the guest loads, by name; their dependencies are added by moddeps.sh. The crc
# providers are not dependencies of anything, but crc-t10dif, crc64-rocksoft (nvme-core's
# T10 PI) and crc32c (ext4's metadata checksums) want one registered before they load; where
# a kernel builds a provider in (6.12: crct10dif_generic, crc64_rocksoft_generic) it has no
# module and is left out. dm_mod has the linear and error targets built in; dm_flakey fails
# writes on demand (the lost-write runs).
optional_modules=(crct10dif_generic crc64_rocksoft_generic crc32c_generic crc32c_intel)
wanted_modules=(nvme ext4 dm_mod dm_flakey)

cannot_download() {
  if [[ ${WRITEPATH_REQUIRE_VM:-0} == 1 ]]; then
    echo "vm-test: cannot download $1 ($2) and WRITEPATH_REQUIRE_VM=1: failed" >&2
    exit 1
  fi
  echo "vm-test: cannot download $1 ($2): skipped" >&2
  exit 77
}

# Oneline reason from apt's stderr: its last E:/W: line, else its last line.
apt_reason() {
  local reason
  reason=$(grep -E '^(E|W): ' "$1" | tail -1 || true)
  [[ -n $reason ]] || reason=$(tail -1 "$1")
  echo "${reason:-no output}"
}

kernel_package() {
  apt-cache depends "$meta" 2>/dev/null |
    sed -n "s/^ *Depends: \(linux-image-${series//./\\.}\.[0-9][^ ]*-amd64\)\$/\1/p" | head -1
}

download() {
  local log=$cache/apt.log
  local kpkg
  if ! ls "$debs"/linux-image-"$series".[0-9]*.deb >/dev/null 2>&1; then
    kpkg=$(kernel_package)
    # A fresh container may have no package lists yet.
    if [[ -z $kpkg ]]; then
      apt-get update -qq >"$log" 2>&1 || true
      kpkg=$(kernel_package)
    fi
    [[ -n $kpkg ]] || cannot_download "the Debian $series kernel package" \
      "$meta does not depend on a linux-image-$series.*-amd64 here"
    (cd "$debs" && apt-get download -q "$kpkg" >"$log" 2>&1) ||
      cannot_download "the Debian $series kernel package $kpkg" "$(apt_reason "$log")"
  fi
  if ! ls "$debs"/busybox-static_*.deb >/dev/null 2>&1; then
    (cd "$debs" && apt-get download -q busybox-static >"$log" 2>&1) ||
      cannot_download "busybox-static" "$(apt_reason "$log")"
  fi
}

# The compressed ELF inside the bzImage (6.1: xz, 6.12: zstd): try each stream magic until one
# decompresses to an ELF with a .BTF section (what scripts/extract-vmlinux in the kernel tree
# does).
extract_vmlinux() {
  local bzimage=$1 out=$2 offset magic tool
  for magic in '\xfd7zXZ\x00:xz' '\x28\xb5\x2f\xfd:zstd'; do
    tool=${magic##*:}
    for offset in $(LC_ALL=C grep -obUaP "${magic%:*}" "$bzimage" | cut -d: -f1); do
      # The decompressor complains about the bytes after the stream; the output before that
      # is complete.
      tail -c +$((offset + 1)) "$bzimage" | "$tool" -dc >"$out.tmp" 2>/dev/null || true
      if [[ $(head -c 4 "$out.tmp" | od -An -tx1 | tr -d ' ') == 7f454c46 ]]; then
        mv "$out.tmp" "$out"
        return 0
      fi
    done
  done
  rm -f "$out.tmp"
  echo "vm-test: no xz- or zstd-compressed vmlinux found in $bzimage" >&2
  return 1
}

unpack() {
  local kdeb bbdeb stamp release
  kdeb=$(ls "$debs"/linux-image-"$series".[0-9]*.deb | sort -V | tail -1)
  bbdeb=$(ls "$debs"/busybox-static_*.deb | sort -V | tail -1)
  # The module list is part of the stamp: a new module re-extracts the cached package.
  stamp="$(basename "$kdeb") $(basename "$bbdeb") ${optional_modules[*]} ${wanted_modules[*]}"
  [[ -f $cache/ready && $(cat "$cache/ready") == "$stamp" ]] && return 0

  rm -f "$cache/ready"
  # The full kernel tree is ~400 MB: extract it, keep the few files used, drop the rest.
  extract_dir=$(mktemp -d "$cache/extract.XXXXXX")
  trap 'rm -rf "$extract_dir"' EXIT
  local tree=$extract_dir
  dpkg-deb -x "$kdeb" "$tree/kernel"
  dpkg-deb -x "$bbdeb" "$tree/busybox"
  release=$(ls "$tree/kernel/lib/modules")

  extract_vmlinux "$tree/kernel/boot/vmlinuz-$release" "$cache/vmlinux"
  rm -rf "$cache/modules"
  mkdir -p "$cache/modules"
  local ko name modules_dir=$tree/kernel/lib/modules/$release
  local load=()
  for name in "${optional_modules[@]}"; do
    # File names may spell '_' as '-' (crc32c-intel.ko is crc32c_intel).
    [[ -n $(find "$modules_dir" -name "$name.ko*" -o -name "${name//_/-}.ko*") ]] &&
      load+=("$name")
  done
  load+=("${wanted_modules[@]}")
  for ko in $("$here/moddeps.sh" "$modules_dir" "${load[@]}"); do
    name=$(basename "${ko%.xz}")
    if [[ $ko == *.xz ]]; then xz -dc "$ko" >"$cache/modules/$name"; else cp "$ko" "$cache/modules/"; fi
    echo "$name" >>"$cache/modules/load.order"
  done
  cp "$tree/busybox/bin/busybox" "$cache/busybox"
  echo "$release" >"$cache/kernel-release"
  rm -rf "$extract_dir"
  trap - EXIT
  echo "$stamp" >"$cache/ready"
  echo "vm-test: kernel $release, $(wc -l <"$cache/modules/load.order") modules, in $cache" >&2
}

download
unpack
