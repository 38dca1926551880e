// SPDX-License-Identifier: GPL-2.0
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
#include "maps.bpf.h"

static __always_inline bool wp_comm_matches(void)
{
	char comm[WP_COMM_LEN];

	bpf_get_current_comm(comm, sizeof(comm));
	for (int i = 0; i < WP_COMM_LEN; i++) {
		if (comm[i] != cfg_comm[i])
			return false;
		if (!comm[i])
			break;
	}
	return true;
}

static __always_inline bool wp_task_traced(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (tgid == cfg_self_tgid)
		return false;
	if (cfg_filter_tgid && !bpf_map_lookup_elem(&traced_tgids, &tgid))
		return false;
	if (cfg_filter_comm && !wp_comm_matches())
		return false;
	if (cfg_cgroup_id && bpf_get_current_cgroup_id() != cfg_cgroup_id)
		return false;
	return true;
}

/* Opens the thread's state for a syscall on `fd` (fd < 0: no file, e.g. sync(2)). */
static __always_inline int wp_enter(__u32 syscall, int fd, __u64 pos, __u64 count)
{
	struct wp_task_state st = {};
	__u32 tid = wp_current_tid();

	if (!wp_task_traced())
		return 0;

	st.syscall = syscall;
	st.fd = fd;
	st.pos = pos;
	st.count = count;
	st.start_ns = bpf_ktime_get_ns();
	if (fd >= 0) {
		struct file *file = wp_task_file(fd);
		struct inode *host;
		__u32 mode, f_flags;

		if (!file)
			return 0;
		/* The page cache belongs to f_mapping->host: the file's own inode for regular
		 * files, the bdev inode for a block device node. */
		host = BPF_CORE_READ(file, f_mapping, host);
		mode = BPF_CORE_READ(file, f_inode, i_mode) & WP_S_IFMT;
		if (mode == WP_S_IFREG)
			st.file_flags |= WP_FILE_REGULAR;
		else if (mode == WP_S_IFBLK)
			st.file_flags |= WP_FILE_BLOCKDEV;
		else if (syscall < WP_SYS_FSYNC)
			return 0; /* pipes, sockets, terminals: not the write path */
		st.file = (__u64)file;
		st.dev = wp_inode_dev(host);
		st.ino = BPF_CORE_READ(host, i_ino);
		if (cfg_file_ino && (st.ino != cfg_file_ino || st.dev != cfg_file_dev))
			return 0;
		if (cfg_disk && wp_inode_disk(host) != cfg_disk && st.dev != cfg_disk)
			return 0;
		f_flags = BPF_CORE_READ(file, f_flags);
		if (f_flags & WP_O_DIRECT)
			st.file_flags |= WP_FILE_DIRECT;
		if (f_flags & WP_O_DSYNC)
			st.file_flags |= WP_FILE_DSYNC;
		if ((f_flags & WP_O___SYNC) == WP_O___SYNC)
			st.file_flags |= WP_FILE_SYNC;
		if (f_flags & WP_O_APPEND)
			st.file_flags |= WP_FILE_APPEND;
	}
	if (bpf_map_update_elem(&task_state, &tid, &st, BPF_ANY))
		wp_count_lost(WP_HOOK_STATE);
	return 0;
}

static __always_inline int wp_exit(long ret)
{
	__u32 tid = wp_current_tid();
	struct wp_task_state *st = bpf_map_lookup_elem(&task_state, &tid);
	struct wp_syscall_record *r;

	if (!st)
		return 0;
	r = wp_reserve(sizeof(*r), WP_REC_SYSCALL, WP_HOOK_SYSCALL);
	if (!r)
		goto out;
	r->start_ns = st->start_ns;
	r->pid = bpf_get_current_pid_tgid() >> 32;
	r->tid = tid;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	r->cgroup_id = bpf_get_current_cgroup_id();
	r->syscall = st->syscall;
	r->fd = st->fd;
	r->dev = st->dev;
	r->file_flags = st->file_flags;
	r->ino = st->ino;
	r->ret = ret;
	r->count = st->count;
	r->pos = st->pos;
	/* write(2)/writev(2) (and pwritev2 with offset -1) write at f_pos, which for O_APPEND
	 * is only known once the write holds the inode lock: derive it from f_pos after. */
	if (st->pos == (__u64)-1 && st->file) {
		struct file *file = (struct file *)st->file;
		__s64 end = BPF_CORE_READ(file, f_pos);

		r->pos = ret > 0 && end >= ret ? end - ret : end;
	}
	r->pages_dirtied = st->pages_dirtied;
	r->dirty_folios = st->dirty_folios;
	r->dirty_index_min = st->dirty_index_min;
	r->dirty_index_max = st->dirty_index_max;
	r->throttle_ns = st->throttle_ns;
	r->throttle_events = st->throttle_events;
	r->writeback_waits = st->writeback_waits;
	wp_submit(r);
out:
	bpf_map_delete_elem(&task_state, &tid);
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

SEC("tracepoint/syscalls/sys_enter_write")
int wp_enter_write(struct trace_event_raw_sys_enter *ctx)
{
	return wp_enter(WP_SYS_WRITE, (int)ctx->args[0], WP_AT_F_POS, ctx->args[2]);
}

SEC("tracepoint/syscalls/sys_enter_pwrite64")
int wp_enter_pwrite64(struct trace_event_raw_sys_enter *ctx)
{
	return wp_enter(WP_SYS_PWRITE64, (int)ctx->args[0], ctx->args[3], ctx->args[2]);
}

SEC("tracepoint/syscalls/sys_enter_writev")
int wp_enter_writev(struct trace_event_raw_sys_enter *ctx)
{
	return wp_enter(WP_SYS_WRITEV, (int)ctx->args[0], WP_AT_F_POS,
			wp_iov_bytes((const struct iovec *)ctx->args[1], ctx->args[2]));
}

SEC("tracepoint/syscalls/sys_enter_pwritev")
int wp_enter_pwritev(struct trace_event_raw_sys_enter *ctx)
{
	/* pos_l, pos_h: on 64-bit the whole offset is in pos_l. */
	return wp_enter(WP_SYS_PWRITEV, (int)ctx->args[0], ctx->args[3],
			wp_iov_bytes((const struct iovec *)ctx->args[1], ctx->args[2]));
}

SEC("tracepoint/syscalls/sys_enter_pwritev2")
int wp_enter_pwritev2(struct trace_event_raw_sys_enter *ctx)
{
	return wp_enter(WP_SYS_PWRITEV2, (int)ctx->args[0], ctx->args[3],
			wp_iov_bytes((const struct iovec *)ctx->args[1], ctx->args[2]));
}

SEC("tracepoint/syscalls/sys_enter_fsync")
int wp_enter_fsync(struct trace_event_raw_sys_enter *ctx)
{
	return wp_enter(WP_SYS_FSYNC, (int)ctx->args[0], 0, 0);
}

SEC("tracepoint/syscalls/sys_enter_fdatasync")
int wp_enter_fdatasync(struct trace_event_raw_sys_enter *ctx)
{
	return wp_enter(WP_SYS_FDATASYNC, (int)ctx->args[0], 0, 0);
}

SEC("tracepoint/syscalls/sys_enter_sync_file_range")
int wp_enter_sync_file_range(struct trace_event_raw_sys_enter *ctx)
{
	return wp_enter(WP_SYS_SYNC_FILE_RANGE, (int)ctx->args[0], ctx->args[1], ctx->args[2]);
}

SEC("tracepoint/syscalls/sys_enter_syncfs")
int wp_enter_syncfs(struct trace_event_raw_sys_enter *ctx)
{
	return wp_enter(WP_SYS_SYNCFS, (int)ctx->args[0], 0, 0);
}

SEC("tracepoint/syscalls/sys_enter_sync")
int wp_enter_sync(struct trace_event_raw_sys_enter *ctx)
{
	return wp_enter(WP_SYS_SYNC, -1, 0, 0);
}

/* One exit handler serves every traced syscall: the state says which call it was. */
#define WP_EXIT(name)                                            \
	SEC("tracepoint/syscalls/sys_exit_" #name)               \
	int wp_exit_##name(struct trace_event_raw_sys_exit *ctx) \
	{                                                        \
		return wp_exit(ctx->ret);                        \
	}

WP_EXIT(write)
WP_EXIT(pwrite64)
WP_EXIT(writev)
WP_EXIT(pwritev)
WP_EXIT(pwritev2)
WP_EXIT(fsync)
WP_EXIT(fdatasync)
WP_EXIT(sync_file_range)
WP_EXIT(syncfs)
WP_EXIT(sync)

/* `-- CMD` and -p follow children: a process forked by a traced one is traced too. A new
 * thread shares its parent's tgid, so adding child->tgid is then a no-op. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(wp_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_tgid = BPF_CORE_READ(parent, tgid);
	__u32 child_tgid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	if (!cfg_follow_children || !bpf_map_lookup_elem(&traced_tgids, &parent_tgid))
		return 0;
	bpf_map_update_elem(&traced_tgids, &child_tgid, &one, BPF_ANY);
	return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int wp_process_exit(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;

	bpf_map_delete_elem(&task_state, &tid);
	/* The thread group leader leaving ends the process's entry (the agent removes the
	 * tgids it added itself when they exit). */
	if (cfg_follow_children && tid == (id >> 32))
		bpf_map_delete_elem(&traced_tgids, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
