/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The cgroup of a thread an item is made of, told to the agent (a wp_cgroup_record) before the
 * thread's first such record and when it changes, rather than carried by every record.
 */
#ifndef WRITEPATH_CGROUP_BPF_H
#define WRITEPATH_CGROUP_BPF_H

#include "vmlinux.h"

#include "emit.bpf.h"
#include "task_state.bpf.h"
#include "writepath.h"

/* Tells the agent the cgroup of `task`, the current thread, before a record an item is made of,
 * when it is not the one last told for this thread: one compare per call in the common case. A
 * record the ring buffer has no room for is tried again with the thread's next record. The id
 * is read as bpf_get_current_cgroup_id() reads it (task->cgroups->dfl_cgrp->kn->id), without
 * the call. */
static __always_inline void wp_note_task_cgroup(__u64 *noted, struct task_struct *task)
{
	__u64 id = task->cgroups->dfl_cgrp->kn->id;
	struct wp_cgroup_record *r;

	if (*noted == id)
		return;
	r = wp_reserve(sizeof(*r), WP_REC_CGROUP, WP_HOOK_CGROUP);
	if (!r)
		return;
	r->cgroup_id = id;
	r->pid = task->tgid;
	r->tid = task->pid;
	wp_submit(r, sizeof(*r));
	*noted = id;
}

static __always_inline void wp_note_cgroup_of(struct wp_task_state *st, struct task_struct *task)
{
	wp_note_task_cgroup(&st->cgroup_noted, task);
}

static __always_inline void wp_note_cgroup(struct wp_task_state *st)
{
	wp_note_cgroup_of(st, bpf_get_current_task_btf());
}

#endif /* WRITEPATH_CGROUP_BPF_H */
