/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Maps and configuration shared by the per-layer programs. Each layer's object includes
 * this header; the definitions are weak so `bpftool gen object` links them into one map each.
 */
#ifndef WRITEPATH_MAPS_BPF_H
#define WRITEPATH_MAPS_BPF_H

#include <bpf/bpf_helpers.h>

#include "compat.bpf.h"
#include "writepath.h"

/* Set by the agent before load (rodata). */
const volatile __u32 cfg_self_tgid __weak = 0;	    /* never trace the agent's own writes */
const volatile bool cfg_filter_tgid __weak = false; /* only tgids in traced_tgids */
const volatile bool cfg_follow_children __weak = false;
const volatile bool cfg_filter_comm __weak = false;
/* --comm X --children: a thread named X, or one of a process in traced_tgids (forked by X or
 * its descendants), is traced; otherwise the comm and tgid filters both apply. */
const volatile bool cfg_comm_roots __weak = false;
const volatile char cfg_comm[WP_COMM_LEN] __weak = {};
/* --cgroup, --container, --pod, --namespace: only threads in one of the cgroups at
 * cgroup_filter[0 .. cfg_filter_cgroups - 1] or below it (wp_current_task_under); 0: any. */
const volatile __u32 cfg_filter_cgroups __weak = 0;
const volatile __u32 cfg_disk __weak = 0; /* 0: any disk */
/* With cfg_disk: the superblock devices of the file systems on that disk whose superblock is
 * not the disk (btrfs: an anonymous device), so their files pass the disk filter. */
#define WP_MAX_DISK_FS_DEVS 4
const volatile __u32 cfg_disk_fs_devs[WP_MAX_DISK_FS_DEVS] __weak = {};
const volatile __u32 cfg_file_dev __weak = 0; /* with cfg_file_ino: one file only */
const volatile __u64 cfg_file_ino __weak = 0;
const volatile __u64 cfg_causes_min_ns __weak = 0; /* emit causes for calls at least this slow */
/* With --min-latency, a call faster than this is dropped at its exit: it costs no record, no
 * ring-buffer space and no agent work. */
const volatile __u64 cfg_min_latency_ns __weak = 0;
/* With cfg_causes_min_ns: also the kernel stacks slow calls slept with, their wakers and the
 * call-wide waits (bpf/sched.bpf.c), one wp_offcpu_record per slow call (off: --no-stacks). */
const volatile bool cfg_offcpu_stacks __weak = false;
/* blk-throttle's throtl_pending_timer_fn (from /proc/kallsyms): a timer armed with it by a
 * traced thread means its bios were held back over a cgroup I/O limit. 0: not traced. */
const volatile __u64 cfg_throtl_timer_fn __weak = 0;

/* writepath serve (bpf/metrics.bpf.c): the kernel aggregates what it can into the metrics
 * map, and a plain write syscall is emitted only when it is at least cfg_metrics_slow_ns slow
 * (0: never for that reason) or is one of the 1 in cfg_metrics_sample kept for the agent's
 * time-to-durable histogram (0: none). Syncs, io_uring and AIO calls are still emitted. */
const volatile bool cfg_metrics __weak = false;
const volatile __u32 cfg_metrics_sample __weak = 0;
const volatile __u64 cfg_metrics_slow_ns __weak = 0;
const volatile bool cfg_metrics_comm __weak = false; /* key write and sync entries by comm */

static __always_inline __u32 wp_current_tid(void) { return (__u32)bpf_get_current_pid_tgid(); }

enum wp_offcpu_cause {
	WP_OFFCPU_BLOCKED = 0,
	WP_OFFCPU_THROTTLE = 1,
	WP_OFFCPU_WRITEBACK_WAIT = 2,
	WP_OFFCPU_RUNNABLE = 3,
};

/* The agent sizes it before load (--buffer-size); this is the size when it does not. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 32 << 20);
} events SEC(".maps") __weak;

/* Records the ring buffer had no room for, per hook (enum wp_hook). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WP_HOOK_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps") __weak;

/* The processes the tgid filter lets through; the value is WP_TGID_* flags. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WP_MAX_TGIDS);
	__type(key, __u32);
	__type(value, __u8);
} traced_tgids SEC(".maps") __weak;

/* The tgid filter's hot path, one byte per tgid, eight to an element of an array the verifier
 * inlines: a bystander's syscall costs a load and a test rather than a hash lookup. The agent
 * sizes it to pid_max before load and maps it (BPF_F_MMAPABLE) to set its own tgids; a byte
 * store races with no neighbour's. traced_tgids keeps each process's flags beside it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 4194304 / 8); /* PID_MAX_LIMIT on 64-bit */
	__type(key, __u32);
	__type(value, __u64);
} traced_tgid_bytes SEC(".maps") __weak;

static __always_inline bool wp_tgid_traced(__u32 tgid)
{
	__u32 word = tgid / 8;
	__u8 *bytes = bpf_map_lookup_elem(&traced_tgid_bytes, &word);

	return bytes && bytes[tgid % 8];
}

static __always_inline void wp_mark_tgid(__u32 tgid, __u8 traced)
{
	__u32 word = tgid / 8;
	__u8 *bytes = bpf_map_lookup_elem(&traced_tgid_bytes, &word);

	if (bytes)
		bytes[tgid % 8] = traced;
}

/* A traced thread inside a write or sync syscall: the state its hooks accumulate. */
struct wp_task_state {
	__u32 active; /* inside a traced syscall; the storage itself lives as long as the task */
	__u32 pad;
	__u64 start_ns;
	__u64 file; /* struct file *, to read f_pos again at exit */
	__u32 syscall;
	__s32 fd;
	__u32 dev;
	__u32 file_flags;
	__u64 ino;
	__u64 pos;
	__u64 count;
	__u64 aio_iocbs;  /* io_submit: the user's iocbpp array */
	__u32 aio_nr;	  /* io_submit: how many iocbs it holds */
	__u16 call_flags; /* enum wp_call_flags */
	__u16 pad2;
	__u32 pages_dirtied;
	__u32 dirty_folios;
	__u64 throttle_ns;
	__u32 throttle_events;
	__u32 writeback_waits;
	/* The last file this thread's syscalls resolved (see wp_resolve_file). */
	__u64 cached_file;
	__u64 cached_inode;
	__u64 cached_inode_ino; /* cached_inode's i_ino then: the slab recycles inodes too */
	__u64 cached_ino;
	__u32 cached_dev;
	__u32 cached_kind;   /* WP_FILE_REGULAR or WP_FILE_BLOCKDEV, 0 for anything else */
	__u32 cached_fs_dev; /* its superblock's dev_t when that is not cached_dev, else 0 */
	__u32 fs_dev;
	bool cached_traced;
	__u8 writeback_why; /* enum wp_why while a flusher thread runs writeback work, else 0 */
	__u8 pos_exact;	    /* pos is the exact first byte written (set by fexit) */
	/* Off-CPU accounting inside the call (bpf/sched.bpf.c). */
	__u8 pending_cause; /* what the next sleep is for: enum wp_offcpu_cause */
	__u8 offcpu_cause;  /* what the current sleep is for */
	__u64 offcpu_since; /* switched out at, 0 while on CPU */
	__u64 throttle_sleep_ns;
	__u64 writeback_wait_ns;
	__u64 blocked_ns;
	__u64 runnable_ns;
	/* The io_uring request (struct io_kiocb *) this thread is issuing inline, 0 inside a
	 * syscall: what the page-cache hooks add up here is folded into its uring_ops entry. */
	__u64 uring_req;
	/* The cgroup id of the last wp_cgroup_record emitted for this thread (wp_note_cgroup). */
	__u64 cgroup_noted;
	/* The file whose path this thread last saw out (emitted or known): the struct file, its
	 * (dev, ino), and its name then (d_name's hash_len mixed with dev, and the parent
	 * dentry), all of which must match: a recycled struct file of a new file of the same
	 * name (a log made again, a .tmp renamed away and written anew) is another inode.
	 * wp_emit_call_path. */
	__u64 path_file;
	__u64 path_ino;
	__u64 path_name;
	__u64 path_parent;
	/* The name of the call's file as its entry read it (wp_file_name_of), and that file;
	 * name_file is 0 when the entry did not read it (the exit then does). */
	__u64 name_file;
	__u64 name;
	__u64 name_parent;
	/* A store fault on a page that was neither mapped nor in the page cache: the fault reads
	 * its folio in and dirties it, and that dirtying says which folio the fault maps
	 * (pagecache.bpf.c, wp_store_fault). 0: none pending. */
	__u64 store_mapping;   /* struct address_space * */
	__u64 store_file;      /* struct file * */
	__u64 store_index;     /* the faulting page */
	__u64 store_vma_first; /* the first file page and the pages of the faulting VMA */
	__u64 store_vma_pages;
	__u64 store_pte; /* the faulting address's index in its page table */
};

/* Task-local storage (v5.11+) rather than a tid-keyed hash: no insert and delete per
 * syscall, and no capacity to run out of; the kernel frees it with the task. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct wp_task_state);
} task_state SEC(".maps") __weak;

/* The filter's cgroups, set by the agent after load: their directories' fds from index 0. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, WP_MAX_FILTER_CGROUPS);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps") __weak;

/* The current thread's name into `comm` (WP_COMM_LEN bytes): two loads from task->comm, which
 * the kernel keeps NUL-padded (__set_task_comm's strscpy_pad), where bpf_get_current_comm()
 * costs a helper call and a string copy on every record. */
static __always_inline void wp_current_comm(char *comm)
{
	struct task_struct *task = bpf_get_current_task_btf();

	__builtin_memcpy(comm, task->comm, WP_COMM_LEN);
}

/* Whether `task` (current) has the name of --comm. */
static __always_inline bool wp_comm_matches_of(struct task_struct *task)
{
	__u64 comm[WP_COMM_LEN / 8] = {};

	/* io_uring's io-wq workers and SQPOLL thread (iou-wrk-PID, iou-sqp-PID) are threads of
	 * the ring's owner: they answer to the process's name, its leader's. */
	if (task->flags & WP_PF_IO_WORKER)
		BPF_CORE_READ_STR_INTO(&comm, task, group_leader, comm);
	else
		__builtin_memcpy(comm, task->comm, WP_COMM_LEN);
	/* cfg_comm is NUL-padded as the kernel pads comm: the name matches word for word. */
	return comm[0] == ((const volatile __u64 *)cfg_comm)[0] &&
	       comm[1] == ((const volatile __u64 *)cfg_comm)[1];
}

static __always_inline bool wp_comm_matches(void)
{
	return wp_comm_matches_of(bpf_get_current_task_btf());
}

/* Whether `task`, the current thread, passes the filters (-p, --comm, --children, --cgroup).
 * Callers that go on to use the task pass it: every helper call costs a call and a return
 * thunk on the kernels with return-stack mitigations, and its fields are plain loads. */
/* Whether the current thread is in one of the filter's cgroups or below one: one helper call
 * for --cgroup, --container and --pod, one per pod for --namespace. Not unrolled: the count is
 * known at load (rodata), so the verifier walks only that many rounds, and the exit programs
 * near 6.1's instruction budget get one copy of the body. */
static __always_inline bool wp_current_task_in_filter_cgroups(void)
{
#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < WP_MAX_FILTER_CGROUPS; i++) {
		if (i >= cfg_filter_cgroups)
			break;
		if (wp_current_task_under(&cgroup_filter, i))
			return true;
	}
	return false;
}

static __always_inline bool wp_task_traced_of(struct task_struct *task)
{
	__u32 tgid = task->tgid;

	if (tgid == cfg_self_tgid)
		return false;
	if (cfg_comm_roots) {
		if (!wp_tgid_traced(tgid) && !wp_comm_matches_of(task))
			return false;
	} else {
		if (cfg_filter_tgid && !wp_tgid_traced(tgid))
			return false;
		if (cfg_filter_comm && !wp_comm_matches_of(task))
			return false;
	}
	if (cfg_filter_cgroups && !wp_current_task_in_filter_cgroups())
		return false;
	return true;
}

static __always_inline bool wp_task_traced(void)
{
	return wp_task_traced_of(bpf_get_current_task_btf());
}

/* Whether the trace follows only some threads' or one file's writes (-p, --comm, --cgroup,
 * --file): the hooks that do not run in a traced call (a dirty page's discard, writeback's bios
 * and requests) then keep only what concerns the files traced calls touched, so that a trace of
 * an idle process costs nothing however busy the machine is. */
static __always_inline bool wp_filters_files(void)
{
	return cfg_filter_tgid || cfg_filter_comm || cfg_comm_roots || cfg_filter_cgroups ||
	       cfg_file_ino;
}

/* The files traced calls resolved (their page-cache host's dev and ino), kept only while
 * wp_filters_files(): a discarded dirty page or a writeback bio of any other regular file
 * belongs to no item. Noted once per file a thread resolves (wp_resolve_file caches it), so a
 * loop over one fd costs one update. LRU: past 64 Ki files the least recently noted goes,
 * and its later pages are filtered like an untraced file's. */
struct wp_file_key {
	__u64 ino;
	__u32 dev;
	__u32 pad;
};

#define WP_MAX_TRACED_FILES 65536
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, WP_MAX_TRACED_FILES);
	__type(key, struct wp_file_key);
	__type(value, __u8);
} traced_files SEC(".maps") __weak;

/* The devices traced files live on (their file system's and its disk's), or that a bio kept
 * for them went to (the disk under a stacked device): the journal commits, metadata and
 * flushes of any other device concern no item. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u8);
} traced_disks SEC(".maps") __weak;

static __always_inline void wp_note_traced_disk(__u32 disk)
{
	__u8 one = 1;

	if (disk && !bpf_map_lookup_elem(&traced_disks, &disk))
		bpf_map_update_elem(&traced_disks, &disk, &one, BPF_NOEXIST);
}

static __always_inline bool wp_disk_may_be_traced(__u32 disk)
{
	return !wp_filters_files() || bpf_map_lookup_elem(&traced_disks, &disk);
}

/* `host`: the file's page-cache inode (its dev and ino are dev and ino). */
static __always_inline void wp_note_traced_file(struct inode *host, __u32 dev, __u64 ino)
{
	struct wp_file_key key = {.ino = ino, .dev = dev};
	__u8 one = 1;

	if (!wp_filters_files())
		return;
	bpf_map_update_elem(&traced_files, &key, &one, BPF_ANY);
	wp_note_traced_disk(wp_inode_fs_dev(host));
	wp_note_traced_disk(wp_inode_disk(host));
}

/* Whether a page of file (dev, ino) may belong to an item: always, unless the trace follows
 * only some files and no traced call resolved this one. */
static __always_inline bool wp_file_may_be_traced(__u32 dev, __u64 ino)
{
	struct wp_file_key key = {.ino = ino, .dev = dev};

	return !wp_filters_files() || bpf_map_lookup_elem(&traced_files, &key);
}

/* An io_uring op of a traced process from its submission to its completion, keyed by its
 * request pointer. What it dirtied inline is folded in from the submitter's task state
 * (wp_uring_fold); what an io-wq worker does for it is added here directly. */
struct wp_uring_op {
	__u64 start_ns;
	__u64 pos; /* kiocb position at submission, -1: the file position */
	__u64 count;
	__u64 throttle_ns;
	__u32 pages_dirtied;
	__u32 dirty_folios;
	__u32 throttle_events;
	__u32 writeback_waits;
	__u32 pid; /* the ring owner's tgid: the CQE may be posted from another context */
	__u32 submit_tid;
	__u32 issue_tid; /* the io-wq worker that queued its bios, 0: the submitter */
	__s32 fd;
	__u8 syscall; /* WP_SYS_IO_URING_* */
	__u8 via;     /* enum wp_via */
	__u16 pad;
	__u32 pad2;
	char comm[WP_COMM_LEN]; /* the owner's name (the group leader's) */
};

/* Bounded by the ops in flight (a ring's depth per traced process); an op that finds no room
 * is counted (WP_HOOK_URING) and not traced. A request that posts no CQE (CQE_SKIP_SUCCESS)
 * leaves its entry until the pointer is submitted again. */
#define WP_MAX_URING_OPS 16384
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WP_MAX_URING_OPS);
	__type(key, __u64);
	__type(value, struct wp_uring_op);
} uring_ops SEC(".maps") __weak;

/* Ends the inline issue of the io_uring op the thread's state holds: what it accumulated goes
 * to the op's entry, and the state is no longer active. */
static __always_inline void wp_uring_fold(struct wp_task_state *st)
{
	struct wp_uring_op *op;

	if (!st->active || !st->uring_req)
		return;
	op = bpf_map_lookup_elem(&uring_ops, &st->uring_req);
	if (op) {
		op->pages_dirtied += st->pages_dirtied;
		op->dirty_folios += st->dirty_folios;
		op->throttle_ns += st->throttle_ns;
		op->throttle_events += st->throttle_events;
		op->writeback_waits += st->writeback_waits;
	}
	st->uring_req = 0;
	st->active = 0;
}

/* The traced io_uring op the current io-wq worker is running, or NULL. */
static __always_inline struct wp_uring_op *wp_iowq_op(void)
{
	__u64 req = wp_iowq_current_req();

	return req ? bpf_map_lookup_elem(&uring_ops, &req) : NULL;
}

/* The io_uring op the current thread is issuing (inline, inside io_uring_enter, or as the
 * io-wq worker running it), as the tag its bios carry: WP_URING_TAG of its start_ns, else 0. */
static __always_inline __u32 wp_current_uring_tag(void)
{
	struct wp_task_state *st =
	    bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), 0, 0);
	struct wp_uring_op *op = NULL;

	if (st && st->active && st->uring_req)
		op = bpf_map_lookup_elem(&uring_ops, &st->uring_req);
	if (!op)
		op = wp_iowq_op();
	return op ? WP_URING_TAG(op->start_ns) : 0;
}

/* Why the current thread is writing, for the bios it submits. */
static __always_inline __u8 wp_current_why(void)
{
	struct wp_task_state *st =
	    bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), 0, 0);

	struct wp_uring_op *op;

	if (st && st->active)
		return wp_syscall_is_write(st->syscall) ? WP_WHY_WRITE_SYSCALL
							: WP_WHY_SYNC_SYSCALL;
	/* An io-wq worker running a traced op queues its bios for that op (and the op's
	 * owner is then that worker: the stitcher matches bios by thread). */
	op = wp_iowq_op();
	if (op) {
		op->issue_tid = wp_current_tid();
		return wp_syscall_is_write(op->syscall) ? WP_WHY_WRITE_SYSCALL
							: WP_WHY_SYNC_SYSCALL;
	}
	return st ? st->writeback_why : WP_WHY_UNKNOWN;
}

/* Whether a hook ever kept state for `task`: a task without any BPF task storage (nearly every
 * bystander: state is made only for traced calls of files) costs one load to tell so, where a
 * storage lookup costs a helper call and its recursion guard. */
static __always_inline bool wp_task_has_storage(struct task_struct *task)
{
	return !bpf_core_field_exists(task->bpf_storage) || task->bpf_storage;
}

/* `task`'s state (the current thread's), if it is inside a traced syscall. */
static __always_inline struct wp_task_state *wp_active_state_of(struct task_struct *task)
{
	struct wp_task_state *st;

	if (!wp_task_has_storage(task))
		return NULL;
	st = bpf_task_storage_get(&task_state, task, 0, 0);
	return st && st->active ? st : NULL;
}

/* The current thread's state, if it is inside a traced syscall. */
static __always_inline struct wp_task_state *wp_active_state(void)
{
	return wp_active_state_of(bpf_get_current_task_btf());
}

static __always_inline void wp_count_lost(__u32 hook)
{
	__u64 *n = bpf_map_lookup_elem(&lost, &hook);

	if (n)
		*n += 1;
}

/* Reserves a record and fills its header, stamped `ts_ns`; counts a loss when the ring buffer
 * is full. */
static __always_inline void *wp_reserve_at(__u32 size, __u16 type, __u32 hook, __u64 ts_ns)
{
	struct wp_record_header *h = bpf_ringbuf_reserve(&events, size, 0);

	if (!h) {
		wp_count_lost(hook);
		return NULL;
	}
	h->type = type;
	h->size = size;
	h->version = WP_RECORD_VERSION;
	h->cpu = bpf_get_smp_processor_id();
	h->ts_ns = ts_ns;
	return h;
}

/* Reserves a record stamped now; counts a loss when the ring buffer is full. */
static __always_inline void *wp_reserve(__u32 size, __u16 type, __u32 hook)
{
	return wp_reserve_at(size, type, hook, bpf_ktime_get_ns());
}

/* Waking the agent for every record costs the traced thread an IPI and a context switch;
 * the agent drains the ring buffer while it has data and polls on a short timer when it is
 * empty, and is woken early each time cfg_wakeup_bytes more are waiting (the agent sets it to
 * a fraction of the ring buffer's size: early enough that a sleeping agent wakes long before
 * the buffer is full). */
const volatile __u32 cfg_wakeup_bytes __weak = 4u << 20;

static __always_inline __u64 wp_wakeup_flag(__u32 size)
{
	__u64 pending = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	__u32 step = cfg_wakeup_bytes ? cfg_wakeup_bytes : 1;

	/* Wake once per step crossed, not on every record past the mark. */
	return pending >= step && pending % step < size ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline void wp_submit(void *record, __u32 size)
{
	bpf_ringbuf_submit(record, wp_wakeup_flag(size));
}

/* Tells the agent the cgroup of `task`, the current thread, before a record an item is made of,
 * when it is not the one last told for this thread: one compare per call in the common case. A
 * record the ring buffer has no room for is tried again with the thread's next record. The id
 * is read as bpf_get_current_cgroup_id() reads it (task->cgroups->dfl_cgrp->kn->id), without
 * the call. */
static __always_inline void wp_note_task_cgroup(__u64 *noted, struct task_struct *task)
{
	__u64 id = task->cgroups->dfl_cgrp->kn->id;
	struct wp_cgroup_record *r;

	if (*noted == id)
		return;
	r = wp_reserve(sizeof(*r), WP_REC_CGROUP, WP_HOOK_CGROUP);
	if (!r)
		return;
	r->cgroup_id = id;
	r->pid = task->tgid;
	r->tid = task->pid;
	wp_submit(r, sizeof(*r));
	*noted = id;
}

static __always_inline void wp_note_cgroup_of(struct wp_task_state *st, struct task_struct *task)
{
	wp_note_task_cgroup(&st->cgroup_noted, task);
}

static __always_inline void wp_note_cgroup(struct wp_task_state *st)
{
	wp_note_cgroup_of(st, bpf_get_current_task_btf());
}

/* Whether a device-keyed event (a journal commit, a log force) passes the --dev filter: the
 * device is that disk, or a file system's superblock device the agent found on it (dm-0 over
 * the disk: its jbd2 journal is keyed by dm-0). */
static __always_inline bool wp_dev_on_filtered_disk(__u32 dev)
{
	if (!cfg_disk || dev == cfg_disk)
		return true;
	for (int i = 0; i < WP_MAX_DISK_FS_DEVS; i++)
		if (cfg_disk_fs_devs[i] && cfg_disk_fs_devs[i] == dev)
			return true;
	return false;
}

/* Whether a file passes the --dev filter (cfg_disk): its superblock is on that disk, or it is
 * a file system the agent found on that disk whose superblock has no block device (btrfs:
 * s_bdev is NULL, the devices are the file system's own list), or it is the device itself. */
static __always_inline bool wp_inode_on_filtered_disk(struct inode *inode, __u32 dev)
{
	__u32 fs_dev;

	if (!cfg_disk || dev == cfg_disk || wp_inode_disk(inode) == cfg_disk)
		return true;
	fs_dev = wp_inode_fs_dev(inode);
	/* The loop of wp_dev_on_filtered_disk(), kept here: calling it changes the generated
	 * code of the syscall exit programs, which are near 6.1's verifier limit of 1M insns. */
	for (int i = 0; i < WP_MAX_DISK_FS_DEVS; i++)
		if (cfg_disk_fs_devs[i] && cfg_disk_fs_devs[i] == fs_dev)
			return true;
	return false;
}

/* Emits the path record of a file (a struct file *, as a scalar: a global function takes no
 * kernel pointer) for (dev, ino) the first time the trace meets it (bpf/filepath.bpf.c). Call
 * it just before the record that names the file, so the agent knows the name by then. */
extern int wp_emit_file_path(__u64 file, __u32 dev, __u64 ino);
/* The same for a dentry on a mount (struct dentry *, struct vfsmount *: a directory named by a
 * dirfd or the working directory). */
extern int wp_emit_path(__u64 dentry, __u64 mnt, __u32 dev, __u64 ino);
/* After the record of a buffered write that dirtied no page (a struct file *, as a scalar):
 * the inline record of an ext4 file whose data lives in its inode (bpf/inline.bpf.c). */
extern int wp_emit_ext4_inline(__u64 file, __u32 dev, __u64 ino, __u64 pos, __s64 bytes);

/* Emits the current thread's wp_offcpu_record for the call that started at start_ns
 * (bpf/sched.bpf.c); a global function, verified once rather than inlined into every exit. */
extern int wp_emit_offcpu(__u64 start_ns);

/* For wp_metric_add's `what`: the entry is keyed by the current thread's cgroup (and comm). */
#define WP_METRIC_OF_TASK (1u << 16)
#define WP_METRIC_WHAT(metric, sub) ((__u32)(metric) | ((__u32)(sub) << 8))

/* Adds one observation to the metrics map entry of `what` (WP_METRIC_WHAT, | WP_METRIC_OF_TASK)
 * and dev (bpf/metrics.bpf.c); a global function, verified once. `dirtied_pages` counts only
 * for O_DIRECT writes (WP_METRIC_WRITE, sub 1). */
extern int wp_metric_add(__u32 what, __u32 dev, __u64 ns, __u64 bytes, __u64 dirtied_pages);

#endif /* WRITEPATH_MAPS_BPF_H */
