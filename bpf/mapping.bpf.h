// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a user address of the current task maps: the file behind its VMA, the file offset the
 * address stands for, and the VMA's flags. For msync's range and for stores into shared file
 * mappings. bpf_find_vma (v5.17) takes the mmap lock with a trylock: when another thread holds
 * it for writing the lookup finds nothing, and the caller does without a file.
 */
#ifndef WRITEPATH_MAPPING_BPF_H
#define WRITEPATH_MAPPING_BPF_H

#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "compat.bpf.h"

/* include/linux/mm.h: a mapping whose stores reach the file (MAP_SHARED); unchanged since
 * the VM_* bits were defined. */
#define WP_VM_SHARED 0x00000008ul

struct wp_mapped_file {
	__u64 addr;
	__u64 vm_first; /* the VMA's first file page, and its pages */
	__u64 vm_pages;
	/* The struct file *, as a scalar: read, not copied, so that the verifier lets it reach
	 * global functions (wp_emit_file_path) as a number, as the other hooks' files do. */
	__u64 file;
	__u64 pos; /* file offset of addr */
	__u64 vm_flags;
};

static long wp_vma_file(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct wp_mapped_file *m = data;

	bpf_core_read(&m->file, sizeof(m->file), &vma->vm_file);
	m->pos = ((__u64)vma->vm_pgoff << WP_PAGE_SHIFT) + (m->addr - vma->vm_start);
	m->vm_flags = vma->vm_flags;
	m->vm_first = vma->vm_pgoff;
	m->vm_pages = (vma->vm_end - vma->vm_start) >> WP_PAGE_SHIFT;
	return 0;
}

/* The mapping of `addr` in the current task; m->file stays 0 when there is none. */
static __always_inline void wp_map_user_addr(struct wp_mapped_file *m, __u64 addr)
{
	*m = (struct wp_mapped_file){.addr = addr};
	bpf_find_vma(bpf_get_current_task_btf(), addr, wp_vma_file, m, 0);
}

/* ---- the VMA of an address, without the mmap lock ------------------------------------------ */

/* bpf_find_vma takes the mmap lock, and with interrupts off (a page fault's entry) it defers
 * the unlock to an irq_work: a self-IPI per call, which took a write fault of a traced
 * process from 1.8 to 12 us on the development VM. A page fault's entry instead walks the
 * mm's maple tree (v6.1: mm_mt) itself, as mtree_load() does under RCU, which BPF tracing
 * programs run in; a node freed meanwhile can give a stale answer, never a fault. */
#define WP_MAPLE_NODE_MASK 255ul
#define WP_MAPLE_TYPE_SHIFT 3
#define WP_MAPLE_TYPE_MASK 0x0ful
#define WP_MAPLE_MAX_DEPTH 8
#define WP_MAPLE_NODE_BYTES 256
#define WP_MAPLE_MAX_PIVOTS 15

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[WP_MAPLE_NODE_BYTES / 8]);
} maple_scratch SEC(".maps") __weak;

/* The entry the tree maps `index` to (the VMA holding the address, or 0 for a gap). */
static __always_inline __u64 wp_maple_load(struct maple_tree *tree, __u64 index)
{
	__u64 entry = (__u64)BPF_CORE_READ(tree, ma_root);
	__u32 zero = 0, leaf = bpf_core_enum_value(enum maple_type, maple_leaf_64);
	__u32 range = bpf_core_enum_value(enum maple_type, maple_range_64);
	__u32 arange = bpf_core_enum_value(enum maple_type, maple_arange_64);
	__u64 *node = bpf_map_lookup_elem(&maple_scratch, &zero);

	/* A root that is a node is marked as xarray internal entries are (it ends in 0b10, above
	 * 4096: mte_safe_root() clears the bit); anything else is a single entry for index 0.
	 * Below the root a node's pointer carries its type in bits 3-6. */
	if (!node || (entry & 3) != 2 || entry <= 4096)
		return 0;
	entry &= ~2ul;
	for (int depth = 0; depth < WP_MAPLE_MAX_DEPTH; depth++) {
		__u32 type = (entry >> WP_MAPLE_TYPE_SHIFT) & WP_MAPLE_TYPE_MASK;
		__u32 pivots, pivot_at, slot_at, offset = 0;

		if (entry <= 4096)
			return 0;
		if (type == arange) {
			pivot_at = bpf_core_field_offset(struct maple_arange_64, pivot) / 8;
			slot_at = bpf_core_field_offset(struct maple_arange_64, slot) / 8;
			pivots = bpf_core_field_size(((struct maple_arange_64 *)0)->pivot) / 8;
		} else if (type == range || type == leaf) {
			pivot_at = bpf_core_field_offset(struct maple_range_64, pivot) / 8;
			slot_at = bpf_core_field_offset(struct maple_range_64, slot) / 8;
			pivots = bpf_core_field_size(((struct maple_range_64 *)0)->pivot) / 8;
		} else {
			return 0;
		}
		if (bpf_probe_read_kernel(node, WP_MAPLE_NODE_BYTES,
					  (void *)(entry & ~WP_MAPLE_NODE_MASK)))
			return 0;
		/* The first slot whose pivot (its last index) reaches `index`; a 0 pivot past the
		 * first ends the node's data, and its slot runs to the node's end. */
		for (int i = 0; i < WP_MAPLE_MAX_PIVOTS; i++) {
			__u64 pivot;

			if (offset >= pivots || pivot_at + offset >= WP_MAPLE_NODE_BYTES / 8)
				break;
			pivot = node[(pivot_at + offset) & (WP_MAPLE_NODE_BYTES / 8 - 1)];
			if (pivot >= index || (offset && !pivot))
				break;
			offset++;
		}
		entry = node[(slot_at + offset) & (WP_MAPLE_NODE_BYTES / 8 - 1)];
		if (type == leaf)
			return entry;
	}
	return 0;
}

/* The mapping of `addr` in the current task, from its maple tree: as wp_map_user_addr, with
 * no lock and so no IPI, for a page fault's entry. */
static __always_inline void wp_map_fault_addr(struct wp_mapped_file *m, __u64 addr)
{
	struct mm_struct *mm = bpf_get_current_task_btf()->mm;
	struct vm_area_struct *vma;
	__u64 start, end;

	*m = (struct wp_mapped_file){.addr = addr};
	if (!mm)
		return;
	vma = (struct vm_area_struct *)wp_maple_load(&mm->mm_mt, addr);
	if (!vma)
		return;
	start = BPF_CORE_READ(vma, vm_start);
	end = BPF_CORE_READ(vma, vm_end);
	if (addr < start || addr >= end)
		return;
	m->file = (__u64)BPF_CORE_READ(vma, vm_file);
	m->vm_flags = BPF_CORE_READ(vma, vm_flags);
	m->vm_first = BPF_CORE_READ(vma, vm_pgoff);
	m->vm_pages = (end - start) >> WP_PAGE_SHIFT;
	m->pos = (m->vm_first << WP_PAGE_SHIFT) + (addr - start);
}

#endif /* WRITEPATH_MAPPING_BPF_H */
