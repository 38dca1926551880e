/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A traced read's record, at its exit: what it asked for and got, and what its thread's state
 * counted of the page cache while it ran (pagecache.bpf.c).
 */
#ifndef WRITEPATH_READ_CALL_BPF_H
#define WRITEPATH_READ_CALL_BPF_H

#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "emit.bpf.h"
#include "task_state.bpf.h"
#include "traced_call.bpf.h"
#include "writepath.h"

/* A read record's page-cache counts, from the struct wp_read_counts that counted them: a
 * thread's state's (a read call) or an io_uring op's (uring.bpf.c). */
#define WP_FILL_READ_COUNTS(r, counted)                                                            \
	do {                                                                                       \
		(r)->pages_added = (counted)->pages_added;                                         \
		(r)->pages_added_beyond = (counted)->pages_added_beyond;                           \
		(r)->sync_ra_pages = (counted)->sync_ra_pages;                                     \
		(r)->async_ra_pages = (counted)->async_ra_pages;                                   \
		(r)->sync_ra = (counted)->sync_ra;                                                 \
		(r)->async_ra = (counted)->async_ra;                                               \
		(r)->pad = 0;                                                                      \
	} while (0)

/* Emits one read record from the state of `task` (current), stamped `now` (the call's end).
 * With `cast` (a constant) the file's position is read through wp_typed_file. */
static __always_inline void wp_emit_read(struct wp_task_state *st, long ret, __u64 now,
					 struct task_struct *task, bool cast)
{
	struct wp_read_record *r;

	if (st->file)
		wp_emit_call_path(st);
	r = wp_reserve_at(sizeof(*r), WP_REC_READ, WP_HOOK_READ, now);
	if (!r)
		return;
	WP_FILL_CALL_RECORD(r, st, task, ret);
	r->pos = wp_call_pos(st, ret, cast, false);
	WP_FILL_READ_COUNTS(r, &st->reads);
	wp_submit(r, sizeof(*r));
}

#endif /* WRITEPATH_READ_CALL_BPF_H */
