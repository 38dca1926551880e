// SPDX-License-Identifier: GPL-2.0
/*
 * Layer 6: time off CPU inside a traced syscall, for the causes of slow writes and fsyncs.
 * A switch-out of a thread inside a traced call starts an off-CPU span; the switch back in
 * ends it and adds it to the cause it was for: a dirty-throttling sleep or a wait on a page
 * under writeback (flagged by the page-cache hooks just before they sleep), any other sleep,
 * or preemption (runnable, waiting for a CPU). Loaded only with --min-latency: it runs on
 * every context switch.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "compat.bpf.h"
#include "maps.bpf.h"

#define WP_TASK_RUNNING 0

static __always_inline void wp_switch(bool preempt, struct task_struct *prev,
				      struct task_struct *next, unsigned int prev_state)
{
	struct wp_task_state *st = bpf_task_storage_get(&task_state, prev, 0, 0);
	__u64 now = bpf_ktime_get_ns();

	if (st && st->active) {
		st->offcpu_since = now;
		st->offcpu_cause = preempt || prev_state == WP_TASK_RUNNING ? WP_OFFCPU_RUNNABLE
									    : st->pending_cause;
	}
	st = bpf_task_storage_get(&task_state, next, 0, 0);
	if (!st || !st->active || !st->offcpu_since)
		return;
	__u64 span = now - st->offcpu_since;

	switch (st->offcpu_cause) {
	case WP_OFFCPU_THROTTLE:
		st->throttle_sleep_ns += span;
		break;
	case WP_OFFCPU_WRITEBACK_WAIT:
		st->writeback_wait_ns += span;
		break;
	case WP_OFFCPU_RUNNABLE:
		st->runnable_ns += span;
		break;
	default:
		st->blocked_ns += span;
	}
	st->offcpu_since = 0;
	/* A flagged wait is one sleep; a preemption in between keeps the flag for it. */
	if (st->offcpu_cause != WP_OFFCPU_RUNNABLE)
		st->pending_cause = WP_OFFCPU_BLOCKED;
}

/* v5.18 (fa2c3254d7cf) added prev_state to sched_switch; before it, read the state from the
 * task (task->__state since v5.14, task->state before). */
SEC("tp_btf/sched_switch")
int BPF_PROG(wp_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	wp_switch(preempt, prev, next, prev_state);
	return 0;
}

struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

SEC("tp_btf/sched_switch")
int BPF_PROG(wp_sched_switch_pre518, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	unsigned int state;

	if (bpf_core_field_exists(prev->__state))
		state = BPF_CORE_READ(prev, __state);
	else
		state = BPF_CORE_READ((struct task_struct___pre514 *)prev, state);
	wp_switch(preempt, prev, next, state);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
