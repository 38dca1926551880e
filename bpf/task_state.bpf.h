/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A traced thread's state: the call it is inside (a write or sync syscall, or an io_uring op it
 * issues inline), what the page-cache, block and scheduler hooks add up for that call, and what
 * it last resolved. Kept in task-local storage, which the kernel frees with the task.
 */
#ifndef WRITEPATH_TASK_STATE_BPF_H
#define WRITEPATH_TASK_STATE_BPF_H

#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

static __always_inline __u32 wp_current_tid(void) { return (__u32)bpf_get_current_pid_tgid(); }

/* What a sleep inside a traced call is for (wp_task_state's pending_cause, offcpu_cause); the
 * off-CPU record carries it, and the agent's decoder reads these values. */
enum wp_offcpu_cause {
	WP_OFFCPU_BLOCKED = 0,
	WP_OFFCPU_THROTTLE = 1,
	WP_OFFCPU_WRITEBACK_WAIT = 2,
	WP_OFFCPU_RUNNABLE = 3,
};

/* A traced thread inside a write or sync syscall: the state its hooks accumulate. */
/* A read's page cache (pagecache.bpf.c): the pages it added to its file's, those past its last
 * byte, and the readaheads it ran; a read call's in its thread's state, an io_uring read op's
 * folded into the op (uring_op.bpf.h). */
struct wp_read_counts {
	__u32 pages_added;
	__u32 pages_added_beyond;
	__u32 sync_ra_pages;
	__u32 async_ra_pages;
	__u16 sync_ra;
	__u16 async_ra;
};

/* writepath serve: a label set this thread last added to, and its slot (bpf/metrics.bpf.h). */
struct wp_metric_slot_cache {
	__u64 cgroup;
	__u64 comm[2]; /* with cfg_metrics_comm */
	__u32 what;
	__u32 dev;
	__u32 slot; /* 0: none */
	__u32 pad;
};

/* Its entries, one per kind of call (see wp_metric_slot_of in bpf/syscall.bpf.c). */
enum wp_metric_slot_entry {
	WP_METRIC_SLOT_WRITE,
	WP_METRIC_SLOT_SYNC,
	WP_METRIC_SLOT_READ,
	WP_METRIC_SLOT_READ_FILLED,
	WP_METRIC_SLOT_ENTRIES,
};

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
	/* fexit/vfs_write: where the write left the position (a loff_t *), read only when the
	 * call's record is sent (serve sends few): the record's pos is that less the bytes
	 * written. 0: pos is what it says. */
	__u64 pos_end_at;
	__u64 count;
	__u64 aio_iocbs;  /* io_submit: the user's iocbpp array */
	__u32 aio_nr;	  /* io_submit: how many iocbs it holds */
	__u16 call_flags; /* enum wp_call_flags */
	__u8 sync_waiting; /* counted in syncs_waiting (bpf/sync_waiters.bpf.h) */
	__u8 pad2;
	__u32 pages_dirtied;
	__u32 dirty_folios;
	__u64 throttle_ns;
	__u32 throttle_events;
	__u32 writeback_waits;
	struct wp_read_counts reads;
	__u32 read_pad;
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
	/* cached_file cannot hold ext4 inline data: not ext4, or its inode without the flag (a
	 * file that outgrew its inode never goes back), so its writes skip the check. */
	bool cached_no_inline;
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
	/* The thread's last page fault, with --reads (fault.bpf.h): opened at its entry, named a
	 * file's by the first filemap hook whose page its address maps, and sent as a record when
	 * the next fault begins or the thread exits. fault_start 0: none open. */
	__u64 fault_start;
	__u64 fault_last;
	__u64 fault_addr;
	__u64 fault_file;    /* struct file * of its mapping; 0: not (yet) a file's fault */
	__u64 fault_mapping; /* struct address_space * */
	__u64 fault_ino;
	__u64 fault_index;
	__u32 fault_dev;
	__u32 fault_pages_added;
	__u32 fault_mapped;
	__u16 fault_calls;
	__u16 fault_flags; /* enum wp_fault_flags */
	struct wp_metric_slot_cache metric_slots[WP_METRIC_SLOT_ENTRIES];
};

/* Task-local storage (v5.11+) rather than a tid-keyed hash: no insert and delete per
 * syscall, and no capacity to run out of; the kernel frees it with the task. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct wp_task_state);
} task_state SEC(".maps") __weak;

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

#endif /* WRITEPATH_TASK_STATE_BPF_H */
