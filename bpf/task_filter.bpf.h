/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which threads the trace follows: -p and the processes it forks (--children), --comm, and
 * --cgroup (--container, --pod, --namespace). The settings are config.bpf.h's; the processes
 * and cgroups are maps the agent fills.
 */
#ifndef WRITEPATH_TASK_FILTER_BPF_H
#define WRITEPATH_TASK_FILTER_BPF_H

#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "compat.bpf.h"
#include "config.bpf.h"
#include "writepath.h"

/* The processes the tgid filter lets through; the value is WP_TGID_* flags. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WP_MAX_TGIDS);
	__type(key, __u32);
	__type(value, __u8);
} traced_tgids SEC(".maps") __weak;

/* The tgid filter's hot path, one byte per tgid, eight to an element of an array the verifier
 * inlines: a bystander's syscall costs a load and a test rather than a hash lookup. The agent
 * sizes it to pid_max before load and maps it (BPF_F_MMAPABLE) to set its own tgids; a byte
 * store races with no neighbour's. traced_tgids keeps each process's flags beside it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 4194304 / 8); /* PID_MAX_LIMIT on 64-bit */
	__type(key, __u32);
	__type(value, __u64);
} traced_tgid_bytes SEC(".maps") __weak;

static __always_inline bool wp_tgid_traced(__u32 tgid)
{
	__u32 word = tgid / 8;
	__u8 *bytes = bpf_map_lookup_elem(&traced_tgid_bytes, &word);

	return bytes && bytes[tgid % 8];
}

static __always_inline void wp_mark_tgid(__u32 tgid, __u8 traced)
{
	__u32 word = tgid / 8;
	__u8 *bytes = bpf_map_lookup_elem(&traced_tgid_bytes, &word);

	if (bytes)
		bytes[tgid % 8] = traced;
}

/* The filter's cgroups, set by the agent after load: their directories' fds from index 0. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, WP_MAX_FILTER_CGROUPS);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps") __weak;

/* Whether `task` (current) has the name of --comm. */
static __always_inline bool wp_comm_matches_of(struct task_struct *task)
{
	__u64 comm[WP_COMM_LEN / 8] = {};

	/* io_uring's io-wq workers and SQPOLL thread (iou-wrk-PID, iou-sqp-PID) are threads of
	 * the ring's owner: they answer to the process's name, its leader's. */
	if (task->flags & WP_PF_IO_WORKER)
		BPF_CORE_READ_STR_INTO(&comm, task, group_leader, comm);
	else
		__builtin_memcpy(comm, task->comm, WP_COMM_LEN);
	/* cfg_comm is NUL-padded as the kernel pads comm: the name matches word for word. */
	return comm[0] == ((const volatile __u64 *)cfg_comm)[0] &&
	       comm[1] == ((const volatile __u64 *)cfg_comm)[1];
}

static __always_inline bool wp_comm_matches(void)
{
	return wp_comm_matches_of(bpf_get_current_task_btf());
}

/* Whether the current thread is in one of the filter's cgroups or below one: one helper call
 * for --cgroup, --container and --pod, one per pod for --namespace. Not unrolled: the count is
 * known at load (rodata), so the verifier walks only that many rounds, and the exit programs
 * near 6.1's instruction budget get one copy of the body. */
static __always_inline bool wp_current_task_in_filter_cgroups(void)
{
#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < WP_MAX_FILTER_CGROUPS; i++) {
		if (i >= cfg_filter_cgroups)
			break;
		if (wp_current_task_under(&cgroup_filter, i))
			return true;
	}
	return false;
}

/* Whether `task`, the current thread, passes the filters (-p, --comm, --children, --cgroup).
 * Callers that go on to use the task pass it: every helper call costs a call and a return
 * thunk on the kernels with return-stack mitigations, and its fields are plain loads. */
static __always_inline bool wp_task_traced_of(struct task_struct *task)
{
	__u32 tgid = task->tgid;

	if (tgid == cfg_self_tgid)
		return false;
	if (cfg_comm_roots) {
		if (!wp_tgid_traced(tgid) && !wp_comm_matches_of(task))
			return false;
	} else {
		if (cfg_filter_tgid && !wp_tgid_traced(tgid))
			return false;
		if (cfg_filter_comm && !wp_comm_matches_of(task))
			return false;
	}
	if (cfg_filter_cgroups && !wp_current_task_in_filter_cgroups())
		return false;
	return true;
}

static __always_inline bool wp_task_traced(void)
{
	return wp_task_traced_of(bpf_get_current_task_btf());
}

#endif /* WRITEPATH_TASK_FILTER_BPF_H */
