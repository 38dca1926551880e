/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The trace's settings the layers share, set by the agent before load (rodata). Weak, as is every
 * map a header defines, so that `bpftool gen object` links each layer's copy into one. A setting
 * only one layer reads is that layer's (cfg_raw_syscall_slots in syscall.bpf.c).
 */
#ifndef WRITEPATH_CONFIG_BPF_H
#define WRITEPATH_CONFIG_BPF_H

#include <bpf/bpf_helpers.h>

#include "writepath.h"

const volatile __u32 cfg_self_tgid __weak = 0;	    /* never trace the agent's own writes */
const volatile bool cfg_filter_tgid __weak = false; /* only tgids in traced_tgids */
const volatile bool cfg_follow_children __weak = false;
const volatile bool cfg_filter_comm __weak = false;
/* --comm X --children: a thread named X, or one of a process in traced_tgids (forked by X or
 * its descendants), is traced; otherwise the comm and tgid filters both apply. */
const volatile bool cfg_comm_roots __weak = false;
const volatile char cfg_comm[WP_COMM_LEN] __weak = {};
/* --cgroup, --container, --pod, --namespace: only threads in one of the cgroups at
 * cgroup_filter[0 .. cfg_filter_cgroups - 1] or below it (wp_current_task_under); 0: any. */
const volatile __u32 cfg_filter_cgroups __weak = 0;
const volatile __u32 cfg_disk __weak = 0; /* 0: any disk */
/* With cfg_disk: the superblock devices of the file systems on that disk whose superblock is
 * not the disk (btrfs: an anonymous device), so their files pass the disk filter. */
#define WP_MAX_DISK_FS_DEVS 4
const volatile __u32 cfg_disk_fs_devs[WP_MAX_DISK_FS_DEVS] __weak = {};
const volatile __u32 cfg_file_dev __weak = 0; /* with cfg_file_ino: one file only */
const volatile __u64 cfg_file_ino __weak = 0;
const volatile __u64 cfg_causes_min_ns __weak = 0; /* emit causes for calls at least this slow */
/* With --min-latency, a call faster than this is dropped at its exit: it costs no record, no
 * ring-buffer space and no agent work. */
const volatile __u64 cfg_min_latency_ns __weak = 0;
/* With cfg_causes_min_ns: also the kernel stacks slow calls slept with, their wakers and the
 * call-wide waits (bpf/sched.bpf.c), one wp_offcpu_record per slow call (off: --no-stacks). */
const volatile bool cfg_offcpu_stacks __weak = false;
/* blk-throttle's throtl_pending_timer_fn (from /proc/kallsyms): a timer armed with it by a
 * traced thread means its bios were held back over a cgroup I/O limit. 0: not traced. */
const volatile __u64 cfg_throtl_timer_fn __weak = 0;

/* trace --reads: read items' block requests (block.bpf.c) and io_uring reads (uring.bpf.c). */
const volatile bool cfg_reads __weak = false;

/* writepath serve (bpf/metrics.bpf.c): the kernel aggregates what it can into the metrics
 * map, and a plain write syscall is emitted only when it is at least cfg_metrics_slow_ns slow
 * (0: never for that reason) or is one of the 1 in cfg_metrics_sample kept for the agent's
 * time-to-durable histogram (0: none). Syncs, io_uring and AIO calls are still emitted. */
const volatile bool cfg_metrics __weak = false;
const volatile __u32 cfg_metrics_sample __weak = 0;
const volatile __u64 cfg_metrics_slow_ns __weak = 0;
const volatile bool cfg_metrics_comm __weak = false; /* key write and sync entries by comm */

/* Waking the agent for every record costs the traced thread an IPI and a context switch;
 * the agent drains the ring buffer while it has data and polls on a short timer when it is
 * empty, and is woken early each time cfg_wakeup_bytes more are waiting (the agent sets it to
 * a fraction of the ring buffer's size: early enough that a sleeping agent wakes long before
 * the buffer is full). */
const volatile __u32 cfg_wakeup_bytes __weak = 4u << 20;

#endif /* WRITEPATH_CONFIG_BPF_H */
