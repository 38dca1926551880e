#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs inside the VM guest (busybox sh). Mounts the host-made ext4 (with journal) on the
# emulated NVMe disk and runs writepath on it. It asserts nothing: every output goes to the
# console between markers and the host checks it (tests/vm/vm_test.cpp, vm_dm_test.cpp):
#   WP-OUT <name>            the command's stdout follows, line by line
#   WP-ERR <name> <line>     each line of its stderr
#   WP-END <name>
#   WP-RC <name> <exit code>
# Exit status: 0 once everything ran, whatever the runs returned; non-zero only when the
# stage itself is broken (no disk, no filesystem).
dev=/dev/nvme0n1
mnt=/mnt

info() { echo "WP-INFO $*"; }

# run NAME CMD ARGS...: at most 90 s each, so one stuck run still leaves the others' output.
run() {
  name=$1
  shift
  timeout 90 "$@" >/tmp/out 2>/tmp/err
  rc=$?
  echo "WP-OUT $name"
  cat /tmp/out
  # The end marker must start its own line.
  [ -n "$(tail -c 1 /tmp/out)" ] && echo
  echo "WP-END $name"
  sed "s/^/WP-ERR $name /" /tmp/err
  echo "WP-RC $name $rc"
}

mkdir -p $mnt
mount -t ext4 $dev $mnt || {
  echo "WP-FAIL cannot mount $dev"
  exit 4
}

queue=/sys/block/nvme0n1/queue
info "dev $(cat /sys/block/nvme0n1/dev) write_cache $(cat $queue/write_cache) fua $(cat $queue/fua)"
info "mount $(grep " $mnt " /proc/mounts)"
info "btf $(ls /sys/kernel/btf | tr '\n' ' ')"
info "sha256 writepath $(sha256sum /bin/writepath | cut -d' ' -f1)"
info "sha256 wp_workload $(sha256sum /bin/wp_workload | cut -d' ' -f1)"

run version writepath --version
run doctor writepath doctor
# When tracing cannot run, the end of libbpf's log says why (the whole log can be long).
if [ "$rc" != 0 ]; then
  WRITEPATH_DEBUG=1 writepath doctor >/dev/null 2>/tmp/debug
  tail -n 60 /tmp/debug | sed "s/^/WP-DEBUG doctor /"
fi

# Which hooks each plan attaches, in the kernel's own words: wp_attached_hooks, started by the
# trace once it is attached, asks the kernel what its parent's BPF fds are attached to. Under
# the trampoline plan (the default here) no syscalls:* or raw_syscalls:* tracepoint; under
# --no-fentry the fallback's own.
run hooks-trampolines writepath trace --reads -o /tmp/hooks.txt -- wp_attached_hooks
run hooks-tracepoints writepath trace --reads --no-fentry -o /tmp/hooks.txt -- wp_attached_hooks

# Calls the trampoline plan takes at their syscalls' entry functions, each with its own truth:
# writev, pwritev, sync_file_range and fdatasync (the workload's fixed offsets and sizes), rename
# (3 names a round), and the counted calls (fallocate 3, copy_file_range 2) with msync 5.
run entry-append-mix writepath trace --format json -- wp_workload append-mix $mnt/am
run entry-rename writepath trace --format json -- wp_workload rename-over $mnt/rn 3
run entry-untraced writepath trace --format json -- wp_workload untraced-mix $mnt/um 3 2 5

run buffered-fsync writepath trace --format json -- wp_workload buffered-fsync $mnt/a 16
run buffered-fsync-no-fentry \
  writepath trace --no-fentry --format json -- wp_workload buffered-fsync $mnt/b 16
run direct writepath trace --format json -- wp_workload direct $mnt/d 16
# --min-latency with stacks: the sleep-stack, waker and call-wide wait programs load on the guest kernel.
run slow-fsync-stacks writepath trace --min-latency 1us --format json -- \
  wp_workload fsync-each $mnt/s 8

# A cold read with --reads: 4 MiB written and synced, the guest's caches dropped (the guest is
# ours alone), then read by busybox dd in 64 KiB reads; the NVMe disk's read sectors before
# and after (diskstats field 6) are its truth.
dd if=/dev/urandom of=$mnt/r bs=64k count=64 conv=fsync 2>/dev/null
sync
echo 3 >/proc/sys/vm/drop_caches
sectors() { awk '$3 == "nvme0n1" { print $6 }' /proc/diskstats; }
before=$(sectors)
run read-cold writepath trace --reads --format json -- dd if=$mnt/r of=/dev/null bs=64k
info "read-cold sectors $before $(sectors)"

# A FUA write. busybox dd has oflag=direct but no oflag=dsync; a sync mount does the same to
# O_DIRECT writes (IS_SYNC inode: IOCB_DSYNC without IOCB_SYNC), and ext4 then sends them as
# FUA requests if they overwrite blocks whose allocation is already committed. So: write the
# file and commit it first, then overwrite it in place.
dd if=/dev/zero of=$mnt/f bs=4k count=4 conv=fsync 2>/dev/null
sync
mount -o remount,sync $mnt
run fua writepath trace --format json -- dd if=/dev/zero of=$mnt/f bs=4k count=4 oflag=direct conv=notrunc
mount -o remount,async $mnt

# A bystander's O_DIRECT overwrites on the NVMe disk beside a traced command that writes one
# file there and sleeps: the bystander's bios, requests and NVMe commands stay in the kernel.
# The traced command reads the disk's completed writes (diskstats field 8) as it starts and
# ends: the bystander's requests inside the trace, its truth.
cat >/tmp/traced-sleeper <<EOF
writes() { awk '\$3 == "nvme0n1" { print \$8 }' /proc/diskstats; }
before=\$(writes)
echo x >$mnt/tr
sleep 3
echo "WRITES \$before \$(writes)" >&2
EOF
dd if=/dev/zero of=$mnt/by bs=4k count=64 conv=fsync 2>/dev/null
(while :; do dd if=/dev/zero of=$mnt/by bs=4k count=64 oflag=direct conv=notrunc 2>/dev/null; done) &
bystander=$!
run bystander-kept-out writepath trace --format json -- sh /tmp/traced-sleeper
kill $bystander
wait $bystander 2>/dev/null

# writepath serve (the dynamic build, /bin/writepath-serve: the static one has no serve) loads
# on this kernel and counts dd's 4 KiB writes of a file on the NVMe disk and its fsync; dd's
# own "records out" is the truth. The metrics go to stdout (serve listens on the loopback),
# serve's and dd's messages to stderr.
ip link set lo up
cat >/tmp/served-dd <<EOF
/bin/writepath-serve serve --comm-labels --listen 127.0.0.1:9441 2>/tmp/serve.err &
serve=\$!
i=0
while [ \$i -lt 60 ] && ! grep -q serving /tmp/serve.err; do sleep 1; i=\$((i + 1)); done
cat /tmp/serve.err >&2
dd if=/dev/zero of=$mnt/served bs=4k count=300 conv=fsync
wget -q -O - http://127.0.0.1:9441/metrics
kill \$serve
EOF
run serve-dd sh /tmp/served-dd

# ---- the oracle's rounds (tests/integration/oracle_sweep_test.cpp, smaller): each pattern
# under writepath trace, its truth log (the workload's own calls and return codes, the disk's
# diskstats as it starts and ends) after it as oracle-NAME-truth. 6.1 has no cachestat (6.5+): the
# truth has no page lines.
export WP_ORACLE_DISK=nvme0n1
oracle() {
  round=$1 # not `name`: run() sets that
  shift
  run "oracle-$round" writepath trace --format json -- \
    wp_oracle_writer "$mnt/o-$round" "/tmp/truth-$round" "$@"
  echo "WP-OUT oracle-$round-truth"
  cat "/tmp/truth-$round"
  echo "WP-END oracle-$round-truth"
}
oracle pwrite-4k pwrite 4096 256 1 end-fsync 1 11
oracle pwrite-64k-random pwrite 65536 64 0 fsync 4 23
oracle write-8k write 8192 128 1 fdatasync 16 37
oracle direct-16k direct 16384 64 0 fsync 8 41
oracle mmap-4k mmap 4096 256 1 end-fsync 1 53
unset WP_ORACLE_DISK
# Which hook sees fdatasync(2) here: the fentry one and the syscall tracepoint one.
run fdatasync-fentry writepath trace --format json -- \
  wp_oracle_writer $mnt/fd1 /tmp/fd1 write 4096 4 1 fdatasync 1 7
run fdatasync-no-fentry writepath trace --no-fentry --format json -- \
  wp_oracle_writer $mnt/fd2 /tmp/fd2 write 4096 4 1 fdatasync 1 7
run fsync-fentry writepath trace --format json -- \
  wp_oracle_writer $mnt/fd3 /tmp/fd3 write 4096 4 1 fsync 1 7

umount $mnt

# ---- device-mapper: ext4 on dm-linear over the namespace's second half (run.sh made it) ----
# The direct mount is gone, so every flush nvme0n1 sees now is the dm file system's: the
# host compares the traced flushes with the disk's own count (/proc/diskstats column 19,
# flush requests completed, since 5.5).
nvme_flushes() { awk '$3 == "nvme0n1" { print $19 }' /proc/diskstats; }
dmsetup --noudevsync create wp-linear --table "0 524288 linear /dev/nvme0n1 524288" ||
  echo "WP-FAIL dmsetup create"
dm=$(cat /sys/block/dm-0/dev 2>/dev/null)
info "dm $dm slaves $(ls /sys/block/dm-0/slaves 2>/dev/null | tr '\n' ' ')"
if mount -t ext4 /dev/dm-0 $mnt; then
  info "dm-mount $(grep " $mnt " /proc/mounts)"
  # A first file, written and committed, so the traced run's fsyncs start from a quiet journal.
  dd if=/dev/zero of=$mnt/warm bs=4k count=1 conv=fsync 2>/dev/null
  sync
  info "dm-flushes-before $(nvme_flushes)"
  run dm-fsync writepath trace --format json -- wp_workload fsync-each $mnt/e 8
  info "dm-flushes-after $(nvme_flushes)"
  run dm-direct writepath trace --format json -- wp_workload direct $mnt/d 8
  run dm-dev-dm writepath trace --format json --dev "$dm" -- wp_workload fsync-each $mnt/g 4
  run dm-dev-nvme writepath trace --format json --dev 259:0 -- wp_workload fsync-each $mnt/h 4
  umount $mnt
else
  echo "WP-FAIL cannot mount /dev/dm-0"
fi
dmsetup --noudevsync remove wp-linear

# ---- lost writes: ext4 on a dm device whose table is switched under it to fail writes ----
# Each round has a fresh file system of its own (the namespace's halves: their earlier mounts
# are gone by now) behind a dm device: linear while the file system is mounted and warmed,
# then a table that fails the round's writeback with EIO. flakey: dm-flakey with error_writes
# (up 0 s, down 3600 s: every write fails, reads pass). error: the error target (every I/O
# fails; the file's inode, directory and bitmaps are cached by then). The host holds the lost
# writes to the workload's own return codes and to the kernel log's lines for the file's inode.
lost_round() {
  round=$1 offset=$2 table=$3
  dmsetup --noudevsync create "wp-$round" --table "0 524288 linear /dev/nvme0n1 $offset" || {
    echo "WP-FAIL dmsetup create wp-$round"
    return
  }
  faulty=/dev/dm-$(dmsetup info -c --noheadings -o minor "wp-$round")
  # No ext4lazyinit work behind the round's back (zeroing inode tables, and since 5.9
  # prefetching block bitmaps: under the error target its failed reads abort the journal
  # before the workload writes anything), and no periodic journal commit inside the round.
  if ! mount -t ext4 -o noinit_itable,no_prefetch_block_bitmaps,commit=300 "$faulty" $mnt; then
    echo "WP-FAIL cannot mount $faulty"
    dmsetup --noudevsync remove "wp-$round"
    return
  fi
  # The file exists and is committed before writes fail: only the data written next is lost.
  dd if=/dev/zero of=$mnt/lost bs=4k count=1 conv=fsync 2>/dev/null
  sync
  info "lost-ino $round $(stat -c %i $mnt/lost)"
  { dmsetup --noudevsync suspend --nolockfs "wp-$round" && dmsetup --noudevsync reload "wp-$round" --table "$table" &&
    dmsetup --noudevsync resume "wp-$round"; } || echo "WP-FAIL dmsetup reload wp-$round $table"
  dmesg -c >/dev/null
  run "lost-$round" writepath trace --format json -- \
    wp_oracle_writer $mnt/lost "/tmp/truth-lost-$round" pwrite 65536 16 1 end-fsync 1 61
  echo "WP-OUT lost-$round-truth"
  cat "/tmp/truth-lost-$round"
  echo "WP-END lost-$round-truth"
  echo "WP-OUT lost-$round-kernel-log"
  dmesg | grep -E "I/O error|EXT4-fs|Buffer I/O" | head -40
  echo "WP-END lost-$round-kernel-log"
  umount $mnt 2>/dev/null || umount -l $mnt
  dmsetup --noudevsync remove "wp-$round" 2>/dev/null || dmsetup --noudevsync remove --force "wp-$round"
}
lost_round flakey 0 "0 524288 flakey /dev/nvme0n1 0 0 3600 1 error_writes"
lost_round error 524288 "0 524288 error"
exit 0
