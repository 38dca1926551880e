/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the thread submitting a bio is writing for, which its bio record carries: a traced call,
 * an io_uring op (issued inline or by an io-wq worker), or the writeback work of a flusher.
 */
#ifndef WRITEPATH_SUBMITTER_BPF_H
#define WRITEPATH_SUBMITTER_BPF_H

#include "vmlinux.h"

#include <bpf/bpf_helpers.h>

#include "task_state.bpf.h"
#include "uring_op.bpf.h"
#include "writepath.h"

/* The io_uring op the current thread is issuing (inline, inside io_uring_enter, or as the
 * io-wq worker running it), as the tag its bios carry: WP_URING_TAG of its start_ns, else 0. */
static __always_inline __u32 wp_current_uring_tag(void)
{
	struct wp_task_state *st =
	    bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), 0, 0);
	struct wp_uring_op *op = NULL;

	if (st && st->active && st->uring_req)
		op = bpf_map_lookup_elem(&uring_ops, &st->uring_req);
	if (!op)
		op = wp_iowq_op();
	return op ? WP_URING_TAG(op->start_ns) : 0;
}

/* Why the current thread is writing, for the bios it submits. */
static __always_inline __u8 wp_current_why(void)
{
	struct wp_task_state *st =
	    bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), 0, 0);

	struct wp_uring_op *op;

	if (st && st->active)
		return wp_syscall_is_write(st->syscall) ? WP_WHY_WRITE_SYSCALL
							: WP_WHY_SYNC_SYSCALL;
	/* An io-wq worker running a traced op queues its bios for that op (and the op's
	 * owner is then that worker: the stitcher matches bios by thread). */
	op = wp_iowq_op();
	if (op) {
		op->issue_tid = wp_current_tid();
		return wp_syscall_is_write(op->syscall) ? WP_WHY_WRITE_SYSCALL
							: WP_WHY_SYNC_SYSCALL;
	}
	return st ? st->writeback_why : WP_WHY_UNKNOWN;
}

#endif /* WRITEPATH_SUBMITTER_BPF_H */
