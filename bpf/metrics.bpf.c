// SPDX-License-Identifier: GPL-2.0-only
/*
 * writepath serve: the metrics the kernel side aggregates itself, read by the agent at scrape
 * time (serve/write_metrics.h). One per-CPU hash entry per label set (struct wp_metric_key),
 * each a latency histogram over the fixed bounds of WP_METRIC_BOUND_LIST and the counters its
 * metric needs; an observation costs a lookup and a few adds, and no ring-buffer record.
 * Block requests' service times are timed here too, from their issue to their completion.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "config.bpf.h"
#include "metrics.bpf.h"
#include "writepath.h"

/* Where each label set's values live: a slot of metric_values, given out as label sets appear
 * and kept for the map's life. A caller that keeps the slot (a thread's write metrics: see
 * wp_metric_slot_of in bpf/syscall.bpf.c) adds to it without hashing its 32-byte key; the
 * agent reads the two maps together. `trace` and `record` shrink both to one entry, since they
 * never add. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WP_MAX_METRIC_KEYS);
	__type(key, struct wp_metric_key);
	__type(value, __u32);
} metric_slots SEC(".maps");

/* One value per slot and CPU. The agent sizes it at load (probe/bpf_session.cpp): a per-CPU
 * array takes its whole size times the CPUs at once. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WP_MAX_METRIC_KEYS);
	__type(key, __u32);
	__type(value, struct wp_metric_value);
} metric_values SEC(".maps");

/* The slots no label set has yet, filled by the agent after load; a label set that finds it
 * empty is counted in metrics_overflow. A queue hands each out once without an atomic fetch,
 * which the kernels before 5.12 lack. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, WP_MAX_METRIC_KEYS);
	__type(value, __u32);
} metric_free_slots SEC(".maps");

/* Observations that found no slot for their label set (one slot, per CPU). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} metrics_overflow SEC(".maps");

#define WP_BOUND_(ns) ns,
static const __u64 wp_metric_bounds[WP_METRIC_BOUNDS] = {WP_METRIC_BOUND_LIST(WP_BOUND_)};
#undef WP_BOUND_

/* The bucket of a duration: the first bound it does not exceed, WP_METRIC_BOUNDS past all. */
static __always_inline __u32 wp_metric_bucket(__u64 ns)
{
	__u32 lo = 0, hi = WP_METRIC_BOUNDS;

	/* Binary search: 5 steps for 22 bounds. */
	for (int step = 0; step < 5 && lo < hi; step++) {
		__u32 mid = (lo + hi) / 2;

		if (mid >= WP_METRIC_BOUNDS)
			break;
		if (ns <= wp_metric_bounds[mid])
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static __always_inline void wp_metric_overflow(void)
{
	__u32 zero = 0;
	__u64 *overflow = bpf_map_lookup_elem(&metrics_overflow, &zero);

	if (overflow)
		*overflow += 1;
}

__noinline __u32 wp_metric_slot(__u32 what, __u32 dev)
{
	struct wp_metric_key key = {};
	__u32 *found, slot;

	key.metric = what & 0xff;
	key.sub = (what >> 8) & 0xff;
	key.dev = dev;
	if (what & WP_METRIC_OF_TASK) {
		/* What bpf_get_current_cgroup_id() and bpf_get_current_comm() return, read with
		 * plain loads from the BTF task: one helper call where those took two. */
		struct task_struct *task = bpf_get_current_task_btf();

		key.cgroup = task->cgroups->dfl_cgrp->kn->id;
		if (cfg_metrics_comm)
			__builtin_memcpy(key.comm, task->comm, sizeof(key.comm));
	}
	found = bpf_map_lookup_elem(&metric_slots, &key);
	if (found)
		return *found + 1;
	if (bpf_map_pop_elem(&metric_free_slots, &slot)) {
		wp_metric_overflow();
		return 0;
	}
	/* Another CPU may enter the same label set first: NOEXIST fails then, the slot goes
	 * back, and the lookup below finds the other's. */
	if (bpf_map_update_elem(&metric_slots, &key, &slot, BPF_NOEXIST))
		bpf_map_push_elem(&metric_free_slots, &slot, 0);
	found = bpf_map_lookup_elem(&metric_slots, &key);
	if (!found) {
		wp_metric_overflow();
		return 0;
	}
	return *found + 1;
}

__noinline int wp_metric_add_at(__u32 slot, __u64 ns, __u64 bytes, __u64 dirtied_pages)
{
	struct wp_metric_value *v;
	__u32 bucket, index = slot - 1;

	if (!slot)
		return 0;
	v = bpf_map_lookup_elem(&metric_values, &index);
	if (!v) {
		wp_metric_overflow();
		return 0;
	}
	bucket = wp_metric_bucket(ns);
	if (bucket < WP_METRIC_BUCKETS)
		v->buckets[bucket] += 1;
	v->sum_ns += ns;
	v->bytes += bytes;
	if (dirtied_pages) {
		v->dirtied_ops += 1;
		v->dirtied_pages += dirtied_pages;
	}
	return 0;
}

__noinline int wp_metric_add(__u32 what, __u32 dev, __u64 ns, __u64 bytes, __u64 dirtied_pages)
{
	return wp_metric_add_at(wp_metric_slot(what, dev), ns, bytes, dirtied_pages);
}

char LICENSE[] SEC("license") = "GPL";
