/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How many traced syncs are waiting now, machine-wide. A bystander's request kept out of a
 * traced disk is told to the agent when it completes while one is (the neighbours it waits
 * behind, bpf/block.bpf.c); at any other time it costs what it cost before neighbours were
 * named: kept out, its bytes added to its owner's count in filtered_io. A thread counts itself
 * in when its traced sync opens and out when the call ends; a call whose end the trace missed
 * (its state opened again) counts out then.
 */
#ifndef WRITEPATH_SYNC_WAITERS_BPF_H
#define WRITEPATH_SYNC_WAITERS_BPF_H

#include "vmlinux.h"

#include <bpf/bpf_helpers.h>

#include "task_state.bpf.h"
#include "writepath.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s64);
} syncs_waiting SEC(".maps") __weak;

/* The thread's call `st` (just opened for `syscall`) waits as a sync. */
static __always_inline void wp_sync_wait_begin(struct wp_task_state *st, __u32 syscall)
{
	__u32 zero = 0;
	__s64 *waiting;

	if (!wp_syscall_is_sync(syscall))
		return;
	waiting = bpf_map_lookup_elem(&syncs_waiting, &zero);
	if (!waiting)
		return;
	__sync_fetch_and_add(waiting, 1);
	st->sync_waiting = 1;
}

/* The thread's call `st` ends (or was found open when another began). */
static __always_inline void wp_sync_wait_end(struct wp_task_state *st)
{
	__u32 zero = 0;
	__s64 *waiting;

	if (!st->sync_waiting)
		return;
	st->sync_waiting = 0;
	waiting = bpf_map_lookup_elem(&syncs_waiting, &zero);
	if (waiting)
		__sync_fetch_and_add(waiting, -1);
}

static __always_inline bool wp_syncs_waiting(void)
{
	__u32 zero = 0;
	__s64 *waiting = bpf_map_lookup_elem(&syncs_waiting, &zero);

	return waiting && *waiting > 0;
}

#endif /* WRITEPATH_SYNC_WAITERS_BPF_H */
