/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The io_uring ops of traced processes in flight, from submission to CQE (bpf/uring.bpf.c): the
 * hooks that run while an op is issued, inline in its submitter or in the io-wq worker running
 * it, add to its entry.
 */
#ifndef WRITEPATH_URING_OP_BPF_H
#define WRITEPATH_URING_OP_BPF_H

#include "vmlinux.h"

#include <bpf/bpf_helpers.h>

#include "compat.bpf.h"
#include "task_state.bpf.h"
#include "writepath.h"

/* An io_uring op of a traced process from its submission to its completion, keyed by its
 * request pointer. What it dirtied inline is folded in from the submitter's task state
 * (wp_uring_fold); what an io-wq worker does for it is added here directly. */
struct wp_uring_op {
	__u64 start_ns;
	__u64 pos; /* kiocb position at submission, -1: the file position */
	__u64 count;
	__u64 throttle_ns;
	__u32 pages_dirtied;
	__u32 dirty_folios;
	__u32 throttle_events;
	__u32 writeback_waits;
	struct wp_read_counts reads; /* a read op: what its inline issue put in the page cache */
	__u32 pid; /* the ring owner's tgid: the CQE may be posted from another context */
	__u32 submit_tid;
	__u32 issue_tid; /* the io-wq worker that queued its bios, 0: the submitter */
	__s32 fd;
	__u8 syscall; /* WP_SYS_IO_URING_* */
	__u8 via;     /* enum wp_via */
	__u16 pad;
	__u32 pad2;
	char comm[WP_COMM_LEN]; /* the owner's name (the group leader's) */
};

/* Bounded by the ops in flight (a ring's depth per traced process); an op that finds no room
 * is counted (WP_HOOK_URING) and not traced. A request that posts no CQE (CQE_SKIP_SUCCESS)
 * leaves its entry until the pointer is submitted again. */
#define WP_MAX_URING_OPS 16384
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WP_MAX_URING_OPS);
	__type(key, __u64);
	__type(value, struct wp_uring_op);
} uring_ops SEC(".maps") __weak;

/* Ends the inline issue of the io_uring op the thread's state holds: what it accumulated goes
 * to the op's entry, and the state is no longer active. */
static __always_inline void wp_uring_fold(struct wp_task_state *st)
{
	struct wp_uring_op *op;

	if (!st->active || !st->uring_req)
		return;
	op = bpf_map_lookup_elem(&uring_ops, &st->uring_req);
	if (op) {
		op->pages_dirtied += st->pages_dirtied;
		op->dirty_folios += st->dirty_folios;
		op->throttle_ns += st->throttle_ns;
		op->throttle_events += st->throttle_events;
		op->writeback_waits += st->writeback_waits;
		op->reads.pages_added += st->reads.pages_added;
		op->reads.pages_added_beyond += st->reads.pages_added_beyond;
		op->reads.sync_ra_pages += st->reads.sync_ra_pages;
		op->reads.async_ra_pages += st->reads.async_ra_pages;
		op->reads.sync_ra += st->reads.sync_ra;
		op->reads.async_ra += st->reads.async_ra;
	}
	st->uring_req = 0;
	st->active = 0;
}

/* The traced io_uring op the current io-wq worker is running, or NULL. */
static __always_inline struct wp_uring_op *wp_iowq_op(void)
{
	__u64 req = wp_iowq_current_req();

	return req ? bpf_map_lookup_elem(&uring_ops, &req) : NULL;
}

#endif /* WRITEPATH_URING_OP_BPF_H */
