// SPDX-License-Identifier: GPL-2.0-only
/*
 * Layer 3: bios and block requests. A bio record carries the file pages it writes (inode,
 * page-index extents) so the agent can hand each page back to the write that owns it; a
 * request record carries the request's pointer, disk, sector range and flags. Reads are
 * skipped here, except, with --reads, the bios a traced reader queues and their requests.
 *
 * Every hook has a tp_btf entry and a raw_tp one (same handler, all reads through CO-RE);
 * userspace/probe/ autoloads the variant that attaches.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cgroup.bpf.h"
#include "compat.bpf.h"
#include "config.bpf.h"
#include "emit.bpf.h"
#include "file_filter.bpf.h"
#include "kept_out.bpf.h"
#include "metrics.bpf.h"
#include "read_requests.bpf.h"
#include "submitter.bpf.h"
#include "sync_waiters.bpf.h"
#include "task_filter.bpf.h"
#include "task_state.bpf.h"
#include "writepath.h"

/* bvecs walked one by one; a longer bio is checked for file-contiguity at its last bvec. */
#define WP_BIO_WALK 16

struct wp_page_pos {
	__u64 ino;
	__u64 index;
	__u32 dev;
	__u8 anon;
	__u8 no_file;
};

static __always_inline void wp_page_pos(struct page *page, __u32 offset, struct wp_page_pos *p)
{
	__u32 in_folio;
	struct folio *folio = wp_page_folio(page, &in_folio);
	struct address_space *mapping = BPF_CORE_READ(folio, mapping);
	struct inode *host;

	p->anon = 0;
	p->no_file = 0;
	/* PAGE_MAPPING_ANON (bit 0): user memory, what O_DIRECT writes from; 0x3 is KSM. */
	if ((unsigned long)mapping & 1) {
		p->anon = 1;
		return;
	}
	host = BPF_CORE_READ(mapping, host);
	if (!mapping || !host) {
		p->no_file = 1;
		return;
	}
	p->ino = BPF_CORE_READ(host, i_ino);
	p->dev = wp_inode_dev(host);
	p->index = BPF_CORE_READ(folio, index) + in_folio + (offset >> WP_PAGE_SHIFT);
}

static __always_inline void wp_fill_extents(struct wp_bio_record *r, struct bio *bio)
{
	struct bio_vec *vecs = BPF_CORE_READ(bio, bi_io_vec);
	__u32 idx = BPF_CORE_READ(bio, bi_iter.bi_idx);
	__u32 done = BPF_CORE_READ(bio, bi_iter.bi_bvec_done);
	__u32 left = r->bytes;
	__u32 vcnt = BPF_CORE_READ(bio, bi_vcnt);
	__u32 walked_bytes = 0;
	struct wp_page_pos pos;
	struct bio_vec bv;
	__u32 n = 0;

	if (!vecs || !left)
		return;
	for (int i = 0; i < WP_BIO_WALK; i++) {
		__u32 off, len, pages;

		/* A clone (a stacked device's remap onto the disk under it, dm-linear) shares its
		 * source's bvecs but has bi_vcnt 0: its own bytes bound its walk. */
		if ((vcnt && idx + i >= vcnt) || !left)
			break;
		if (bpf_probe_read_kernel(&bv, sizeof(bv), &vecs[idx + i]))
			break;
		/* A split clone starts inside a bvec: bi_bvec_done bytes are not its own. */
		off = bv.bv_offset + done;
		len = bv.bv_len - done;
		done = 0;
		if (len > left)
			len = left;
		wp_page_pos(bv.bv_page, off, &pos);
		if (pos.anon || pos.no_file) {
			if (i == 0)
				r->bio_flags |= pos.anon ? WP_BIO_ANON : WP_BIO_NO_FILE;
			else
				r->bio_flags |= WP_BIO_MIXED;
			break;
		}
		if (i == 0) {
			r->ino = pos.ino;
			r->file_dev = pos.dev;
		} else if (pos.ino != r->ino || pos.dev != r->file_dev) {
			r->bio_flags |= WP_BIO_MIXED;
			break;
		}
		pages = ((off & (WP_PAGE_SIZE - 1)) + len + WP_PAGE_SIZE - 1) >> WP_PAGE_SHIFT;
		if (n > 0 && n <= WP_BIO_MAX_EXTENTS &&
		    r->extents[n - 1].index + r->extents[n - 1].pages == pos.index) {
			r->extents[n - 1].pages += pages;
		} else if (n > 0 && n <= WP_BIO_MAX_EXTENTS &&
			   r->extents[n - 1].index + r->extents[n - 1].pages == pos.index + 1 &&
			   (off & (WP_PAGE_SIZE - 1))) {
			/* Two bvecs sharing a page (sub-page blocks). */
			r->extents[n - 1].pages += pages - 1;
		} else if (n < WP_BIO_MAX_EXTENTS) {
			r->extents[n].index = pos.index;
			r->extents[n].pages = pages;
			n++;
		} else {
			r->bio_flags |= WP_BIO_TRUNCATED;
			break;
		}
		left -= len;
		walked_bytes += len;
	}
	r->nr_extents = n;
	if (!left || (r->bio_flags & (WP_BIO_TRUNCATED | WP_BIO_MIXED)) || n == 0)
		return;
	/* More bvecs than walked. Writeback bios are nearly always one file-contiguous run:
	 * check that the last bvec's page is where the run predicts, and extend it. */
	if (n == 1 && vcnt > 0 && bpf_probe_read_kernel(&bv, sizeof(bv), &vecs[vcnt - 1]) == 0) {
		__u64 expect = r->extents[0].index + ((r->bytes - bv.bv_len) >> WP_PAGE_SHIFT);

		wp_page_pos(bv.bv_page, bv.bv_offset, &pos);
		if (!pos.anon && !pos.no_file && pos.ino == r->ino && pos.index == expect &&
		    (walked_bytes & (WP_PAGE_SIZE - 1)) == 0) {
			r->extents[0].pages = (r->bytes + WP_PAGE_SIZE - 1) >> WP_PAGE_SHIFT;
			return;
		}
	}
	r->bio_flags |= WP_BIO_TRUNCATED;
}

/* ---- a trace of some processes (wp_filters_files): bystanders' bios and requests -----------
 * Writeback of a bystander's files is most of a busy machine's block traffic. A bio a traced
 * thread submits is always kept. On a disk a traced file lives on, a bio is kept out when it
 * writes pages of a regular file no traced call resolved, or is an O_DIRECT write (user memory)
 * of an untraced thread; those of no regular file (journal and metadata blocks, flushes), which
 * items of traced files may wait on, are kept. On any other disk a bio is kept out unless it
 * carries a traced file's pages (which then notes the disk as traced). A request is kept out
 * when every bio it holds was (bpf/kept_out.bpf.h), and on a disk no traced file is on always:
 * its events are not sent, and what the disk did for it is added to filtered_requests for the
 * disk's totals. A data bio kept out of a traced disk adds its bytes to its owner's in
 * filtered_io, and its request, completing while a traced sync waits (bpf/sync_waiters.bpf.h),
 * is told in a wp_bystander_io_record: the neighbours the sync waits behind, which the agent
 * names. */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct wp_filtered_totals);
} filtered_requests SEC(".maps");

/* Data bios kept out of a traced disk (a bystander's), by owner: the agent adds them to each
 * owner's bytes over the trace (the summary's io_by_process). Not preallocated: most
 * traces fill a few entries. Past its size an owner's bytes go uncounted. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct wp_filtered_io_key);
	__type(value, struct wp_filtered_io);
} filtered_io SEC(".maps");

/* Sets `owner` to the owner of data bio `bio` of `disk`, kept out: the user thread's process
 * that queued it, or for a kernel thread the file `host` (whose dirtier the agent knows); and
 * adds its bytes to the owner's in filtered_io (a split-off piece's were counted with the bio it
 * came from, queued whole). */
static __always_inline void wp_count_filtered_io(struct bio *bio, __u32 op, __u32 disk,
						 __u8 kind, struct task_struct *task, bool user,
						 struct inode *host, struct wp_filtered_io_key *owner)
{
	struct wp_filtered_io zero = {}, *io;

	if (op != WP_OP_WRITE && op != WP_OP_WRITE_ZEROES)
		return;
	if (user) {
		owner->tgid = task->tgid;
		owner->cgroup_id = task->cgroups->dfl_cgrp->kn->id;
	} else if (host) {
		owner->dev = wp_inode_dev(host);
		owner->ino = BPF_CORE_READ(host, i_ino);
	} else {
		return;
	}
	owner->disk = disk;
	if (kind != WP_BIO_QUEUE)
		return;
	io = bpf_map_lookup_elem(&filtered_io, owner);
	if (!io) {
		if (user)
			bpf_get_current_comm(zero.comm, sizeof(zero.comm));
		bpf_map_update_elem(&filtered_io, owner, &zero, BPF_NOEXIST);
		io = bpf_map_lookup_elem(&filtered_io, owner);
		if (!io)
			return;
	}
	__sync_fetch_and_add(&io->bytes, BPF_CORE_READ(bio, bi_iter.bi_size));
	__sync_fetch_and_add(&io->bios, 1);
}

/* Tells that `nr_bytes` of kept-out write request `rq` on `disk` completed while a traced sync
 * waits, with its first bio's owner: the sync's neighbours (see above). */
static __always_inline void wp_emit_bystander_io(struct request *rq, __u32 disk, __u32 nr_bytes)
{
	__u64 bio = (__u64)BPF_CORE_READ(rq, bio);
	struct wp_filtered_io_key *owner = bpf_map_lookup_elem(&filtered_bios, &bio);
	struct wp_bystander_io_record *r;
	struct wp_filtered_io *io;

	if (!owner || owner->disk != disk)
		return;
	r = wp_reserve(sizeof(*r), WP_REC_BYSTANDER_IO, WP_HOOK_REQUEST);
	if (!r)
		return;
	r->rq = (__u64)rq;
	r->cgroup_id = owner->cgroup_id;
	r->ino = owner->ino;
	r->disk = disk;
	r->file_dev = owner->dev;
	r->tgid = owner->tgid;
	r->bytes = nr_bytes;
	__builtin_memset(r->comm, 0, sizeof(r->comm));
	io = owner->tgid ? bpf_map_lookup_elem(&filtered_io, owner) : NULL;
	if (io)
		__builtin_memcpy(r->comm, io->comm, sizeof(r->comm));
	wp_submit(r, sizeof(*r));
}

/* The page cache the bio's first bytes are in, NULL for none; *anon: user memory. */
static __always_inline struct address_space *wp_bio_first_mapping(struct bio *bio, bool *anon)
{
	struct bio_vec *vecs = BPF_CORE_READ(bio, bi_io_vec);
	struct address_space *mapping;
	struct folio *folio;
	struct bio_vec bv;
	__u32 in_folio;

	*anon = false;
	if (!vecs || !BPF_CORE_READ(bio, bi_iter.bi_size) ||
	    bpf_probe_read_kernel(&bv, sizeof(bv), &vecs[BPF_CORE_READ(bio, bi_iter.bi_idx)]))
		return NULL;
	folio = wp_page_folio(bv.bv_page, &in_folio);
	mapping = BPF_CORE_READ(folio, mapping);
	if ((unsigned long)mapping & 1) {
		*anon = true;
		return NULL;
	}
	return mapping;
}

/* The inode whose page the bio's first bytes are, NULL for none; *anon: user memory. */
static __always_inline struct inode *wp_bio_first_host(struct bio *bio, bool *anon)
{
	struct address_space *mapping = wp_bio_first_mapping(bio, anon);

	return mapping ? BPF_CORE_READ(mapping, host) : NULL;
}

/* Why the current thread queues read bio `bio`, and the tag (WP_URING_TAG of its start) of what
 * it queues it for: a traced read call (its misses, the readahead it starts, an O_DIRECT read's
 * data, the file system's metadata it needs), or the thread's open page fault, for the faulting
 * file's pages only (a call the tracer does not follow, made between two faults, reads for
 * itself). False for everyone else's reads: a kernel thread's, an untraced thread's. */
static __always_inline bool wp_read_bio_why(struct bio *bio, __u8 *why, __u32 *tag)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct wp_task_state *st;
	struct wp_uring_op *op;
	bool anon;

	if (task->flags & WP_PF_KTHREAD)
		return false;
	/* An io-wq worker running a traced io_uring read: the op's record names it. */
	op = wp_iowq_op();
	if (op) {
		if (!wp_syscall_is_read(op->syscall))
			return false;
		op->issue_tid = wp_current_tid();
		*why = WP_WHY_READ_CALL;
		*tag = WP_URING_TAG(op->start_ns);
		return true;
	}
	st = bpf_task_storage_get(&task_state, task, 0, 0);
	if (!st)
		return false;
	if (st->active) {
		if (!wp_syscall_is_read(st->syscall))
			return false;
		*why = WP_WHY_READ_CALL;
		/* An io_uring read issued inline: its op's tag, as the op's record has its start. */
		*tag = st->uring_req ? wp_current_uring_tag() : WP_URING_TAG(st->start_ns);
		return true;
	}
	if (!st->fault_start || !st->fault_mapping ||
	    (__u64)wp_bio_first_mapping(bio, &anon) != st->fault_mapping)
		return false;
	*why = WP_WHY_FAULT;
	*tag = WP_URING_TAG(st->fault_start);
	return true;
}

/* Whether read request `rq`'s event is sent: it carries a read bio that was (a request holding
 * more bios than the walk's bound is judged by its first ones). */
static __always_inline bool wp_read_request_sent(struct request *rq, __u8 event, __u32 nr_bytes)
{
	__u64 key = (__u64)rq;
	__u8 one = 1;

	if (event == WP_RQ_COMPLETE) {
		if (!bpf_map_lookup_elem(&read_rqs, &key))
			return false;
		/* At this event __data_len is what was left before this completion. */
		if (nr_bytes >= BPF_CORE_READ(rq, __data_len))
			bpf_map_delete_elem(&read_rqs, &key);
		return true;
	}
	if (event != WP_RQ_INSERT && event != WP_RQ_ISSUE) /* requeue */
		return bpf_map_lookup_elem(&read_rqs, &key) != NULL;
	/* Decided again at each insert and issue: the pointer may be a new request's. */
	if (wp_rq_has_read_bio(rq)) {
		bpf_map_update_elem(&read_rqs, &key, &one, BPF_ANY);
		return true;
	}
	bpf_map_delete_elem(&read_rqs, &key);
	return false;
}

/* Whether bio `bio` is kept out of the trace (see above); `owner` is set for a data bio kept out
 * of a traced disk. */
static __always_inline bool wp_bio_filtered(struct bio *bio, __u32 op, __u32 disk, __u8 kind,
					    struct wp_filtered_io_key *owner)
{
	struct task_struct *task = bpf_get_current_task_btf();
	bool user = !(task->flags & WP_PF_KTHREAD), anon;
	struct inode *host;

	/* A user thread submits its own writes and syncs (a kernel thread: anyone's). */
	if (user && wp_task_traced())
		return false;
	host = wp_bio_first_host(bio, &anon);
	if (!wp_disk_may_be_traced(disk))
		/* Another disk: kept only for a traced file's pages remapped onto it by a stacked
		 * device (the bio then notes the disk as traced). */
		return !host ||
		       !wp_file_may_be_traced(wp_inode_dev(host), BPF_CORE_READ(host, i_ino));
	if (anon) {
		/* O_DIRECT: an untraced thread's own, or a stacked device's remap */
		if (!user)
			return false;
	} else if (!host) {
		/* No pages: an untraced thread's discard or write-zeroes is its own; an empty write
		 * is a PREFLUSH, which makes every file's data on its disk durable. */
		if (!user || op == WP_OP_WRITE)
			return false;
	} else if (wp_file_may_be_traced(wp_inode_dev(host), BPF_CORE_READ(host, i_ino)) ||
		   (BPF_CORE_READ(host, i_mode) & WP_S_IFMT) != WP_S_IFREG) {
		/* A traced file's, or the journal's and metadata blocks (the block device's pages) */
		return false;
	}
	wp_count_filtered_io(bio, op, disk, kind, task, user, host, owner);
	return true;
}

/* The cgroup of `task`, a user thread queueing a bio, told to the agent (a wp_cgroup_record)
 * when it is not the one last told for the thread: a bystander's bios on a traced disk are
 * charged to its cgroup. By thread id, in an LRU map: bystanders have no task state. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} bio_cgroup_noted SEC(".maps");

static __always_inline void wp_note_submitter_cgroup(struct task_struct *task)
{
	__u32 tid = task->pid;
	__u64 none = 0, *noted = bpf_map_lookup_elem(&bio_cgroup_noted, &tid);

	if (!noted) {
		bpf_map_update_elem(&bio_cgroup_noted, &tid, &none, BPF_ANY);
		noted = bpf_map_lookup_elem(&bio_cgroup_noted, &tid);
		if (!noted)
			return;
	}
	wp_note_task_cgroup(noted, task);
}

static __always_inline void wp_count_filtered(__u32 disk, __u32 op, __u32 bytes, bool last)
{
	struct wp_filtered_totals zero = {}, *t;

	/* diskstats' writes: writes and write-zeroes (discards are counted apart); flushes. */
	if (op != WP_OP_WRITE && op != WP_OP_WRITE_ZEROES && op != WP_OP_FLUSH)
		return;
	t = bpf_map_lookup_elem(&filtered_requests, &disk);
	if (!t) {
		bpf_map_update_elem(&filtered_requests, &disk, &zero, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&filtered_requests, &disk);
		if (!t)
			return;
	}
	if (op == WP_OP_FLUSH) {
		t->flush_requests += 1;
		return;
	}
	t->write_bytes += bytes;
	if (last)
		t->write_requests += 1;
}

/* Whether a data request's event is kept out of the trace (see above). */
static __always_inline bool wp_request_filtered(struct request *rq, __u8 event, __u32 disk,
						__u32 op, __u32 nr_bytes)
{
	__u64 key = (__u64)rq;
	__u8 issued = WP_FILTERED_ISSUED, at_seq_end = WP_FILTERED_COUNT_AT_SEQ_END, *state;
	bool last, in_seq;

	switch (event) {
	case WP_RQ_INSERT:
		return !wp_disk_may_be_traced(disk) || wp_request_bios_filtered(rq);
	case WP_RQ_ISSUE:
		/* A disk no traced file is on holds no kept bio: a traced file's bio remapped onto
		 * it notes it as traced when queued, before its request is. */
		if (!wp_disk_may_be_traced(disk) || wp_request_bios_filtered(rq)) {
			bpf_map_update_elem(&filtered_rqs, &key, &issued, BPF_ANY);
			return true;
		}
		bpf_map_delete_elem(&filtered_rqs, &key);
		return false;
	case WP_RQ_COMPLETE:
		state = bpf_map_lookup_elem(&filtered_rqs, &key);
		if (!state) {
			/* Never issued: an empty PREFLUSH write the flush machinery completes
			 * itself (its flush went out as a request of its own). */
			if (nr_bytes || !wp_request_bios_filtered(rq))
				return false;
			wp_count_filtered(disk, op, 0, true);
			return true;
		}
		if (!nr_bytes) { /* the end of its flush sequence (PREFLUSH/FUA): its last event */
			if (*state == WP_FILTERED_COUNT_AT_SEQ_END)
				wp_count_filtered(disk, op, 0, true);
			bpf_map_delete_elem(&filtered_rqs, &key);
			return true;
		}
		/* At this event __data_len is what was left before this completion. */
		last = nr_bytes >= BPF_CORE_READ(rq, __data_len);
		in_seq = wp_rq_in_flush_seq(rq);
		wp_count_filtered(disk, op, nr_bytes, last && !in_seq);
		if ((op == WP_OP_WRITE || op == WP_OP_WRITE_ZEROES) && wp_syncs_waiting())
			wp_emit_bystander_io(rq, disk, nr_bytes);
		if (last && in_seq)
			bpf_map_update_elem(&filtered_rqs, &key, &at_seq_end, BPF_ANY);
		else if (last)
			bpf_map_delete_elem(&filtered_rqs, &key);
		return true;
	default: /* requeue: inserted and issued again, decided again then */
		return bpf_map_lookup_elem(&filtered_rqs, &key) != NULL;
	}
}

static __always_inline int wp_emit_bio(struct bio *bio, __u8 kind)
{
	struct task_struct *task;
	bool kthread;
	__u32 opf = BPF_CORE_READ(bio, bi_opf);
	__u32 op = wp_req_op(opf);
	struct wp_bio_record *r;
	__u32 bdev, disk, tag = 0;
	__u8 why = 0;

	if (op == WP_OP_READ && (!cfg_reads || !wp_read_bio_why(bio, &why, &tag)))
		return 0;
	wp_bio_devs(bio, &bdev, &disk);
	if (cfg_disk && disk != cfg_disk && bdev != cfg_disk)
		return 0;
	if (op == WP_OP_READ) {
		__u64 key = (__u64)bio;
		__u8 one = 1;

		bpf_map_update_elem(&read_bios, &key, &one, BPF_ANY);
	} else if (wp_filters_files()) {
		struct wp_filtered_io_key owner = {};
		__u64 key = (__u64)bio;

		if (wp_bio_filtered(bio, op, disk, kind, &owner)) {
			/* On a disk no traced file is on, its requests are kept out whatever their
			 * bios (wp_request_filtered): no entry to look up. */
			if (wp_disk_may_be_traced(disk))
				bpf_map_update_elem(&filtered_bios, &key, &owner, BPF_ANY);
			return 0;
		}
		bpf_map_delete_elem(&filtered_bios, &key);
		/* A traced file's bio remapped to the disk under a stacked device: that disk's
		 * flushes and journal now concern it. */
		wp_note_traced_disk(disk);
	}
	task = bpf_get_current_task_btf();
	kthread = task->flags & WP_PF_KTHREAD;
	if (!kthread)
		wp_note_submitter_cgroup(task);
	r = wp_reserve(sizeof(*r), WP_REC_BIO, WP_HOOK_BIO);
	if (!r)
		return 0;
	r->bio = (__u64)bio;
	r->pid = bpf_get_current_pid_tgid() >> 32;
	r->tid = wp_current_tid();
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	r->bdev = bdev;
	r->disk = disk;
	r->sector = BPF_CORE_READ(bio, bi_iter.bi_sector);
	r->bytes = BPF_CORE_READ(bio, bi_iter.bi_size);
	r->op = op;
	r->flags = wp_req_flags(opf);
	r->kind = kind;
	r->why = op == WP_OP_READ ? why : wp_current_why();
	r->bio_flags = kthread ? WP_BIO_KTHREAD : 0;
	r->nr_extents = 0;
	r->file_dev = 0;
	r->ino = 0;
	r->uring_tag = op == WP_OP_READ ? tag : wp_current_uring_tag();
	__builtin_memset(r->extents, 0, sizeof(r->extents));
	wp_fill_extents(r, bio);
	wp_submit(r, sizeof(*r));
	return 0;
}

/* writepath serve: when each request in flight was issued, for its service time. Keyed by the
 * request pointer: the kernel reuses its preallocated requests, so an entry whose completion
 * was never seen is overwritten by the next issue of the same request. One entry outside serve
 * (the agent shrinks it before load). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u64);
} rq_issued SEC(".maps");

/* Times a request from its issue to its first completion event (reads too: the service time
 * of the device's every op). A partial completion ends the timing with the bytes it completed. */
static __always_inline void wp_time_request(struct request *rq, __u8 event, __u32 op, __u32 disk,
					    __u32 nr_bytes)
{
	__u64 key = (__u64)rq, now, *issued;

	/* The clock only for the two events that use it (a read is not free on a KVM guest). */
	if (event == WP_RQ_ISSUE) {
		now = bpf_ktime_get_ns();
		bpf_map_update_elem(&rq_issued, &key, &now, BPF_ANY);
		return;
	}
	if (event != WP_RQ_COMPLETE)
		return;
	issued = bpf_map_lookup_elem(&rq_issued, &key);
	if (!issued)
		return;
	now = bpf_ktime_get_ns() - *issued;
	bpf_map_delete_elem(&rq_issued, &key);
	wp_metric_add(WP_METRIC_WHAT(WP_METRIC_REQUEST, op), disk, now, nr_bytes, 0);
	if (op == WP_OP_FLUSH)
		wp_metric_add(WP_METRIC_WHAT(WP_METRIC_FLUSH, 0), disk, now, 0, 0);
}

/* One request record: a request's event, or a failed bio's (`ptr` is then the bio). */
static __always_inline void wp_send_request_record(__u64 ptr, __u8 event, __u32 disk, __u32 op,
						   __u32 flags, __u32 bytes, __u64 sector,
						   int status)
{
	struct wp_request_record *r = wp_reserve(sizeof(*r), WP_REC_REQUEST, WP_HOOK_REQUEST);

	if (!r)
		return;
	r->rq = ptr;
	r->disk = disk;
	r->op = op;
	r->flags = flags;
	r->bytes = bytes;
	r->sector = sector;
	r->error = wp_blk_status_errno(status);
	r->tid = wp_current_tid();
	r->kind = event;
	__builtin_memset(r->pad, 0, sizeof(r->pad));
	wp_submit(r, sizeof(*r));
}

static __always_inline int wp_emit_request(struct request *rq, __u8 event, int error,
					   __u32 nr_bytes)
{
	__u32 opf = BPF_CORE_READ(rq, cmd_flags);
	__u32 op = wp_req_op(opf);
	__u32 disk, flags;

	if (cfg_metrics && event != WP_RQ_INSERT)
		wp_time_request(rq, event, op, wp_rq_disk(rq), nr_bytes);
	/* Every failed write counts, whether or not its issue was timed: lost data. */
	if (cfg_metrics && event == WP_RQ_COMPLETE && error && op == WP_OP_WRITE)
		wp_metric_add(WP_METRIC_WHAT(WP_METRIC_WRITE_ERROR, 0), wp_rq_disk(rq), 0, nr_bytes,
			      0);
	if (op == WP_OP_READ && (!cfg_reads || !wp_read_request_sent(rq, event, nr_bytes)))
		return 0;
	disk = wp_rq_disk(rq);
	if (cfg_disk && disk != cfg_disk)
		return 0;
	if (wp_filters_files() && op != WP_OP_FLUSH && op != WP_OP_READ &&
	    wp_request_filtered(rq, event, disk, op, nr_bytes))
		return 0;
	/* A flush of a disk no traced file is on (counted when done, for the disk's totals). */
	if (op == WP_OP_FLUSH && !wp_disk_may_be_traced(disk)) {
		if (event == WP_RQ_COMPLETE)
			wp_count_filtered(disk, op, 0, true);
		return 0;
	}
	flags = wp_req_flags(opf);
	if (event == WP_RQ_COMPLETE && nr_bytes && wp_rq_in_flush_seq(rq))
		flags |= WP_REQ_FLUSH_SEQ;
	wp_send_request_record((__u64)rq, event, disk, op, flags,
			       event == WP_RQ_COMPLETE ? nr_bytes : BPF_CORE_READ(rq, __data_len),
			       BPF_CORE_READ(rq, __sector), error);
	return 0;
}

/* A write bio's completion, only when it failed: a failed request already says so, but a
 * bio-based device (dm, md) fails bios that never become requests. block_bio_complete fires
 * from bio_endio() for every bio block_bio_queue saw (blk-core marks them
 * BIO_TRACE_COMPLETION, v4.14+); the successful ones, nearly all of them, cost a status test. */
static __always_inline int wp_emit_bio_failure(struct bio *bio)
{
	__u8 status = BPF_CORE_READ(bio, bi_status);
	__u32 opf, op, bdev, disk;

	if (!status)
		return 0;
	opf = BPF_CORE_READ(bio, bi_opf);
	op = wp_req_op(opf);
	if (op != WP_OP_WRITE)
		return 0;
	wp_bio_devs(bio, &bdev, &disk);
	if (cfg_disk && disk != cfg_disk && bdev != cfg_disk)
		return 0;
	wp_send_request_record((__u64)bio, WP_RQ_BIO_FAILED, disk, op, wp_req_flags(opf),
			       BPF_CORE_READ(bio, bi_iter.bi_size),
			       BPF_CORE_READ(bio, bi_iter.bi_sector), status);
	return 0;
}

SEC("tp_btf/block_bio_complete")
int BPF_PROG(wp_bio_complete_btf, struct request_queue *q, struct bio *bio)
{
	WP_TP_ARG_OR_RETURN(bio);
	return wp_emit_bio_failure(bio);
}

SEC("raw_tp/block_bio_complete")
int BPF_PROG(wp_bio_complete_raw, struct request_queue *q, struct bio *bio)
{
	return wp_emit_bio_failure(bio);
}

SEC("tp_btf/block_bio_queue")
int BPF_PROG(wp_bio_queue_btf, struct bio *bio)
{
	WP_TP_ARG_OR_RETURN(bio);
	return wp_emit_bio(bio, WP_BIO_QUEUE);
}

SEC("raw_tp/block_bio_queue")
int BPF_PROG(wp_bio_queue_raw, struct bio *bio) { return wp_emit_bio(bio, WP_BIO_QUEUE); }

/* The split-off front part is a new bio that never passes block_bio_queue (the remainder
 * is queued again under the old pointer). */
SEC("tp_btf/block_split")
int BPF_PROG(wp_bio_split_btf, struct bio *bio, unsigned int new_sector)
{
	WP_TP_ARG_OR_RETURN(bio);
	return wp_emit_bio(bio, WP_BIO_SPLIT);
}

SEC("raw_tp/block_split")
int BPF_PROG(wp_bio_split_raw, struct bio *bio, unsigned int new_sector)
{
	return wp_emit_bio(bio, WP_BIO_SPLIT);
}

/* The three request events before completion, each a program per prototype: v5.11
 * (a54895fa057c, backported to 5.10.137) dropped the request_queue argument of
 * block_rq_insert/issue/requeue, and the *_q variants take the old (q, rq) one. */
#define WP_REQUEST_EVENT_PROGRAMS(event, EVENT)                                                    \
	SEC("tp_btf/block_rq_" #event)                                                             \
	int BPF_PROG(wp_rq_##event##_btf, struct request *rq)                                      \
	{                                                                                          \
		WP_TP_ARG_OR_RETURN(rq);                                                           \
		return wp_emit_request(rq, EVENT, 0, 0);                                           \
	}                                                                                          \
	SEC("raw_tp/block_rq_" #event)                                                             \
	int BPF_PROG(wp_rq_##event##_raw, struct request *rq)                                      \
	{                                                                                          \
		return wp_emit_request(rq, EVENT, 0, 0);                                           \
	}                                                                                          \
	SEC("raw_tp/block_rq_" #event)                                                             \
	int BPF_PROG(wp_rq_##event##_raw_q, struct request_queue *q, struct request *rq)           \
	{                                                                                          \
		return wp_emit_request(rq, EVENT, 0, 0);                                           \
	}

WP_REQUEST_EVENT_PROGRAMS(insert, WP_RQ_INSERT)
WP_REQUEST_EVENT_PROGRAMS(issue, WP_RQ_ISSUE)
/* A requeued request is inserted and issued again under its pointer: without this event a
 * second issue could not be told from a new request that reused the pointer of one whose
 * completion the trace missed. Rare (a busy device, BLK_STS_RESOURCE), so it costs nothing. */
WP_REQUEST_EVENT_PROGRAMS(requeue, WP_RQ_REQUEUE)
#undef WP_REQUEST_EVENT_PROGRAMS

/* Fires once per partial completion, and a second time with nr_bytes 0 when a PREFLUSH/FUA
 * data request's flush sequence ends (block/blk-flush.c). */
SEC("tp_btf/block_rq_complete")
int BPF_PROG(wp_rq_complete_btf, struct request *rq, int error, unsigned int nr_bytes)
{
	WP_TP_ARG_OR_RETURN(rq);
	return wp_emit_request(rq, WP_RQ_COMPLETE, error, nr_bytes);
}

SEC("raw_tp/block_rq_complete")
int BPF_PROG(wp_rq_complete_raw, struct request *rq, int error, unsigned int nr_bytes)
{
	return wp_emit_request(rq, WP_RQ_COMPLETE, error, nr_bytes);
}

char LICENSE[] SEC("license") = "GPL";
