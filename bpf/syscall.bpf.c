// SPDX-License-Identifier: GPL-2.0-only
/*
 * Layer 1: write and sync syscalls of traced threads. Entry resolves the fd to its file
 * (dev, ino, flags, offset) and opens per-thread state; the page-cache hooks add to that
 * state; exit emits one record per call. Only regular files and block devices are traced.
 * How a call's state opens and becomes a record: traced_call.bpf.h.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cgroup.bpf.h"
#include "compat.bpf.h"
#include "config.bpf.h"
#include "emit.bpf.h"
#include "fault.bpf.h"
#include "mapping.bpf.h"
#include "metrics.bpf.h"
#include "read_call.bpf.h"
#include "task_filter.bpf.h"
#include "task_state.bpf.h"
#include "traced_call.bpf.h"
#include "writepath.h"

/* IOCB_CMD_* (uapi/linux/aio_abi.h, stable). */
#define WP_IOCB_CMD_PWRITE 1
#define WP_IOCB_CMD_PWRITEV 8

static __always_inline __u64 wp_iov_bytes(const struct iovec *iov, unsigned long vlen);

/* Reads the i-th iocb of an io_submit call; true when it is a write (PWRITE or PWRITEV). */
static __always_inline bool wp_read_write_iocb(__u64 iocbpp, __u32 i, struct iocb *cb)
{
	__u64 ptr = 0;

	if (bpf_probe_read_user(&ptr, sizeof(ptr), (const void *)(iocbpp + i * sizeof(__u64))) ||
	    !ptr || bpf_probe_read_user(cb, sizeof(*cb), (const void *)ptr))
		return false;
	return cb->aio_lio_opcode == WP_IOCB_CMD_PWRITE ||
	       cb->aio_lio_opcode == WP_IOCB_CMD_PWRITEV;
}

/* Points the thread's state at one write iocb: its file, offset, bytes and RWF_* flags. False
 * when its file is not one the trace follows. */
static __always_inline bool wp_state_from_iocb(struct wp_task_state *st, const struct iocb *cb,
					       __u16 extra_flags)
{
	struct file *file = wp_task_file(bpf_get_current_task_btf(), (int)cb->aio_fildes);
	__u16 call_flags = (cb->aio_rw_flags & WP_CALL_RWF_MASK) | extra_flags;

	if (!file || !wp_resolve_file(st, file, false) || !st->cached_kind)
		return false;
	if (cb->aio_lio_opcode == WP_IOCB_CMD_PWRITEV)
		call_flags |= WP_CALL_AIO_VECTORED;
	st->file = (__u64)file;
	st->dev = st->cached_dev;
	st->ino = st->cached_ino;
	st->fd = (int)cb->aio_fildes;
	st->file_flags = wp_file_flags(st, file, call_flags, false);
	st->call_flags = call_flags;
	st->pos = cb->aio_offset;
	/* The iocb's offset is where the bytes go (with O_APPEND the kernel writes at i_size,
	 * which a later iocb of the same call moves: the offset is then not exact). */
	st->pos_exact = 1;
	st->count = cb->aio_lio_opcode == WP_IOCB_CMD_PWRITEV
			? wp_iov_bytes((const struct iovec *)cb->aio_buf, cb->aio_nbytes)
			: cb->aio_nbytes;
	return true;
}

/* Emits the record of the i-th iocb of the io_submit call `st` holds, when it is a write of a
 * file the trace follows; the call's page-cache counts go on the first record emitted. A global
 * function: the verifier checks it once on its own (pointer arguments: v5.12) instead of once per
 * iteration of the caller's loop, which inlined exceeds the 6.1 verifier's 1M-instruction
 * budget. */
__noinline int wp_emit_iocb(struct wp_task_state *st, __u32 i, __u32 extra_flags)
{
	struct iocb cb;

	if (!st || !wp_read_write_iocb(st->aio_iocbs, i, &cb) ||
	    !wp_state_from_iocb(st, &cb, (__u16)extra_flags))
		return 0;
	wp_emit_call(st, (long)st->count, bpf_ktime_get_ns(), bpf_get_current_task_btf(), false);
	st->pages_dirtied = 0;
	st->dirty_folios = 0;
	st->throttle_ns = 0;
	st->throttle_events = 0;
	st->writeback_waits = 0;
	return 1;
}

/* io_submit: one record per write iocb the kernel took (its return value: how many), each
 * with the call's window. The iocb's result comes later (io_getevents), so a record's ret is
 * the bytes it asked for. Only the first record carries the call's page-cache counts (a
 * buffered AIO write dirties its pages inside io_submit; the stitcher tracks each write's
 * pages by its range, not by these counts). */
static __always_inline void wp_emit_io_submit(struct wp_task_state *st, long ret, __u64 now,
					      struct task_struct *task)
{
	__u32 extra = st->aio_nr > WP_AIO_MAX_IOCBS ? WP_CALL_AIO_PAST_BOUND : 0;

	if (ret <= 0) { /* nothing submitted: one failed item, for the first write iocb */
		if (st->file)
			wp_emit_call(st, ret, now, task, false);
		return;
	}
	for (__u32 i = 0; i < WP_AIO_MAX_IOCBS; i++) {
		if (i >= ret || i >= st->aio_nr)
			break;
		wp_emit_iocb(st, i, extra);
	}
}

/* writepath serve: the slot of the label set (`what`, dev) for the current thread, kept in its
 * state `st`'s `entry`: a thread adding to the same label sets over and over (a writer, a
 * reader) finds it again with a few loads, where wp_metric_slot hashes a 32-byte key. The
 * label set's cgroup (and comm) are compared on every call: a thread may move or be renamed.
 * A global function, verified once, whose locals stay out of its callers' frames: the 6.1
 * verifier's 512-byte limit on a call chain's stacks is near in io_submit's exit. */
__noinline __u32 wp_metric_slot_of(struct wp_task_state *st, __u32 entry, __u32 what, __u32 dev)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct wp_metric_slot_cache *c;
	__u64 cgroup, comm[2] = {};
	__u32 slot;

	if (!st || entry >= WP_METRIC_SLOT_ENTRIES)
		return 0;
	cgroup = task->cgroups->dfl_cgrp->kn->id;
	c = &st->metric_slots[entry];
	if (cfg_metrics_comm)
		__builtin_memcpy(comm, task->comm, sizeof(comm));
	if (c->slot && c->what == what && c->dev == dev && c->cgroup == cgroup &&
	    c->comm[0] == comm[0] && c->comm[1] == comm[1])
		return c->slot;
	slot = wp_metric_slot(what | WP_METRIC_OF_TASK, dev);
	c->what = what;
	c->dev = dev;
	c->cgroup = cgroup;
	c->comm[0] = comm[0];
	c->comm[1] = comm[1];
	c->slot = slot;
	return slot;
}

/* serve --reads: a read's bytes by where they came from (WP_METRIC_READ). What it returned
 * is split at the pages it brought into the page cache within its own range (pages_added less
 * pages_added_beyond, as its traced item counts them): those came from the device, the rest it
 * found cached, put there by anyone (a writer, an earlier read, this reader's own readahead).
 * The device's share counts every page the read brought in, its readahead past its range too:
 * what it cost the disk, as /proc/PID/io read_bytes counts it. A warm read adds to one entry,
 * as a write does; only a read that missed pays a second. */
static __always_inline void wp_metric_read(struct wp_task_state *st, __u32 dev, __u64 latency,
					   long ret)
{
	__u64 returned = ret > 0 ? ret : 0, filled, brought;

	if (st->file_flags & WP_FILE_DIRECT) {
		filled = returned;
		brought = returned;
	} else {
		filled = (__u64)(st->reads.pages_added - st->reads.pages_added_beyond) << WP_PAGE_SHIFT;
		if (filled > returned)
			filled = returned;
		brought = (__u64)st->reads.pages_added << WP_PAGE_SHIFT;
	}
	wp_metric_add_at(wp_metric_slot_of(st, WP_METRIC_SLOT_READ,
					   WP_METRIC_WHAT(WP_METRIC_READ, 0), dev),
			 latency, returned - filled, 0);
	if (brought)
		wp_metric_add_at(wp_metric_slot_of(st, WP_METRIC_SLOT_READ_FILLED,
						   WP_METRIC_WHAT(WP_METRIC_READ, 1), dev),
				 latency, brought, 0);
}

/* writepath serve: adds the call to the kernel's metrics; returns whether it still goes to the
 * agent as a record (see cfg_metrics). io_submit's items are the agent's to count. */
static __always_inline bool wp_metrics_keep(struct wp_task_state *st, __u64 latency, long ret)
{
	__u32 dev = st->fs_dev ? st->fs_dev : st->dev;
	__u32 direct;

	if (st->syscall == WP_SYS_IO_SUBMIT || wp_syscall_is_open(st->syscall))
		return true;
	/* Reads (serve --reads) are counted here alone: no record, slow or not. */
	if (wp_syscall_is_read(st->syscall)) {
		wp_metric_read(st, dev, latency, ret);
		return false;
	}
	if (!wp_syscall_is_write(st->syscall)) {
		wp_metric_add_at(wp_metric_slot_of(st, WP_METRIC_SLOT_SYNC,
						   WP_METRIC_WHAT(WP_METRIC_SYNC, st->syscall), dev),
				 latency, 0, 0);
		return true;
	}
	direct = st->file_flags & WP_FILE_DIRECT ? 1 : 0;
	wp_metric_add_at(wp_metric_slot_of(st, WP_METRIC_SLOT_WRITE,
					   WP_METRIC_WHAT(WP_METRIC_WRITE, direct), dev),
			 latency, ret > 0 ? ret : 0, direct ? st->pages_dirtied : 0);
	if (cfg_metrics_slow_ns && latency >= cfg_metrics_slow_ns)
		return true;
	return cfg_metrics_sample && bpf_get_prandom_u32() % cfg_metrics_sample == 0;
}

/* An open that may copy an overlay file up: one for writing or truncating (ovl_open copies up
 * for those only). Other opens open no state and cost the traced thread one test. */
static __always_inline int wp_open_may_copy_up(__u32 syscall, __u64 flags)
{
	if ((flags & WP_O_ACCMODE) == 0 && !(flags & WP_O_TRUNC))
		return 0;
	return wp_enter(syscall, -1, 0, 0, false);
}

/* The open of `st` returned `fd`: whether it copied an overlay file up, its data written inside
 * the call (do_splice_direct into the upper file, then vfs_fsync of it unless the overlay is
 * mounted volatile), and then points the state at the opened file as a write of its bytes from
 * offset 0: the copy is what the application's first write stands on. Pages dirtied by an open
 * of a file that is no overlay file (none known) make no record. */
static __always_inline bool wp_open_copy_up(struct wp_task_state *st, long fd)
{
	struct file *file;
	struct inode *inode;

	if (fd < 0 || !st->pages_dirtied)
		return false;
	file = wp_task_file(bpf_get_current_task_btf(), (int)fd);
	if (!file)
		return false;
	inode = BPF_CORE_READ(file, f_inode);
	if (!wp_overlay_inode(inode) || !wp_resolve_file(st, file, false) ||
	    st->cached_kind != WP_FILE_REGULAR)
		return false;
	st->file = (__u64)file;
	st->fd = (int)fd;
	st->dev = st->cached_dev;
	st->fs_dev = st->cached_fs_dev;
	st->ino = st->cached_ino;
	st->file_flags = wp_file_flags(st, file, 0, false);
	st->pos = 0;
	st->pos_exact = 1;
	st->count = BPF_CORE_READ(inode, i_size);
	return true;
}

/* `io_submit_possible` is a constant at each call site: programs that never see io_submit
 * (the fexit ones, the other syscalls' exits) compile without its per-iocb loop, which the 6.1
 * verifier cannot get through within its 1M-instruction budget when inlined into them. */
static __always_inline int wp_exit_of(struct task_struct *task, struct wp_task_state *st, long ret,
				      bool io_submit_possible, bool cast)
{
	__u64 latency, now;

	/* An open is an item only when it copied a file up; the item is that copy. */
	if (wp_syscall_is_open(st->syscall)) {
		if (!wp_open_copy_up(st, ret))
			goto out;
		ret = (long)st->count;
	}
	now = bpf_ktime_get_ns();
	latency = now - st->start_ns;
	if (latency < cfg_min_latency_ns)
		goto out;
	if (cfg_metrics && !wp_metrics_keep(st, latency, ret))
		goto out;
	wp_note_cgroup_of(st, task);
	if (cfg_causes_min_ns && latency >= cfg_causes_min_ns) {
		if (cfg_offcpu_stacks)
			wp_emit_offcpu(st->start_ns);
		wp_emit_causes(st);
	}
	if (io_submit_possible && st->syscall == WP_SYS_IO_SUBMIT)
		wp_emit_io_submit(st, ret, now, task);
	else if (wp_syscall_is_read(st->syscall))
		wp_emit_read(st, ret, now, task, cast);
	else
		wp_emit_call(st, ret, now, task, cast);
out:
	wp_sync_wait_end(st);
	st->active = 0;
	return 0;
}

/* wp_exit_of the current thread's state, if it is inside a traced call. */
static __always_inline int wp_exit(long ret, bool io_submit_possible, bool cast)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct wp_task_state *st = wp_active_state_of(task);

	return st ? wp_exit_of(task, st, ret, io_submit_possible, cast) : 0;
}

#define WP_AT_F_POS ((__u64)-1)

/* Sum of the iovec lengths (bounded: the first 16 segments; the exit's ret is exact). */
static __always_inline __u64 wp_iov_bytes(const struct iovec *iov, unsigned long vlen)
{
	__u64 total = 0;

	for (int i = 0; i < 16; i++) {
		struct iovec v;

		if (i >= vlen)
			break;
		if (bpf_probe_read_user(&v, sizeof(v), &iov[i]))
			break;
		total += v.iov_len;
	}
	return total;
}

/* ---- preferred: the raw syscall tracepoints, typed by BTF ------------------------------
 * One program pair serves every syscall; it costs a few compares on syscalls we do not
 * trace, which is far cheaper than perf's per-syscall tracepoint buffers on the ones we do.
 * Syscall numbers are the agent's (same architecture as the kernel), set before load, as
 * number + 1 so that an unset slot (0) matches nothing. */
const volatile long cfg_syscall_nr_plus1[WP_SYSCALL_SLOTS] __weak = {};
/* Bit i set: slot i is served by wp_sys_enter/exit (and not by the VFS hooks below). */
const volatile __u32 cfg_raw_syscall_slots __weak = 0;

/* Slot order the agent fills cfg_syscall_nr_plus1 in: WP_SYSCALL_TABLE's. */
static const __u32 wp_slot_syscall[WP_SYSCALL_SLOTS] = {
#define WP_SLOT_SYSCALL_(id, value, name, Name, cls, vfs) WP_SYS_##id,
	WP_SYSCALL_TABLE(WP_SLOT_SYSCALL_)
#undef WP_SLOT_SYSCALL_
};

/* Which traced syscall `id` is among the slots in `slots`, or 0. */
static __always_inline __u32 wp_syscall_in(long id, __u32 slots)
{
	for (int i = 0; i < WP_SYSCALL_SLOTS; i++) {
		if (cfg_syscall_nr_plus1[i] == id + 1 && (slots & (1u << i)))
			return wp_slot_syscall[i];
	}
	return 0;
}

/* The raw pair runs on every syscall of every process: which WP_SYS_* a syscall number is
 * among the raw slots, looked up by number in one load (the agent fills it before load; 0 for
 * every number the pair does not serve). Numbers past the table are none of ours. */
#define WP_RAW_SYSCALL_NRS 512
const volatile __u8 cfg_raw_syscall_of_nr[WP_RAW_SYSCALL_NRS] __weak = {};

static __always_inline __u32 wp_traced_syscall(long id)
{
	if ((unsigned long)id >= WP_RAW_SYSCALL_NRS)
		return 0;
	return cfg_raw_syscall_of_nr[id];
}

/* msync(2) names memory, not a file: the file is the one mapped at `start` (the first
 * mapping of the range; the kernel syncs each mapping's file in turn). Without one (the
 * lookup's trylock lost to another thread) the call is assembled like sync(2), with every
 * disk's flushes. */
static __always_inline int wp_open_msync(unsigned long start, unsigned long len, int flags)
{
	struct wp_mapped_file m;
	__u16 call_flags = 0;

	if (flags & WP_MS_ASYNC)
		call_flags |= WP_CALL_MS_ASYNC;
	if (flags & WP_MS_INVALIDATE)
		call_flags |= WP_CALL_MS_INVALIDATE;
	if (flags & WP_MS_SYNC)
		call_flags |= WP_CALL_MS_SYNC;
	wp_map_user_addr(&m, start);
	return wp_enter_file(WP_SYS_MSYNC, -1, (struct file *)m.file, m.file ? m.pos : 0, len,
			     call_flags, false);
}

/* io_submit(2): the state opens on the first write iocb's file (the filters apply to it);
 * the exit emits one record per write iocb (wp_emit_io_submit). */
static __always_inline int wp_open_io_submit(long nr, __u64 iocbpp, bool cast)
{
	struct wp_task_state *st;
	struct iocb cb;
	__u32 i;

	for (i = 0; i < WP_AIO_MAX_IOCBS; i++) {
		if (i >= nr)
			return 0;
		if (wp_read_write_iocb(iocbpp, i, &cb))
			break;
	}
	if (i == WP_AIO_MAX_IOCBS)
		return 0;
	wp_enter_file(WP_SYS_IO_SUBMIT, (int)cb.aio_fildes, NULL, cb.aio_offset, cb.aio_nbytes,
		      cb.aio_rw_flags & WP_CALL_RWF_MASK, cast);
	st = wp_active_state();
	if (st) {
		st->aio_iocbs = iocbpp;
		st->aio_nr = nr;
		st->pos_exact = 1;
	}
	return 0;
}

/* Dispatches one traced syscall's entry from its raw arguments (a5: the sixth). */
static __always_inline int wp_enter_args(__u32 syscall, unsigned long a0, unsigned long a1,
					 unsigned long a2, unsigned long a3, unsigned long a5,
					 bool cast)
{
	switch (syscall) {
	case WP_SYS_WRITE:
	case WP_SYS_READ:
		return wp_enter(syscall, (int)a0, WP_AT_F_POS, a2, cast);
	case WP_SYS_PREAD64:
		return wp_enter(syscall, (int)a0, a3, a2, cast);
	case WP_SYS_READV:
		return wp_enter(syscall, (int)a0, WP_AT_F_POS,
				wp_iov_bytes((const struct iovec *)a1, a2), cast);
	case WP_SYS_PREADV:
		return wp_enter(syscall, (int)a0, a3, wp_iov_bytes((const struct iovec *)a1, a2), cast);
	case WP_SYS_PREADV2:
		/* Its RWF_* flags (a5) change nothing the read record says (RWF_NOWAIT's EAGAIN
		 * is its return). */
		return wp_enter(syscall, (int)a0, a3, wp_iov_bytes((const struct iovec *)a1, a2), cast);
	case WP_SYS_PWRITE64:
		return wp_enter(syscall, (int)a0, a3, a2, cast);
	case WP_SYS_WRITEV:
		return wp_enter(syscall, (int)a0, WP_AT_F_POS,
				wp_iov_bytes((const struct iovec *)a1, a2), cast);
	case WP_SYS_PWRITEV:
		/* pos_l, pos_h: on 64-bit the whole offset is in pos_l. */
		return wp_enter(syscall, (int)a0, a3, wp_iov_bytes((const struct iovec *)a1, a2), cast);
	case WP_SYS_PWRITEV2:
		/* As pwritev; at offset -1 it writes at f_pos like writev. Its flags (a5) are
		 * RWF_*, per call. */
		return wp_enter_file(syscall, (int)a0, NULL, a3,
				     wp_iov_bytes((const struct iovec *)a1, a2),
				     a5 & WP_CALL_RWF_MASK, cast);
	case WP_SYS_IO_SUBMIT:
		return wp_open_io_submit((long)a1, a2, cast);
	case WP_SYS_MSYNC:
		return wp_open_msync(a0, a1, (int)a2);
	case WP_SYS_SYNC_FILE_RANGE:
		return wp_enter_file(syscall, (int)a0, NULL, a1, a2,
				     (a3 & WP_CALL_SFR_MASK) << WP_CALL_SFR_SHIFT, cast);
	case WP_SYS_SYNC:
		return wp_enter(syscall, -1, 0, 0, cast);
	case WP_SYS_OPENAT:
		return wp_open_may_copy_up(syscall, a2);
	case WP_SYS_OPENAT2: {
		__u64 flags = 0;

		/* struct open_how starts with its u64 flags (uapi). */
		if (bpf_probe_read_user(&flags, sizeof(flags), (const void *)a2))
			return 0;
		return wp_open_may_copy_up(syscall, flags);
	}
	default: /* fsync, fdatasync, syncfs */
		return wp_enter(syscall, (int)a0, 0, 0, cast);
	}
}

SEC("tp_btf/sys_enter")
int BPF_PROG(wp_sys_enter, struct pt_regs *regs, long id)
{
	__u32 syscall = wp_traced_syscall(id);

	if (!syscall)
		return 0;
	WP_TP_ARG_OR_RETURN(regs);
	/* regs is BTF-typed here: plain loads, no probe reads. */
	return wp_enter_args(syscall, PT_REGS_PARM1_SYSCALL(regs), PT_REGS_PARM2_SYSCALL(regs),
			     PT_REGS_PARM3_SYSCALL(regs), PT_REGS_PARM4_SYSCALL(regs),
			     wp_regs_syscall_arg6(regs), false);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(wp_sys_exit, struct pt_regs *regs, long ret)
{
	WP_TP_ARG_OR_RETURN(regs);
	if (!wp_traced_syscall(wp_regs_syscall_nr(regs)))
		return 0;
	return wp_exit(ret, true, false);
}

/* ---- preferred where ftrace function hooks work: fentry/fexit on the VFS ---------------
 * write(2)/pwrite64(2) through vfs_write() and fsync(2) through vfs_fsync_range() (not
 * fdatasync(2): see WP_SYSCALL_TABLE): the file comes as a typed argument (no fd-table walk) and only those
 * calls pay. The raw syscall programs then serve the remaining slots. Kernel callers of
 * the same functions (an O_SYNC write's own vfs_fsync_range, msync, kernel writers) are
 * told apart by the syscall the task is in. Which slots these serve is WP_VFS_SLOTS. */

/* The user registers of the current syscall (bpf_task_pt_regs, v5.15). */
static __always_inline struct pt_regs *wp_user_regs(struct task_struct *task)
{
	return (struct pt_regs *)bpf_task_pt_regs(task);
}

/* Whether `file` (a typed argument: plain loads) is one the write path follows. vfs_write runs
 * for every write of the machine, most of them to pipes, sockets and terminals: they leave
 * here, before the filter's lookup, the registers helper and the slot search. */
static __always_inline bool wp_vfs_file_followed(struct file *file)
{
	__u32 mode = file->f_inode->i_mode & WP_S_IFMT;

	return mode == WP_S_IFREG || mode == WP_S_IFBLK;
}

SEC("fentry/vfs_write")
int BPF_PROG(wp_vfs_write_enter, struct file *file, const char *buf, size_t count, loff_t *pos)
{
	struct task_struct *task;
	struct pt_regs *regs;
	__u32 syscall;

	if (!wp_vfs_file_followed(file))
		return 0;
	task = bpf_get_current_task_btf();
	if (!wp_task_traced_of(task))
		return 0;
	regs = wp_user_regs(task);
	syscall = wp_syscall_in(wp_regs_syscall_nr(regs), WP_VFS_SLOTS);
	if (!wp_syscall_is_write(syscall))
		return 0;
	/* The offset is settled at exit (*pos has moved by ret, O_APPEND included). `file` is
	 * a typed argument: the entry reads it, and its name for the exit, with plain loads. */
	return wp_enter_on(task, syscall, (int)PT_REGS_PARM1_SYSCALL(regs), file, true,
			   WP_AT_F_POS, count, 0);
}

SEC("fexit/vfs_write")
int BPF_PROG(wp_vfs_write_exit, struct file *file, const char *buf, size_t count, loff_t *pos,
	     ssize_t ret)
{
	struct task_struct *task;
	struct wp_task_state *st;

	if (!wp_vfs_file_followed(file))
		return 0;
	task = bpf_get_current_task_btf();
	st = wp_active_state_of(task);
	if (!st || !wp_syscall_uses_vfs(st->syscall) || !wp_syscall_is_write(st->syscall))
		return 0;
	/* *pos has moved past the bytes written; read when the record is sent. */
	st->pos = 0;
	st->pos_end_at = (__u64)pos;
	st->pos_exact = 1;
	return wp_exit_of(task, st, ret, false, false);
}

SEC("fentry/vfs_fsync_range")
int BPF_PROG(wp_vfs_fsync_enter, struct file *file, loff_t start, loff_t end, int datasync)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs;
	__u32 syscall;

	/* The filter before the registers helper and the slot search. */
	if (!wp_task_traced_of(task))
		return 0;
	regs = wp_user_regs(task);
	syscall = wp_syscall_in(wp_regs_syscall_nr(regs), WP_VFS_SLOTS);
	if (!wp_syscall_is_sync(syscall))
		return 0;
	return wp_enter_on(task, syscall, (int)PT_REGS_PARM1_SYSCALL(regs), file, true, 0, 0, 0);
}

SEC("fexit/vfs_fsync_range")
int BPF_PROG(wp_vfs_fsync_exit, struct file *file, loff_t start, loff_t end, int datasync, int ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct wp_task_state *st = wp_active_state_of(task);

	if (!st || !wp_syscall_uses_vfs(st->syscall) || !wp_syscall_is_sync(st->syscall))
		return 0;
	return wp_exit_of(task, st, ret, false, false);
}


/* ---- one perf tracepoint per syscall (preferred: see hook_table.cpp) ---------------------
 * A pair of programs per row of WP_SYSCALL_TABLE. The exits all do the same: the state says
 * which call it was. Each comes twice: wp_enter_cast_* and wp_exit_cast_* read the file through
 * wp_typed_file (bpf_rdonly_cast, v6.2), wp_enter_* and wp_exit_* through probe reads for older
 * kernels; the agent loads one pair (the "cast" pair where the kernel's BTF has the kfunc). */

#define WP_SYSCALL_TRACEPOINTS_(id, value, name, Name, cls, vfs)                                   \
	SEC("tracepoint/syscalls/sys_enter_" #name)                                                \
	int wp_enter_##name(struct trace_event_raw_sys_enter *ctx)                                 \
	{                                                                                          \
		return wp_enter_args(WP_SYS_##id, ctx->args[0], ctx->args[1], ctx->args[2],        \
				     ctx->args[3], ctx->args[5], false);                           \
	}                                                                                          \
	SEC("tracepoint/syscalls/sys_enter_" #name)                                                \
	int wp_enter_cast_##name(struct trace_event_raw_sys_enter *ctx)                            \
	{                                                                                          \
		return wp_enter_args(WP_SYS_##id, ctx->args[0], ctx->args[1], ctx->args[2],        \
				     ctx->args[3], ctx->args[5], true);                            \
	}                                                                                          \
	SEC("tracepoint/syscalls/sys_exit_" #name)                                                 \
	int wp_exit_##name(struct trace_event_raw_sys_exit *ctx)                                   \
	{                                                                                          \
		return wp_exit(ctx->ret, WP_SYS_##id == WP_SYS_IO_SUBMIT, false);                  \
	}                                                                                          \
	SEC("tracepoint/syscalls/sys_exit_" #name)                                                 \
	int wp_exit_cast_##name(struct trace_event_raw_sys_exit *ctx)                              \
	{                                                                                          \
		return wp_exit(ctx->ret, WP_SYS_##id == WP_SYS_IO_SUBMIT, true);                   \
	}

WP_SYSCALL_TABLE(WP_SYSCALL_TRACEPOINTS_)
#undef WP_SYSCALL_TRACEPOINTS_

/* ---- preferred where trampolines attach: fentry/fexit on each syscall's entry function ----
 * The architecture's syscall wrapper (x86-64's __x64_sys_NAME, arm64's __arm64_sys_NAME) takes
 * the user registers. Only the callers of that one syscall run these: no syscall tracepoint is
 * enabled, and an enabled one (any, even a single sys_enter_writev) puts every thread of the
 * machine on the kernel's slow syscall path (syscall_trace_enter) for every syscall it makes.
 * The agent names the function from BTF and sets it as the target before load: the sections
 * carry none. The task filter comes first: writev's iovec walk is a traced thread's cost. */

#define WP_SYSCALL_TRAMPOLINES_(id, value, name, Name, cls, vfs)                                   \
	SEC("fentry")                                                                              \
	int BPF_PROG(wp_fentry_##name, struct pt_regs *regs)                                       \
	{                                                                                          \
		if (!wp_task_traced())                                                             \
			return 0;                                                                  \
		return wp_enter_args(WP_SYS_##id, PT_REGS_PARM1_SYSCALL(regs),                     \
				     PT_REGS_PARM2_SYSCALL(regs), PT_REGS_PARM3_SYSCALL(regs),     \
				     PT_REGS_PARM4_SYSCALL(regs), wp_regs_syscall_arg6(regs),      \
				     false);                                                       \
	}                                                                                          \
	SEC("fexit")                                                                               \
	int BPF_PROG(wp_fexit_##name, struct pt_regs *regs, long ret)                              \
	{                                                                                          \
		return wp_exit(ret, WP_SYS_##id == WP_SYS_IO_SUBMIT, false);                       \
	}

WP_SYSCALL_TABLE(WP_SYSCALL_TRAMPOLINES_)
#undef WP_SYSCALL_TRAMPOLINES_


/* `-- CMD` and `--children` follow children: a process forked by a traced one is traced too.
 * Without following (-p alone), a fork by a traced process is only noted (WP_TGID_FORKED), so
 * that the summary can say the process had children it did not trace. A new thread shares its
 * parent's tgid: nothing to add. The hook runs in the parent (current is `parent`). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(wp_fork, struct task_struct *parent, struct task_struct *child)
{
	__u8 traced = WP_TGID_TRACED;
	__u32 parent_tgid, child_tgid;
	__u8 *flags;

	WP_TP_ARG_OR_RETURN(parent);
	WP_TP_ARG_OR_RETURN(child);
	parent_tgid = BPF_CORE_READ(parent, tgid);
	child_tgid = BPF_CORE_READ(child, tgid);
	if ((!cfg_filter_tgid && !cfg_comm_roots) || child_tgid == parent_tgid)
		return 0;
	flags = bpf_map_lookup_elem(&traced_tgids, &parent_tgid);
	if (!flags && !(cfg_comm_roots && wp_comm_matches()))
		return 0;
	if (!cfg_follow_children) {
		if (flags)
			*flags |= WP_TGID_FORKED;
		return 0;
	}
	if (!bpf_map_update_elem(&traced_tgids, &child_tgid, &traced, BPF_ANY))
		wp_mark_tgid(child_tgid, 1);
	return 0;
}

/* tp_btf, any arity: 6.1 passes (task), 6.18 (task, group_dead); only current is read. */
SEC("tp_btf/sched_process_exit")
int wp_process_exit(void *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct wp_task_state *st;

	/* The thread's last fault on a file mapping ended before it exits (fault.bpf.h). */
	if (wp_task_has_storage(task)) {
		st = bpf_task_storage_get(&task_state, task, 0, 0);
		if (st)
			wp_fault_send(st, task);
	}
	/* (Task storage goes with the task.) The thread group leader leaving ends the process's
	 * entry (the agent removes the tgids it added itself when they exit). */
	if (cfg_follow_children && tid == (id >> 32)) {
		bpf_map_delete_elem(&traced_tgids, &tid);
		wp_mark_tgid(tid, 0);
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
