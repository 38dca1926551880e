// SPDX-License-Identifier: GPL-2.0
/*
 * Layer 4: jbd2 commits (ext4's journal). The commit thread is a kernel thread, so these are
 * never filtered by process; an fsync claims the commits on its device that overlap it.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "compat.bpf.h"
#include "maps.bpf.h"

static __always_inline int wp_emit_commit(__u32 dev, __u32 transaction, __u32 phase)
{
	struct wp_journal_record *r;

	if (cfg_disk && dev != cfg_disk)
		return 0;
	r = wp_reserve(sizeof(*r), WP_REC_JOURNAL, WP_HOOK_JOURNAL);
	if (!r)
		return 0;
	r->dev = dev;
	r->transaction = transaction;
	r->phase = phase;
	r->tid = wp_current_tid();
	wp_submit(r, sizeof(*r));
	return 0;
}

#define WP_JBD2_COMMIT_HOOK(name, phase)                                                           \
	SEC("tracepoint/jbd2/" #name)                                                              \
	int wp_##name(struct trace_event_raw_jbd2_commit *ctx)                                     \
	{                                                                                          \
		return wp_emit_commit(BPF_CORE_READ(ctx, dev), BPF_CORE_READ(ctx, transaction),    \
				      phase);                                                      \
	}

WP_JBD2_COMMIT_HOOK(jbd2_start_commit, WP_JBD2_START)
WP_JBD2_COMMIT_HOOK(jbd2_commit_locking, WP_JBD2_LOCKING)
WP_JBD2_COMMIT_HOOK(jbd2_commit_flushing, WP_JBD2_FLUSHING)
WP_JBD2_COMMIT_HOOK(jbd2_commit_logging, WP_JBD2_LOGGING)

SEC("tracepoint/jbd2/jbd2_end_commit")
int wp_jbd2_end_commit(struct trace_event_raw_jbd2_end_commit *ctx)
{
	return wp_emit_commit(BPF_CORE_READ(ctx, dev), BPF_CORE_READ(ctx, transaction),
			      WP_JBD2_END);
}

char LICENSE[] SEC("license") = "GPL";
