/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A traced call in its thread's state: the file it is on, resolved once per file and thread, the
 * state opened at its entry, and the record emitted at its exit. The syscall programs
 * (syscall.bpf.c) use all of it; io_uring ops (uring.bpf.c) resolve their file and open the
 * state of their inline issue with it.
 */
#ifndef WRITEPATH_TRACED_CALL_BPF_H
#define WRITEPATH_TRACED_CALL_BPF_H

#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "compat.bpf.h"
#include "config.bpf.h"
#include "emit.bpf.h"
#include "file_filter.bpf.h"
#include "sync_waiters.bpf.h"
#include "task_filter.bpf.h"
#include "task_state.bpf.h"
#include "uring_op.bpf.h"
#include "writepath.h"

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
	st->cached_no_inline = false;
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
		/* hash_len as its halves (hashlen_create: len << 32 | hash, either endianness):
		 * 6.1's verifier walks a union by its first member only, and hash_len shares
		 * struct qstr's union with the 4-byte hash ("access beyond the end of member hash"). */
		*name = (((__u64)dentry->d_name.len << 32) | dentry->d_name.hash) ^ ((__u64)dev << 32);
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
	st->pos_end_at = 0;
	st->count = count;
	st->pages_dirtied = 0;
	st->dirty_folios = 0;
	st->throttle_ns = 0;
	st->throttle_events = 0;
	st->writeback_waits = 0;
	__builtin_memset(&st->reads, 0, sizeof(st->reads));
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
				wp_sync_wait_end(st);
				st->active = 0;
			}
		}
		return 0;
	}
	/* A write to a pipe, socket or terminal (most of a server's), or a read from one, by a
	 * thread that never made a traced call ends here, before any state is made for it: its
	 * exit then costs a load. */
	if (file && (wp_syscall_is_write(syscall) || wp_syscall_is_read(syscall)) &&
	    !wp_task_has_storage(task)) {
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
	wp_sync_wait_end(st);
	st->active = 0;
	st->file = 0;
	st->dev = 0;
	st->fs_dev = 0;
	st->ino = 0;
	st->file_flags = 0;
	st->name_file = 0;
	if (file) {
		if (!wp_resolve_file(st, file, typed) ||
		    ((wp_syscall_is_write(syscall) || wp_syscall_is_read(syscall)) &&
		     !st->cached_kind))
			return 0;
		st->file = (__u64)file;
		st->dev = st->cached_dev;
		st->fs_dev = st->cached_fs_dev;
		st->ino = st->cached_ino;
		st->file_flags = wp_file_flags(st, file, call_flags, typed);
		/* The name the exit's path record checks against, read here while the file is a
		 * BTF pointer (a rename inside the call shows on the next one). serve sends few
		 * calls' records: those read it at their exit. */
		if (typed && !cfg_metrics) {
			wp_file_name_of(file, st->dev, true, &st->name, &st->name_parent);
			st->name_file = st->file;
		}
	}
	st->call_flags = call_flags;
	wp_open_call(st, syscall, fd, pos, count);
	wp_sync_wait_begin(st, syscall);
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
static __always_inline void wp_emit_path_once(struct wp_task_state *st, __u64 file, __u32 dev,
					      __u64 ino, __u64 name, __u64 parent)
{
	if (st->path_file == file && st->path_ino == ino && st->path_name == name &&
	    st->path_parent == parent)
		return;
	if (wp_emit_file_path(file, dev, ino) < 0)
		return;
	st->path_file = file;
	st->path_ino = ino;
	st->path_name = name;
	st->path_parent = parent;
}

static __always_inline void wp_emit_call_path(struct wp_task_state *st)
{
	__u64 name = st->name, parent = st->name_parent;

	if (st->name_file != st->file)
		wp_file_name_of((struct file *)st->file, st->dev, false, &name, &parent);
	wp_emit_path_once(st, st->file, st->dev, st->ino, name, parent);
}

/* The fields a call's record (struct wp_syscall_record or wp_read_record) takes from the
 * thread's state, `task` being current and `ret` the call's result. */
#define WP_FILL_CALL_RECORD(r, st, task, ret)                                                    \
	do {                                                                                       \
		(r)->start_ns = (st)->start_ns;                                                    \
		(r)->pid = (task)->tgid;                                                           \
		(r)->tid = (task)->pid;                                                            \
		__builtin_memcpy((r)->comm, (task)->comm, WP_COMM_LEN);                            \
		(r)->syscall = (st)->syscall;                                                      \
		(r)->fd = (st)->fd;                                                                \
		(r)->dev = (st)->dev;                                                              \
		(r)->fs_dev = (st)->fs_dev;                                                        \
		(r)->file_flags = (st)->file_flags;                                                \
		(r)->call_flags = (st)->call_flags;                                                \
		(r)->ino = (st)->ino;                                                              \
		(r)->ret = (ret);                                                                  \
		(r)->count = (st)->count;                                                          \
		(r)->pos = (st)->pos;                                                              \
	} while (0)

/* Where a call that moved `ret` bytes began, when only its end says so; else st->pos. read(2),
 * write(2), their vector forms (and the p*v2 calls at offset -1) move f_pos past the bytes
 * they moved. With O_APPEND (`append`) every write, positional ones included (pwrite(2)
 * BUGS), lands at the end of the file: the new i_size less the bytes written (a concurrent
 * appender can shift this). With `cast` (a constant) the file is read through wp_typed_file. */
static __always_inline __u64 wp_call_pos(struct wp_task_state *st, long ret, bool cast,
					 bool append)
{
	struct file *file = (struct file *)st->file;
	__s64 end = -1;

	if (!file)
		return st->pos;
	if (cast)
		file = wp_typed_file(file);
	if (append)
		end = cast ? file->f_inode->i_size : BPF_CORE_READ(file, f_inode, i_size);
	else if (st->pos == (__u64)-1)
		end = cast ? file->f_pos : BPF_CORE_READ(file, f_pos);
	if (end < 0)
		return st->pos;
	return ret > 0 && end >= ret ? end - ret : end;
}

/* The first byte a call that moved `ret` bytes wrote, from the position it left at `end_at` (a
 * loff_t *); 0 when that cannot be read. */
static __always_inline __u64 wp_pos_before_end(__u64 end_at, long ret)
{
	loff_t end = 0;

	if (bpf_probe_read_kernel(&end, sizeof(end), (void *)end_at))
		return 0;
	return ret > 0 && end >= ret ? end - ret : end;
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
	WP_FILL_CALL_RECORD(r, st, task, ret);
	/* Where the bytes went is only known once the write held the inode lock; fexit hooks
	 * read the exact end from the kiocb position instead (pos_exact). */
	if (!st->pos_exact && wp_syscall_is_write(st->syscall))
		r->pos = wp_call_pos(st, ret, cast, st->file_flags & WP_FILE_APPEND);
	else if (st->pos_end_at)
		r->pos = wp_pos_before_end(st->pos_end_at, ret);
	pos = r->pos;
	r->pages_dirtied = wp_dirtied_within(st->pages_dirtied, r->pos, ret);
	r->dirty_folios = st->dirty_folios;
	r->throttle_ns = st->throttle_ns;
	r->throttle_events = st->throttle_events;
	r->writeback_waits = st->writeback_waits;
	wp_submit(r, sizeof(*r));
	/* A buffered write that dirtied no page may have put its bytes in an ext4 inode: an
	 * overwrite of dirty pages too, until the check has said the file cannot. */
	if (ret > 0 && !st->pages_dirtied && st->file && wp_syscall_is_write(st->syscall) &&
	    !(st->file_flags & WP_FILE_DIRECT) && !st->cached_no_inline &&
	    wp_emit_ext4_inline(st->file, st->dev, st->ino, pos, ret) == WP_INLINE_NEVER &&
	    st->cached_file == st->file)
		st->cached_no_inline = true;
}

#endif /* WRITEPATH_TRACED_CALL_BPF_H */
