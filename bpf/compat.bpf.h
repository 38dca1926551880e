/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one place in bpf/ that knows kernels differ. Every helper reads through CO-RE and
 * says which kernel changed what. The agent's userspace/probe/ picks between program
 * variants; the helpers here cover field moves inside one program.
 */
#ifndef WRITEPATH_COMPAT_BPF_H
#define WRITEPATH_COMPAT_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "writepath.h"

/* The kernel's page size is a build option (4, 16 or 64 KiB on arm64, 4 KiB on x86-64) and is in
 * no BTF type: the agent sets it from the running kernel (getpagesize) before load, and page
 * indexes here and in the stitcher are counted in those pages. */
const volatile __u32 cfg_page_shift __weak = 12;
#define WP_PAGE_SHIFT cfg_page_shift
#define WP_PAGE_SIZE (1u << WP_PAGE_SHIFT)

/* tp_btf arguments that may be NULL. Since 6.13 (and 6.12.y stable: Debian bookworm's 6.12)
 * the verifier types every pointer argument of a tracepoint defined in a module, and of a few
 * listed ones in vmlinux, as maybe-NULL (trusted_ptr_or_null_). Pointer arithmetic on one,
 * which every BPF_CORE_READ is, is refused until it is NULL-checked, and one refused program
 * fails the whole load: jbd2, fuse, nvme-core and xfs are modules in Debian's kernels, built
 * in on others ("R3 pointer arithmetic on trusted_ptr_or_null_ prohibited" for
 * jbd2_start_commit's journal on 6.12.117). So every tp_btf program NULL-checks the pointer
 * arguments it reads before anything else: where they are typed non-NULL the branch is never
 * taken. */
#define WP_TP_ARG_OR_RETURN(p)                                                                     \
	do {                                                                                       \
		if (!(p))                                                                          \
			return 0;                                                                  \
	} while (0)

/* Kernel dev_t: MAJOR << 20 | MINOR (MINORBITS 20), what tracepoints print. */
static __always_inline __u32 wp_mkdev(int major, int minor)
{
	return ((__u32)major << 20) | (__u32)minor;
}

/* open(2) flags. These are architecture constants (x86 and arm64 agree; alpha, parisc, sparc
 * and mips differ), not kernel-version ones. */
#define WP_O_ACCMODE 00000003
#define WP_O_CREAT 00000100
#define WP_O_EXCL 00000200
#define WP_O_TRUNC 00001000
#define WP_O_APPEND 00002000
#define WP_O_DSYNC 00010000
#define WP_O_DIRECT 00040000
#define WP_O___SYNC 04000000
/* *at(2) calls: the working directory as dirfd, and unlinkat's flag for a directory
 * (uapi/linux/fcntl.h, every architecture). */
#define WP_AT_FDCWD -100
#define WP_AT_REMOVEDIR 0x200
/* renameat2(2) flags (uapi/linux/fs.h, every architecture). */
#define WP_RENAME_NOREPLACE 1
#define WP_RENAME_EXCHANGE 2
#define WP_RENAME_WHITEOUT 4
/* task_struct.flags: an io_uring worker thread (include/linux/sched.h, 0x10 since v5.12). */
#define WP_PF_IO_WORKER 0x00000010
/* msync(2) flags: asm-generic/mman-common.h (alpha, mips, parisc differ). */
#define WP_MS_ASYNC 1
#define WP_MS_INVALIDATE 2
#define WP_MS_SYNC 4
/* fmode_t FMODE_WRITE (include/linux/fs.h; the same bit since before git). */
#define WP_FMODE_WRITE 0x2
#define WP_S_IFMT 00170000
#define WP_S_IFREG 0100000
#define WP_S_IFBLK 0060000
#define WP_S_IFDIR 0040000

/* ---- syscalls ---------------------------------------------------------------------------- */

/* The syscall number at sys_exit, which (unlike sys_enter) does not pass it: the register
 * the entry code saved it in is per architecture (x86: orig_ax; arm64 would be syscallno). */
#if defined(__TARGET_ARCH_x86)
#define wp_regs_syscall_nr(regs) ((long)(regs)->orig_ax)
/* The sixth syscall argument (pwritev2's flags): libbpf has no PT_REGS_PARM6_SYSCALL. */
#define wp_regs_syscall_arg6(regs) ((unsigned long)(regs)->r9)
#else
/* Only x86-64 is built and tested. arm64 keeps the number in regs->syscallno and the sixth
 * argument in regs->regs[5]; add its branch with a vmlinux/arm64/vmlinux.h to build there. */
#error "writepath: add this architecture's saved syscall number register"
#endif

/* Syscall argument `i` (0-5, a constant: it folds to one load) of the user registers `regs`,
 * as a syscall's entry function (__x64_sys_NAME) receives them. */
#define wp_regs_syscall_arg(regs, i)                                                               \
	((i) == 0   ? (unsigned long)PT_REGS_PARM1_SYSCALL(regs)                                   \
	 : (i) == 1 ? (unsigned long)PT_REGS_PARM2_SYSCALL(regs)                                   \
	 : (i) == 2 ? (unsigned long)PT_REGS_PARM3_SYSCALL(regs)                                   \
	 : (i) == 3 ? (unsigned long)PT_REGS_PARM4_SYSCALL(regs)                                   \
	 : (i) == 4 ? (unsigned long)PT_REGS_PARM5_SYSCALL(regs)                                   \
		    : wp_regs_syscall_arg6(regs))

/* ---- gendisk / block_device ----------------------------------------------------------- */

/* v5.16 (f3fa33acca9f) removed request->rq_disk; the disk is reached through rq->q->disk
 * (request_queue gained ->disk in v5.15). */
struct request___pre516 {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

static __always_inline __u32 wp_disk_devt(struct gendisk *disk)
{
	if (!disk)
		return 0;
	return wp_mkdev(BPF_CORE_READ(disk, major), BPF_CORE_READ(disk, first_minor));
}

static __always_inline __u32 wp_rq_disk(struct request *rq)
{
	struct gendisk *disk = NULL;

	if (bpf_core_field_exists(rq->q->disk))
		disk = BPF_CORE_READ(rq, q, disk);
	else
		disk = BPF_CORE_READ((struct request___pre516 *)rq, rq_disk);
	return wp_disk_devt(disk);
}

/* v5.12 (309dca309fc3) replaced bio->bi_disk + bi_partno with bio->bi_bdev. */
struct bio___pre512 {
	struct gendisk *bi_disk;
	__u8 bi_partno;
} __attribute__((preserve_access_index));

static __always_inline void wp_bio_devs(struct bio *bio, __u32 *bdev, __u32 *disk)
{
	if (bpf_core_field_exists(bio->bi_bdev)) {
		struct block_device *bd = BPF_CORE_READ(bio, bi_bdev);

		*bdev = BPF_CORE_READ(bd, bd_dev);
		*disk = wp_disk_devt(BPF_CORE_READ(bd, bd_disk));
	} else {
		struct bio___pre512 *old = (void *)bio;
		struct gendisk *gd = BPF_CORE_READ(old, bi_disk);

		*disk = wp_disk_devt(gd);
		*bdev = *disk + BPF_CORE_READ(old, bi_partno);
	}
}

/* ---- request flags ------------------------------------------------------------------------ */

/* REQ_OP_BITS has been 8 since v4.10; the flag bits above it (enum req_flag_bits) move
 * whenever a flag is added or removed (e.g. __REQ_FUA was 17 in v6.1 and v6.18 but 10 in
 * v4.19), so read their values from the running kernel's BTF. */
#define WP_REQ_OP_MASK 0xffu

static __always_inline __u32 wp_req_op(__u32 opf) { return opf & WP_REQ_OP_MASK; }

static __always_inline __u32 wp_req_flags(__u32 opf)
{
	__u32 out = 0;

	if (opf & (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_FUA)))
		out |= WP_REQ_FUA;
	if (opf & (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH)))
		out |= WP_REQ_PREFLUSH;
	if (opf & (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_SYNC)))
		out |= WP_REQ_SYNC;
	if (opf & (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_META)))
		out |= WP_REQ_META;
	return out;
}

/* Whether the flush machinery runs `rq` through a PREFLUSH/FUA sequence (RQF_FLUSH_SEQ, an
 * rq_flags bit). Up to v6.1 at least the bit was the macro 1 << 4, absent from BTF; v6.12 and
 * later number it in enum rqf_flags (__RQF_FLUSH_SEQ = 1), which CO-RE reads. */
static __always_inline bool wp_rq_in_flush_seq(struct request *rq)
{
	__u32 bit = 4;

	if (bpf_core_enum_value_exists(enum rqf_flags, __RQF_FLUSH_SEQ))
		bit = bpf_core_enum_value(enum rqf_flags, __RQF_FLUSH_SEQ);
	return BPF_CORE_READ(rq, rq_flags) & (1u << (bit & 31));
}

/* ---- writeback ------------------------------------------------------------------------ */

/* enum wb_reason has gained and lost members over time (WB_REASON_FREE_MORE_MEM went in
 * v4.x, FOREIGN_FLUSH arrived in v5.4): compare against the running kernel's values. */
static __always_inline __u8 wp_writeback_why(int reason)
{
	if (reason == bpf_core_enum_value(enum wb_reason, WB_REASON_BACKGROUND))
		return WP_WHY_BACKGROUND;
	if (reason == bpf_core_enum_value(enum wb_reason, WB_REASON_PERIODIC))
		return WP_WHY_PERIODIC;
	if (reason == bpf_core_enum_value(enum wb_reason, WB_REASON_SYNC))
		return WP_WHY_SYNC;
	if (reason == bpf_core_enum_value(enum wb_reason, WB_REASON_VMSCAN))
		return WP_WHY_VMSCAN;
	return WP_WHY_OTHER_WRITEBACK;
}

/* balance_dirty_pages: v6.1 names the per-device fields bdi_setpoint/bdi_dirty; later
 * kernels call them wb_setpoint/wb_dirty (per-wb throttling). */
struct trace_event_raw_balance_dirty_pages___bdi {
	unsigned long bdi_setpoint;
	unsigned long bdi_dirty;
} __attribute__((preserve_access_index));

static __always_inline void wp_throttle_device(struct trace_event_raw_balance_dirty_pages *ctx,
					       __u64 *dirty, __u64 *setpoint)
{
	struct trace_event_raw_balance_dirty_pages___bdi *old = (void *)ctx;

	if (bpf_core_field_exists(ctx->wb_dirty)) {
		*dirty = BPF_CORE_READ(ctx, wb_dirty);
		*setpoint = BPF_CORE_READ(ctx, wb_setpoint);
	} else {
		*dirty = BPF_CORE_READ(old, bdi_dirty);
		*setpoint = BPF_CORE_READ(old, bdi_setpoint);
	}
}

/* ---- xfs log (tp_btf) ----------------------------------------------------------------- */

/* An iclog's file system and LSN, as xfs_trace.h's xlog_iclog_class reads them: the device
 * of the log's mount, and the big-endian LSN of the iclog's record header (ic_header is
 * ic_data->hic_header from v5.14's iclog tracepoints through v6.18 at least). */
static __always_inline __u32 wp_iclog_dev(struct xlog_in_core *iclog)
{
	return BPF_CORE_READ(iclog, ic_log, l_mp, m_super, s_dev);
}

static __always_inline __u64 wp_iclog_lsn(struct xlog_in_core *iclog)
{
	return bpf_be64_to_cpu(BPF_CORE_READ(iclog, ic_data, hic_header.h_lsn));
}

/* ---- folios and pages --------------------------------------------------------------------- */

/* folio_nr_pages(): v6.10+ keeps the count in folio->_nr_pages; v6.1 has the order in
 * folio->_folio_order (and _folio_nr_pages, removed in v6.6); v5.16-v6.0 keep the order in
 * the low byte of page[1].flags. A small folio (no PG_head) is one page. */
struct folio___v61 {
	unsigned char _folio_order;
} __attribute__((preserve_access_index));

struct folio___v516 {
	unsigned long _flags_1;
} __attribute__((preserve_access_index));

static __always_inline __u32 wp_folio_nr_pages(struct folio *folio)
{
	unsigned long flags = 0;
	__u32 order;

	/* The page flags are the first word of struct page and folio in every kernel; v6.17 made
	 * folio->flags a one-word struct (memdesc_flags_t), which CO-RE cannot match against the
	 * plain unsigned long of older kernels, so read the word itself. */
	bpf_probe_read_kernel(&flags, sizeof(flags), folio);
	if (!(flags & (1ul << bpf_core_enum_value(enum pageflags, PG_head))))
		return 1;
	if (bpf_core_field_exists(folio->_nr_pages))
		return BPF_CORE_READ(folio, _nr_pages);
	if (bpf_core_field_exists(((struct folio___v61 *)folio)->_folio_order))
		order = BPF_CORE_READ((struct folio___v61 *)folio, _folio_order);
	else
		order = BPF_CORE_READ((struct folio___v516 *)folio, _flags_1) & 0xff;
	return order < 20 ? 1u << order : 1;
}

/* block_rq_complete passes a blk_status_t (a small positive code, v4.13+), not an errno: the
 * classic tracepoint's format converts it with blk_status_to_errno(), tp_btf and raw_tp see it
 * raw. The codes are #defines (no BTF); these have kept their values since they were added
 * (blk_types.h, the blk_errors[] table): NOTSUPP 1, TIMEOUT 2, NOSPC 3, TRANSPORT 4, TARGET 5,
 * RESV_CONFLICT 6 (NEXUS before v6.5), MEDIUM 7, PROTECTION 8, RESOURCE 9, IOERR 10,
 * DM_REQUEUE 11, AGAIN 12, DEV_RESOURCE 13, ZONE_OPEN 14, ZONE_ACTIVE 15, OFFLINE 16 (v5.18),
 * DURATION_LIMIT 17 (v6.5). Anything else is what the kernel reports it as: -EIO. */
static __always_inline int wp_blk_status_errno(int status)
{
	switch (status) {
	case 0:
		return 0;
	case 1:
		return -95; /* EOPNOTSUPP */
	case 2:
		return -110; /* ETIMEDOUT */
	case 3:
		return -28; /* ENOSPC */
	case 4:
		return -67; /* ENOLINK */
	case 5:
		return -121; /* EREMOTEIO */
	case 6:
		return -52; /* EBADE */
	case 7:
		return -61; /* ENODATA */
	case 8:
		return -84; /* EILSEQ */
	case 9:
		return -12; /* ENOMEM */
	case 11:
		return -78; /* EREMCHG */
	case 12:
		return -11; /* EAGAIN */
	case 13:
		return -16; /* EBUSY */
	case 14:
		return -109; /* ETOOMANYREFS */
	case 15:
		return -75; /* EOVERFLOW */
	case 16:
		return -19; /* ENODEV */
	case 17:
		return -62; /* ETIME */
	default:
		return status < 0 ? status : -5; /* EIO */
	}
}

/* A write dirtied no more pages than its bytes span: the pages of large folios it only
 * partly covers are dirtied with it but are not its own (see wp_write_pages_in). */
static __always_inline __u32 wp_dirtied_within(__u32 pages, __u64 pos, __s64 ret)
{
	__u64 span;

	if (ret <= 0 || pos == (__u64)-1)
		return pages;
	span = ((pos + ret - 1) >> WP_PAGE_SHIFT) - (pos >> WP_PAGE_SHIFT) + 1;
	return pages < span ? pages : (__u32)span;
}

/* The folio a page belongs to: compound_head with bit 0 set points to the head page. */
static __always_inline struct folio *wp_page_folio(struct page *page, __u32 *page_in_folio)
{
	unsigned long head = BPF_CORE_READ(page, compound_head);

	*page_in_folio = 0;
	if (head & 1) {
		head -= 1;
		*page_in_folio = ((unsigned long)page - head) / bpf_core_type_size(struct page);
		return (struct folio *)head;
	}
	return (struct folio *)page;
}

/* ---- inodes -------------------------------------------------------------------------------- */

/* Whether the inode has dirty pages (I_DIRTY_PAGES). The flags became an enum
 * (inode_state_flags_t) in v6.12 and were renumbered then and since (I_DIRTY_PAGES: bit 2
 * before, bit 5, bit 6 in v6.18): the bit comes from the enum where it exists. i_state itself
 * was an unsigned long, a u32 from v6.15 (either matches the integer flavor: the bit is in the
 * low word), the enum in v6.18, and from v6.19 a struct read through accessors, which neither
 * flavor matches: there the inode counts as dirty already, and no dirtier is told. */
struct inode___int_state {
	unsigned long i_state;
} __attribute__((preserve_access_index));

static __always_inline bool wp_inode_has_dirty_pages(struct inode *inode)
{
	unsigned long state, bit = 1ul << 2;

	if (bpf_core_field_exists(((struct inode___int_state *)inode)->i_state))
		state = BPF_CORE_READ((struct inode___int_state *)inode, i_state);
	else if (bpf_core_field_exists(inode->i_state))
		state = BPF_CORE_READ(inode, i_state);
	else
		return true;
	if (bpf_core_enum_value_exists(enum inode_state_flags_t, I_DIRTY_PAGES))
		bit = bpf_core_enum_value(enum inode_state_flags_t, I_DIRTY_PAGES);
	return state & bit;
}

/* ---- io_uring ------------------------------------------------------------------------------ */

#define WP_PF_IO_WORKER 0x00000010 /* io-wq workers and SQPOLL threads (v5.12+) */
#define WP_PF_KTHREAD 0x00200000   /* kernel threads: flushers, jbd2, kworkers (stable) */

/* The request (struct io_kiocb *) the current io-wq worker is running, 0 when current is no
 * worker or runs none. task->worker_private is the worker's struct io_worker since v5.17 (it
 * was task->pf_io_worker before); io_worker.cur_work is the request's embedded io_wq_work,
 * so the request is that pointer less the member's offset (CO-RE: the layouts of 6.1 and
 * 6.18 differ). An SQPOLL thread has PF_IO_WORKER but no io_worker (NULL). */
static __always_inline __u64 wp_iowq_current_req(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct io_worker *worker;
	struct io_wq_work *work;

	if (!(task->flags & WP_PF_IO_WORKER) || !bpf_core_field_exists(task->worker_private))
		return 0;
	worker = (struct io_worker *)task->worker_private;
	if (!worker)
		return 0;
	work = BPF_CORE_READ(worker, cur_work);
	if (!work)
		return 0;
	return (__u64)work - bpf_core_field_offset(struct io_kiocb, work);
}

/* ---- cgroups ------------------------------------------------------------------------------ */

/* --cgroup matches a cgroup and its descendants with bpf_current_task_under_cgroup() (v4.9)
 * against a BPF_MAP_TYPE_CGROUP_ARRAY holding the cgroup2 directory's fd: the kernel compares
 * the task's default-hierarchy cgroup's ancestor at the filter cgroup's level, one load and
 * compare. The helper is offered to tracepoint, raw_tp and tp_btf programs
 * (bpf_tracing_func_proto) on 6.1 and 6.18 alike (bpftool feature probe lists it there).
 * bpf_get_current_ancestor_cgroup_id() would do the same compare but needs the cgroup's level
 * in the kernel's whole hierarchy, which an agent inside a cgroup namespace (a pod) cannot
 * read from its paths; the array takes the directory itself, whatever namespace opened it.
 * bpf_get_current_cgroup_id() (v4.18, same program types) names the cgroup items carry. */
#define wp_current_task_under(cgroup_array, index)                                                 \
	(bpf_current_task_under_cgroup(cgroup_array, index) == 1)

/* ---- files -------------------------------------------------------------------------------- */

/* `task`'s file for `fd` (`task` is current, from bpf_get_current_task_btf(), v5.11: callers
 * that hold it pass it, a helper call less). The task pointer is BTF-typed, so the walk to the
 * fd table is plain loads (fault-safe, CO-RE relocated) instead of a probe-read helper call per
 * pointer; only the indexed slot needs one. */
static __always_inline struct file *wp_task_file(struct task_struct *task, int fd)
{
	struct fdtable *fdt = task->files->fdt;
	struct file *file = NULL;

	if (fd < 0 || (unsigned int)fd >= fdt->max_fds)
		return NULL;
	bpf_probe_read_kernel(&file, sizeof(file), &fdt->fd[fd]);
	return file;
}

/* bpf_rdonly_cast (v6.2, every program type) makes a pointer read from memory (a file from the
 * fd table, which the verifier sees as a number) a read-only BTF pointer: its fields, and the
 * inode and dentry behind it, are then plain fault-safe loads instead of a probe-read helper
 * call each. Weak: libbpf 1.1 leaves it unresolved on a kernel without it, and the agent loads
 * the programs that call it only where vmlinux BTF has it (hook_table.cpp, the "cast" variant):
 * 6.1's verifier refuses an unresolved kfunc call even in a program's dead code. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

static __always_inline struct file *wp_typed_file(struct file *file)
{
	return bpf_rdonly_cast(file, bpf_core_type_id_kernel(struct file));
}

/* Superblock dev_t of an inode's file system (the page cache of a block device file belongs
 * to the bdev inode, whose superblock is bdevfs: use its i_rdev there). */
static __always_inline __u32 wp_inode_fs_dev(struct inode *inode)
{
	__u32 mode = BPF_CORE_READ(inode, i_mode);

	if ((mode & WP_S_IFMT) == WP_S_IFBLK)
		return BPF_CORE_READ(inode, i_rdev);
	return BPF_CORE_READ(inode, i_sb, s_dev);
}

#define WP_BTRFS_SUPER_MAGIC 0x9123683EUL

/* The dev_t stat() reports for an inode, which --file compares and items carry. Everywhere
 * but btrfs that is the superblock's. btrfs gives every subvolume (the top one included) an
 * anonymous device of its own, BTRFS_I(inode)->root->anon_dev, which btrfs_getattr() reports
 * (v6.1 and v6.18 alike); the superblock holds yet another. btrfs may be a module (Debian's
 * 6.1): CO-RE then relocates against its BTF, and a kernel without btrfs never gets here. */
static __always_inline __u32 wp_inode_dev(struct inode *inode)
{
	__u32 fs_dev = wp_inode_fs_dev(inode);

	if (bpf_core_type_exists(struct btrfs_inode) &&
	    BPF_CORE_READ(inode, i_sb, s_magic) == WP_BTRFS_SUPER_MAGIC) {
		struct btrfs_inode *bi =
		    (void *)inode - bpf_core_field_offset(struct btrfs_inode, vfs_inode);
		__u32 anon = BPF_CORE_READ(bi, root, anon_dev);

		if (anon)
			return anon;
	}
	return fs_dev;
}

#define WP_OVERLAYFS_SUPER_MAGIC 0x794c7630UL

/* An inode of an overlayfs superblock: the overlay's own, which has no page cache. */
static __always_inline bool wp_overlay_inode(struct inode *inode)
{
	return BPF_CORE_READ(inode, i_sb, s_magic) == WP_OVERLAYFS_SUPER_MAGIC;
}

/* The inode whose page cache a file's writes land in. overlayfs (every container's root) keeps
 * none of its own: a write to an overlay file goes to the file of the upper layer, whose inode
 * the page cache, the requests and the journal name, so the trace follows that one. An overlay
 * inode is the vfs_inode of a struct ovl_inode whose __upperdentry is the upper file once it
 * was copied up (open for writing and truncate copy up; a file still only in a lower layer is
 * read-only and stays itself). struct ovl_inode and its __upperdentry have been there since
 * v4.13; the file-side helpers around them did not stay (ovl_real_fdget, struct ovl_file in 6.13,
 * backing_file in 6.6), which is why the inode is read, not the file. overlay may be a module
 * (Debian's 6.1): CO-RE then relocates against its BTF, and a kernel without it never gets
 * here. */
static __always_inline struct inode *wp_backing_inode(struct inode *inode)
{
	if (bpf_core_type_exists(struct ovl_inode) && wp_overlay_inode(inode)) {
		struct ovl_inode *oi =
		    (void *)inode - bpf_core_field_offset(struct ovl_inode, vfs_inode);
		struct dentry *upper = BPF_CORE_READ(oi, __upperdentry);
		struct inode *real = upper ? BPF_CORE_READ(upper, d_inode) : NULL;

		if (real)
			return real;
	}
	return inode;
}

/* The disk under a superblock, for --dev filtering of syscalls (0 for tmpfs and friends). */
static __always_inline __u32 wp_inode_disk(struct inode *inode)
{
	struct block_device *bd = BPF_CORE_READ(inode, i_sb, s_bdev);

	if (!bd)
		return 0;
	return wp_disk_devt(BPF_CORE_READ(bd, bd_disk));
}

/* ---- page-cache marks --------------------------------------------------------------------- */

/* Whether the page cache still tags the folio at `index` PAGECACHE_TAG_DIRTY (XA_MARK_0).
 * At filemap:mm_filemap_delete_from_page_cache the folio's own PG_dirty is already gone on the
 * truncate path (truncate_cleanup_folio() calls folio_cancel_dirty() first, in v6.1 and v6.18
 * alike), but the xarray's marks are only reset by page_cache_delete() after the tracepoint,
 * so the tag tells a dirty folio being thrown away from a clean one being reclaimed. Marks of
 * a node are the OR of its subtree's: walk down from the root and stop at the first clear bit.
 * The leaf level holds the folio's canonical slot (a large folio is aligned to its order).
 * XA_CHUNK_SHIFT is 6 (64-bit index: at most 11 levels) unless CONFIG_BASE_SMALL. */
#define WP_XA_CHUNK_SHIFT 6
#define WP_XA_MAX_LEVELS 11

static __always_inline bool wp_pagecache_dirty_marked(struct address_space *mapping,
						      unsigned long index)
{
	unsigned long entry = (unsigned long)BPF_CORE_READ(mapping, i_pages.xa_head);

	/* xa_is_node(): internal entries end in 0b10; values below 4096 are retry/sibling
	 * markers. */
	if ((entry & 3) != 2 || entry <= 4096) {
		/* The only entry lives in the root (a one-folio file at index 0): the root's marks
		 * are xa_flags bits from __GFP_BITS_SHIFT on, which moves with the kernel's GFP
		 * flags (26 or 27 in v6.1, ___GFP_LAST_BIT from v6.9); below bit 8 are the xarray's
		 * own flags (LOCK_IRQ, ACCOUNT). A folio being deleted is never under writeback
		 * (truncation waits for it) and TOWRITE is only set on DIRTY entries, so any mark
		 * there means dirty. */
		__u32 flags = BPF_CORE_READ(mapping, i_pages.xa_flags);

		return index == 0 && entry && (flags >> 8) != 0;
	}
	for (int level = 0; level < WP_XA_MAX_LEVELS; level++) {
		struct xa_node *node = (struct xa_node *)(entry - 2);
		unsigned char shift = BPF_CORE_READ(node, shift);
		unsigned long offset = (index >> shift) & ((1ul << WP_XA_CHUNK_SHIFT) - 1);
		unsigned long marks = 0;

		bpf_core_read(&marks, sizeof(marks), &node->marks[0]);
		if (!(marks & (1ul << offset)))
			return false;
		entry = 0;
		bpf_core_read(&entry, sizeof(entry), &node->slots[offset]);
		if ((entry & 3) != 2 || entry <= 4096 || shift == 0)
			return true;
	}
	return false;
}

/* The folio the page cache holds at `index` of `mapping`, or NULL: the same walk down the
 * xarray, by slots. A folio of order N sits at its first index and its other slots hold
 * sibling entries naming that slot (below XA_CHUNK_SHIFT orders), or it sits whole in a slot
 * of an upper node (orders from XA_CHUNK_SHIFT up), where the walk stops. Internal entries end
 * in 0b10: nodes are pointers (above 4096), siblings small numbers (below the chunk size);
 * value entries (shadows of evicted pages) end in 1. */
static __always_inline struct folio *wp_pagecache_folio(struct address_space *mapping,
							unsigned long index)
{
	unsigned long entry = (unsigned long)BPF_CORE_READ(mapping, i_pages.xa_head);

	if ((entry & 3) != 2)
		return index == 0 && entry && !(entry & 1) ? (struct folio *)entry : NULL;
	for (int level = 0; level < WP_XA_MAX_LEVELS; level++) {
		struct xa_node *node;
		unsigned long offset;
		unsigned char shift;

		if ((entry & 3) != 2 || entry <= 4096)
			return NULL;
		node = (struct xa_node *)(entry - 2);
		shift = BPF_CORE_READ(node, shift);
		offset = (index >> shift) & ((1ul << WP_XA_CHUNK_SHIFT) - 1);
		entry = 0;
		bpf_core_read(&entry, sizeof(entry), &node->slots[offset]);
		/* xa_is_sibling(): the folio's own slot is the one it names. */
		if ((entry & 3) == 2 && (entry >> 2) < (1ul << WP_XA_CHUNK_SHIFT) - 1) {
			offset = (entry >> 2) & ((1ul << WP_XA_CHUNK_SHIFT) - 1);
			entry = 0;
			bpf_core_read(&entry, sizeof(entry), &node->slots[offset]);
		}
		if (!entry || (entry & 1))
			return NULL;
		if ((entry & 3) != 2)
			return (struct folio *)entry;
	}
	return NULL;
}

#endif /* WRITEPATH_COMPAT_BPF_H */
