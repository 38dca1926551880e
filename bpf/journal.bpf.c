// SPDX-License-Identifier: GPL-2.0-only
/*
 * Layer 4: the file systems' journals. jbd2 commits (ext4's journal): the commit thread is a
 * kernel thread, so these are never filtered by process; an fsync claims the commits on its
 * device that overlap it. xfs's log: the forces of threads inside a traced sync call, and
 * every log write (iclog) issued and completed on the traced disk.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "compat.bpf.h"
#include "emit.bpf.h"
#include "file_filter.bpf.h"
#include "task_state.bpf.h"
#include "writepath.h"

static __always_inline int wp_emit_commit(__u32 dev, __u32 transaction, __u32 phase)
{
	struct wp_journal_record *r;

	/* Another file system's commits (a bystander's fsyncs) concern no item of a filtered trace. */
	if (!wp_dev_on_filtered_disk(dev) || !wp_disk_may_be_traced(dev))
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

/* The same events from their BTF prototypes (tp_btf: no tracefs needed), reading what the
 * classic tracepoints' TP_fast_assign reads. jbd2 is often a module (Debian): libbpf finds the
 * target in its BTF. Both kernels here pass (journal_t *, transaction_t *). */
#define WP_JBD2_COMMIT_BTF_HOOK(name, phase)                                                       \
	SEC("tp_btf/" #name)                                                                       \
	int BPF_PROG(wp_##name##_btf, journal_t *journal, transaction_t *commit)                   \
	{                                                                                          \
		WP_TP_ARG_OR_RETURN(journal);                                                      \
		WP_TP_ARG_OR_RETURN(commit);                                                       \
		return wp_emit_commit(BPF_CORE_READ(journal, j_fs_dev, bd_dev),                    \
				      BPF_CORE_READ(commit, t_tid), phase);                        \
	}

WP_JBD2_COMMIT_BTF_HOOK(jbd2_start_commit, WP_JBD2_START)
WP_JBD2_COMMIT_BTF_HOOK(jbd2_commit_locking, WP_JBD2_LOCKING)
WP_JBD2_COMMIT_BTF_HOOK(jbd2_commit_flushing, WP_JBD2_FLUSHING)
WP_JBD2_COMMIT_BTF_HOOK(jbd2_commit_logging, WP_JBD2_LOGGING)
WP_JBD2_COMMIT_BTF_HOOK(jbd2_end_commit, WP_JBD2_END)

/* Whether the current thread is inside a traced sync call: only its log forces matter. */
static __always_inline bool wp_in_traced_sync(void)
{
	struct wp_task_state *st =
	    bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), 0, 0);

	return st && st->active && wp_syscall_is_sync(st->syscall);
}

static __always_inline int wp_emit_fs_log(__u32 dev, __u32 event, __u32 flags, __u64 lsn)
{
	struct wp_fs_log_record *r;

	if (!wp_dev_on_filtered_disk(dev))
		return 0;
	r = wp_reserve(sizeof(*r), WP_REC_FS_LOG, WP_HOOK_FS_LOG);
	if (!r)
		return 0;
	r->dev = dev;
	r->tid = wp_current_tid();
	r->kind = event;
	r->flags = flags;
	r->lsn = lsn;
	wp_submit(r, sizeof(*r));
	return 0;
}

/* xfs_log_force_seq() and xfs_log_force() (fsync, sync_fs, the log worker) trace this first,
 * before pushing the CIL and writing or waiting for the iclog. */
SEC("tracepoint/xfs/xfs_log_force")
int wp_xfs_log_force(struct trace_event_raw_xfs_log_force *ctx)
{
	if (!wp_in_traced_sync())
		return 0;
	return wp_emit_fs_log(BPF_CORE_READ(ctx, dev), WP_XFS_LOG_FORCE, 0,
			      (__u64)BPF_CORE_READ(ctx, lsn));
}

/* xlog_sync(): an iclog is written (by whichever thread released it last). The XLOG_ICL_NEED_*
 * flags say whether the write carries a PREFLUSH and FUA. */
SEC("tracepoint/xfs/xlog_iclog_sync")
int wp_xlog_iclog_sync(struct trace_event_raw_xlog_iclog_class *ctx)
{
	return wp_emit_fs_log(BPF_CORE_READ(ctx, dev), WP_XFS_ICLOG_SYNC,
			      BPF_CORE_READ(ctx, flags) & (WP_ICLOG_NEED_FLUSH | WP_ICLOG_NEED_FUA),
			      BPF_CORE_READ(ctx, lsn));
}

/* xlog_state_done_syncing(), from the log I/O completion worker: the iclog is on disk (its
 * FUA done), and the waiters of xlog_wait_on_iclog() are woken. */
SEC("tracepoint/xfs/xlog_iclog_sync_done")
int wp_xlog_iclog_sync_done(struct trace_event_raw_xlog_iclog_class *ctx)
{
	return wp_emit_fs_log(BPF_CORE_READ(ctx, dev), WP_XFS_ICLOG_DONE, 0,
			      BPF_CORE_READ(ctx, lsn));
}

/* tp_btf forms of the three xfs events (xfs_trace.h's fields, read from the arguments). */
SEC("tp_btf/xfs_log_force")
int BPF_PROG(wp_xfs_log_force_btf, struct xfs_mount *mp, xfs_lsn_t lsn, unsigned long caller_ip)
{
	WP_TP_ARG_OR_RETURN(mp);
	if (!wp_in_traced_sync())
		return 0;
	return wp_emit_fs_log(BPF_CORE_READ(mp, m_super, s_dev), WP_XFS_LOG_FORCE, 0, (__u64)lsn);
}

SEC("tp_btf/xlog_iclog_sync")
int BPF_PROG(wp_xlog_iclog_sync_btf, struct xlog_in_core *iclog, unsigned long caller_ip)
{
	WP_TP_ARG_OR_RETURN(iclog);
	return wp_emit_fs_log(wp_iclog_dev(iclog), WP_XFS_ICLOG_SYNC,
			      BPF_CORE_READ(iclog, ic_flags) & (WP_ICLOG_NEED_FLUSH | WP_ICLOG_NEED_FUA),
			      wp_iclog_lsn(iclog));
}

SEC("tp_btf/xlog_iclog_sync_done")
int BPF_PROG(wp_xlog_iclog_sync_done_btf, struct xlog_in_core *iclog, unsigned long caller_ip)
{
	WP_TP_ARG_OR_RETURN(iclog);
	return wp_emit_fs_log(wp_iclog_dev(iclog), WP_XFS_ICLOG_DONE, 0, wp_iclog_lsn(iclog));
}

char LICENSE[] SEC("license") = "GPL";
