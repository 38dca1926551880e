/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/*
 * The records, each described once, as a table of its fields: X(type, name, doc), in layout
 * order. From a table come the record's C struct (here, for BPF and the agent alike), the
 * agent's event and its decoding (userspace/decode/record_fields.h), the event scripts'
 * lines (tests/support) and the record's fields in docs/reference/records.md, which a test
 * holds to these tables. Adding a record: a table, a row in WP_RECORD_TABLE, and its users.
 *
 * A field's type is a token: one of the plain widths (u8 … s64), or what the field holds
 * (dev: a kernel dev_t, MAJOR << 20 | MINOR; ns: CLOCK_MONOTONIC nanoseconds; comm: a task's
 * name; padN: explicit padding), or the enumeration it holds (its width in its name). Its C
 * type is wp_t_<type>; what it means to the agent, record_fields.h's wp::field::<type>.
 * Included by writepath.h; the enumerations a record holds come before it there.
 */
#ifndef WRITEPATH_RECORD_TABLES_H
#define WRITEPATH_RECORD_TABLES_H

typedef wp_u8 wp_t_u8;
typedef wp_u16 wp_t_u16;
typedef wp_u32 wp_t_u32;
typedef wp_u64 wp_t_u64;
typedef wp_s32 wp_t_s32;
typedef wp_s64 wp_t_s64;
typedef wp_u32 wp_t_dev;
typedef wp_u64 wp_t_ns;
typedef wp_u64 wp_t_ptr; /* a kernel pointer: identity only */
typedef char wp_t_comm[WP_COMM_LEN];
typedef wp_u8 wp_t_pad8;
typedef wp_u16 wp_t_pad16;
typedef wp_u32 wp_t_pad32;
typedef wp_u8 wp_t_pad8x2[2];
typedef wp_u8 wp_t_pad8x3[3];
typedef wp_u8 wp_t_pad8x7[7];
typedef wp_u64 wp_t_u64x2[2];
typedef wp_u32 wp_t_u32x2[2];
typedef wp_u16 wp_t_u16x2[2];
typedef wp_u64 wp_t_frames[WP_STACK_DEPTH];
typedef char wp_t_path_names[WP_PATH_BYTES];
/* enumerations and flag sets, by width */
typedef wp_u8 wp_t_syscall8;	  /* enum wp_syscall */
typedef wp_u8 wp_t_file_flags8;	  /* enum wp_file_flags */
typedef wp_u16 wp_t_call_flags16; /* enum wp_call_flags, enum wp_via above */
typedef wp_u32 wp_t_req_op32;	  /* enum wp_req_op */
typedef wp_u32 wp_t_req_flags32;  /* enum wp_req_flags */
typedef wp_u8 wp_t_bio_kind8;	  /* enum wp_bio_kind */
typedef wp_u8 wp_t_bio_flags8;	  /* enum wp_bio_flags */
typedef wp_u8 wp_t_why8;	  /* enum wp_why */
typedef wp_u8 wp_t_rq_event8;	  /* enum wp_request_event */
typedef wp_u32 wp_t_jbd2_phase32; /* enum wp_journal_phase */
typedef wp_u8 wp_t_nvme_event8;	  /* enum wp_nvme_event */
typedef wp_u8 wp_t_inline_fs8;	  /* enum wp_inline_fs */
typedef wp_u32 wp_t_fs_log32;	  /* enum wp_fs_log_event */
typedef wp_u32 wp_t_iclog_flags32; /* enum wp_iclog_flags */
typedef wp_u16 wp_t_path_flags16; /* enum wp_path_flags */
typedef wp_u16 wp_t_ns_flags16;	  /* enum wp_ns_flags */
typedef wp_u8 wp_t_ns_op8;	  /* enum wp_ns_op */
typedef wp_u8 wp_t_offcpu_flags8; /* enum wp_offcpu_slot_flags */
typedef wp_u8 wp_t_offcpu_cause8; /* enum wp_offcpu_cause */
typedef wp_u16 wp_t_fault_flags16; /* enum wp_fault_flags */

#define WP_FIELD_DECL_(type, name, doc) wp_t_##type name;

/* A record's struct: the header, then its table's fields. */
#define WP_RECORD_STRUCT(tag, FIELDS)                                                              \
	struct wp_##tag##_record {                                                                 \
		struct wp_record_header h;                                                         \
		FIELDS(WP_FIELD_DECL_)                                                             \
	};

/* One write or sync syscall of a traced thread, emitted at syscall exit (header ts = exit).
 * Written once per traced write: with the ring buffer's 8-byte record header it fills
 * exactly two cache lines (120 + 8 bytes), since filling fresh ring-buffer lines is most of
 * what a record costs the writer. */
#define WP_SYSCALL_FIELDS(X)                                                                       \
	X(ns, start_ns, "the call's entry")                                                        \
	X(u32, pid, "tgid")                                                                        \
	X(u32, tid, "thread")                                                                      \
	X(comm, comm, "the thread's name")                                                         \
	X(syscall8, syscall, "enum wp_syscall")                                                    \
	X(file_flags8, file_flags, "enum wp_file_flags: the file's open flags, with the call's")  \
	X(call_flags16, call_flags, "enum wp_call_flags; bits 13-15: enum wp_via (0: a syscall)")  \
	X(s32, fd, "io_uring: the SQE's fd (a fixed-file index with IOSQE_FIXED_FILE)")           \
	X(dev, dev, "the file's device, as stat() reports it")                                    \
	X(u32, pages_dirtied, "pages (not folios) the call dirtied")                              \
	X(u64, ino, "the file's inode")                                                            \
	X(s64, ret, "bytes written, or -errno")                                                    \
	X(u64, pos, "file offset of the first byte written (pwrite: the argument)")               \
	X(u64, count, "bytes requested; sync_file_range: nbytes")                                  \
	X(ns, throttle_ns, "sum of balance_dirty_pages pauses inside the call")                   \
	X(u32, throttle_events, "those pauses")                                                    \
	X(u32, writeback_waits, "folio_wait_writeback inside the call")                            \
	X(u32, dirty_folios, "folios the call dirtied")                                            \
	X(dev, fs_dev, "the file system's superblock device when it is not dev (btrfs), else 0")

/* One read syscall of a traced thread on a regular file, emitted at syscall exit (header ts =
 * exit): what it asked for and got, and what the page cache did for it. Pages it added are
 * the folios mm_filemap_add_to_page_cache inserted into its file's page cache while it ran,
 * in its thread: the misses it filled and the readahead it started; the ones past its last
 * byte served no byte of it. 120 bytes, like the syscall record: two cache lines with the
 * ring buffer's header, for the readers that make millions a second. */
#define WP_READ_FIELDS(X)                                                                          \
	X(ns, start_ns, "the call's entry")                                                        \
	X(u32, pid, "tgid")                                                                        \
	X(u32, tid, "thread")                                                                      \
	X(comm, comm, "the thread's name")                                                         \
	X(syscall8, syscall, "enum wp_syscall (class READ)")                                       \
	X(file_flags8, file_flags, "enum wp_file_flags: the file's open flags, with the call's")  \
	X(call_flags16, call_flags, "enum wp_call_flags; bits 13-15: enum wp_via (0: a syscall)")  \
	X(s32, fd, "io_uring: the SQE's fd (a fixed-file index with IOSQE_FIXED_FILE)")           \
	X(dev, dev, "the file's device, as stat() reports it")                                    \
	X(dev, fs_dev, "the file system's superblock device when it is not dev (btrfs), else 0")   \
	X(u64, ino, "the file's inode")                                                            \
	X(s64, ret, "bytes read, or -errno")                                                       \
	X(u64, pos, "file offset of the first byte read (pread: the argument)")                   \
	X(u64, count, "bytes requested")                                                           \
	X(u32, pages_added, "pages the call put in its file's page cache (misses and readahead)") \
	X(u32, pages_added_beyond, "of those, pages past the call's last byte: readahead only")   \
	X(u32, sync_ra_pages, "pages the call still wanted as each synchronous readahead began")  \
	X(u32, async_ra_pages, "the same, at each asynchronous readahead")                        \
	X(u16, sync_ra, "synchronous readaheads (page_cache_sync_ra) inside the call")            \
	X(u16, async_ra, "asynchronous readaheads (a PG_readahead folio reached) inside the call")\
	X(pad32, pad, "")

/* A page fault of a traced thread on a shared or private mapping of a regular file, sent when
 * the thread's next fault begins or the thread exits (header ts): the kernel has no hook at a
 * fault's end. The fault's own hooks bound it: its entry (exceptions:page_fault_user, or
 * page_fault_kernel for the kernel touching user memory in a syscall) and its last page-cache
 * event. A fault fault-around served maps cached pages (mm_filemap_map_pages) and calls no
 * filemap_fault; one that finds its page missing reads it in (the folios it inserted), drops
 * the mmap lock to wait and runs filemap_fault again. */
#define WP_FAULT_FIELDS(X)                                                                         \
	X(ns, start_ns, "the fault's entry")                                                       \
	X(ns, last_ns, "its last page-cache event: filemap_fault, fault-around or a folio inserted") \
	X(u32, pid, "tgid")                                                                        \
	X(u32, tid, "thread")                                                                      \
	X(comm, comm, "the thread's name")                                                         \
	X(dev, dev, "the mapped file's device, as stat() reports it")                             \
	X(u32, pages_added, "pages the fault put in its file's page cache (its page, readahead)")  \
	X(u64, ino, "the mapped file's inode")                                                     \
	X(u64, address, "the faulting user address")                                               \
	X(u64, index, "the file page it faulted on")                                               \
	X(u32, mapped_pages, "pages fault-around offered to map from the page cache")             \
	X(u16, filemap_faults, "filemap_fault calls: the second retries after a wait for the page") \
	X(fault_flags16, flags, "enum wp_fault_flags")

/* Where a slow syscall's time went off CPU, emitted just before its wp_syscall_record (same
 * tid and start_ns). On-CPU time is the rest of its latency. */
#define WP_CAUSES_FIELDS(X)                                                                        \
	X(ns, start_ns, "the call's entry")                                                        \
	X(u32, tid, "the call's thread")                                                           \
	X(pad32, pad, "")                                                                          \
	X(ns, throttle_ns, "asleep in balance_dirty_pages")                                        \
	X(ns, writeback_wait_ns, "asleep waiting for a page under writeback")                      \
	X(ns, blocked_ns, "asleep for anything else (locks, journal, I/O)")                        \
	X(ns, runnable_ns, "preempted: ready to run, waiting for a CPU")

/* A run of a file's pages a bio carries (not a record: wp_bio_record holds them). */
#define WP_EXTENT_FIELDS(X)                                                                        \
	X(u64, index, "page index in the file")                                                    \
	X(u32, pages, "pages from it on")                                                          \
	X(pad32, pad, "")
struct wp_extent {
	WP_EXTENT_FIELDS(WP_FIELD_DECL_)
};
typedef struct wp_extent wp_t_extents[WP_BIO_MAX_EXTENTS];

/* A bio entering the block layer: queued, or a piece split from one. */
#define WP_BIO_FIELDS(X)                                                                           \
	X(ptr, bio, "kernel pointer: identity while in flight")                                    \
	X(u32, pid, "tgid of the submitting thread")                                               \
	X(u32, tid, "the submitting thread")                                                       \
	X(dev, bdev, "bi_bdev: a partition, or the disk")                                          \
	X(dev, disk, "the whole disk: requests are per disk")                                      \
	X(u64, sector, "disk sector (partition offset already added)")                             \
	X(u32, bytes, "the bio's size")                                                            \
	X(req_op32, op, "enum wp_req_op")                                                          \
	X(req_flags32, flags, "enum wp_req_flags")                                                 \
	X(bio_kind8, kind, "enum wp_bio_kind: queued or split")                                    \
	X(bio_flags8, bio_flags, "enum wp_bio_flags: what its pages are")                          \
	X(u8, nr_extents, "extents[] used")                                                        \
	X(why8, why, "enum wp_why: why it was submitted")                                          \
	X(dev, file_dev, "superblock device of the pages' inode")                                  \
	X(u32, uring_tag, "WP_URING_TAG() of its io_uring op, read call or fault; 0: none")         \
	X(u64, ino, "the pages' inode")                                                            \
	X(comm, comm, "the submitting thread's name")                                              \
	X(extents, extents, "the file pages it carries, in runs")

/* A block request's event: inserted, issued, completed (and requeued, or a bio failed). */
#define WP_REQUEST_FIELDS(X)                                                                       \
	X(ptr, rq, "kernel pointer: reused, so identity is pointer + lifetime")                    \
	X(dev, disk, "the disk")                                                                   \
	X(req_op32, op, "enum wp_req_op")                                                          \
	X(req_flags32, flags, "enum wp_req_flags of rq->cmd_flags; a completion: FLUSH_SEQ too")   \
	X(u32, bytes, "__data_len; at complete: the bytes completed")                              \
	X(u64, sector, "its first sector")                                                         \
	X(s32, error, "complete: blk_status_t")                                                    \
	X(u32, tid, "the thread the event ran in")                                                 \
	X(rq_event8, kind, "enum wp_request_event")                                                \
	X(pad8x7, pad, "")

/* A jbd2 commit phase (ext4's journal). */
#define WP_JOURNAL_FIELDS(X)                                                                       \
	X(dev, dev, "the file system's device")                                                    \
	X(u32, transaction, "jbd2's tid")                                                          \
	X(jbd2_phase32, phase, "enum wp_journal_phase")                                            \
	X(u32, tid, "the thread (jbd2's)")

/* One balance_dirty_pages pause of a traced thread. */
#define WP_THROTTLE_FIELDS(X)                                                                      \
	X(u32, pid, "tgid")                                                                        \
	X(u32, tid, "thread")                                                                      \
	X(s64, pause_ms, "the sleep balance_dirty_pages chose")                                    \
	X(u64, period_ms, "its period")                                                            \
	X(u64, dirty, "pages dirty globally at that moment")                                       \
	X(u64, limit, "the global dirty limit, pages")                                             \
	X(u64, wb_dirty, "pages dirty on this device's writeback")                                 \
	X(u64, wb_setpoint, "its setpoint")

/* An NVMe command set up or completed. */
#define WP_NVME_FIELDS(X)                                                                          \
	X(ptr, rq, "the block request it serves")                                                  \
	X(dev, disk, "the disk")                                                                   \
	X(u16, qid, "queue")                                                                       \
	X(u16, cid, "command id")                                                                  \
	X(nvme_event8, kind, "enum wp_nvme_event")                                                 \
	X(u8, opcode, "NVMe opcode")                                                               \
	X(u16, status, "completion status")                                                        \
	X(u32, nsid, "namespace")                                                                  \
	X(u64, slba, "first logical block")                                                        \
	X(u32, nlb, "blocks, zero-based as on the wire: nlb + 1 blocks")                           \
	X(u32, control, "cdw12 high half: FUA is bit 14")

/* A dirty folio deleted from the page cache without being written back: its data will never
 * reach the disk. One record per dirty folio (clean ones, e.g. reclaim, emit nothing): 48
 * ring-buffer bytes, so truncating 1 GiB of small dirty folios costs 12 MiB of the buffer. */
#define WP_DISCARD_FIELDS(X)                                                                       \
	X(u64, ino, "the file's inode")                                                            \
	X(u64, index, "first page index in the file")                                              \
	X(dev, dev, "superblock dev_t, as in wp_syscall_record")                                   \
	X(u32, pages, "pages in the folio")

/* Bytes of a file that its file system stored inside its metadata instead of data blocks:
 * btrfs writes a file of at most max_inline bytes (2048 by default) back as an inline extent,
 * a copy into a leaf of its subvolume's tree; ext4 with inline_data keeps a small file's data
 * in its inode, copied there by the write itself. No data request will ever carry those
 * pages: they reach the disk with the metadata, when the transaction that holds them commits
 * (a btrfs transaction commit or log-tree sync, a jbd2 commit). One record per copy. */
#define WP_INLINE_FIELDS(X)                                                                        \
	X(u64, ino, "the file's inode")                                                            \
	X(u64, start, "the bytes stored: [start, start + len) of the file")                        \
	X(u64, transaction,                                                                        \
	  "the transaction holding them, or a later one: btrfs's generation then, ext4's i_sync_tid") \
	X(u32, len, "bytes stored")                                                                \
	X(dev, dev, "the file's device, as wp_syscall_record's dev")                               \
	X(dev, fs_dev, "the file system's superblock device")                                      \
	X(inline_fs8, fs, "enum wp_inline_fs")                                                     \
	X(pad8x3, pad, "")

/* A btrfs transaction committed (btrfs:btrfs_transaction_commit, after its superblocks were
 * written and waited for): what every transaction up to `transaction` holds is on disk. */
#define WP_FS_COMMIT_FIELDS(X)                                                                     \
	X(u64, transaction, "the last committed (fs_info->last_trans_committed)")                  \
	X(ns, start_ns, "when the commit's own work began (0: not known)")                         \
	X(dev, fs_dev, "the file system's superblock device")                                      \
	X(u32, tid, "the thread that committed it, which wrote its superblocks")

/* A traced thread stored into a shared mapping of a regular file: the pages one write fault
 * made writable (or, where the kernel has no fault tracepoint, a folio it dirtied). */
#define WP_MMAP_DIRTY_FIELDS(X)                                                                    \
	X(u64, ino, "the file's inode")                                                            \
	X(u64, index, "first page index in the file")                                              \
	X(dev, dev, "superblock dev_t, as in wp_syscall_record")                                   \
	X(u32, pages, "pages from index on")                                                       \
	X(u32, pid, "tgid")                                                                        \
	X(u32, tid, "thread")                                                                      \
	X(comm, comm, "the thread's name")

/* The cgroup (v2) of a traced thread, emitted before the first record of that thread that an
 * item is made of, and again whenever the thread's cgroup has changed since: the syscall
 * record stays two cache lines, and a thread costs one of these per cgroup it writes from.
 * The id is the cgroup2 directory's inode number (kernfs node id); the agent names it. */
#define WP_CGROUP_FIELDS(X)                                                                        \
	X(u64, cgroup_id, "the cgroup2 directory's inode number")                                  \
	X(u32, pid, "tgid")                                                                        \
	X(u32, tid, "thread")

/* A file turned dirty: a thread dirtied a page of an inode that had none dirty. Sent by
 * whoever turned it, traced or not, once per clean-to-dirty turn (in a trace of some processes,
 * of files on their files' file systems and disks): the flusher's writeback of the file later
 * is charged to its dirtier (the neighbours of a slow sync). */
#define WP_DIRTIER_FIELDS(X)                                                                       \
	X(u64, ino, "the file's inode")                                                            \
	X(u64, cgroup_id, "the dirtier's cgroup2 directory inode number")                          \
	X(dev, dev, "superblock dev_t, as in wp_syscall_record")                                   \
	X(u32, pid, "tgid of the dirtier")                                                         \
	X(u32, tid, "the dirtying thread")                                                         \
	X(pad32, pad, "")                                                                          \
	X(comm, comm, "the thread's name")

/* A bystander's data completed on a traced disk while a traced sync waited: a request the trace
 * kept out (its bios are no traced call's), told only then, for the neighbours of the syncs
 * waiting. Its owner is its first bio's: a process, or for a kernel thread's writeback the
 * file, whose dirtier record names the process. */
#define WP_BYSTANDER_IO_FIELDS(X)                                                                  \
	X(ptr, rq, "kernel pointer of the request")                                               \
	X(u64, cgroup_id, "the owner's cgroup2 id (tgid set)")                                     \
	X(u64, ino, "the file a kernel thread wrote back (tgid 0), else 0")                       \
	X(dev, disk, "the whole disk")                                                             \
	X(dev, file_dev, "the file's superblock dev_t (ino set)")                                  \
	X(u32, tgid, "the owner process; 0: a kernel thread's writeback of file ino")              \
	X(u32, bytes, "data this completion finished")                                             \
	X(comm, comm, "the owner's name (tgid set)")

/* One distinct stack a slow call slept with (not a record: wp_offcpu_record holds them). */
#define WP_OFFCPU_SLOT_FIELDS(X)                                                                   \
	X(ns, ns, "time asleep with this stack, summed over its sleeps")                           \
	X(ns, longest_ns, "its longest sleep")                                                     \
	X(u32, sleeps, "sleeps with it")                                                           \
	X(offcpu_cause8, cause, "enum wp_offcpu_cause the page-cache hooks flagged (0: none)")     \
	X(u8, nframes, "frames[] used")                                                            \
	X(u8, waker_nframes, "waker_frames[] used")                                                \
	X(offcpu_flags8, flags, "enum wp_offcpu_slot_flags")                                       \
	X(u32, waker_pid, "tgid of the thread that woke its longest sleep")                        \
	X(u32, waker_tid, "that thread")                                                           \
	X(comm, waker_comm, "its name")                                                            \
	X(frames, frames, "return addresses, innermost first, 0-padded")                           \
	X(frames, waker_frames, "the waker's kernel stack when it woke the sleeper")
struct wp_offcpu_slot {
	WP_OFFCPU_SLOT_FIELDS(WP_FIELD_DECL_)
};
typedef struct wp_offcpu_slot wp_t_offcpu_slots[WP_OFFCPU_SLOTS];

/* Where a slow call slept, by kernel stack (only with --min-latency and stacks on): emitted
 * just before the call's wp_causes_record (same tid and start_ns). Each slot is one distinct
 * stack the thread went to sleep with (not preemptions); the longest sleeps keep a slot, the
 * rest add to unslotted_ns. */
#define WP_OFFCPU_FIELDS(X)                                                                        \
	X(ns, start_ns, "the call's entry")                                                        \
	X(u32, tid, "the call's thread")                                                           \
	X(u8, nslots, "slots[] used")                                                              \
	X(pad8x3, pad, "")                                                                         \
	X(ns, unslotted_ns, "asleep with stacks that got no slot (or no stack could be read)")     \
	X(ns, inode_lock_ns, "lock:contention_begin..end on the i_rwsem of the call's file")       \
	X(u32, inode_lock_waits, "those waits")                                                    \
	X(u32, holder_pid, "the writer owning the i_rwsem when the wait began; 0: unknown")        \
	X(u32, holder_tid, "that thread")                                                          \
	X(pad32, pad2, "")                                                                         \
	X(comm, holder_comm, "its name")                                                           \
	X(ns, direct_reclaim_ns, "vmscan:mm_vmscan_direct_reclaim_begin..end inside the call")     \
	X(ns, memcg_reclaim_ns, "vmscan:mm_vmscan_memcg_reclaim_begin..end")                       \
	X(ns, compaction_ns, "compaction:mm_compaction_begin..end")                                \
	X(u32, blk_throttled, "its bios went over a cgroup I/O limit (blk-throttle queued)")      \
	X(pad32, pad3, "")                                                                         \
	X(offcpu_slots, slots, "the stacks, longest first")

/* xfs's log (the journal of xfs): a sync's thread forcing the log, and the log writes (iclogs)
 * being issued and completing. One record per event; forces only from threads inside a traced
 * sync call, iclog events from any thread (the log write may be issued by the log worker or
 * another thread's force, and always completes in a worker). */
#define WP_FS_LOG_FIELDS(X)                                                                        \
	X(dev, dev, "the file system's superblock device")                                         \
	X(u32, tid, "the thread the event ran in")                                                 \
	X(fs_log32, kind, "enum wp_fs_log_event")                                                  \
	X(iclog_flags32, flags, "enum wp_iclog_flags (iclog events)")                              \
	X(u64, lsn, "the force's sequence or the iclog's log sequence number")

/* The path of a file, emitted once per file (dev, ino) before the first record that names it
 * (bpf/filepath.bpf.c keeps an LRU of the files already resolved). `names` holds the path's
 * components leaf first, each NUL-terminated ("file\0dir\0mnt\0"): the walk from the dentry
 * up to the root meets them in that order, and the agent joins them the right way round.
 * The walk ends at the root of the writer's mount namespace; on its way it notes where it
 * passed the writer's own root (fs->root), which a chroot puts below the namespace's: the
 * names up to there are the path as the writer sees it (/proc/PID/fd's), all of them the path
 * in its namespace. */
#define WP_FILE_PATH_FIELDS(X)                                                                     \
	X(u64, ino, "the file's inode")                                                            \
	X(dev, dev, "superblock dev_t, as in wp_syscall_record")                                   \
	X(path_flags16, flags, "enum wp_path_flags")                                               \
	X(u16, len, "bytes of names[] used")                                                       \
	X(u8, components, "NUL-terminated names in names[]")                                       \
	X(u8, root_components,                                                                     \
	  "with WP_PATH_PASSED_ROOT: how many of the names (leaf end) lie below the writer's root") \
	X(pad8x2, pad, "")                                                                         \
	X(u32, mnt_ns, "the writer's mount namespace: its nsfs inode (0: not known)")              \
	X(path_names, names, "the components, leaf first, each NUL-terminated")

/* One name-change call of a traced thread, at its exit (header ts = exit). The names are the
 * caller's own strings; each relative one comes with the directory it is relative to (the
 * dirfd's, or the working directory's), whose path record went out before this record, so
 * the agent can make the name whole without reading /proc. Variable-sized: the names follow
 * the struct, each NUL-terminated, name_len[i] bytes (NUL included; 0: none), and h.size is
 * the struct and the names rounded up to 8 bytes. A record fills the ring buffer's cache lines
 * it is written to: with both names' full 512 bytes a traced rename cost 1.2 us of program
 * time (bench/run.sh namespace), most of it those lines. */
#define WP_NAME_CHANGE_FIELDS(X)                                                                     \
	X(ns, start_ns, "the call's entry")                                                        \
	X(s64, ret, "its result")                                                                  \
	X(u64x2, dir_ino, "the directory each name is relative to (0: none, or absolute)")         \
	X(u64, ino,                                                                                \
	  "the file the call acted on through an fd, or opened (open: the returned fd's); 0: unknown") \
	X(u32x2, dir_dev, "those directories' devices")                                            \
	X(dev, dev, "the file's device")                                                           \
	X(u32, pid, "tgid")                                                                        \
	X(u32, tid, "thread")                                                                      \
	X(ns_flags16, flags, "enum wp_ns_flags")                                                   \
	X(ns_op8, op, "enum wp_ns_op")                                                             \
	X(u8, syscall, "the call: its value in WP_NAME_CHANGE_TABLE")                                \
	X(u16x2, name_len, "bytes of each name after the struct, NUL included (0: none)")          \
	X(s32, fd, "with WP_NS_FD: the call's fd argument")                                        \
	X(comm, comm, "the thread's name")

/* A file the application reaches through a stacking file system (overlayfs: every container's
 * root) whose pages, requests and journal are another file's: the upper file of the file
 * system below. Records name the backing file (dev, ino: the page cache's own inode); this
 * says what stat() shows the application. Sent right after the backing file's path record,
 * whose path is the one the application opened. */
#define WP_FILE_VIEW_FIELDS(X)                                                                     \
	X(u64, ino, "the backing (upper) file's inode, as the records name it")                    \
	X(u64, view_ino, "the stacked file's inode, as stat() reports it")                         \
	X(dev, dev, "the backing file's device")                                                   \
	X(dev, view_dev, "the stacked file system's device (overlayfs: an anonymous device)")

/* A write or fsync of a traced call on a FUSE file system is a request to the file system's
 * daemon, which gets the data and answers; the kernel's part ends there. Sent when the daemon's
 * answer arrives, by the daemon's thread (which it names), before the call returns. */
#define WP_FUSE_FIELDS(X)                                                                          \
	X(ns, start_ns, "the call that sent the request, of thread tid")                           \
	X(u64, unique, "the request's id on its connection")                                       \
	X(u32, tid, "the calling thread")                                                          \
	X(u32, opcode, "FUSE_WRITE (16) or FUSE_FSYNC (20)")                                       \
	X(s32, error, "the daemon's answer: 0 or -errno")                                          \
	X(u32, daemon_pid, "tgid of the daemon thread that answered")                              \
	X(u32, daemon_tid, "that thread")                                                          \
	X(pad32, pad, "")                                                                          \
	X(comm, daemon_comm, "its name")

/*
 * Every record: X(tag, TYPE, value, FIELDS, bytes). tag names the struct (wp_<tag>_record)
 * and TYPE its enum wp_record_type value WP_REC_<TYPE>, stored raw in trace files: never
 * renumber (9 is reserved: io_uring ops travel as syscall records). bytes is its fixed size,
 * which a layout change must not move without WP_RECORD_VERSION.
 */
#define WP_RECORD_TABLE(X)                                                                         \
	X(syscall, SYSCALL, 1, WP_SYSCALL_FIELDS, 120)                                             \
	X(bio, BIO, 2, WP_BIO_FIELDS, 224)                                                         \
	X(request, REQUEST, 3, WP_REQUEST_FIELDS, 64)                                              \
	X(journal, JOURNAL, 4, WP_JOURNAL_FIELDS, 32)                                              \
	X(throttle, THROTTLE, 5, WP_THROTTLE_FIELDS, 72)                                           \
	X(nvme, NVME, 6, WP_NVME_FIELDS, 56)                                                       \
	X(causes, CAUSES, 7, WP_CAUSES_FIELDS, 64)                                                 \
	X(discard, DISCARD, 8, WP_DISCARD_FIELDS, 40)                                              \
	X(mmap_dirty, MMAP_DIRTY, 10, WP_MMAP_DIRTY_FIELDS, 64)                                    \
	X(fs_log, FS_LOG, 11, WP_FS_LOG_FIELDS, 40)                                                \
	X(file_path, FILE_PATH, 12, WP_FILE_PATH_FIELDS, 40 + WP_PATH_BYTES)                       \
	X(cgroup, CGROUP, 13, WP_CGROUP_FIELDS, 32)                                                \
	X(offcpu, OFFCPU, 14, WP_OFFCPU_FIELDS,                                                    \
	  112 + WP_OFFCPU_SLOTS * (48 + 16 * WP_STACK_DEPTH))                                      \
	X(file_view, FILE_VIEW, 15, WP_FILE_VIEW_FIELDS, 40)                                       \
	X(fuse, FUSE, 16, WP_FUSE_FIELDS, 72)                                                      \
	X(name_change, NAME_CHANGE, 17, WP_NAME_CHANGE_FIELDS, 104)                                      \
	X(inline, INLINE, 18, WP_INLINE_FIELDS, 56)                                                \
	X(fs_commit, FS_COMMIT, 19, WP_FS_COMMIT_FIELDS, 40)                                       \
	X(read, READ, 20, WP_READ_FIELDS, 120)                                                     \
	X(fault, FAULT, 21, WP_FAULT_FIELDS, 96)                                                   \
	X(dirtier, DIRTIER, 22, WP_DIRTIER_FIELDS, 64)                                             \
	X(bystander_io, BYSTANDER_IO, 23, WP_BYSTANDER_IO_FIELDS, 72)

enum wp_record_type {
#define WP_RECORD_TYPE_(tag, TYPE, value, FIELDS, bytes) WP_REC_##TYPE = value,
	WP_RECORD_TABLE(WP_RECORD_TYPE_)
#undef WP_RECORD_TYPE_
};

#define WP_RECORD_STRUCT_(tag, TYPE, value, FIELDS, bytes) WP_RECORD_STRUCT(tag, FIELDS)
WP_RECORD_TABLE(WP_RECORD_STRUCT_)
#undef WP_RECORD_STRUCT_

#define WP_RECORD_SIZE_(tag, TYPE, value, FIELDS, bytes)                                           \
	WP_ASSERT_SIZE(struct wp_##tag##_record, bytes);
WP_RECORD_TABLE(WP_RECORD_SIZE_)
#undef WP_RECORD_SIZE_
WP_ASSERT_SIZE(struct wp_extent, 16);
WP_ASSERT_SIZE(struct wp_offcpu_slot, 48 + 16 * WP_STACK_DEPTH);

#endif /* WRITEPATH_RECORD_TABLES_H */
