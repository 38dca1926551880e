// SPDX-License-Identifier: GPL-2.0-only
/*
 * Layer 2: the page cache under a traced write. Dirtied folios, dirty-throttling pauses and
 * waits on pages under writeback are added to the calling thread's state (no record per
 * folio); a throttling pause also gets its own record, for the slow-write causes. Stores into
 * shared mappings are recorded per write fault; dirty folios dropped unwritten, per folio.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cgroup.bpf.h"
#include "compat.bpf.h"
#include "config.bpf.h"
#include "dirtier.bpf.h"
#include "emit.bpf.h"
#include "fault.bpf.h"
#include "file_filter.bpf.h"
#include "mapping.bpf.h"
#include "metrics.bpf.h"
#include "task_filter.bpf.h"
#include "task_state.bpf.h"
#include "uring_op.bpf.h"
#include "writepath.h"

static __always_inline struct wp_task_state *wp_writer_state(void)
{
	struct wp_task_state *st = wp_active_state();

	/* An open copying an overlay file up writes the copy inside the call: its pages too. */
	if (!st || !(wp_syscall_is_write(st->syscall) || wp_syscall_is_open(st->syscall)))
		return NULL;
	return st;
}

/* An io_uring read issued inline: its file is assigned at its issue, after its submission
 * opened the thread's state (with none), so the state takes the file at the op's first
 * page-cache event, as a read syscall's takes its fd's at entry. */
static __always_inline void wp_uring_read_file(struct wp_task_state *st)
{
	struct io_kiocb *req = (struct io_kiocb *)st->uring_req;
	struct file *file;

	if (st->file || !req)
		return;
	file = BPF_CORE_READ(req, file);
	if (!file || !wp_resolve_file(st, file, false))
		return;
	st->file = (__u64)file;
	st->dev = st->cached_dev;
	st->ino = st->cached_ino;
}

/* The thread's traced read on a file, if one is running. */
static __always_inline struct wp_task_state *wp_reader_state(void)
{
	struct wp_task_state *st = wp_active_state();

	if (!st || !wp_syscall_is_read(st->syscall))
		return NULL;
	wp_uring_read_file(st);
	return st->file ? st : NULL;
}

/* Whether `host` is the file of the thread's read (its page cache's inode: an overlay
 * file's upper or lower file, as wp_resolve_file chose it). */
static __always_inline bool wp_read_file_is(struct wp_task_state *st, struct inode *host)
{
	return host && BPF_CORE_READ(host, i_ino) == st->ino && wp_inode_dev(host) == st->dev;
}

/* A folio of the thread's traced read's file inserted into its page cache, split at the read's
 * last byte (read(2) moves f_pos only once it is done: it is the read's start here). */
static __always_inline void wp_read_filled(struct wp_task_state *st, struct folio *folio, __u32 nr)
{
	__u64 start, last, index, end;

	st->reads.pages_added += nr;
	if (!st->count) {
		st->reads.pages_added_beyond += nr;
		return;
	}
	start = st->pos;
	if (start == (__u64)-1) {
		struct file *file = (struct file *)st->file;

		start = BPF_CORE_READ(file, f_pos);
	}
	last = (start + st->count - 1) >> WP_PAGE_SHIFT;
	index = BPF_CORE_READ(folio, index);
	end = index + nr - 1;
	if (end > last)
		st->reads.pages_added_beyond += index > last ? nr : end - last;
}

/* A folio inserted into a file's page cache: a miss being filled, by a read, its readahead or
 * a fault. The thread's traced read of that file counts it, else its open fault on a mapping
 * of that file: outside any traced call, or a fault of the kernel's inside one (a write from a
 * mapped buffer). A fault stays open until the thread's next one, so what the thread inserts
 * by untraced calls in between (madvise, fadvise WILLNEED, sendfile) is counted as its too. */
SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(wp_cache_add, struct folio *folio)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct address_space *mapping;
	struct wp_task_state *st;

	if (!wp_task_has_storage(task))
		return 0;
	st = bpf_task_storage_get(&task_state, task, 0, 0);
	if (!st || !(st->fault_file || (st->active && wp_syscall_is_read(st->syscall))))
		return 0;
	WP_TP_ARG_OR_RETURN(folio);
	if (st->active && wp_syscall_is_read(st->syscall))
		wp_uring_read_file(st);
	mapping = BPF_CORE_READ(folio, mapping);
	if (!mapping || ((unsigned long)mapping & 1))
		return 0;
	if (st->active && st->file && wp_syscall_is_read(st->syscall) &&
	    wp_read_file_is(st, BPF_CORE_READ(mapping, host)))
		wp_read_filled(st, folio, wp_folio_nr_pages(folio));
	else if (st->fault_file && st->fault_mapping == (__u64)mapping &&
		 (!st->active || (st->fault_flags & WP_FAULT_KERNEL)))
		wp_fault_filled(st, folio, wp_folio_nr_pages(folio));
	return 0;
}

/* A traced thread's page fault begins (x86 only: arm64 has no such tracepoint, and its faults
 * go unseen). A kernel-mode fault is the kernel touching user memory for the thread. */
SEC("tp_btf/page_fault_user")
int BPF_PROG(wp_read_fault_user, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	wp_fault_begin(address, error_code, false);
	return 0;
}

SEC("tp_btf/page_fault_kernel")
int BPF_PROG(wp_read_fault_kernel, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	wp_fault_begin(address, error_code, true);
	return 0;
}

/* serve --reads: a traced thread's filemap_fault at `index` of `mapping` is a major fault when
 * the page is not in the page cache: the fault reads it in (VM_FAULT_MAJOR, what getrusage and
 * memory.stat's pgmajfault count). Its retry, once the page is in, finds it: a fault counts
 * once. A fault that only waits for a page someone's readahead has in flight is no major one
 * here, as the kernel counts it under a per-VMA lock (v6.4+; before, its retry counted it).
 * Counted here, without the fault-entry hooks that would run on every page fault of the
 * machine: this one runs only on the file faults fault-around did not serve. */
static __always_inline void wp_count_major_fault(struct address_space *mapping,
						 unsigned long index)
{
	struct inode *host;

	if (!wp_task_traced() || wp_pagecache_folio(mapping, index))
		return;
	host = BPF_CORE_READ(mapping, host);
	if (!host)
		return;
	wp_metric_add(WP_METRIC_WHAT(WP_METRIC_MAJOR_FAULT, 0) | WP_METRIC_OF_TASK,
		      wp_inode_fs_dev(host), 0, 0, 0);
}

/* filemap_fault, for the page at `index`: a fault fault-around did not serve. A second call in
 * one fault is its retry, after it dropped the mmap lock to wait for the page (read in by
 * itself or by someone else) or to start readahead. */
SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(wp_filemap_fault, struct address_space *mapping, unsigned long index)
{
	struct wp_task_state *st;

	WP_TP_ARG_OR_RETURN(mapping);
	if (cfg_metrics) {
		wp_count_major_fault(mapping, index);
		return 0;
	}
	st = wp_fault_of(mapping, index, index);
	if (!st)
		return 0;
	st->fault_calls++;
	st->fault_last = bpf_ktime_get_ns();
	return 0;
}

/* Fault-around: the cached pages [index, last_index] around the fault offered to its page
 * table, the fault's own among them (a minor fault, when it was cached and up to date). */
SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(wp_filemap_map_pages, struct address_space *mapping, unsigned long index,
	     unsigned long last_index)
{
	struct wp_task_state *st;

	WP_TP_ARG_OR_RETURN(mapping);
	st = wp_fault_of(mapping, index, last_index);
	if (!st)
		return 0;
	st->fault_mapped += last_index >= index ? last_index - index + 1 : 0;
	st->fault_last = bpf_ktime_get_ns();
	return 0;
}

/* A readahead the thread's traced read started: synchronous (a miss) or asynchronous (it
 * reached a folio marked PG_readahead), with the pages the read still wanted then. */
static __always_inline int wp_read_ahead(struct inode *inode, unsigned long req_count, bool sync)
{
	struct wp_task_state *st = wp_reader_state();

	if (!st || !wp_read_file_is(st, inode))
		return 0;
	if (sync) {
		st->reads.sync_ra++;
		st->reads.sync_ra_pages += req_count;
	} else {
		st->reads.async_ra++;
		st->reads.async_ra_pages += req_count;
	}
	return 0;
}

SEC("tp_btf/page_cache_sync_ra")
int BPF_PROG(wp_sync_ra, struct inode *inode, unsigned long index, struct file_ra_state *ra,
	     unsigned long req_count)
{
	return wp_read_ahead(inode, req_count, true);
}

SEC("tp_btf/page_cache_async_ra")
int BPF_PROG(wp_async_ra, struct inode *inode, unsigned long index, struct file_ra_state *ra,
	     unsigned long req_count)
{
	return wp_read_ahead(inode, req_count, false);
}

static __always_inline void wp_add_dirty(struct wp_task_state *st, __u32 pages)
{
	st->pages_dirtied += pages;
	st->dirty_folios += 1;
}

/* The pages of `folio` that the thread's write covers. A large folio (ext4 since v6.16, xfs,
 * btrfs) is dirtied whole, so an 8 KiB write into a 1 MiB folio dirties 256 pages of which 2
 * are the write's. Where the bytes go is known here for a positional write; for write(2) the
 * file position and for O_APPEND the file's size are still those of the write's start (both
 * move only once it is done; an append's size grows folio by folio, so its window can reach a
 * folio past its end: the exit clamps the total to the pages its bytes span). */
static __always_inline __u32 wp_write_pages_in(struct wp_task_state *st, struct folio *folio)
{
	__u32 nr = wp_folio_nr_pages(folio);
	__u64 start = st->pos, first, last, lo, hi, index;

	struct file *file = (struct file *)st->file;

	if (nr == 1 || !st->count)
		return nr;
	if (file && (st->file_flags & WP_FILE_APPEND))
		start = BPF_CORE_READ(file, f_inode, i_size);
	else if (file && start == (__u64)-1)
		start = BPF_CORE_READ(file, f_pos);
	if (start == (__u64)-1)
		return nr;
	index = BPF_CORE_READ(folio, index);
	first = start >> WP_PAGE_SHIFT;
	last = (start + st->count - 1) >> WP_PAGE_SHIFT;
	lo = index > first ? index : first;
	hi = index + nr - 1 < last ? index + nr - 1 : last;
	return hi >= lo ? (__u32)(hi - lo + 1) : nr;
}

/* A struct file mapping `mapping` (as a scalar), for its path: the file of the first VMA in
 * its i_mmap tree (its leftmost node), or 0. */
static __always_inline __u64 wp_first_mapper_file(struct address_space *mapping)
{
	struct rb_node *node = BPF_CORE_READ(mapping, i_mmap.rb_leftmost);
	struct vm_area_struct *vma;

	if (!node)
		return 0;
	vma = (struct vm_area_struct *)((char *)node -
					bpf_core_field_offset(struct vm_area_struct, shared.rb));
	return (__u64)BPF_CORE_READ(vma, vm_file);
}

/* include/linux/backing-dev.h: the bdi's pages are written back. v5.10 made it of
 * BDI_CAP_NO_WRITEBACK, inverted; both store hooks need v5.17 or later (folios). */
#define WP_BDI_CAP_WRITEBACK 0x1u

/* A traced thread stored into a shared mapping of a regular file: `pages` pages of `host`'s
 * from `index` on, the file reached through `file` (a struct file *, as a scalar, for its
 * path). One record per store fault (or per folio dirtied, where the kernel has no fault
 * tracepoint), so the stitcher can follow those pages to their writeback. */
static __always_inline void wp_emit_store(struct inode *host, __u64 file, __u64 index, __u32 pages)
{
	struct wp_mmap_dirty_record *r;
	struct wp_task_state *st;
	__u64 ino;
	__u32 dev;

	if (!host || (BPF_CORE_READ(host, i_mode) & WP_S_IFMT) != WP_S_IFREG)
		return;
	/* A file whose pages are never written back (tmpfs, shared anonymous memory, memfds:
	 * noop_backing_dev_info) has no writeback to follow the stores to. */
	if (!(BPF_CORE_READ(host, i_sb, s_bdi, capabilities) & WP_BDI_CAP_WRITEBACK))
		return;
	ino = BPF_CORE_READ(host, i_ino);
	dev = wp_inode_dev(host);
	if (cfg_file_ino && (ino != cfg_file_ino || dev != cfg_file_dev))
		return;
	if (!wp_inode_on_filtered_disk(host, dev))
		return;
	wp_note_traced_file(host, dev, ino);
	wp_emit_file_path(file, dev, ino);
	st = bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (st)
		wp_note_cgroup(st);
	r = wp_reserve(sizeof(*r), WP_REC_MMAP_DIRTY, WP_HOOK_MMAP_DIRTY);
	if (!r)
		return;
	r->ino = ino;
	r->index = index;
	r->dev = dev;
	r->pages = pages;
	r->pid = bpf_get_current_pid_tgid() >> 32;
	r->tid = wp_current_tid();
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	wp_submit(r, sizeof(*r));
}

/* io_uring's workers write for the ring's ops, not by storing into a mapping. */
static __always_inline bool wp_may_store(void)
{
	return !(bpf_get_current_task_btf()->flags & WP_PF_IO_WORKER) && wp_task_traced();
}

/* The pages a store fault on an unmapped page maps, given the folio holding it: the whole
 * folio where it lies inside the VMA, inside the faulting page table and below the file's
 * end (6.18's finish_fault() maps a large file folio in one shot then), else that page. */
static __always_inline void wp_fault_maps(struct folio *folio, struct inode *host, __u64 page,
					  __u64 vma_first, __u64 vma_pages, __u64 pte,
					  __u64 *first, __u32 *pages)
{
	__u64 index = BPF_CORE_READ(folio, index);
	__u32 nr = wp_folio_nr_pages(folio);
	__u64 eof = (BPF_CORE_READ(host, i_size) + (1ull << WP_PAGE_SHIFT) - 1) >> WP_PAGE_SHIFT;
	__u64 idx = page - index, vma_off = page - vma_first;

	*first = page;
	*pages = 1;
	if (nr <= 1 || page < index || idx >= nr || page < vma_first)
		return;
	if (vma_off < idx || vma_off + (nr - idx) > vma_pages || pte < idx ||
	    pte + (nr - idx) > WP_X86_PTRS_PER_PTE || eof < index + nr)
		return;
	*first = index;
	*pages = nr;
}

/* A write fault of a traced thread, at its entry. A store into a shared file mapping faults
 * once per writeback cycle where it meets a page not writable: mapped read-only (writeback
 * cleaned it with folio_mkclean, or a read fault mapped it), which makes that one page
 * writable; or not mapped yet, which maps its folio (wp_fault_maps). One record per fault
 * names the pages it made writable, where the dirtied folio (which writeback_dirty_folio
 * reports once, whole: 64 pages for a 256 KiB folio) says only that some were. A folio not
 * in the page cache yet is read in by the fault, which dirties it: the dirtying sends the
 * record (wp_dirty_folio). A kernel-mode fault is the kernel storing into user memory for
 * the thread (read(2) into a mapping). */
static __always_inline int wp_store_fault(unsigned long address, unsigned long error_code)
{
	struct wp_mapped_file m;
	struct address_space *mapping;
	struct wp_task_state *st;
	struct folio *folio;
	struct inode *host;
	struct file *file;
	__u64 page, first;
	__u32 pages;

	if (!(error_code & WP_X86_PF_WRITE) || !wp_may_store())
		return 0;
	wp_map_fault_addr(&m, address);
	file = (struct file *)m.file;
	if (!file || !(m.vm_flags & WP_VM_SHARED))
		return 0;
	host = BPF_CORE_READ(file, f_inode);
	page = m.pos >> WP_PAGE_SHIFT;
	if (error_code & WP_X86_PF_PROT) {
		wp_emit_store(host, m.file, page, 1);
		return 0;
	}
	mapping = BPF_CORE_READ(file, f_mapping);
	folio = wp_pagecache_folio(mapping, page);
	if (folio) {
		wp_fault_maps(folio, host, page, m.vm_first, m.vm_pages,
			      (address >> WP_PAGE_SHIFT) & (WP_X86_PTRS_PER_PTE - 1), &first, &pages);
		wp_emit_store(host, m.file, first, pages);
		return 0;
	}
	st = bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st)
		return 0;
	st->store_mapping = (__u64)mapping;
	st->store_file = m.file;
	st->store_index = page;
	st->store_vma_first = m.vm_first;
	st->store_vma_pages = m.vm_pages;
	st->store_pte = (address >> WP_PAGE_SHIFT) & (WP_X86_PTRS_PER_PTE - 1);
	return 0;
}

/* The folio a pending store fault read in was dirtied by that fault: its record goes out. A
 * pending fault whose folio another one is dirtied instead of never completed a store. */
static __always_inline bool wp_store_fault_dirtied(struct folio *folio, struct address_space *mapping)
{
	struct wp_task_state *st =
	    bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), 0, 0);
	__u64 index, first;
	__u32 pages;

	if (!st || !st->store_mapping)
		return false;
	if (st->store_mapping != (__u64)mapping) {
		st->store_mapping = 0;
		return false;
	}
	st->store_mapping = 0;
	index = BPF_CORE_READ(folio, index);
	if (st->store_index < index || st->store_index >= index + wp_folio_nr_pages(folio))
		return false;
	wp_fault_maps(folio, BPF_CORE_READ(mapping, host), st->store_index, st->store_vma_first,
		      st->store_vma_pages, st->store_pte, &first, &pages);
	wp_emit_store(BPF_CORE_READ(mapping, host), st->store_file, first, pages);
	return true;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(wp_store_fault_user, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	return wp_store_fault(address, error_code);
}

SEC("tp_btf/page_fault_kernel")
int BPF_PROG(wp_store_fault_kernel, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	return wp_store_fault(address, error_code);
}

/* A folio dirtied by an io-wq worker for a traced io_uring write (punted, or IOSQE_ASYNC):
 * true when it was one. */
static __always_inline bool wp_add_iowq_dirty(__u32 pages)
{
	struct wp_uring_op *op = wp_iowq_op();

	if (!op || !wp_syscall_is_write(op->syscall))
		return false;
	op->pages_dirtied += pages;
	op->dirty_folios += 1;
	op->issue_tid = wp_current_tid();
	return true;
}

/* v5.17 (folio conversion) replaced writeback_dirty_page with writeback_dirty_folio. The
 * agent autoloads whichever the kernel's BTF has. Before it, stores into mappings are not
 * followed (the page hook has no folio to read). */
SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(wp_dirty_folio, struct folio *folio, struct address_space *mapping)
{
	struct wp_task_state *st;

	WP_TP_ARG_OR_RETURN(folio);
	WP_TP_ARG_OR_RETURN(mapping);
	wp_note_dirtier(mapping);
	st = wp_writer_state();
	if (st)
		wp_add_dirty(st, wp_write_pages_in(st, folio));
	else if (!wp_add_iowq_dirty(wp_folio_nr_pages(folio)))
		wp_store_fault_dirtied(folio, mapping);
	return 0;
}

/* Stores into mappings where the kernel has no fault tracepoint (arm64): the folio a traced
 * thread dirtied outside any traced write, whole (the write fault dirties it in the storing
 * task, once per writeback cycle). */
SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(wp_store_folio, struct folio *folio, struct address_space *mapping)
{
	WP_TP_ARG_OR_RETURN(folio);
	WP_TP_ARG_OR_RETURN(mapping);
	if (wp_writer_state() || !wp_may_store())
		return 0;
	/* A store needs a mapping of the file: i_mmap holds its VMAs. A file system's own
	 * regular-file inodes that no one maps (btrfs's btree inode, whose metadata pages an
	 * fsync dirties in the calling thread) and a truncate's partial-page zeroing of an
	 * unmapped file are no stores. */
	if (!BPF_CORE_READ(mapping, i_mmap.rb_root.rb_node))
		return 0;
	wp_emit_store(BPF_CORE_READ(mapping, host), wp_first_mapper_file(mapping),
		      BPF_CORE_READ(folio, index), wp_folio_nr_pages(folio));
	return 0;
}

/* Before v5.17: one small page per event. */
SEC("tp_btf/writeback_dirty_page")
int BPF_PROG(wp_dirty_page, struct page *page, struct address_space *mapping)
{
	struct wp_task_state *st = wp_writer_state();

	if (st)
		wp_add_dirty(st, 1);
	else
		wp_add_iowq_dirty(1);
	return 0;
}

/* The classic tracepoint keeps one record layout for the pause, while the BTF prototype
 * changed in 2025 (v6.15: arguments folded into struct dirty_throttle_control). Fields are
 * read with CO-RE. pause and period are in milliseconds. */
SEC("tracepoint/writeback/balance_dirty_pages")
int wp_balance_dirty_pages(struct trace_event_raw_balance_dirty_pages *ctx)
{
	struct wp_task_state *st = wp_writer_state();
	struct wp_throttle_record *r;
	long pause = BPF_CORE_READ(ctx, pause);

	if (!st || pause <= 0)
		return 0;
	st->pending_cause = WP_OFFCPU_THROTTLE; /* io_schedule_timeout(pause) follows */
	st->throttle_ns += (__u64)pause * 1000000ull;
	st->throttle_events += 1;
	/* serve: the pause is a metric; the call's record carries its sum and count. */
	if (cfg_metrics) {
		wp_metric_add(WP_METRIC_WHAT(WP_METRIC_THROTTLE, 0) | WP_METRIC_OF_TASK, 0,
			      (__u64)pause * 1000000ull, 0, 0);
		return 0;
	}
	r = wp_reserve(sizeof(*r), WP_REC_THROTTLE, WP_HOOK_THROTTLE);
	if (!r)
		return 0;
	r->pid = bpf_get_current_pid_tgid() >> 32;
	r->tid = wp_current_tid();
	r->pause_ms = pause;
	r->period_ms = BPF_CORE_READ(ctx, period);
	r->dirty = BPF_CORE_READ(ctx, dirty);
	r->limit = BPF_CORE_READ(ctx, limit);
	wp_throttle_device(ctx, &r->wb_dirty, &r->wb_setpoint);
	wp_submit(r, sizeof(*r));
	return 0;
}

static __always_inline void wp_count_writeback_wait(void)
{
	struct wp_task_state *st = wp_active_state();

	if (st) {
		st->writeback_waits += 1;
		st->pending_cause = WP_OFFCPU_WRITEBACK_WAIT; /* folio_wait_bit() sleeps next */
	}
}

/* v5.17 renamed wait_on_page_writeback to folio_wait_writeback. */
SEC("tp_btf/folio_wait_writeback")
int BPF_PROG(wp_folio_wait_writeback, struct folio *folio, struct address_space *mapping)
{
	wp_count_writeback_wait();
	return 0;
}

SEC("tp_btf/wait_on_page_writeback")
int BPF_PROG(wp_wait_on_page_writeback, struct page *page, struct address_space *mapping)
{
	wp_count_writeback_wait();
	return 0;
}

/* A flusher thread's writeback work: the bios it queues until writeback_written carry the
 * reason (background, periodic, sync, vmscan). */
SEC("tp_btf/writeback_start")
int BPF_PROG(wp_writeback_start, struct bdi_writeback *wb, struct wb_writeback_work *work)
{
	struct wp_task_state *st;

	WP_TP_ARG_OR_RETURN(work);
	st = bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (st)
		st->writeback_why = wp_writeback_why(BPF_CORE_READ(work, reason));
	return 0;
}

SEC("tp_btf/writeback_written")
int BPF_PROG(wp_writeback_written, struct bdi_writeback *wb, struct wb_writeback_work *work)
{
	struct wp_task_state *st =
	    bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), 0, 0);

	if (st)
		st->writeback_why = 0;
	return 0;
}

/* A folio leaving the page cache: truncate, hole punch, unlink's eviction, invalidation or
 * reclaim. Only a folio still tagged dirty loses data (reclaim takes clean folios only), so
 * only those emit a record. The tracepoint passed a struct page before the folio conversion
 * (v5.10 still does); a kernel whose BTF has no struct folio fails this program's CO-RE
 * relocations at load, and the hook is left out (doctor says so). */
SEC("tp_btf/mm_filemap_delete_from_page_cache")
int BPF_PROG(wp_discard_folio, struct folio *folio)
{
	struct address_space *mapping;
	struct wp_discard_record *r;
	unsigned long index;
	struct inode *host;
	__u64 ino;
	__u32 dev;

	WP_TP_ARG_OR_RETURN(folio);
	mapping = BPF_CORE_READ(folio, mapping);
	index = BPF_CORE_READ(folio, index);
	if (!mapping || ((unsigned long)mapping & 1))
		return 0;
	/* Reclaim drops clean folios here all the time: the dirty tag is checked first, so they
	 * cost the walk's first level and no inode reads. */
	if (!wp_pagecache_dirty_marked(mapping, index))
		return 0;
	host = BPF_CORE_READ(mapping, host);
	if (!host)
		return 0;
	ino = BPF_CORE_READ(host, i_ino);
	dev = wp_inode_dev(host);
	/* Another process's file (a bystander rotating its logs): no item has its pages. */
	if (!wp_file_may_be_traced(dev, ino))
		return 0;
	if (!wp_inode_on_filtered_disk(host, dev))
		return 0;
	r = wp_reserve(sizeof(*r), WP_REC_DISCARD, WP_HOOK_DISCARD);
	if (!r)
		return 0;
	r->ino = ino;
	r->index = index;
	r->dev = dev;
	r->pages = wp_folio_nr_pages(folio);
	wp_submit(r, sizeof(*r));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
