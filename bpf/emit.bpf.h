/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Records out to the agent: the ring buffer, the count of records it had no room for, and the
 * records other layers emit for the caller (global functions, linked across objects).
 */
#ifndef WRITEPATH_EMIT_BPF_H
#define WRITEPATH_EMIT_BPF_H

#include <bpf/bpf_helpers.h>

#include "config.bpf.h"
#include "writepath.h"

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

/* The agent is woken once cfg_wakeup_bytes are waiting (config.bpf.h), not per record. */
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
/* wp_emit_ext4_inline's answer when the file cannot hold inline data (its caller caches it). */
#define WP_INLINE_NEVER 1

/* Emits the current thread's wp_offcpu_record for the call that started at start_ns
 * (bpf/sched.bpf.c); a global function, verified once rather than inlined into every exit. */
extern int wp_emit_offcpu(__u64 start_ns);

#endif /* WRITEPATH_EMIT_BPF_H */
