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

/* Allocated as label sets appear (a preallocated per-CPU map would take its whole size times
 * the CPUs at load); `trace` and `record` shrink it to one entry, since they never add. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, WP_MAX_METRIC_KEYS);
	__type(key, struct wp_metric_key);
	__type(value, struct wp_metric_value);
} metrics SEC(".maps");

/* Observations that found the metrics map full (one slot, per CPU). */
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

__noinline int wp_metric_add(__u32 what, __u32 dev, __u64 ns, __u64 bytes, __u64 dirtied_pages)
{
	static const struct wp_metric_value zero = {};
	struct wp_metric_key key = {};
	struct wp_metric_value *v;
	__u32 bucket, slot = 0;
	__u64 *overflow;

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
	v = bpf_map_lookup_elem(&metrics, &key);
	if (!v) {
		/* Another CPU may insert the same key first: NOEXIST fails then, and the lookup
		 * below finds its entry. */
		bpf_map_update_elem(&metrics, &key, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&metrics, &key);
		if (!v) {
			overflow = bpf_map_lookup_elem(&metrics_overflow, &slot);
			if (overflow)
				*overflow += 1;
			return 0;
		}
	}
	bucket = wp_metric_bucket(ns);
	if (bucket < WP_METRIC_BUCKETS)
		v->buckets[bucket] += 1;
	v->sum_ns += ns;
	v->bytes += bytes;
	if (dirtied_pages && key.metric == WP_METRIC_WRITE && key.sub == 1) {
		v->dirtied_ops += 1;
		v->dirtied_pages += dirtied_pages;
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
