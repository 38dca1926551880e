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

#endif /* WRITEPATH_MAPPING_BPF_H */
