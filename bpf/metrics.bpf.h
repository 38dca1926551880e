/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * writepath serve's in-kernel metrics, as the layers that observe something add to them; the
 * map and its histograms are bpf/metrics.bpf.c's.
 */
#ifndef WRITEPATH_METRICS_BPF_H
#define WRITEPATH_METRICS_BPF_H

#include "writepath.h"

/* For wp_metric_add's `what`: the entry is keyed by the current thread's cgroup (and comm). */
#define WP_METRIC_OF_TASK (1u << 16)
#define WP_METRIC_WHAT(metric, sub) ((__u32)(metric) | ((__u32)(sub) << 8))

/* The slot of metric_values that holds the label set of `what` (WP_METRIC_WHAT, |
 * WP_METRIC_OF_TASK: the current thread's cgroup, and comm with cfg_metrics_comm) and dev, plus
 * one; 0 when there is no room for it (counted in metrics_overflow). A slot is never given to
 * another label set: a caller may keep it. Global functions (bpf/metrics.bpf.c), verified once. */
extern __u32 wp_metric_slot(__u32 what, __u32 dev);

/* Adds one observation to the slot wp_metric_slot returned (0: none, a no-op). `dirtied_pages`
 * is for O_DIRECT writes only (WP_METRIC_WRITE, sub 1): the others pass 0. */
extern int wp_metric_add_at(__u32 slot, __u64 ns, __u64 bytes, __u64 dirtied_pages);

/* wp_metric_add_at(wp_metric_slot(what, dev), ...). */
extern int wp_metric_add(__u32 what, __u32 dev, __u64 ns, __u64 bytes, __u64 dirtied_pages);

#endif /* WRITEPATH_METRICS_BPF_H */
