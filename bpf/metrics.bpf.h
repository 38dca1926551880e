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

/* Adds one observation to the metrics map entry of `what` (WP_METRIC_WHAT, | WP_METRIC_OF_TASK)
 * and dev (bpf/metrics.bpf.c); a global function, verified once. `dirtied_pages` counts only
 * for O_DIRECT writes (WP_METRIC_WRITE, sub 1). */
extern int wp_metric_add(__u32 what, __u32 dev, __u64 ns, __u64 bytes, __u64 dirtied_pages);

#endif /* WRITEPATH_METRICS_BPF_H */
