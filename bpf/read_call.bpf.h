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
	r->pages_added = st->pages_added;
	r->pages_added_beyond = st->pages_added_beyond;
	r->sync_ra_pages = st->sync_ra_pages;
	r->async_ra_pages = st->async_ra_pages;
	r->sync_ra = st->sync_ra;
	r->async_ra = st->async_ra;
	r->pad = 0;
	wp_submit(r, sizeof(*r));
}

#endif /* WRITEPATH_READ_CALL_BPF_H */
