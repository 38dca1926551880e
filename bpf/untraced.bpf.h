/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Counted, not stitched: WP_UNTRACED_TABLE's calls of traced processes, and io_uring ops the
 * tracer does not follow (uring.bpf.c), are counted so that the summary can say what went
 * untraced.
 */
#ifndef WRITEPATH_UNTRACED_BPF_H
#define WRITEPATH_UNTRACED_BPF_H

#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "compat.bpf.h"
#include "task_filter.bpf.h"
#include "writepath.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WP_UNTRACED_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} untraced_calls SEC(".maps") __weak;

/* Whether `fd` is a file the write path covers: a regular file or a block device. */
static __always_inline bool wp_fd_is_file(int fd)
{
	struct file *file = wp_task_file(bpf_get_current_task_btf(), fd);
	__u32 mode;

	if (!file)
		return false;
	mode = BPF_CORE_READ(file, f_inode, i_mode) & WP_S_IFMT;
	return mode == WP_S_IFREG || mode == WP_S_IFBLK;
}

/* With check_fd, counted only when `fd` (the file written to) is a file of the write path. */
static __always_inline int wp_count_untraced(__u32 call, bool check_fd, int fd)
{
	__u64 *n;

	if (!wp_task_traced())
		return 0;
	if (check_fd && !wp_fd_is_file(fd))
		return 0;
	n = bpf_map_lookup_elem(&untraced_calls, &call);
	if (n)
		*n += 1;
	return 0;
}

#endif /* WRITEPATH_UNTRACED_BPF_H */
