/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Page faults of traced threads on file mappings, with --reads: the thread's state holds its
 * last fault (task_state.bpf.h, fault_*), which the fault's entry opens, the filemap hooks name
 * a file's and count, and the next fault's entry or the thread's exit sends as one record. The
 * kernel has no tracepoint at a fault's end, so its record waits for the thread's next one.
 */
#ifndef WRITEPATH_FAULT_BPF_H
#define WRITEPATH_FAULT_BPF_H

#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "emit.bpf.h"
#include "mapping.bpf.h"
#include "task_state.bpf.h"
#include "traced_call.bpf.h"
#include "writepath.h"

/* x86's page-fault error code (arch/x86/include/asm/trap_pf.h): the page was mapped (a
 * protection fault: a store into a page mapped read-only), the access was a write. The
 * exceptions:page_fault_* tracepoints are x86's alone, as is its 512-entry page table. */
#define WP_X86_PF_PROT 0x1ul
#define WP_X86_PF_WRITE 0x2ul
#define WP_X86_PTRS_PER_PTE 512

/* Sends the thread's open fault, if a filemap hook named it a file's, and closes it. Its file's
 * path went out when it was named (wp_fault_of): by now the mapping may be gone. */
static __always_inline void wp_fault_send(struct wp_task_state *st, struct task_struct *task)
{
	struct wp_fault_record *r;
	__u64 start = st->fault_start;

	if (!start)
		return;
	st->fault_start = 0;
	if (!st->fault_file)
		return;
	r = wp_reserve(sizeof(*r), WP_REC_FAULT, WP_HOOK_FAULT);
	if (!r)
		return;
	r->start_ns = start;
	r->last_ns = st->fault_last;
	r->pid = task->tgid;
	r->tid = task->pid;
	__builtin_memcpy(r->comm, task->comm, WP_COMM_LEN);
	r->dev = st->fault_dev;
	r->pages_added = st->fault_pages_added;
	r->ino = st->fault_ino;
	r->address = st->fault_addr;
	r->index = st->fault_index;
	r->mapped_pages = st->fault_mapped;
	r->filemap_faults = st->fault_calls;
	r->flags = st->fault_flags;
	wp_submit(r, sizeof(*r));
}

/* A traced thread's fault at `address` begins: the one before it has ended. An address in the
 * kernel's half is no user mapping's (x86-64's user half ends at 2^47, 2^56 with 5-level
 * paging). */
static __always_inline void wp_fault_begin(__u64 address, __u64 error_code, bool kernel)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct wp_task_state *st;

	if (address >> 56 || !wp_task_traced_of(task))
		return;
	st = bpf_task_storage_get(&task_state, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st)
		return;
	wp_fault_send(st, task);
	st->fault_start = bpf_ktime_get_ns();
	st->fault_last = st->fault_start;
	st->fault_addr = address;
	st->fault_file = 0;
	st->fault_mapping = 0;
	st->fault_pages_added = 0;
	st->fault_mapped = 0;
	st->fault_calls = 0;
	st->fault_flags = (error_code & WP_X86_PF_WRITE ? WP_FAULT_WRITE : 0) |
			  (kernel ? WP_FAULT_KERNEL : 0);
}

/* The thread's open fault, when `mapping`'s pages [first, last] hold the page its address
 * maps: a filemap hook inside that fault. The first such hook names the fault a file's (a
 * regular file the trace follows), from the faulting thread's VMA; the others must be of the
 * same mapping. A filemap hook inside no fault (a syscall's get_user_pages) matches none. */
static __always_inline struct wp_task_state *wp_fault_of(struct address_space *mapping,
							 __u64 first, __u64 last)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct wp_mapped_file m;
	struct wp_task_state *st;
	struct file *file;
	__u64 page, name, parent;

	if (!wp_task_has_storage(task))
		return NULL;
	st = bpf_task_storage_get(&task_state, task, 0, 0);
	if (!st || !st->fault_start)
		return NULL;
	if (st->fault_file)
		return st->fault_mapping == (__u64)mapping ? st : NULL;
	wp_map_fault_addr(&m, st->fault_addr);
	file = (struct file *)m.file;
	page = m.pos >> WP_PAGE_SHIFT;
	if (!file || (__u64)BPF_CORE_READ(file, f_mapping) != (__u64)mapping || page < first ||
	    page > last)
		return NULL;
	if (!wp_resolve_file(st, file, false) || st->cached_kind != WP_FILE_REGULAR)
		return NULL;
	st->fault_file = (__u64)file;
	st->fault_mapping = (__u64)mapping;
	st->fault_dev = st->cached_dev;
	st->fault_ino = st->cached_ino;
	st->fault_index = page;
	/* Named while the faulting VMA holds the file: the record goes out later. */
	wp_file_name_of(file, st->fault_dev, false, &name, &parent);
	wp_emit_path_once(st, st->fault_file, st->fault_dev, st->fault_ino, name, parent);
	return st;
}

/* A folio inserted into the page cache of the thread's faulting file: the page it faulted on
 * (a major fault) or readahead around it. */
static __always_inline void wp_fault_filled(struct wp_task_state *st, struct folio *folio,
					    __u32 nr)
{
	__u64 index = BPF_CORE_READ(folio, index);

	st->fault_pages_added += nr;
	st->fault_last = bpf_ktime_get_ns();
	if (st->fault_index >= index && st->fault_index < index + nr)
		st->fault_flags |= WP_FAULT_FILLED;
}

#endif /* WRITEPATH_FAULT_BPF_H */
