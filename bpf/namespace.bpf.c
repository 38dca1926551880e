// SPDX-License-Identifier: GPL-2.0-only
/*
 * Name-change calls of traced threads: rename, link, unlink, mkdir, creating or truncating opens,
 * truncate, fallocate, the close of a file open for writing, and a process's first socket send
 * after it made a name (WP_NAME_CHANGE_TABLE). The entry keeps the arguments; the exit emits
 * one wp_name_change_record with the caller's names and, for each relative name, the directory it
 * is relative to (whose path record goes out first), so the agent can join them into the path
 * the call acted on. Untraced threads cost the traced check at entry and nothing at exit: no
 * state is made for them.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cgroup.bpf.h"
#include "compat.bpf.h"
#include "emit.bpf.h"
#include "task_filter.bpf.h"
#include "task_state.bpf.h"
#include "writepath.h"

/* A name-change call between its entry and its exit. */
struct wp_ns_call {
	__u64 start_ns;
	__u64 name[2]; /* user pointers to the names (0: none) */
	__s64 dirfd[2];
	__s64 fd;	/* the fd argument, or -1 */
	/* The directory a name was last resolved in (its dentry) and what it resolved to: a
	 * thread renaming in one directory sends its path once and reads it once (see wp_ns_dir). */
	__u64 dir_dentry;
	__u64 dir_ino;
	__u64 cgroup_noted; /* the cgroup last told for this thread by these programs */
	__u64 file_ino; /* close: the file closed, resolved at the entry (gone at the exit) */
	__u32 file_dev;
	__u32 dir_dev;
	__u32 flags;	/* enum wp_ns_flags, from the call's flags argument */
	__u8 op;	/* enum wp_ns_op; 0: no call open */
	__u8 syscall;	/* its value in WP_NAME_CHANGE_TABLE */
	__u8 pad[2];
};

/* A record is built here, names and all, and copied to the ring buffer at its used length. */
struct wp_ns_scratch {
	struct wp_name_change_record rec;
	char names[WP_NS_NAMES_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct wp_ns_scratch);
} ns_scratch SEC(".maps");

/* The processes (tgid) that made a name (rename, link, mkdir, a creating open) since their last
 * socket send: only their next send is an item, the acknowledgement-shaped event a name should
 * be durable before. One bit per tgid, 64 to an element of an array the verifier inlines, sized
 * to pid_max by the agent before load: a name costs a load and a test (an atomic OR only when
 * the bit was clear), where a hash map hashed the key and walked a bucket, and held only so many
 * processes (past them a process's sends went unwatched). Made and read here only. A process
 * that exits with its bit set leaves it to the next user of its tgid, whose first send is then
 * an item with no name before it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4194304 / 64); /* PID_MAX_LIMIT on 64-bit */
	__type(key, __u32);
	__type(value, __u64);
} ns_send_wanted SEC(".maps");

/* tgid's word of ns_send_wanted, and its bit there (NULL past the array's end). */
static __always_inline __u64 *wp_ns_send_word(__u32 tgid, __u64 *bit)
{
	__u32 word = tgid / 64;

	*bit = 1ull << (tgid % 64);
	return bpf_map_lookup_elem(&ns_send_wanted, &word);
}

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct wp_ns_call);
} ns_calls SEC(".maps");

/* The call's flags argument, normalised (wp_ns_flags): open's O_* for OPEN, renameat2's
 * RENAME_* for RENAME, unlinkat's AT_REMOVEDIR makes the call an RMDIR (returned in *op). */
static __always_inline __u32 wp_ns_flags_of(__u8 *op, __u64 raw, bool has_flags)
{
	__u32 flags = 0;

	if (*op == WP_NS_OPEN) {
		/* creat(2) has no flags argument: it is open(O_CREAT|O_WRONLY|O_TRUNC). */
		if (!has_flags)
			return WP_NS_CREATE | WP_NS_TRUNC;
		if (raw & WP_O_CREAT)
			flags |= WP_NS_CREATE;
		if (raw & WP_O_EXCL)
			flags |= WP_NS_EXCL;
		if (raw & WP_O_TRUNC)
			flags |= WP_NS_TRUNC;
		return flags;
	}
	if (!has_flags)
		return 0;
	if (*op == WP_NS_RENAME) {
		if (raw & WP_RENAME_NOREPLACE)
			flags |= WP_NS_NOREPLACE;
		if (raw & WP_RENAME_EXCHANGE)
			flags |= WP_NS_EXCHANGE;
		if (raw & WP_RENAME_WHITEOUT)
			flags |= WP_NS_WHITEOUT;
	} else if (*op == WP_NS_UNLINK && (raw & WP_AT_REMOVEDIR)) {
		*op = WP_NS_RMDIR;
	}
	return flags;
}

/* The file a close is about to close, if it is a regular file open for writing: its (dev, ino)
 * as the write records name it, its path record sent. Other closes (pipes, sockets, files
 * read) are no item. */
static __always_inline bool wp_ns_closing_written(struct task_struct *task, __s64 fd, __u32 *dev,
						  __u64 *ino)
{
	struct file *file = fd >= 0 ? wp_task_file(task, (int)fd) : NULL;
	struct inode *host;

	if (!file || !(BPF_CORE_READ(file, f_mode) & WP_FMODE_WRITE) ||
	    (BPF_CORE_READ(file, f_inode, i_mode) & WP_S_IFMT) != WP_S_IFREG)
		return false;
	host = wp_backing_inode(BPF_CORE_READ(file, f_mapping, host));
	*dev = wp_inode_dev(host);
	*ino = BPF_CORE_READ(host, i_ino);
	wp_emit_file_path((__u64)file, *dev, *ino);
	return true;
}

static __always_inline int wp_ns_enter(__u8 syscall, __u8 op, __u64 name0, __s64 dirfd0, __u64 name1,
				       __s64 dirfd1, __u64 raw_flags, bool has_flags, __s64 fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct wp_ns_call *call;
	__u32 flags, file_dev = 0;
	__u64 file_ino = 0;

	flags = wp_ns_flags_of(&op, raw_flags, has_flags);
	/* An open that neither creates nor truncates changes no name and no size. */
	if (op == WP_NS_OPEN && !(flags & (WP_NS_CREATE | WP_NS_TRUNC)))
		return 0;
	/* close runs far more often than the rest: a thread with no task storage at all made no
	 * traced call, so it wrote no file through one; one load tells so. */
	if (op == WP_NS_CLOSE && !wp_task_has_storage(task))
		return 0;
	/* A send is wanted only after a name was made: the rest of a server's sends cost a load
	 * (no storage) or one lookup. A thread with no storage of its own (a worker that made no
	 * traced call) is not followed. */
	if (op == WP_NS_SEND) {
		__u64 bit, *wanted;

		if (!wp_task_has_storage(task))
			return 0;
		wanted = wp_ns_send_word(task->tgid, &bit);
		if (!wanted || !(*wanted & bit))
			return 0;
	}
	if (!wp_task_traced_of(task))
		return 0;
	if (op == WP_NS_CLOSE && !wp_ns_closing_written(task, fd, &file_dev, &file_ino))
		return 0;
	call = bpf_task_storage_get(&ns_calls, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!call) {
		wp_count_lost(WP_HOOK_NAME_CHANGE);
		return 0;
	}
	call->start_ns = bpf_ktime_get_ns();
	call->name[0] = name0;
	call->name[1] = name1;
	call->dirfd[0] = dirfd0;
	call->dirfd[1] = dirfd1;
	call->fd = fd;
	call->file_dev = file_dev;
	call->file_ino = file_ino;
	call->flags = flags;
	call->op = op;
	call->syscall = syscall;
	return 0;
}

/* The directory a name is relative to: the dirfd's file, or the working directory. Sets its
 * (dev, ino) and sends its path record. An absolute name (or none) has none: 0. Called before
 * the record is reserved: a global function may not be called while a reservation is held. */
static __always_inline void wp_ns_dir(struct task_struct *task, struct wp_ns_call *call,
				      __s64 dirfd, char first, __u32 *dev, __u64 *ino)
{
	struct dentry *dentry;
	struct vfsmount *mnt;
	struct inode *inode;

	*dev = 0;
	*ino = 0;
	if (first == '/' || !first)
		return;
	/* Read as numbers (probe reads), not BTF pointers: wp_emit_path takes scalars. */
	if (dirfd == WP_AT_FDCWD) {
		dentry = BPF_CORE_READ(task, fs, pwd.dentry);
		mnt = BPF_CORE_READ(task, fs, pwd.mnt);
	} else {
		struct file *file = wp_task_file(task, (int)dirfd);

		if (!file)
			return;
		dentry = BPF_CORE_READ(file, f_path.dentry);
		mnt = BPF_CORE_READ(file, f_path.mnt);
	}
	/* The directory of this thread's last call (the same dentry: its path went out then, as
	 * wp_emit_call_path trusts a file's). */
	if ((__u64)dentry == call->dir_dentry && call->dir_ino) {
		*dev = call->dir_dev;
		*ino = call->dir_ino;
		return;
	}
	inode = wp_backing_inode(BPF_CORE_READ(dentry, d_inode));
	if (!inode)
		return;
	*dev = wp_inode_dev(inode);
	*ino = BPF_CORE_READ(inode, i_ino);
	if (wp_emit_path((__u64)dentry, (__u64)mnt, *dev, *ino) < 0)
		return; /* not sent: the next call tries again */
	call->dir_dentry = (__u64)dentry;
	call->dir_dev = *dev;
	call->dir_ino = *ino;
}

/* The file behind `fd` as the write records name it (the page cache's inode: an overlay file's
 * upper one); 0 when there is none. Returns whether it is a directory. With `send_path`, its
 * path record goes out too (ftruncate, fallocate). Not for an open: the agent names an open by
 * the name it was called with, and the file's first write sends its path as it stands then (a
 * record sent at the open would fix the name before an unlink, and the path cache would keep it
 * without " (deleted)"). */
static __always_inline bool wp_ns_file(struct task_struct *task, __s64 fd, bool send_path,
				       __u32 *dev, __u64 *ino)
{
	struct file *file = fd >= 0 ? wp_task_file(task, (int)fd) : NULL;
	struct inode *host;

	*dev = 0;
	*ino = 0;
	if (!file)
		return false;
	host = wp_backing_inode(BPF_CORE_READ(file, f_mapping, host));
	*dev = wp_inode_dev(host);
	*ino = BPF_CORE_READ(host, i_ino);
	if (send_path)
		wp_emit_file_path((__u64)file, *dev, *ino);
	return (BPF_CORE_READ(host, i_mode) & WP_S_IFMT) == WP_S_IFDIR;
}

static __always_inline int wp_ns_exit(long ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct wp_name_change_record *r;
	struct wp_ns_scratch *scratch;
	struct wp_ns_call *call;
	__u32 zero = 0, used, size;
	__u32 dir_dev[2], dev;
	__u64 dir_ino[2], ino;
	bool is_dir;
	__s64 fd;
	__u64 now;
	long n;

	/* A thread never traced has no storage at all: one load tells so. */
	if (!wp_task_has_storage(task))
		return 0;
	call = bpf_task_storage_get(&ns_calls, task, 0, 0);
	if (!call || !call->op)
		return 0;
	/* The clock only now: on a KVM guest a read costs a bystander's exit most of its time. */
	now = bpf_ktime_get_ns();
	if (ret >= 0) {
		__u64 bit, *wanted = wp_ns_send_word(task->tgid, &bit);

		/* Tested first: a process making names in a row finds its bit set, and a load
		 * leaves the line shared where an atomic takes it. */
		if (wanted && call->op == WP_NS_SEND) {
			if (*wanted & bit)
				__sync_fetch_and_and(wanted, ~bit);
		} else if (wanted && (call->op == WP_NS_RENAME || call->op == WP_NS_LINK ||
				      call->op == WP_NS_MKDIR ||
				      (call->op == WP_NS_OPEN && (call->flags & WP_NS_CREATE)))) {
			if (!(*wanted & bit))
				__sync_fetch_and_or(wanted, bit);
		}
	} else if (call->op == WP_NS_SEND) {
		call->op = 0; /* a failed send acknowledged nothing: the next one is wanted */
		return 0;
	}
	/* The cgroup record the agent names the item by, as for the write records (their state
	 * keeps its own: a thread doing both may tell its cgroup twice, never too late). */
	wp_note_task_cgroup(&call->cgroup_noted, task);
	scratch = bpf_map_lookup_elem(&ns_scratch, &zero);
	if (!scratch) {
		call->op = 0;
		return 0;
	}
	r = &scratch->rec;
	/* The names first: whether each is relative decides the directories below. */
	r->flags = call->flags;
	r->fd = 0;
	if (call->fd >= 0 && call->op != WP_NS_OPEN) {
		r->flags |= WP_NS_FD;
		r->fd = (__s32)call->fd;
	}
	r->name_len[0] = 0;
	r->name_len[1] = 0;
	if (call->name[0]) {
		n = bpf_probe_read_user_str(scratch->names, WP_NS_NAME_BYTES,
					    (const void *)call->name[0]);
		if (n > 0) {
			r->name_len[0] = n;
			/* A name that filled the buffer may have been cut. */
			if (n == WP_NS_NAME_BYTES)
				r->flags |= WP_NS_NAME1_CUT;
		}
	}
	used = r->name_len[0];
	if (call->name[1] && used <= WP_NS_NAME_BYTES) {
		n = bpf_probe_read_user_str(&scratch->names[used], WP_NS_NAME_BYTES,
					    (const void *)call->name[1]);
		if (n > 0) {
			r->name_len[1] = n;
			if (n == WP_NS_NAME_BYTES)
				r->flags |= WP_NS_NAME2_CUT;
		}
	}
	/* Path records before this record: the directories, and the file an open opened (its
	 * returned fd), or ftruncate's and fallocate's (their argument). */
	wp_ns_dir(task, call, call->dirfd[0], r->name_len[0] ? scratch->names[0] : 0, &dir_dev[0],
		  &dir_ino[0]);
	wp_ns_dir(task, call, call->dirfd[1],
		  r->name_len[1] && used < WP_NS_NAME_BYTES ? scratch->names[used] : 0, &dir_dev[1],
		  &dir_ino[1]);
	if (call->op == WP_NS_SEND) {
		dev = 0;
		ino = 0;
		is_dir = false;
	} else if (call->op == WP_NS_CLOSE) {
		dev = call->file_dev;
		ino = call->file_ino;
		is_dir = false;
	} else {
		fd = call->op == WP_NS_OPEN ? (ret >= 0 ? ret : -1) : call->fd;
		is_dir = wp_ns_file(task, fd, call->op != WP_NS_OPEN, &dev, &ino);
	}
	r->h.type = WP_REC_NAME_CHANGE;
	r->h.version = WP_RECORD_VERSION;
	r->h.cpu = bpf_get_smp_processor_id();
	r->h.ts_ns = now;
	r->start_ns = call->start_ns;
	r->ret = ret;
	r->op = call->op;
	if (is_dir && call->op == WP_NS_OPEN)
		r->flags |= WP_NS_DIR;
	r->syscall = call->syscall;
	r->pid = task->tgid;
	r->tid = task->pid;
	__builtin_memcpy(r->comm, task->comm, WP_COMM_LEN);
	r->dev = dev;
	r->ino = ino;
	r->dir_dev[0] = dir_dev[0];
	r->dir_dev[1] = dir_dev[1];
	r->dir_ino[0] = dir_ino[0];
	r->dir_ino[1] = dir_ino[1];
	size = (sizeof(*r) + r->name_len[0] + r->name_len[1] + 7) & ~7u;
	if (size > sizeof(*scratch))
		size = sizeof(*scratch);
	r->h.size = size;
	call->op = 0;
	if (bpf_ringbuf_output(&events, scratch, size, wp_wakeup_flag(size)))
		wp_count_lost(WP_HOOK_NAME_CHANGE);
	return 0;
}

/* An argument of the table by index, or the default for WP_NS_NONE / WP_NS_CWD. */
#define WP_NS_ARG(ctx, idx, none) ((idx) >= 0 ? (ctx)->args[(idx) >= 0 ? (idx) : 0] : (none))

#define WP_NS_PROGRAMS_(name, Name, value, op, dir1, name1, dir2, name2, flags, fd)                              \
	SEC("tracepoint/syscalls/sys_enter_" #name)                                                \
	int wp_ns_enter_##name(struct trace_event_raw_sys_enter *ctx)                              \
	{                                                                                          \
		return wp_ns_enter(value, WP_NS_##op, WP_NS_ARG(ctx, name1, 0),                           \
				   (dir1) == WP_NS_CWD ? WP_AT_FDCWD : (__s64)(int)WP_NS_ARG(ctx, dir1, 0), \
				   WP_NS_ARG(ctx, name2, 0),                                       \
				   (dir2) == WP_NS_CWD ? WP_AT_FDCWD : (__s64)(int)WP_NS_ARG(ctx, dir2, 0), \
				   WP_NS_ARG(ctx, flags, 0), (flags) >= 0,                         \
				   (__s64)(int)WP_NS_ARG(ctx, fd, -1));                            \
	}                                                                                          \
	SEC("tracepoint/syscalls/sys_exit_" #name)                                                 \
	int wp_ns_exit_##name(struct trace_event_raw_sys_exit *ctx)                                \
	{                                                                                          \
		return wp_ns_exit(ctx->ret);                                                       \
	}
WP_NAME_CHANGE_TABLE(WP_NS_PROGRAMS_)
#undef WP_NS_PROGRAMS_

/* Where trampolines attach: the same calls at their entry functions (syscall.bpf.c's
 * trampolines say why; the agent sets the targets). close and the sends run far more often than
 * the rest; there only their callers pay, where a syscall tracepoint taxes every syscall. */
#define WP_NS_REG(regs, idx, none) ((idx) >= 0 ? wp_regs_syscall_arg(regs, (idx) >= 0 ? (idx) : 0) : (none))

#define WP_NS_TRAMPOLINES_(name, Name, value, op, dir1, name1, dir2, name2, flags, fd)            \
	SEC("fentry")                                                                              \
	int BPF_PROG(wp_ns_fentry_##name, struct pt_regs *regs)                                    \
	{                                                                                          \
		return wp_ns_enter(value, WP_NS_##op, WP_NS_REG(regs, name1, 0),                   \
				   (dir1) == WP_NS_CWD ? WP_AT_FDCWD                               \
						       : (__s64)(int)WP_NS_REG(regs, dir1, 0),     \
				   WP_NS_REG(regs, name2, 0),                                      \
				   (dir2) == WP_NS_CWD ? WP_AT_FDCWD                               \
						       : (__s64)(int)WP_NS_REG(regs, dir2, 0),     \
				   WP_NS_REG(regs, flags, 0), (flags) >= 0,                        \
				   (__s64)(int)WP_NS_REG(regs, fd, -1));                           \
	}                                                                                          \
	SEC("fexit")                                                                               \
	int BPF_PROG(wp_ns_fexit_##name, struct pt_regs *regs, long ret)                           \
	{                                                                                          \
		return wp_ns_exit(ret);                                                            \
	}
WP_NAME_CHANGE_TABLE(WP_NS_TRAMPOLINES_)
#undef WP_NS_TRAMPOLINES_

char LICENSE[] SEC("license") = "GPL";
