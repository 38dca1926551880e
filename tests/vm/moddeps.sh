#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/vm/moddeps.sh MODULES_DIR NAME...
# Prints the module files that load NAME... in a working order, dependencies first. Reads each
# module's own "depends=" from its .modinfo section: the extracted package has no modules.dep
# and the host's depmod would describe the host's kernel, not this one. Debian's 6.1 ships
# plain .ko files, its 6.12 xz-compressed .ko.xz ones: either is read.
set -euo pipefail

modules_dir=${1:?usage: moddeps.sh MODULES_DIR NAME...}
shift

declare -A ko_of visited
# Module names use '_' where file names may use '-' (nvme-core.ko is nvme_core).
while read -r ko; do
  name=$(basename "${ko%.xz}" .ko)
  ko_of[${name//-/_}]=$ko
done < <(find "$modules_dir" -name '*.ko' -o -name '*.ko.xz')

depends_of() {
  local elf=$1 tmp=
  if [[ $elf == *.xz ]]; then
    tmp=$(mktemp)
    xz -dc "$elf" >"$tmp"
    elf=$tmp
  fi
  objcopy -O binary --only-section=.modinfo "$elf" /dev/stdout | tr '\0' '\n' |
    sed -n 's/^depends=//p' | tr ',' ' '
  [[ -z $tmp ]] || rm -f "$tmp"
}

visit() {
  local name=${1//-/_} dep
  [[ -n ${visited[$name]:-} ]] && return 0
  visited[$name]=1
  local ko=${ko_of[$name]:-}
  if [[ -z $ko ]]; then
    echo "moddeps: no module $name under $modules_dir" >&2
    return 1
  fi
  for dep in $(depends_of "$ko"); do visit "$dep"; done
  echo "$ko"
}

for name in "$@"; do visit "$name"; done
