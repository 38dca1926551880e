#!/bin/busybox sh
# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=dash
# /init of the VM test guest (busybox only). Mounts what the tracer needs, loads the NVMe and
# ext4 modules, runs /guest-tests.sh and leaves the VM with its exit status as the verdict:
# 0 powers off (qemu exits 0), N != 0 writes N to isa-debug-exit (qemu exits 2N+1).
/bin/busybox --install -s /bin
export PATH=/bin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
mount -t bpf bpf /sys/fs/bpf
mount -t tmpfs tmpfs /tmp

leave() {
  echo "WP-GUEST-END rc=$1 uptime=$(cut -d' ' -f1 /proc/uptime)"
  sync
  if [ "$1" != 0 ]; then
    printf "\\$(printf %o $(($1 & 127)))" | dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
  fi
  poweroff -f
}

# Kernel messages on the console would split the JSON lines the host parses; wp.verbose on
# the kernel command line (WRITEPATH_VM_APPEND) keeps them, e.g. to see a lockup's stack.
grep -qw wp.verbose /proc/cmdline || dmesg -n 1
echo "WP-GUEST-BEGIN kernel=$(uname -r) uptime=$(cut -d' ' -f1 /proc/uptime)"

for ko in $(cat /lib/modules/load.order); do
  insmod "/lib/modules/$ko" || echo "WP-WARN insmod $ko failed"
done

# The controller probes asynchronously: give the namespace up to 10 s to appear.
i=0
while [ ! -b /dev/nvme0n1 ] && [ $i -lt 100 ]; do
  sleep 0.1
  i=$((i + 1))
done
if [ ! -b /dev/nvme0n1 ]; then
  echo "WP-FAIL no /dev/nvme0n1"
  dmesg | tail -30
  leave 3
fi

/bin/sh /guest-tests.sh
leave $?
