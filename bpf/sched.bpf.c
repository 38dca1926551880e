// SPDX-License-Identifier: GPL-2.0-only
/*
 * Layer 6: time off CPU inside a traced syscall, for the causes of slow writes and fsyncs.
 * A switch-out of a thread inside a traced call starts an off-CPU span; the switch back in
 * ends it and adds it to the cause it was for: a dirty-throttling sleep or a wait on a page
 * under writeback (flagged by the page-cache hooks just before they sleep), any other sleep,
 * or preemption (runnable, waiting for a CPU). Loaded only with --min-latency: it runs on
 * every context switch.
 *
 * With stacks on (cfg_offcpu_stacks) it also keeps, per slow call, where the thread slept: the
 * kernel stack each sleep began with, folded per distinct stack into WP_OFFCPU_SLOTS slots,
 * who woke it (sched_waking), and the call-wide waits tracepoints time (contention on the
 * file's i_rwsem, direct and memcg reclaim, compaction, blk-throttle holding its bios). That
 * state lives in a task-storage map of its own, created only for threads that sleep inside a
 * traced call with stacks on, and is reset lazily: it belongs to the call whose start_ns it
 * holds.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "compat.bpf.h"
#include "config.bpf.h"
#include "emit.bpf.h"
#include "task_state.bpf.h"
#include "writepath.h"

#define WP_TASK_RUNNING 0
#define WP_PF_KTHREAD 0x00200000
/* The rwsem's owner word: the owning task pointer, its low bits flags; bit 0 set means
 * readers own it (the pointer is then only a hint). Unchanged since v5.3. */
#define WP_RWSEM_READER_OWNED 1ul
#define WP_RWSEM_OWNER_FLAGS 7ul

struct wp_offcpu_state {
	struct wp_offcpu_record rec; /* the call's slots and waits, as emitted */
	__u64 slot_hash[WP_OFFCPU_SLOTS];
	/* The current sleep: set at switch-out, folded into a slot at switch-in. */
	__u64 sleep_frames[WP_STACK_DEPTH];
	__u64 sleep_hash;
	__u32 sleep_nframes; /* 0: no stack could be read */
	__u8 asleep;
	__u8 sleep_cause;
	__u8 waker_set; /* waker_* below are this sleep's */
	__u8 waker_flags;
	__u32 waker_pid;
	__u32 waker_tid;
	char waker_comm[WP_COMM_LEN];
	__u32 waker_nframes;
	__u32 pad;
	__u64 waker_frames[WP_STACK_DEPTH];
	/* Call-wide waits in progress (0: none). */
	__u64 lock_since;
	__u64 direct_reclaim_since;
	__u64 memcg_reclaim_since;
	__u64 compaction_since;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct wp_offcpu_state);
} offcpu_state SEC(".maps");

/* Makes the state the call's that started at start_ns, starting it afresh for a new call. */
static __always_inline void wp_offcpu_sync(struct wp_offcpu_state *os, __u64 start_ns)
{
	if (os->rec.start_ns == start_ns)
		return;
	os->rec.start_ns = start_ns;
	os->rec.nslots = 0;
	os->rec.unslotted_ns = 0;
	os->rec.inode_lock_ns = 0;
	os->rec.inode_lock_waits = 0;
	os->rec.holder_pid = 0;
	os->rec.holder_tid = 0;
	os->rec.direct_reclaim_ns = 0;
	os->rec.memcg_reclaim_ns = 0;
	os->rec.compaction_ns = 0;
	os->rec.blk_throttled = 0;
	os->asleep = 0;
	os->lock_since = 0;
	os->direct_reclaim_since = 0;
	os->memcg_reclaim_since = 0;
	os->compaction_since = 0;
}

/* The off-CPU state of the current thread inside a traced call, created with stacks on. */
static __always_inline struct wp_offcpu_state *wp_current_offcpu(void)
{
	struct wp_task_state *st;
	struct wp_offcpu_state *os;

	if (!cfg_offcpu_stacks)
		return NULL;
	st = wp_active_state();
	if (!st)
		return NULL;
	os = bpf_task_storage_get(&offcpu_state, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (os)
		wp_offcpu_sync(os, st->start_ns);
	return os;
}

/* The stack the thread goes to sleep with (current is still prev at sched_switch). */
static __always_inline void wp_sleep_begins(void *ctx, struct wp_task_state *st,
					    struct task_struct *prev)
{
	struct wp_offcpu_state *os =
	    bpf_task_storage_get(&offcpu_state, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	long bytes;
	__u64 hash = 14695981039346656037ull;

	if (!os)
		return;
	wp_offcpu_sync(os, st->start_ns);
	bytes = bpf_get_stack(ctx, os->sleep_frames, sizeof(os->sleep_frames), 0);
	os->sleep_nframes = bytes > 0 ? bytes / sizeof(__u64) : 0;
	for (int i = 0; i < WP_STACK_DEPTH; i++) {
		if (i >= os->sleep_nframes)
			break;
		hash = (hash ^ os->sleep_frames[i]) * 1099511628211ull;
	}
	os->sleep_hash = hash;
	os->sleep_cause = st->offcpu_cause;
	os->waker_set = 0;
	os->asleep = 1;
}

static __always_inline void wp_copy_stack(__u64 *dst, const __u64 *src, __u32 n)
{
	for (int i = 0; i < WP_STACK_DEPTH; i++)
		dst[i] = i < n ? src[i] : 0;
}

/* Folds the sleep that just ended (span ns) into the slot of its stack, else a free one, else
 * the smallest one if this sleep outweighs it; what gets no slot adds to unslotted_ns. */
static __always_inline void wp_sleep_ends(struct task_struct *next, __u64 start_ns, __u64 span)
{
	struct wp_offcpu_state *os = bpf_task_storage_get(&offcpu_state, next, 0, 0);
	struct wp_offcpu_slot *slot;
	__u32 at = WP_OFFCPU_SLOTS, smallest = 0;

	if (!os || !os->asleep)
		return;
	os->asleep = 0;
	if (os->rec.start_ns != start_ns)
		return;
	if (!os->sleep_nframes) {
		os->rec.unslotted_ns += span;
		return;
	}
	for (__u32 i = 0; i < WP_OFFCPU_SLOTS; i++) {
		if (i >= os->rec.nslots) {
			if (at == WP_OFFCPU_SLOTS)
				at = i;
			break;
		}
		if (os->slot_hash[i] == os->sleep_hash &&
		    os->rec.slots[i].nframes == os->sleep_nframes) {
			at = i;
			break;
		}
		if (os->rec.slots[i].ns < os->rec.slots[smallest].ns)
			smallest = i;
	}
	if (at >= WP_OFFCPU_SLOTS) {
		smallest &= WP_OFFCPU_SLOTS - 1;
		if (os->rec.slots[smallest].ns >= span) {
			os->rec.unslotted_ns += span;
			return;
		}
		os->rec.unslotted_ns += os->rec.slots[smallest].ns;
		at = smallest;
		os->rec.slots[at].sleeps = 0; /* replaced below */
	}
	at &= WP_OFFCPU_SLOTS - 1;
	slot = &os->rec.slots[at];
	if (at >= os->rec.nslots || !slot->sleeps) {
		if (at >= os->rec.nslots)
			os->rec.nslots = at + 1;
		slot->ns = 0;
		slot->longest_ns = 0;
		slot->sleeps = 0;
		slot->flags = 0;
		slot->cause = os->sleep_cause;
		slot->nframes = os->sleep_nframes;
		wp_copy_stack(slot->frames, os->sleep_frames, os->sleep_nframes);
		os->slot_hash[at] = os->sleep_hash;
	}
	slot->ns += span;
	slot->sleeps += 1;
	if (span <= slot->longest_ns)
		return;
	slot->longest_ns = span;
	if (!os->waker_set) {
		slot->flags = 0;
		slot->waker_nframes = 0;
		return;
	}
	slot->flags = WP_WAKER_KNOWN | os->waker_flags;
	slot->waker_pid = os->waker_pid;
	slot->waker_tid = os->waker_tid;
	__builtin_memcpy(slot->waker_comm, os->waker_comm, WP_COMM_LEN);
	slot->waker_nframes = os->waker_nframes;
	wp_copy_stack(slot->waker_frames, os->waker_frames, os->waker_nframes);
}

static __always_inline void wp_switch(void *ctx, bool preempt, struct task_struct *prev,
				      struct task_struct *next, unsigned int prev_state)
{
	struct wp_task_state *st = bpf_task_storage_get(&task_state, prev, 0, 0);
	__u64 now = bpf_ktime_get_ns();

	if (st && st->active) {
		st->offcpu_since = now;
		st->offcpu_cause = preempt || prev_state == WP_TASK_RUNNING ? WP_OFFCPU_RUNNABLE
									    : st->pending_cause;
		if (cfg_offcpu_stacks && st->offcpu_cause != WP_OFFCPU_RUNNABLE)
			wp_sleep_begins(ctx, st, prev);
	}
	st = bpf_task_storage_get(&task_state, next, 0, 0);
	if (!st || !st->active || !st->offcpu_since)
		return;
	__u64 span = now - st->offcpu_since;

	if (cfg_offcpu_stacks && st->offcpu_cause != WP_OFFCPU_RUNNABLE)
		wp_sleep_ends(next, st->start_ns, span);

	switch (st->offcpu_cause) {
	case WP_OFFCPU_THROTTLE:
		st->throttle_sleep_ns += span;
		break;
	case WP_OFFCPU_WRITEBACK_WAIT:
		st->writeback_wait_ns += span;
		break;
	case WP_OFFCPU_RUNNABLE:
		st->runnable_ns += span;
		break;
	default:
		st->blocked_ns += span;
	}
	st->offcpu_since = 0;
	/* A flagged wait is one sleep; a preemption in between keeps the flag for it. */
	if (st->offcpu_cause != WP_OFFCPU_RUNNABLE)
		st->pending_cause = WP_OFFCPU_BLOCKED;
}

/* v5.18 (fa2c3254d7cf) added prev_state to sched_switch; before it, read the state from the
 * task (task->__state since v5.14, task->state before). */
SEC("tp_btf/sched_switch")
int BPF_PROG(wp_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	WP_TP_ARG_OR_RETURN(prev);
	WP_TP_ARG_OR_RETURN(next);
	wp_switch(ctx, preempt, prev, next, prev_state);
	return 0;
}

struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

SEC("tp_btf/sched_switch")
int BPF_PROG(wp_sched_switch_pre518, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	unsigned int state;

	WP_TP_ARG_OR_RETURN(prev);
	WP_TP_ARG_OR_RETURN(next);
	if (bpf_core_field_exists(prev->__state))
		state = BPF_CORE_READ(prev, __state);
	else
		state = BPF_CORE_READ((struct task_struct___pre514 *)prev, state);
	wp_switch(ctx, preempt, prev, next, state);
	return 0;
}

/* A wakeup of a thread asleep inside a traced call: the waker is current (for a wakeup from an
 * interrupt, whatever it interrupted). This runs on every wakeup of the machine: one storage
 * lookup for a task that never slept in a traced call. */
SEC("tp_btf/sched_waking")
int BPF_PROG(wp_sched_waking, struct task_struct *p)
{
	struct wp_offcpu_state *os;
	struct task_struct *task;
	long bytes;

	WP_TP_ARG_OR_RETURN(p);
	os = bpf_task_storage_get(&offcpu_state, p, 0, 0);
	if (!os || !os->asleep || os->waker_set)
		return 0;
	os->waker_set = 1;
	task = bpf_get_current_task_btf();
	os->waker_flags = task->flags & WP_PF_KTHREAD ? WP_WAKER_KTHREAD : 0;
	os->waker_pid = bpf_get_current_pid_tgid() >> 32;
	os->waker_tid = wp_current_tid();
	bpf_get_current_comm(os->waker_comm, sizeof(os->waker_comm));
	bytes = bpf_get_stack(ctx, os->waker_frames, sizeof(os->waker_frames), 0);
	os->waker_nframes = bytes > 0 ? bytes / sizeof(__u64) : 0;
	return 0;
}

/* lock:contention_begin/end (v5.19, 16edd9b511a1): a wait on the i_rwsem of the call's file,
 * with the writer holding it when the wait began. */
SEC("tp_btf/contention_begin")
int BPF_PROG(wp_contention_begin, void *lock, unsigned int flags)
{
	struct wp_task_state *st = cfg_offcpu_stacks ? wp_active_state() : NULL;
	struct wp_offcpu_state *os;
	struct rw_semaphore *sem;
	struct task_struct *owner;
	__u64 word;

	if (!st || !st->file || !st->cached_inode ||
	    (__u64)lock != st->cached_inode + bpf_core_field_offset(struct inode, i_rwsem))
		return 0;
	os = wp_current_offcpu();
	if (!os)
		return 0;
	os->lock_since = bpf_ktime_get_ns();
	os->rec.inode_lock_waits += 1;
	sem = lock;
	word = BPF_CORE_READ(sem, owner.counter);
	if (word & WP_RWSEM_READER_OWNED)
		return 0;
	owner = (struct task_struct *)(word & ~WP_RWSEM_OWNER_FLAGS);
	if (!owner)
		return 0;
	os->rec.holder_pid = BPF_CORE_READ(owner, tgid);
	os->rec.holder_tid = BPF_CORE_READ(owner, pid);
	BPF_CORE_READ_STR_INTO(&os->rec.holder_comm, owner, comm);
	return 0;
}

SEC("tp_btf/contention_end")
int BPF_PROG(wp_contention_end, void *lock, int ret)
{
	struct wp_offcpu_state *os = wp_current_offcpu();

	if (os && os->lock_since) {
		os->rec.inode_lock_ns += bpf_ktime_get_ns() - os->lock_since;
		os->lock_since = 0;
	}
	return 0;
}

/* A span of the call spent in the kernel's memory management: its start, and its end added. */
static __always_inline void wp_wait_begins(__u64 *since)
{
	*since = bpf_ktime_get_ns();
}

static __always_inline void wp_wait_ends(__u64 *since, __u64 *total)
{
	if (!*since)
		return;
	*total += bpf_ktime_get_ns() - *since;
	*since = 0;
}

/* Any arity: the programs read no argument (6.1 and 6.18 pass (order, gfp_flags) to the
 * begins, (nr_reclaimed) to the ends; compaction's take the compact_control and zone range). */
SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(wp_direct_reclaim_begin)
{
	struct wp_offcpu_state *os = wp_current_offcpu();

	if (os)
		wp_wait_begins(&os->direct_reclaim_since);
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int BPF_PROG(wp_direct_reclaim_end)
{
	struct wp_offcpu_state *os = wp_current_offcpu();

	if (os)
		wp_wait_ends(&os->direct_reclaim_since, &os->rec.direct_reclaim_ns);
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_begin")
int BPF_PROG(wp_memcg_reclaim_begin)
{
	struct wp_offcpu_state *os = wp_current_offcpu();

	if (os)
		wp_wait_begins(&os->memcg_reclaim_since);
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_end")
int BPF_PROG(wp_memcg_reclaim_end)
{
	struct wp_offcpu_state *os = wp_current_offcpu();

	if (os)
		wp_wait_ends(&os->memcg_reclaim_since, &os->rec.memcg_reclaim_ns);
	return 0;
}

SEC("tp_btf/mm_compaction_begin")
int BPF_PROG(wp_compaction_begin)
{
	struct wp_offcpu_state *os = wp_current_offcpu();

	if (os)
		wp_wait_begins(&os->compaction_since);
	return 0;
}

SEC("tp_btf/mm_compaction_end")
int BPF_PROG(wp_compaction_end)
{
	struct wp_offcpu_state *os = wp_current_offcpu();

	if (os)
		wp_wait_ends(&os->compaction_since, &os->rec.compaction_ns);
	return 0;
}

/* blk-throttle holds back a bio over its cgroup's limit (io.max, blkio.throttle.*) and arms
 * its service queue's pending timer to dispatch it later, in the submitting thread: a
 * timer_start with throtl_pending_timer_fn by a traced thread. Once per arming, not per bio
 * (a timer already pending is not armed again). Any arity: 6.1 passes (timer, expires,
 * flags), 6.18 (timer, bucket_expiry); only the timer is read. */
SEC("tp_btf/timer_start")
int BPF_PROG(wp_throtl_timer_start, struct timer_list *timer)
{
	struct wp_offcpu_state *os;

	WP_TP_ARG_OR_RETURN(timer);
	if (!cfg_throtl_timer_fn || (__u64)BPF_CORE_READ(timer, function) != cfg_throtl_timer_fn)
		return 0;
	os = wp_current_offcpu();
	if (os)
		os->rec.blk_throttled += 1;
	return 0;
}

/* Declared in emit.bpf.h. Called by the syscall exits of slow calls, before their causes. */
__noinline int wp_emit_offcpu(__u64 start_ns)
{
	struct wp_offcpu_state *os = bpf_task_storage_get(
	    &offcpu_state, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	__u32 size = sizeof(struct wp_offcpu_record);

	if (!os) {
		wp_count_lost(WP_HOOK_OFFCPU);
		return 0;
	}
	wp_offcpu_sync(os, start_ns);
	os->rec.h.type = WP_REC_OFFCPU;
	os->rec.h.size = size;
	os->rec.h.version = WP_RECORD_VERSION;
	os->rec.h.cpu = bpf_get_smp_processor_id();
	os->rec.h.ts_ns = bpf_ktime_get_ns();
	os->rec.tid = wp_current_tid();
	if (bpf_ringbuf_output(&events, &os->rec, size, wp_wakeup_flag(size)))
		wp_count_lost(WP_HOOK_OFFCPU);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
