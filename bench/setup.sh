#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what the benchmarks need besides the build: the peer tracers they compare with
# (bpftrace, perf) and GNU time for peak RSS. Idempotent: installs only what is missing.
set -euo pipefail

packages=(
  bpftrace    # the bpftrace columns: a pwrite64 latency histogram, kstack on sched_switch
  linux-perf  # the `perf trace -e pwrite64` column
  time        # /usr/bin/time -f %M: peak RSS of writepath report
  jq          # the scenarios section: ratios of figures from `writepath load --json`
  e2fsprogs util-linux  # mkfs.ext4, losetup: the scratch filesystems
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# bpftrace 0.17 finds tracepoints under /sys/kernel/debug/tracing only.
mount_debugfs() {
  mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
}
if ((${#missing[@]} == 0)); then
  mount_debugfs
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "bench/setup: missing packages (${missing[*]}); run as root or install them" >&2
  exit 1
fi
echo "bench/setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
mount_debugfs
