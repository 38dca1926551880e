// SPDX-License-Identifier: GPL-2.0-only
/*
 * Layer 1 too: the io_uring write and sync ops of traced processes
 * (IORING_OP_WRITE/WRITEV/WRITE_FIXED/FSYNC/SYNC_FILE_RANGE) become syscall records, and with
 * --reads their READ/READV/READ_FIXED ops read records (WP_SYS_IO_URING_*, via = WP_VIA_*):
 * start at submission, end and result at the CQE.
 * Submission opens an entry in uring_ops and, for the inline issue that follows in the
 * submitting thread (or SQPOLL thread), that thread's state, so the page-cache and block hooks
 * account to it as to a syscall; the state is folded into the entry when the thread punts the
 * op, submits the next one, completes it, or enters a traced syscall. An io-wq worker's hooks
 * find the op through the request it runs (wp_iowq_op). Io-wq workers and the SQPOLL thread
 * are threads of the ring's owner, so the tgid filters hold as they are; the comm filter uses
 * the owner's name for them (wp_comm_matches).
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cgroup.bpf.h"
#include "compat.bpf.h"
#include "config.bpf.h"
#include "emit.bpf.h"
#include "read_call.bpf.h"
#include "task_filter.bpf.h"
#include "task_state.bpf.h"
#include "traced_call.bpf.h"
#include "untraced.bpf.h"
#include "uring_op.bpf.h"
#include "writepath.h"

/* The WP_SYS_IO_URING_* of a request, or 0 for an opcode that is not traced (the opcodes
 * are WP_URING_OP_TABLE's, uapi values). */
static __always_inline __u32 wp_uring_syscall(struct io_kiocb *req)
{
	struct io_sync *sync = (struct io_sync *)req; /* io_kiocb_to_cmd: the union at 0 */

	switch (BPF_CORE_READ(req, opcode)) {
	case 23:
		return WP_SYS_IO_URING_WRITE;
	case 2:
		return WP_SYS_IO_URING_WRITEV;
	case 5:
		return WP_SYS_IO_URING_WRITE_FIXED;
	case 3:
		return (BPF_CORE_READ(sync, flags) & WP_IORING_FSYNC_DATASYNC)
			   ? WP_SYS_IO_URING_FDATASYNC
			   : WP_SYS_IO_URING_FSYNC;
	case 8:
		return WP_SYS_IO_URING_SYNC_FILE_RANGE;
	}
	/* Reads only with --reads: a write trace keeps its ring buffer for writes. */
	if (!cfg_reads)
		return 0;
	switch (BPF_CORE_READ(req, opcode)) {
	case 22:
		return WP_SYS_IO_URING_READ;
	case 1:
		return WP_SYS_IO_URING_READV;
	case 4:
		return WP_SYS_IO_URING_READ_FIXED;
	}
	return 0;
}

static __always_inline int wp_uring_submit(struct io_kiocb *req)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 syscall = wp_uring_syscall(req);
	struct wp_uring_op op = {};
	struct wp_task_state *st;
	__u64 key = (__u64)req;

	if (!syscall) {
		switch (BPF_CORE_READ(req, opcode)) {
#define WP_URING_UNTRACED_CASE_(opcode) case opcode:
			WP_URING_UNTRACED_OPS(WP_URING_UNTRACED_CASE_)
#undef WP_URING_UNTRACED_CASE_
			return wp_count_untraced(WP_UNTRACED_IO_URING_OPS, false, 0);
		}
		return 0;
	}
	if (!wp_task_traced())
		return 0;
	st = bpf_task_storage_get(&task_state, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		wp_count_lost(WP_HOOK_STATE);
		return 0;
	}
	wp_uring_fold(st);
	/* The op's record names the submitter's thread (or an io-wq worker of its process),
	 * and is emitted in whatever context posts the CQE: the cgroup is told from here. */
	wp_note_cgroup(st);
	op.start_ns = bpf_ktime_get_ns();
	op.syscall = syscall;
	op.pid = bpf_get_current_pid_tgid() >> 32;
	op.submit_tid = wp_current_tid();
	BPF_CORE_READ_STR_INTO(&op.comm, task, group_leader, comm);
	op.fd = BPF_CORE_READ(req, cqe.fd); /* io_init_req stores the SQE's fd there */
	op.via = WP_VIA_IO_URING | ((task->flags & WP_PF_IO_WORKER) ? WP_VIA_SQPOLL : 0);
	if (wp_syscall_is_write(syscall) || wp_syscall_is_read(syscall)) {
		struct io_rw *rw = (struct io_rw *)req;

		/* Prepared at submission: the SQE's off (-1: the file position) and len (bytes;
		 * for WRITEV and READV the iovec count, so the CQE's result stands for it). */
		op.pos = BPF_CORE_READ(rw, kiocb.ki_pos);
		op.count = syscall == WP_SYS_IO_URING_WRITEV || syscall == WP_SYS_IO_URING_READV
			       ? 0
			       : BPF_CORE_READ(rw, len);
	} else {
		struct io_sync *sync = (struct io_sync *)req;

		op.pos = BPF_CORE_READ(sync, off);
		op.count = BPF_CORE_READ(sync, len);
	}
	if (bpf_map_update_elem(&uring_ops, &key, &op, BPF_ANY)) {
		wp_count_lost(WP_HOOK_URING);
		return 0;
	}
	wp_open_call(st, syscall, op.fd, op.pos, op.count);
	st->file = 0;
	st->uring_req = key;
	return 0;
}

/* v6.3 renamed io_uring_submit_sqe to io_uring_submit_req and dropped force_nonblock. */
SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(wp_uring_submit_req, struct io_kiocb *req)
{
	WP_TP_ARG_OR_RETURN(req);
	return wp_uring_submit(req);
}

SEC("tp_btf/io_uring_submit_sqe")
int BPF_PROG(wp_uring_submit_sqe, struct io_kiocb *req, bool force_nonblock)
{
	WP_TP_ARG_OR_RETURN(req);
	return wp_uring_submit(req);
}

/* The submitter punts the op to io-wq (IOSQE_ASYNC, or its non-blocking try said -EAGAIN):
 * what it did inline so far stays with the op, the rest is the worker's. */
SEC("tp_btf/io_uring_queue_async_work")
int BPF_PROG(wp_uring_punt, struct io_kiocb *req, int rw)
{
	__u64 key = (__u64)req;
	struct wp_uring_op *op = bpf_map_lookup_elem(&uring_ops, &key);
	struct wp_task_state *st;

	if (!op)
		return 0;
	op->via |= WP_VIA_IO_WQ;
	st = wp_active_state();
	if (st && st->uring_req == key)
		wp_uring_fold(st);
	return 0;
}

/* The fields an op's syscall record and read record share (both name them alike), from the op
 * and its file as `st` resolved it. The record names the thread that queued the op's bios (an
 * io-wq worker's, else the submitter): the stitcher matches bios by thread. At the file
 * position (-1) of a read or write op, the kiocb's position has moved past the bytes moved. */
#define WP_FILL_URING_CALL(r, op, st, file, req, res)                                              \
	do {                                                                                       \
		(r)->file_flags = wp_file_flags(st, file, 0, false);                               \
		(r)->start_ns = (op)->start_ns;                                                    \
		(r)->pid = (op)->pid;                                                              \
		(r)->tid = (op)->issue_tid ? (op)->issue_tid : (op)->submit_tid;                   \
		__builtin_memcpy((r)->comm, (op)->comm, sizeof((r)->comm));                        \
		(r)->syscall = (op)->syscall;                                                      \
		(r)->call_flags = (__u16)(op)->via << WP_CALL_VIA_SHIFT;                           \
		(r)->fd = (op)->fd;                                                                \
		(r)->dev = (st)->cached_dev;                                                       \
		(r)->fs_dev = (st)->cached_fs_dev;                                                 \
		(r)->ino = (st)->cached_ino;                                                       \
		(r)->ret = (res);                                                                  \
		(r)->count = (op)->count ? (op)->count : ((res) > 0 ? (res) : 0);                  \
		(r)->pos = (op)->pos;                                                              \
		if (!wp_syscall_is_sync((op)->syscall) && (op)->pos == (__u64)-1) {                \
			__s64 end_ = BPF_CORE_READ((struct io_rw *)(req), kiocb.ki_pos);           \
                                                                                                   \
			(r)->pos = (res) > 0 && end_ >= (res) ? end_ - (res) : end_;               \
		}                                                                                  \
	} while (0)

/* A read op's record at its CQE, from what its inline issue counted (an io-wq worker's or a
 * task-work retry's page-cache fills go uncounted; its bios still carry its tag). */
static __always_inline void wp_emit_uring_read(struct wp_uring_op *op, struct wp_task_state *st,
					       struct io_kiocb *req, struct file *file, __s32 res)
{
	struct wp_read_record *r = wp_reserve(sizeof(*r), WP_REC_READ, WP_HOOK_READ);

	if (!r)
		return;
	WP_FILL_URING_CALL(r, op, st, file, req, res);
	WP_FILL_READ_COUNTS(r, &op->reads);
	wp_submit(r, sizeof(*r));
}

/* The op's CQE: emit its record (header ts = the completion). */
static __always_inline int wp_uring_complete(struct io_kiocb *req, __s32 res)
{
	__u64 key = (__u64)req;
	struct wp_uring_op *op = bpf_map_lookup_elem(&uring_ops, &key);
	struct task_struct *task = bpf_get_current_task_btf();
	struct wp_syscall_record *r;
	struct wp_task_state *st;
	struct file *file;

	if (!op)
		return 0;
	st = wp_active_state();
	if (st && st->uring_req == key)
		wp_uring_fold(st);
	if (bpf_ktime_get_ns() - op->start_ns < cfg_min_latency_ns)
		goto out;
	/* The file is assigned at issue, so read it here; it is held until after the CQE. */
	file = BPF_CORE_READ(req, file);
	if (!file)
		goto out;
	st = bpf_task_storage_get(&task_state, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		wp_count_lost(WP_HOOK_STATE);
		goto out;
	}
	if (!wp_resolve_file(st, file, false) || (wp_syscall_is_write(op->syscall) && !st->cached_kind))
		goto out;
	/* A read of a regular file only, as the read syscalls are followed. */
	if (wp_syscall_is_read(op->syscall) && st->cached_kind != WP_FILE_REGULAR)
		goto out;
	wp_emit_file_path((__u64)file, st->cached_dev, st->cached_ino);
	if (wp_syscall_is_read(op->syscall)) {
		wp_emit_uring_read(op, st, req, file, res);
		goto out;
	}
	r = wp_reserve(sizeof(*r), WP_REC_SYSCALL, WP_HOOK_SYSCALL);
	if (!r)
		goto out;
	WP_FILL_URING_CALL(r, op, st, file, req, res);
	r->pages_dirtied = wp_dirtied_within(op->pages_dirtied, r->pos, res);
	r->dirty_folios = op->dirty_folios;
	r->throttle_ns = op->throttle_ns;
	r->throttle_events = op->throttle_events;
	r->writeback_waits = op->writeback_waits;
	wp_submit(r, sizeof(*r));
out:
	bpf_map_delete_elem(&uring_ops, &key);
	return 0;
}

/* v6.? passes the CQE itself (ctx, req, cqe); 6.1 passes its fields one by one. */
SEC("tp_btf/io_uring_complete")
int BPF_PROG(wp_uring_complete_cqe, struct io_ring_ctx *ring, void *req, struct io_uring_cqe *cqe)
{
	WP_TP_ARG_OR_RETURN(cqe);
	return wp_uring_complete((struct io_kiocb *)req, BPF_CORE_READ(cqe, res));
}

SEC("tp_btf/io_uring_complete")
int BPF_PROG(wp_uring_complete_fields, void *ring, void *req, __u64 user_data, int res,
	     unsigned cflags, __u64 extra1, __u64 extra2)
{
	return wp_uring_complete((struct io_kiocb *)req, res);
}

char LICENSE[] SEC("license") = "GPL";
