// SPDX-License-Identifier: GPL-2.0-only
/*
 * Layer 1: write and sync syscalls of traced threads. Entry resolves the fd to its file
 * (dev, ino, flags, offset) and opens per-thread state; the page-cache hooks add to that
 * state; exit emits one record per call. Only regular files and block devices are traced.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "compat.bpf.h"
#include "mapping.bpf.h"
#include "maps.bpf.h"

/* What a thread's last traced fd resolved to. A loop writing to one fd then costs three reads
 * (the file pointer, its inode pointer and the inode's number) instead of a dozen. All three
 * must match: a closed and reopened fd lands on a recycled struct file, and a file unlinked
 * and made again (a rollback journal per transaction) on a recycled struct inode too, whose
 * number ext4 may not reuse while the unlink's transaction is open. A stale hit would name
 * the new file by the old one's (dev, ino) and leave it out of traced_files. */
static __always_inline bool wp_resolve_file(struct wp_task_state *st, struct file *file, bool typed)
{
	struct inode *host, *inode;
	__u64 inode_ino;
	__u32 mode;

	/* `typed` (a constant at each call site): `file` is a BTF pointer (wp_typed_file), so
	 * the hit test is plain loads; a miss reads the rest the general way. */
	if (typed) {
		inode = file->f_inode;
		inode_ino = inode->i_ino;
	} else {
		inode = BPF_CORE_READ(file, f_inode);
		inode_ino = BPF_CORE_READ(inode, i_ino);
	}

	if (st->cached_file == (__u64)file && st->cached_inode == (__u64)inode &&
	    st->cached_inode_ino == inode_ino)
		return st->cached_traced;
	st->cached_file = (__u64)file;
	st->cached_inode = (__u64)inode;
	st->cached_inode_ino = inode_ino;
	st->cached_traced = false;
	st->cached_kind = 0;

	/* Writes to pipes, sockets and terminals are not the write path (kind 0); syncs of
	 * any file count, directories included (fsync of a directory after rename). */
	mode = BPF_CORE_READ(inode, i_mode) & WP_S_IFMT;
	if (mode == WP_S_IFREG)
		st->cached_kind = WP_FILE_REGULAR;
	else if (mode == WP_S_IFBLK)
		st->cached_kind = WP_FILE_BLOCKDEV;
	/* The page cache belongs to f_mapping->host: the file's own inode for regular files,
	 * the bdev inode for a block device node; an overlay file's is its upper file's. */
	host = wp_backing_inode(BPF_CORE_READ(file, f_mapping, host));
	st->cached_dev = wp_inode_dev(host);
	st->cached_fs_dev = wp_inode_fs_dev(host);
	if (st->cached_fs_dev == st->cached_dev)
		st->cached_fs_dev = 0;
	st->cached_ino = BPF_CORE_READ(host, i_ino);
	/* --file names the file as stat() shows it: an overlay file's own (dev, ino) passes too. */
	if (cfg_file_ino && (st->cached_ino != cfg_file_ino || st->cached_dev != cfg_file_dev) &&
	    (BPF_CORE_READ(inode, i_ino) != cfg_file_ino || wp_inode_dev(inode) != cfg_file_dev))
		return false;
	if (!wp_inode_on_filtered_disk(host, st->cached_dev))
		return false;
	st->cached_traced = true;
	wp_note_traced_file(host, st->cached_dev, st->cached_ino);
	return true;
}

/* The file's open flags that matter to the write path (fcntl(F_SETFL) can flip O_DIRECT and
 * O_APPEND: read on each call), with a call's RWF_* applied on top as the kernel applies them
 * to the kiocb (kiocb_set_rw_flags): RWF_DSYNC is O_DSYNC for this call, RWF_SYNC O_SYNC,
 * RWF_APPEND O_APPEND, RWF_NOAPPEND clears O_APPEND. `st` holds `file` resolved by
 * wp_resolve_file. */
static __always_inline __u32 wp_file_flags(struct wp_task_state *st, struct file *file,
					   __u16 call_flags, bool typed)
{
	__u32 f_flags = typed ? file->f_flags : BPF_CORE_READ(file, f_flags);
	__u32 flags = st->cached_kind;

	if (f_flags & WP_O_DIRECT)
		flags |= WP_FILE_DIRECT;
	if ((f_flags & WP_O_DSYNC) || (call_flags & (WP_CALL_RWF_DSYNC | WP_CALL_RWF_SYNC)))
		flags |= WP_FILE_DSYNC;
	if ((f_flags & WP_O___SYNC) == WP_O___SYNC || (call_flags & WP_CALL_RWF_SYNC))
		flags |= WP_FILE_SYNC;
	if (((f_flags & WP_O_APPEND) || (call_flags & WP_CALL_RWF_APPEND)) &&
	    !(call_flags & WP_CALL_RWF_NOAPPEND))
		flags |= WP_FILE_APPEND;
	return flags;
}

/* What a file's path record depends on besides the file itself (see wp_emit_call_path): its
 * dentry's name (hash and length, mixed with `dev`) and its parent dentry. The parent stays a
 * pointer, compared and never mixed: the verifier allows no arithmetic on a BTF pointer. */
static __always_inline void wp_file_name_of(struct file *file, __u32 dev, bool typed,
					    __u64 *name, __u64 *parent)
{
	struct dentry *dentry;

	if (typed) {
		dentry = file->f_path.dentry;
		*name = dentry->d_name.hash_len ^ ((__u64)dev << 32);
		*parent = (__u64)dentry->d_parent;
	} else {
		dentry = BPF_CORE_READ(file, f_path.dentry);
		*name = BPF_CORE_READ(dentry, d_name.hash_len) ^ ((__u64)dev << 32);
		*parent = (__u64)BPF_CORE_READ(dentry, d_parent);
	}
}

/* Starts the thread's accounting of one call (a syscall, or an io_uring op issued inline). */
static __always_inline void wp_open_call(struct wp_task_state *st, __u32 syscall, int fd,
					 __u64 pos, __u64 count)
{
	st->syscall = syscall;
	st->fd = fd;
	st->pos = pos;
	st->pos_exact = 0;
	st->count = count;
	st->pages_dirtied = 0;
	st->dirty_folios = 0;
	st->throttle_ns = 0;
	st->throttle_events = 0;
	st->writeback_waits = 0;
	st->pending_cause = WP_OFFCPU_BLOCKED;
	st->offcpu_since = 0;
	st->throttle_sleep_ns = 0;
	st->writeback_wait_ns = 0;
	st->blocked_ns = 0;
	st->runnable_ns = 0;
	st->start_ns = bpf_ktime_get_ns();
	st->active = 1;
}

/* wp_enter_file's body once the fd is looked up (`file` NULL with fd >= 0: no such fd). `typed`
 * is a constant at each call site: with it `file` is a BTF pointer, and the cached-file test, the
 * flags and the name are plain loads. */
static __always_inline int wp_enter_on(struct task_struct *task, __u32 syscall, int fd,
				       struct file *file, bool typed, __u64 pos, __u64 count,
				       __u16 call_flags)
{
	struct wp_task_state *st;

	if (fd >= 0 && !file) {
		/* No such fd: no call opens, and none still open from an inline io_uring op may
		 * take this call's exit for its own. */
		if (wp_task_has_storage(task)) {
			st = bpf_task_storage_get(&task_state, task, 0, 0);
			if (st) {
				wp_uring_fold(st);
				st->active = 0;
			}
		}
		return 0;
	}
	/* A write to a pipe, socket or terminal (most of a server's) by a thread that never made
	 * a traced call ends here, before any state is made for it: its exit then costs a load. */
	if (file && wp_syscall_is_write(syscall) && !wp_task_has_storage(task)) {
		__u32 mode = (typed ? file->f_inode->i_mode : BPF_CORE_READ(file, f_inode, i_mode)) &
			     WP_S_IFMT;

		if (mode != WP_S_IFREG && mode != WP_S_IFBLK)
			return 0;
	}
	st = bpf_task_storage_get(&task_state, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		wp_count_lost(WP_HOOK_STATE);
		return 0;
	}
	wp_uring_fold(st); /* an inline io_uring op of this thread ended before this call */
	st->active = 0;
	st->file = 0;
	st->dev = 0;
	st->fs_dev = 0;
	st->ino = 0;
	st->file_flags = 0;
	st->name_file = 0;
	if (file) {
		if (!wp_resolve_file(st, file, typed) ||
		    (wp_syscall_is_write(syscall) && !st->cached_kind))
			return 0;
		st->file = (__u64)file;
		st->dev = st->cached_dev;
		st->fs_dev = st->cached_fs_dev;
		st->ino = st->cached_ino;
		st->file_flags = wp_file_flags(st, file, call_flags, typed);
		/* The name the exit's path record checks against, read here while the file is a
		 * BTF pointer (a rename inside the call shows on the next one). */
		if (typed) {
			wp_file_name_of(file, st->dev, true, &st->name, &st->name_parent);
			st->name_file = st->file;
		}
	}
	st->call_flags = call_flags;
	wp_open_call(st, syscall, fd, pos, count);
	return 0;
}

/* Opens the thread's state for a syscall on `file`, which is `fd` (fd < 0: no file, e.g.
 * sync(2), or a file not reached through an fd, msync(2)'s mapping); with `file` NULL and
 * fd >= 0 the fd is looked up in the task's fd table. With `cast` (a constant: true in the
 * wp_enter_cast_* programs) the file found there is made a BTF pointer (wp_typed_file). */
static __always_inline int wp_enter_file(__u32 syscall, int fd, struct file *file, __u64 pos,
					 __u64 count, __u16 call_flags, bool cast)
{
	struct task_struct *task = bpf_get_current_task_btf();

	if (!wp_task_traced_of(task))
		return 0;
	if (fd >= 0 && !file) {
		file = wp_task_file(task, fd);
		if (cast && file)
			return wp_enter_on(task, syscall, fd, wp_typed_file(file), true, pos, count,
					   call_flags);
	}
	return wp_enter_on(task, syscall, fd, file, false, pos, count, call_flags);
}

static __always_inline int wp_enter(__u32 syscall, int fd, __u64 pos, __u64 count, bool cast)
{
	return wp_enter_file(syscall, fd, NULL, pos, count, 0, cast);
}

static __always_inline void wp_emit_causes(struct wp_task_state *st)
{
	struct wp_causes_record *c = wp_reserve(sizeof(*c), WP_REC_CAUSES, WP_HOOK_CAUSES);

	if (!c)
		return;
	c->start_ns = st->start_ns;
	c->tid = wp_current_tid();
	c->pad = 0;
	c->throttle_ns = st->throttle_sleep_ns;
	c->writeback_wait_ns = st->writeback_wait_ns;
	c->blocked_ns = st->blocked_ns;
	c->runnable_ns = st->runnable_ns;
	wp_submit(c, sizeof(*c));
}

/* The file's path record before the first record naming it, and again after a rename (see
 * wp_emit_file_path). A thread writing one file over and over has seen its path go out: three
 * reads tell it the name is unchanged, without the call, the inode read and the map lookup. */
static __always_inline void wp_emit_call_path(struct wp_task_state *st)
{
	__u64 name = st->name, parent = st->name_parent;

	if (st->name_file != st->file)
		wp_file_name_of((struct file *)st->file, st->dev, false, &name, &parent);
	if (st->path_file == st->file && st->path_ino == st->ino && st->path_name == name &&
	    st->path_parent == parent)
		return;
	if (wp_emit_file_path(st->file, st->dev, st->ino) < 0)
		return;
	st->path_file = st->file;
	st->path_ino = st->ino;
	st->path_name = name;
	st->path_parent = parent;
}

/* Emits one syscall record from the state of `task` (current), stamped `now` (the call's end).
 * With `cast` (a constant) the file's position and size are read through wp_typed_file. */
static __always_inline void wp_emit_call(struct wp_task_state *st, long ret, __u64 now,
					 struct task_struct *task, bool cast)
{
	struct wp_syscall_record *r;
	__u64 pos;

	if (st->file)
		wp_emit_call_path(st);
	r = wp_reserve_at(sizeof(*r), WP_REC_SYSCALL, WP_HOOK_SYSCALL, now);
	if (!r)
		return;
	r->start_ns = st->start_ns;
	r->pid = task->tgid;
	r->tid = task->pid;
	__builtin_memcpy(r->comm, task->comm, WP_COMM_LEN);
	r->syscall = st->syscall;
	r->fd = st->fd;
	r->dev = st->dev;
	r->file_flags = st->file_flags;
	r->call_flags = st->call_flags;
	r->ino = st->ino;
	r->ret = ret;
	r->count = st->count;
	r->pos = st->pos;
	/* Where the bytes went is only known once the write held the inode lock. write(2),
	 * writev(2) (and pwritev2 at offset -1) advance f_pos past them. With O_APPEND every
	 * write, positional ones included (pwrite(2) BUGS), lands at the end of the file: the
	 * new i_size less the bytes written (a concurrent appender can shift this). fexit
	 * hooks read the exact end from the kiocb position instead (pos_exact). */
	if (st->file && !st->pos_exact && wp_syscall_is_write(st->syscall)) {
		struct file *file = (struct file *)st->file;
		__s64 end = -1;

		if (cast)
			file = wp_typed_file(file);
		if (st->file_flags & WP_FILE_APPEND)
			end = cast ? file->f_inode->i_size : BPF_CORE_READ(file, f_inode, i_size);
		else if (st->pos == (__u64)-1)
			end = cast ? file->f_pos : BPF_CORE_READ(file, f_pos);
		if (end >= 0)
			r->pos = ret > 0 && end >= ret ? end - ret : end;
	}
	pos = r->pos;
	r->pages_dirtied = wp_dirtied_within(st->pages_dirtied, r->pos, ret);
	r->dirty_folios = st->dirty_folios;
	r->fs_dev = st->fs_dev;
	r->throttle_ns = st->throttle_ns;
	r->throttle_events = st->throttle_events;
	r->writeback_waits = st->writeback_waits;
	wp_submit(r, sizeof(*r));
	/* A buffered write that dirtied no page may have put its bytes in an ext4 inode. */
	if (ret > 0 && !st->pages_dirtied && st->file && wp_syscall_is_write(st->syscall) &&
	    !(st->file_flags & WP_FILE_DIRECT))
		wp_emit_ext4_inline(st->file, st->dev, st->ino, pos, ret);
}

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

/* writepath serve: adds the call to the kernel's metrics; returns whether it still goes to the
 * agent as a record (see cfg_metrics). io_submit's items are the agent's to count. */
static __always_inline bool wp_metrics_keep(struct wp_task_state *st, __u64 latency, long ret)
{
	__u32 dev = st->fs_dev ? st->fs_dev : st->dev;
	__u32 direct;

	if (st->syscall == WP_SYS_IO_SUBMIT || wp_syscall_is_open(st->syscall))
		return true;
	if (!wp_syscall_is_write(st->syscall)) {
		wp_metric_add(WP_METRIC_WHAT(WP_METRIC_SYNC, st->syscall) | WP_METRIC_OF_TASK, dev,
			      latency, 0, 0);
		return true;
	}
	direct = st->file_flags & WP_FILE_DIRECT ? 1 : 0;
	wp_metric_add(WP_METRIC_WHAT(WP_METRIC_WRITE, direct) | WP_METRIC_OF_TASK, dev, latency,
		      ret > 0 ? ret : 0, direct ? st->pages_dirtied : 0);
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
static __always_inline int wp_exit(long ret, bool io_submit_possible, bool cast)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct wp_task_state *st = wp_active_state_of(task);
	__u64 latency, now;

	if (!st)
		return 0;
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
	else
		wp_emit_call(st, ret, now, task, cast);
out:
	st->active = 0;
	return 0;
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
		return wp_enter(syscall, (int)a0, WP_AT_F_POS, a2, cast);
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
static __always_inline struct pt_regs *wp_user_regs(void)
{
	return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
}

SEC("fentry/vfs_write")
int BPF_PROG(wp_vfs_write_enter, struct file *file, const char *buf, size_t count, loff_t *pos)
{
	struct pt_regs *regs = wp_user_regs();
	__u32 syscall = wp_syscall_in(wp_regs_syscall_nr(regs), WP_VFS_SLOTS);

	if (!wp_syscall_is_write(syscall))
		return 0;
	/* The offset is settled at exit (*pos has moved by ret, O_APPEND included). */
	return wp_enter_file(syscall, (int)PT_REGS_PARM1_SYSCALL(regs), file, WP_AT_F_POS, count,
			     0, false);
}

SEC("fexit/vfs_write")
int BPF_PROG(wp_vfs_write_exit, struct file *file, const char *buf, size_t count, loff_t *pos,
	     ssize_t ret)
{
	struct wp_task_state *st = wp_active_state();
	loff_t end = 0;

	if (!st || !wp_syscall_uses_vfs(st->syscall) || !wp_syscall_is_write(st->syscall))
		return 0;
	if (pos && !bpf_probe_read_kernel(&end, sizeof(end), pos))
		st->pos = ret > 0 && end >= ret ? end - ret : end;
	else
		st->pos = 0;
	st->pos_exact = 1;
	return wp_exit(ret, false, false);
}

SEC("fentry/vfs_fsync_range")
int BPF_PROG(wp_vfs_fsync_enter, struct file *file, loff_t start, loff_t end, int datasync)
{
	struct pt_regs *regs = wp_user_regs();
	__u32 syscall = wp_syscall_in(wp_regs_syscall_nr(regs), WP_VFS_SLOTS);

	if (!wp_syscall_is_sync(syscall))
		return 0;
	return wp_enter_file(syscall, (int)PT_REGS_PARM1_SYSCALL(regs), file, 0, 0, 0, false);
}

SEC("fexit/vfs_fsync_range")
int BPF_PROG(wp_vfs_fsync_exit, struct file *file, loff_t start, loff_t end, int datasync, int ret)
{
	struct wp_task_state *st = wp_active_state();

	if (!st || !wp_syscall_uses_vfs(st->syscall) || !wp_syscall_is_sync(st->syscall))
		return 0;
	return wp_exit(ret, false, false);
}

/* ---- counted, not stitched: writes the tracer does not follow --------------------------
 * WP_UNTRACED_TABLE's calls of traced processes are counted at entry, so the summary can say
 * what went untraced. Their own tracepoints, not the raw pair: the write path's programs stay
 * as they are, and these run only on calls that are rare next to write(2). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WP_UNTRACED_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} untraced_calls SEC(".maps");

/* Whether `fd` is a file the write path covers: a regular file or a block device. */
static __always_inline bool wp_fd_is_file(int fd)
{
	struct file *file = wp_task_file(bpf_get_current_task_btf(), fd);
	__u32 mode;

	if (!file)
		return false;
	mode = BPF_CORE_READ(file, f_inode, i_mode) & WP_S_IFMT;
	return mode == WP_S_IFREG || mode == WP_S_IFBLK;
}

/* With check_fd, counted only when `fd` (the file written to) is a file of the write path. */
static __always_inline int wp_count_untraced(__u32 call, bool check_fd, int fd)
{
	__u64 *n;

	if (!wp_task_traced())
		return 0;
	if (check_fd && !wp_fd_is_file(fd))
		return 0;
	n = bpf_map_lookup_elem(&untraced_calls, &call);
	if (n)
		*n += 1;
	return 0;
}

#define WP_UNTRACED_COUNTER_(id, name, event, fd_arg)                                              \
	SEC("tracepoint/syscalls/sys_enter_" #event)                                               \
	int wp_count_##name(struct trace_event_raw_sys_enter *ctx)                                 \
	{                                                                                          \
		/* A constant index: the verifier refuses a ctx pointer moved by a variable. */   \
		return wp_count_untraced(WP_UNTRACED_##id, (fd_arg) >= 0,                          \
					 (int)ctx->args[(fd_arg) >= 0 ? (fd_arg) : 0]);            \
	}

WP_UNTRACED_TABLE(WP_UNTRACED_COUNTER_)
#undef WP_UNTRACED_COUNTER_

/* ---- one perf tracepoint per syscall (preferred: see hook_plan.cpp) ----------------------
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

/* ---- io_uring ops ------------------------------------------------------------------------
 * IORING_OP_WRITE/WRITEV/WRITE_FIXED/FSYNC/SYNC_FILE_RANGE of traced processes become
 * syscall records (WP_SYS_IO_URING_*, via = WP_VIA_*): start at submission, end and result
 * at the CQE. Submission opens an entry in uring_ops and, for the inline issue that follows
 * in the submitting thread (or SQPOLL thread), that thread's state, so the page-cache and
 * block hooks account to it as to a syscall; the state is folded into the entry when the
 * thread punts the op, submits the next one, completes it, or enters a traced syscall. An
 * io-wq worker's hooks find the op through the request it runs (wp_iowq_op). Io-wq workers
 * and the SQPOLL thread are threads of the ring's owner, so the tgid filters hold as they
 * are; the comm filter uses the owner's name for them (wp_comm_matches). */

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
	if (wp_syscall_is_write(syscall)) {
		struct io_rw *rw = (struct io_rw *)req;

		/* Prepared at submission: the SQE's off (-1: the file position) and len (bytes;
		 * for WRITEV the iovec count, so the CQE's result stands for it). */
		op.pos = BPF_CORE_READ(rw, kiocb.ki_pos);
		op.count = syscall == WP_SYS_IO_URING_WRITEV ? 0 : BPF_CORE_READ(rw, len);
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
	wp_emit_file_path((__u64)file, st->cached_dev, st->cached_ino);
	r = wp_reserve(sizeof(*r), WP_REC_SYSCALL, WP_HOOK_SYSCALL);
	if (!r)
		goto out;
	r->file_flags = wp_file_flags(st, file, 0, false);
	r->start_ns = op->start_ns;
	r->pid = op->pid;
	/* The thread that queued the op's bios: the stitcher matches bios by thread. */
	r->tid = op->issue_tid ? op->issue_tid : op->submit_tid;
	__builtin_memcpy(r->comm, op->comm, sizeof(r->comm));
	r->syscall = op->syscall;
	r->call_flags = (__u16)op->via << WP_CALL_VIA_SHIFT;
	r->fd = op->fd;
	r->dev = st->cached_dev;
	r->fs_dev = st->cached_fs_dev;
	r->ino = st->cached_ino;
	r->ret = res;
	r->count = op->count ? op->count : (res > 0 ? res : 0);
	r->pos = op->pos;
	/* At the file position (-1): the kiocb's position has moved past the bytes written. */
	if (wp_syscall_is_write(op->syscall) && op->pos == (__u64)-1) {
		__s64 end = BPF_CORE_READ((struct io_rw *)req, kiocb.ki_pos);

		r->pos = res > 0 && end >= res ? end - res : end;
	}
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
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;

	/* (Task storage goes with the task.) The thread group leader leaving ends the process's
	 * entry (the agent removes the tgids it added itself when they exit). */
	if (cfg_follow_children && tid == (id >> 32)) {
		bpf_map_delete_elem(&traced_tgids, &tid);
		wp_mark_tgid(tid, 0);
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
