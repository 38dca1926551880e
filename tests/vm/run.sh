#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/vm/run.sh CACHE_DIR INITRAMFS CONSOLE_LOG [TIMEOUT_S]
# Boots the Debian kernel in CACHE_DIR (setup.sh) with INITRAMFS as its whole userland,
# under QEMU TCG (this machine's /dev/kvm is kvm-pvm and cannot run a stock kernel), with an
# emulated NVMe controller whose namespace (/dev/nvme0n1, 259:0) holds two fresh ext4 with a
# journal made here (busybox mke2fs in the guest would make ext2): one on its first 256 MiB,
# mounted directly, and one on its second 256 MiB, mounted through device-mapper. The guest's console goes
# to CONSOLE_LOG.
# WRITEPATH_VM_APPEND adds kernel command line arguments (e.g. wp.verbose, see init.sh).
# WRITEPATH_VM_SMP sets the guest's vCPUs (default 2); WRITEPATH_VM_QEMU_ARGS adds qemu
# arguments, split at spaces (bench/vm/run.sh: -icount shift=0,sleep=on).
# Exit: 0 the guest finished with 0; N the guest's /init reported N (isa-debug-exit makes qemu
# exit 2N+1); 124 timeout; 125 qemu failed; 126 the guest kernel died (panic, lockup).
set -euo pipefail

cache=$(realpath "${1:?usage: run.sh CACHE_DIR INITRAMFS CONSOLE_LOG [TIMEOUT_S]}")
initramfs=$(realpath "${2:?}")
log=$(realpath -m "${3:?}")
timeout_s=${4:-240}

disk=$(dirname "$log")/nvme.img
rm -f "$disk"
truncate -s 512M "$disk"
mkfs.ext4 -F -q -O has_journal "$disk" 256M
# The second half is the guest's dm-linear device (guest-tests.sh maps it from sector 524288):
# its own ext4 with a journal, made at that offset of the namespace.
mkfs.ext4 -F -q -O has_journal -E offset=$((256 << 20)) "$disk" 256M

# A kernel lockup panics (softlockup_panic) and a panic reboots, which -no-reboot turns into
# a qemu exit: a dead guest costs ~20 s instead of the whole timeout.
# thread=single: one host thread runs both vCPUs. With a thread per vCPU (MTTCG, the default)
# QEMU 7.2 sometimes kept executing the int3 of a kernel text patch (a static key flipped as a
# tracepoint attaches, or at boot) after the patch was done: guests died with "Oops: int3" in
# run_timer_softirq at boot (6.12) and a soft lockup in syscall_trace_enter as writepath
# attached (6.1). A guest alone took 448 s so against 420 s.
# write-cache=on: the namespace reports a volatile write cache (VWC), so the guest sends
# real FLUSH commands (qemu fdatasyncs the image) and advertises FUA.
read -ra extra_qemu_args <<<"${WRITEPATH_VM_QEMU_ARGS:-}"
qemu_rc=0
timeout -k 5 "$timeout_s" qemu-system-x86_64 \
  -accel tcg,thread=single -cpu max -smp "${WRITEPATH_VM_SMP:-2}" -m 1024 \
  -nodefaults -display none -no-reboot -serial stdio \
  -kernel "$cache/vmlinux" -initrd "$initramfs" \
  -append "console=ttyS0 quiet panic=-1 softlockup_panic=1 ${WRITEPATH_VM_APPEND:-}" \
  -drive file="$disk",if=none,id=nvme0,format=raw \
  -device nvme,serial=writepath0,drive=nvme0,write-cache=on \
  -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
  "${extra_qemu_args[@]}" </dev/null >"$log" 2>&1 || qemu_rc=$?
rm -f "$disk"

case $qemu_rc in
  0)
    if ! grep -q '^WP-GUEST-END rc=0' "$log"; then
      echo "vm-test: the guest kernel died before the tests finished: $(grep -a -m1 -E \
        'Kernel panic|BUG:|Oops' "$log" || echo 'no panic line') (log: $log)" >&2
      exit 126
    fi
    exit 0
    ;;
  124 | 137)
    echo "vm-test: the guest did not finish within ${timeout_s}s (log: $log)" >&2
    exit 124
    ;;
  *)
    if ((qemu_rc % 2 == 1 && qemu_rc > 1)); then
      echo "vm-test: the guest reported failure $(((qemu_rc - 1) / 2)) (log: $log)" >&2
      exit $(((qemu_rc - 1) / 2))
    fi
    echo "vm-test: qemu failed with exit code $qemu_rc (log: $log)" >&2
    exit 125
    ;;
esac
