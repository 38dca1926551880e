/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/*
 * Records that travel from the BPF programs to the agent through the ring buffer.
 * This header is compiled by clang for BPF and by the C++ agent: fixed-width types only,
 * explicit padding, no kernel types. Bump WP_RECORD_VERSION whenever a layout changes.
 * The contract, and how to add a record or a traced syscall: docs/reference/records.md; docs/ARCHITECTURE.md, "How to add…".
 */
#ifndef WRITEPATH_RECORDS_H
#define WRITEPATH_RECORDS_H

#ifdef __bpf__
typedef __u8 wp_u8;
typedef __u16 wp_u16;
typedef __u32 wp_u32;
typedef __s32 wp_s32;
typedef __u64 wp_u64;
typedef __s64 wp_s64;
#else
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif
typedef uint8_t wp_u8;
typedef uint16_t wp_u16;
typedef uint32_t wp_u32;
typedef int32_t wp_s32;
typedef uint64_t wp_u64;
typedef int64_t wp_s64;
#endif

/* Helpers defined in this header: inlined in BPF, constant expressions in C++. */
#if defined(__cplusplus)
#define WP_HEADER_FN constexpr
#elif defined(__bpf__)
#define WP_HEADER_FN static inline __attribute__((always_inline))
#else
#define WP_HEADER_FN static inline
#endif

/* Record layouts are stored raw in trace files: a size that moves must bump
 * WP_RECORD_VERSION. Checked by every compiler that reads this header, BPF's included. */
#ifdef __cplusplus
#define WP_STATIC_ASSERT(cond, why) static_assert(cond, why)
#else
#define WP_STATIC_ASSERT(cond, why) _Static_assert(cond, why)
#endif
#define WP_ASSERT_SIZE(type, bytes) \
	WP_STATIC_ASSERT(sizeof(type) == (bytes), #type " must stay " #bytes " bytes")

#define WP_RECORD_VERSION 1

/* The tag a bio carries for the io_uring op it was queued for (wp_bio_record.uring_tag): the low
 * 32 bits of the op's start_ns, never 0 (0 is "no op"). Ops of one thread in flight together
 * were submitted nanoseconds apart, never 2^32 ns (4.3 s) apart to the nanosecond. */
#define WP_URING_TAG(start_ns) ((wp_u32)(start_ns) ? (wp_u32)(start_ns) : 1u)
#define WP_COMM_LEN 16
#define WP_BIO_MAX_EXTENTS 8

/* Cgroups the cgroup filter holds at most (cgroup_filter, task_filter.bpf.h): --cgroup, --container
 * and --pod fill one; --namespace one per pod of the namespace. */
#define WP_MAX_FILTER_CGROUPS 64

/* Processes the tgid filter holds at most (traced_tgids, task_filter.bpf.h), and each entry's flags,
 * read back by the agent. */
#define WP_MAX_TGIDS 8192
enum wp_tgid_flags {
	WP_TGID_TRACED = 1 << 0, /* the process is traced */
	WP_TGID_FORKED = 1 << 1, /* it forked a child that was not followed (-p without --children) */
};

/* Which hook lost a record (ring buffer full); indexes the lost_by_hook counters. */
enum wp_hook {
	WP_HOOK_SYSCALL = 0,
	WP_HOOK_BIO = 1,
	WP_HOOK_REQUEST = 2,
	WP_HOOK_JOURNAL = 3,
	WP_HOOK_THROTTLE = 4,
	WP_HOOK_NVME = 5,
	WP_HOOK_STATE = 6, /* no per-thread state could be allocated: a syscall went untraced */
	WP_HOOK_CAUSES = 7,
	WP_HOOK_DISCARD = 8,
	WP_HOOK_URING = 9, /* an io_uring op had no room in the in-flight op map (uring_ops) */
	WP_HOOK_MMAP_DIRTY = 10,
	WP_HOOK_FS_LOG = 11,
	WP_HOOK_FILE_PATH = 12,
	WP_HOOK_CGROUP = 13,
	WP_HOOK_OFFCPU = 14,
	WP_HOOK_NAME_CHANGE = 15,
	WP_HOOK_INLINE = 16, /* inline data and the commits that make it durable */
	WP_HOOK_READ = 17,
	WP_HOOK_FAULT = 18, /* a page fault on a traced thread's file mapping */
	WP_HOOK_DIRTIER = 19, /* a file turned dirty, by anyone: its writeback's owner */
	WP_HOOK_COUNT = 20,
};

/*
 * The traced syscalls, each defined once: X(ID, value, name, Name, class, vfs).
 *   ID     WP_SYS_<ID> (the value records carry) and WP_SLOT_<ID> (its slot)
 *   value  stored raw in trace files: never renumber
 *   name   the kernel's name: tracepoints syscalls:sys_{enter,exit}_<name>, BPF programs
 *          wp_{enter,exit}_<name>, the agent's SYS_<name>
 *   Name   the agent's Syscall::<Name>
 *   class  WRITE (data into a file), SYNC (making data durable) or OPEN (an open for writing
 *          of an overlay file still in a lower layer copies it up: a record only when the
 *          call dirtied pages, for the copy's writes; see wp_open_copy_up in syscall.bpf.c)
 *   vfs    1: also served by fentry/fexit on the VFS where those attach, a WRITE through
 *          vfs_write(), a SYNC through vfs_fsync_range(). Not fdatasync(2): Debian's 6.1
 *          inlines vfs_fsync_range() into its do_fsync() (ext4_sync_file is called from
 *          __x64_sys_fdatasync itself), so fentry there never sees it; fsync(2) calls it.
 * A slot is a row's position: bit i of cfg_raw_syscall_slots and entry i of
 * cfg_syscall_nr_plus1 are row i.
 */
#define WP_SYSCALL_TABLE(X)                                                                        \
	X(WRITE, 1, write, Write, WRITE, 1)                                                        \
	X(PWRITE64, 2, pwrite64, Pwrite64, WRITE, 1)                                               \
	X(WRITEV, 3, writev, Writev, WRITE, 0)                                                     \
	X(PWRITEV, 4, pwritev, Pwritev, WRITE, 0)                                                  \
	X(PWRITEV2, 5, pwritev2, Pwritev2, WRITE, 0)                                               \
	X(FSYNC, 16, fsync, Fsync, SYNC, 1)                                                        \
	X(FDATASYNC, 17, fdatasync, Fdatasync, SYNC, 0)                                            \
	X(SYNC_FILE_RANGE, 18, sync_file_range, SyncFileRange, SYNC, 0)                            \
	X(SYNCFS, 19, syncfs, Syncfs, SYNC, 0)                                                     \
	X(SYNC, 20, sync, Sync, SYNC, 0)                                                           \
	X(IO_SUBMIT, 21, io_submit, IoSubmit, WRITE, 0)                                            \
	X(MSYNC, 22, msync, Msync, SYNC, 0)                                                        \
	X(OPENAT, 23, openat, Openat, OPEN, 0)                                                     \
	X(OPENAT2, 24, openat2, Openat2, OPEN, 0)                                                  \
	X(READ, 30, read, Read, READ, 0)                                                           \
	X(PREAD64, 31, pread64, Pread64, READ, 0)                                                  \
	X(READV, 32, readv, Readv, READ, 0)                                                        \
	X(PREADV, 33, preadv, Preadv, READ, 0)                                                     \
	X(PREADV2, 34, preadv2, Preadv2, READ, 0)

enum wp_syscall_class {
	WP_CLASS_WRITE = 1,
	WP_CLASS_SYNC = 2,
	WP_CLASS_OPEN = 3,
	WP_CLASS_READ = 4,
};

/*
 * io_uring ops traced like their syscall twins, each defined once:
 * X(ID, value, name, Name, class, opcode).
 *   ID, value, name, Name, class  as in WP_SYSCALL_TABLE (values 40-59): records carry
 *          WP_SYS_<ID>; `name` is the outputs' "syscall"
 *   opcode the IORING_OP_* it comes from (uapi, stable); IORING_OP_FSYNC with
 *          IORING_FSYNC_DATASYNC is io_uring_fdatasync
 * They have no slot: no syscall tracepoint serves them (bpf/uring.bpf.c).
 */
#define WP_URING_OP_TABLE(X)                                                                       \
	X(IO_URING_WRITE, 40, io_uring_write, IoUringWrite, WRITE, 23)                             \
	X(IO_URING_WRITEV, 41, io_uring_writev, IoUringWritev, WRITE, 2)                           \
	X(IO_URING_WRITE_FIXED, 42, io_uring_write_fixed, IoUringWriteFixed, WRITE, 5)             \
	X(IO_URING_FSYNC, 43, io_uring_fsync, IoUringFsync, SYNC, 3)                               \
	X(IO_URING_FDATASYNC, 44, io_uring_fdatasync, IoUringFdatasync, SYNC, 3)                   \
	X(IO_URING_SYNC_FILE_RANGE, 45, io_uring_sync_file_range, IoUringSyncFileRange, SYNC, 8)    \
	X(IO_URING_READ, 46, io_uring_read, IoUringRead, READ, 22)                                 \
	X(IO_URING_READV, 47, io_uring_readv, IoUringReadv, READ, 1)                               \
	X(IO_URING_READ_FIXED, 48, io_uring_read_fixed, IoUringReadFixed, READ, 4)

#define WP_IORING_FSYNC_DATASYNC 1u

/* How an io_uring op was issued (wp_syscall_record.call_flags >> WP_CALL_VIA_SHIFT; 0 for a
 * syscall). */
enum wp_via {
	WP_VIA_IO_URING = 1 << 0, /* an io_uring op, issued inline by its submitter */
	WP_VIA_IO_WQ = 1 << 1,	  /* punted to an io-wq worker (iou-wrk-PID) */
	WP_VIA_SQPOLL = 1 << 2,	  /* submitted by the ring's SQPOLL thread (iou-sqp-PID) */
};

enum wp_syscall {
#define WP_SYSCALL_VALUE_(id, value, name, Name, cls, vfs) WP_SYS_##id = value,
	WP_SYSCALL_TABLE(WP_SYSCALL_VALUE_) WP_URING_OP_TABLE(WP_SYSCALL_VALUE_)
#undef WP_SYSCALL_VALUE_
};

enum wp_syscall_slot {
#define WP_SYSCALL_SLOT_(id, value, name, Name, cls, vfs) WP_SLOT_##id,
	WP_SYSCALL_TABLE(WP_SYSCALL_SLOT_)
#undef WP_SYSCALL_SLOT_
	WP_SYSCALL_SLOTS, /* how many; also "no slot" */
};

/* Bit i set: slot i is also served by the VFS fentry/fexit programs. */
enum {
#define WP_SYSCALL_VFS_BIT_(id, value, name, Name, cls, vfs) | ((vfs) << WP_SLOT_##id)
	WP_VFS_SLOTS = 0 WP_SYSCALL_TABLE(WP_SYSCALL_VFS_BIT_),
#undef WP_SYSCALL_VFS_BIT_
};

/* Bit i set: slot i is a read (WP_CLASS_READ). */
enum {
#define WP_SYSCALL_READ_BIT_(id, value, name, Name, cls, vfs)                                      \
	| ((WP_CLASS_##cls == WP_CLASS_READ ? 1 : 0) << WP_SLOT_##id)
	WP_READ_SLOTS = 0 WP_SYSCALL_TABLE(WP_SYSCALL_READ_BIT_),
#undef WP_SYSCALL_READ_BIT_
};

/* The slot of a WP_SYS_* value, or WP_SYSCALL_SLOTS for a value that is none. (A value
 * listed twice in the table fails to compile here: duplicate case.) */
WP_HEADER_FN wp_u32 wp_syscall_slot(wp_u32 syscall)
{
	switch (syscall) {
#define WP_SYSCALL_SLOT_CASE_(id, value, name, Name, cls, vfs)                                     \
	case WP_SYS_##id:                                                                          \
		return WP_SLOT_##id;
		WP_SYSCALL_TABLE(WP_SYSCALL_SLOT_CASE_)
#undef WP_SYSCALL_SLOT_CASE_
	}
	return WP_SYSCALL_SLOTS;
}

/* The class of a WP_SYS_* value, or 0 for a value that is none. */
WP_HEADER_FN wp_u32 wp_syscall_class(wp_u32 syscall)
{
	switch (syscall) {
#define WP_SYSCALL_CLASS_CASE_(id, value, name, Name, cls, vfs)                                    \
	case WP_SYS_##id:                                                                          \
		return WP_CLASS_##cls;
		WP_SYSCALL_TABLE(WP_SYSCALL_CLASS_CASE_)
		WP_URING_OP_TABLE(WP_SYSCALL_CLASS_CASE_)
#undef WP_SYSCALL_CLASS_CASE_
	}
	return 0;
}

WP_HEADER_FN bool wp_syscall_is_write(wp_u32 syscall)
{
	return wp_syscall_class(syscall) == WP_CLASS_WRITE;
}

WP_HEADER_FN bool wp_syscall_is_sync(wp_u32 syscall)
{
	return wp_syscall_class(syscall) == WP_CLASS_SYNC;
}

WP_HEADER_FN bool wp_syscall_is_open(wp_u32 syscall)
{
	return wp_syscall_class(syscall) == WP_CLASS_OPEN;
}

WP_HEADER_FN bool wp_syscall_is_read(wp_u32 syscall)
{
	return wp_syscall_class(syscall) == WP_CLASS_READ;
}

/* Whether the VFS fentry/fexit programs serve this WP_SYS_* value. */
WP_HEADER_FN bool wp_syscall_uses_vfs(wp_u32 syscall)
{
	return (WP_VFS_SLOTS >> wp_syscall_slot(syscall)) & 1;
}

/*
 * Calls that write to files by ways the tracer does not stitch, counted (only counted) when a
 * traced process enters them, so that a trace can say what it did not follow. Each defined
 * once: X(ID, name, event, fd_arg).
 *   ID      WP_UNTRACED_<ID>: the index of its counter in the untraced_calls map
 *   name    the summary's key (untraced_calls) and the BPF program wp_count_<name>
 *   event   its tracepoint syscalls:sys_enter_<event> (x86-64 names sendfile "sendfile64")
 *   fd_arg  the argument holding the file written to: counted only when that is a regular
 *           file or a block device (a splice into a pipe writes no file); -1: always counted
 * Trace files store the counts by name, so rows may come and go.
 */
#define WP_UNTRACED_TABLE(X)                                                                       \
	X(COPY_FILE_RANGE, copy_file_range, copy_file_range, 2)                                    \
	X(SENDFILE, sendfile, sendfile64, 0)                                                       \
	X(SPLICE, splice, splice, 2)                                                               \
	X(FALLOCATE, fallocate, fallocate, 0)

enum wp_untraced_call {
#define WP_UNTRACED_ID_(id, name, event, fd_arg) WP_UNTRACED_##id,
	WP_UNTRACED_TABLE(WP_UNTRACED_ID_)
#undef WP_UNTRACED_ID_
	/* io_uring ops that can write to a file and are not stitched (WP_URING_UNTRACED_OPS),
	 * counted by the io_uring submit hook, not by a syscall tracepoint of their own */
	WP_UNTRACED_IO_URING_OPS,
	WP_UNTRACED_COUNT,
};

/* The opcodes (uapi values) of those io_uring ops: IORING_OP_FALLOCATE, SPLICE, URING_CMD (a
 * driver command, e.g. NVMe passthrough writes), WRITEV_FIXED (v6.15). */
#define WP_URING_UNTRACED_OPS(X) X(17) X(30) X(46) X(61)

/* Open flags copied from the file at syscall entry (normalised: the agent need not know
 * the architecture's O_* values). */
enum wp_file_flags {
	WP_FILE_DIRECT = 1 << 0,
	WP_FILE_SYNC = 1 << 1,	/* O_SYNC */
	WP_FILE_DSYNC = 1 << 2, /* O_DSYNC (also set by O_SYNC) */
	WP_FILE_APPEND = 1 << 3,
	WP_FILE_REGULAR = 1 << 4, /* S_ISREG(inode) */
	WP_FILE_BLOCKDEV = 1 << 5,
};

/* A call's own flags argument, normalised. pwritev2's (and an iocb's aio_rw_flags) RWF_*
 * are the uapi values (include/uapi/linux/fs.h, stable: never renumbered); msync's MS_* differ
 * between architectures, so they are moved above them. RWF_DSYNC/RWF_SYNC/RWF_APPEND also set
 * the matching WP_FILE_* flag for that call, as the kernel does for the kiocb. */
enum wp_call_flags {
	WP_CALL_RWF_HIPRI = 0x0001,
	WP_CALL_RWF_DSYNC = 0x0002,
	WP_CALL_RWF_SYNC = 0x0004,
	WP_CALL_RWF_NOWAIT = 0x0008,
	WP_CALL_RWF_APPEND = 0x0010,
	WP_CALL_RWF_NOAPPEND = 0x0020,
	WP_CALL_RWF_ATOMIC = 0x0040,
	WP_CALL_RWF_DONTCACHE = 0x0080,
	WP_CALL_RWF_MASK = 0x00ff,
	WP_CALL_MS_ASYNC = 0x0100,
	WP_CALL_MS_INVALIDATE = 0x0200,
	WP_CALL_MS_SYNC = 0x0400,
	/* io_submit: this item's iocb is IOCB_CMD_PWRITEV (else IOCB_CMD_PWRITE) */
	WP_CALL_AIO_VECTORED = 0x0800,
	/* io_submit: the call held more iocbs than are read (WP_AIO_MAX_IOCBS); those past the
	 * bound have no item */
	WP_CALL_AIO_PAST_BOUND = 0x1000,
	WP_CALL_FLAGS_MASK = 0x1fff,
};
/* sync_file_range(2)'s flags, SYNC_FILE_RANGE_WAIT_BEFORE/WRITE/WAIT_AFTER (uapi 1, 2, 4;
 * stable), are moved into the MS_* bits: a record is msync's or sync_file_range's, never both,
 * and the agent reads those bits by the record's syscall. Not the RWF_* bits: RWF_DSYNC and
 * RWF_SYNC would mark the call's file flags O_DSYNC/O_SYNC. */
#define WP_CALL_SFR_SHIFT 8
#define WP_CALL_SFR_MASK 0x7

/* The record's call_flags carry an io_uring op's enum wp_via above the call's own flags (an
 * op has none), so both fit the two bytes the layout had spare. */
#define WP_CALL_VIA_SHIFT 13

/* io_submit: iocbs read per call. Each costs two user reads and an fd lookup at exit; the
 * loop is unrolled by the verifier, so the bound is kept small. */
#define WP_AIO_MAX_IOCBS 8

/*
 * Calls that change the namespace (names, links, directories) or a file's size, traced for
 * traced processes as items of their own: an atomic save's rename, the create it started with,
 * the truncate of an overwrite in place. Each defined once:
 *   X(name, Name, value, op, dir1, name1, dir2, name2, flags, fd)
 *   name   the syscall: tracepoints syscalls:sys_{enter,exit}_<name>, programs
 *          wp_ns_enter_<name> and wp_ns_exit_<name>
 *   Name   the agent's Syscall::<Name> (openat's is OpenatCreate: WP_SYSCALL_TABLE's
 *          Openat is the copy-up of an overlay file)
 *   value  wp_name_change_record.syscall, stored raw in trace files: never renumber (60-79,
 *          apart from WP_SYSCALL_TABLE's and WP_URING_OP_TABLE's)
 *   op     enum wp_ns_op
 *   dir1, name1, dir2, name2
 *          the argument index of each name and of the directory fd it is relative to;
 *          WP_NS_CWD: relative to the working directory (rename(2) has no dirfd), WP_NS_NONE:
 *          the call has no such argument
 *   flags  the index of the call's flags argument, or WP_NS_NONE
 *   fd     the index of the file descriptor argument (ftruncate, fallocate, close), or
 *          WP_NS_NONE
 * open(2) exists on x86-64 and not on arm64 (only openat): a missing tracepoint loses that
 * hook only. openat/openat2 are traced here only with O_CREAT or O_TRUNC.
 */
#define WP_NS_NONE -1
#define WP_NS_CWD -2
#define WP_NAME_CHANGE_TABLE(X)                                                                      \
	X(rename, Rename, 60, RENAME, WP_NS_CWD, 0, WP_NS_CWD, 1, WP_NS_NONE, WP_NS_NONE)                      \
	X(renameat, Renameat, 61, RENAME, 0, 1, 2, 3, WP_NS_NONE, WP_NS_NONE)                                    \
	X(renameat2, Renameat2, 62, RENAME, 0, 1, 2, 3, 4, WP_NS_NONE)                                            \
	X(link, Link, 63, LINK, WP_NS_CWD, 0, WP_NS_CWD, 1, WP_NS_NONE, WP_NS_NONE)                          \
	X(linkat, Linkat, 64, LINK, 0, 1, 2, 3, 4, WP_NS_NONE)                                                 \
	X(unlink, Unlink, 65, UNLINK, WP_NS_CWD, 0, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE)            \
	X(unlinkat, Unlinkat, 66, UNLINK, 0, 1, WP_NS_NONE, WP_NS_NONE, 2, WP_NS_NONE)                           \
	X(rmdir, Rmdir, 67, RMDIR, WP_NS_CWD, 0, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE)              \
	X(mkdir, Mkdir, 68, MKDIR, WP_NS_CWD, 0, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE)              \
	X(mkdirat, Mkdirat, 69, MKDIR, 0, 1, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE)                    \
	X(creat, Creat, 70, OPEN, WP_NS_CWD, 0, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE)               \
	X(open, Open, 71, OPEN, WP_NS_CWD, 0, WP_NS_NONE, WP_NS_NONE, 1, WP_NS_NONE)                         \
	X(openat, OpenatCreate, 72, OPEN, 0, 1, WP_NS_NONE, WP_NS_NONE, 2, WP_NS_NONE)                               \
	X(truncate, Truncate, 73, TRUNCATE, WP_NS_CWD, 0, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE)        \
	X(ftruncate, Ftruncate, 74, TRUNCATE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, 0)      \
	X(fallocate, Fallocate, 75, FALLOCATE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, 0) \
	X(close, Close, 76, CLOSE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, 0)    \
	X(sendto, Sendto, 77, SEND, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, 0)   \
	X(sendmsg, Sendmsg, 78, SEND, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, 0) \
	X(sendmmsg, Sendmmsg, 79, SEND, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, WP_NS_NONE, 0)

/* What a name-change record's call did; stored raw in trace files: never renumber. */
enum wp_ns_op {
	WP_NS_RENAME = 1,
	WP_NS_LINK = 2,
	WP_NS_UNLINK = 3,
	WP_NS_RMDIR = 4,
	WP_NS_MKDIR = 5,
	WP_NS_OPEN = 6, /* open/openat/creat with O_CREAT or O_TRUNC */
	WP_NS_TRUNCATE = 7,
	WP_NS_FALLOCATE = 8,
	WP_NS_CLOSE = 9, /* of a regular file open for writing: other closes are no item */
	WP_NS_SEND = 10, /* a process's first socket send after it made a name: its reply */
};

/* wp_name_change_record.flags, normalised (the O_* values differ between architectures). */
enum wp_ns_flags {
	WP_NS_CREATE = 1 << 0,	   /* open: O_CREAT (creat(2) too) */
	WP_NS_EXCL = 1 << 1,	   /* open: O_EXCL: the call made the file or failed */
	WP_NS_TRUNC = 1 << 2,	   /* open: O_TRUNC */
	WP_NS_NOREPLACE = 1 << 3,  /* renameat2: RENAME_NOREPLACE */
	WP_NS_EXCHANGE = 1 << 4,   /* renameat2: RENAME_EXCHANGE */
	WP_NS_WHITEOUT = 1 << 5,   /* renameat2: RENAME_WHITEOUT */
	WP_NS_NAME1_CUT = 1 << 6,  /* name1 was longer than WP_NS_NAME_BYTES - 1 */
	WP_NS_NAME2_CUT = 1 << 7,  /* name2 the same */
	WP_NS_DIR = 1 << 8,	   /* open: the file opened is a directory */
	WP_NS_FD = 1 << 9,	   /* fd holds the call's fd argument (ftruncate, fallocate, close) */
};

/* Bytes of each name a name-change record carries (NUL included): a longer name is cut and
 * flagged. */
#define WP_NS_NAME_BYTES 256

/* Request/bio flags, normalised from the kernel's enum req_flag_bits (whose values move
 * between kernels) with CO-RE in bpf/compat.bpf.h. */
enum wp_req_flags {
	WP_REQ_FUA = 1 << 0,
	WP_REQ_PREFLUSH = 1 << 1,
	WP_REQ_SYNC = 1 << 2,
	WP_REQ_META = 1 << 3,
	/* Not a cmd_flags bit: set on a data completion the flush machinery runs in a
	 * PREFLUSH/FUA sequence (rq->rq_flags RQF_FLUSH_SEQ). The kernel's accounting counts such a
	 * request once its sequence ends (a zero-byte completion), not as its data completes. */
	WP_REQ_FLUSH_SEQ = 1 << 4,
};

/* REQ_OP_* values: stable since v4.10. */
enum wp_req_op {
	WP_OP_READ = 0,
	WP_OP_WRITE = 1,
	WP_OP_FLUSH = 2,
	WP_OP_DISCARD = 3,
	WP_OP_WRITE_ZEROES = 9,
};

struct wp_record_header {
	wp_u16 type;	/* enum wp_record_type */
	wp_u16 size;	/* whole record, header included */
	wp_u16 version; /* WP_RECORD_VERSION */
	wp_u16 cpu;
	wp_u64 ts_ns; /* bpf_ktime_get_ns() when the event happened */
};

enum wp_bio_kind {
	WP_BIO_QUEUE = 1,
	WP_BIO_SPLIT = 2,
};

/* Why a bio was submitted, from the submitting thread's state. */
enum wp_why {
	WP_WHY_UNKNOWN = 0,	  /* e.g. jbd2, metadata, another driver */
	WP_WHY_WRITE_SYSCALL = 1, /* inside a traced write: O_DIRECT, or O_SYNC data */
	WP_WHY_SYNC_SYSCALL = 2,  /* inside a traced fsync/fdatasync/sync_file_range/sync */
	WP_WHY_BACKGROUND = 3,	  /* flusher: dirty pages over the background threshold */
	WP_WHY_PERIODIC = 4,	  /* flusher: dirty_expire_centisecs elapsed */
	WP_WHY_SYNC = 5,	  /* flusher working for sync(2)/syncfs(2) */
	WP_WHY_VMSCAN = 6,	  /* flusher woken by memory reclaim */
	WP_WHY_OTHER_WRITEBACK = 7,
	WP_WHY_READ_CALL = 8, /* inside a traced read: its misses and the readahead it started */
	WP_WHY_FAULT = 9,     /* in a traced thread's page fault, for the faulting file's pages */
};

enum wp_bio_flags {
	WP_BIO_ANON = 1 << 0,	   /* user (anonymous) pages: O_DIRECT */
	WP_BIO_NO_FILE = 1 << 1,   /* first page has no file mapping (metadata, journal, bdev) */
	WP_BIO_MIXED = 1 << 2,	   /* pages of more than one inode: extents stop at the change */
	WP_BIO_TRUNCATED = 1 << 3, /* more extents than the record holds */
	WP_BIO_KTHREAD = 1 << 4,   /* a kernel thread queued it (a flusher, the journal): its data
				    * is its dirtier's, not the submitter's */
};

enum wp_request_event {
	WP_RQ_INSERT = 1,
	WP_RQ_ISSUE = 2,
	WP_RQ_COMPLETE = 3,
	/* A write bio completed with an error (block_bio_complete): rq holds the bio's pointer,
	 * disk its device. A bio-based device (device-mapper, md) fails a bio without any request
	 * (dm-flakey, the error target, a failed path): this is the failure the pages see. */
	WP_RQ_BIO_FAILED = 4,
	/* The driver handed the request back (block_rq_requeue): it will be inserted and issued
	 * again under the same pointer, as the same request. */
	WP_RQ_REQUEUE = 5,
};

enum wp_journal_phase {
	WP_JBD2_START = 1,
	WP_JBD2_LOCKING = 2,
	WP_JBD2_FLUSHING = 3,
	WP_JBD2_LOGGING = 4,
	WP_JBD2_END = 5,
};

enum wp_nvme_event {
	WP_NVME_SETUP = 1,
	WP_NVME_COMPLETE = 2,
};

/* Which file system stored a file's data inside its metadata. */
enum wp_inline_fs {
	WP_INLINE_BTRFS = 1, /* an inline extent: written back into a leaf of the subvolume's tree */
	WP_INLINE_EXT4 = 2,  /* inline_data: written into the inode itself, in the journal */
};

/* A slow call's sleeping stacks (wp_offcpu_record): frames per stack, stacks per call. */
#define WP_STACK_DEPTH 24
#define WP_OFFCPU_SLOTS 4

enum wp_offcpu_slot_flags {
	WP_WAKER_KTHREAD = 1 << 0, /* the waker is a kernel thread (jbd2/..., kworker/...) */
	WP_WAKER_KNOWN = 1 << 1,   /* waker_* hold the waker of this slot's longest sleep */
};

/* What an xfs log record (wp_fs_log_record) saw. */
enum wp_fs_log_event {
	WP_XFS_LOG_FORCE = 1,  /* xfs:xfs_log_force, by the forcing thread */
	WP_XFS_ICLOG_SYNC = 2, /* xfs:xlog_iclog_sync, an iclog write issued by this thread */
	WP_XFS_ICLOG_DONE = 3, /* xfs:xlog_iclog_sync_done, that write completed */
};

/* Flags of an iclog write (the kernel's XLOG_ICL_NEED_*, stable since v5.14). */
enum wp_iclog_flags {
	WP_ICLOG_NEED_FLUSH = 1 << 0, /* carries a PREFLUSH: earlier data made durable first */
	WP_ICLOG_NEED_FUA = 1 << 1,
};

/* A file's path record (wp_file_path_record): its names' room, and the steps of its walk. */
#define WP_PATH_BYTES 512     /* names[]: the components read, NULs included */
#define WP_PATH_MAX_STEPS 32 /* components plus mount crossings walked */
enum wp_path_flags {
	WP_PATH_TRUNCATED = 1 << 0, /* the walk stopped before the root: names hold the leaf end */
	WP_PATH_DELETED = 1 << 1,   /* unlinked (dentry unhashed or no links left) */
	/* The walk passed the writer's root: root_components says where. Without it (a trace
	 * recorded before this flag, or a walk cut short below the writer's root) the names are
	 * the path in the namespace only. */
	WP_PATH_PASSED_ROOT = 1 << 2,
};

/* The most a name-change record's names take after it. */
#define WP_NS_NAMES_MAX (2 * WP_NS_NAME_BYTES)

/* What a page fault on a file mapping (wp_fault_record) was. */
enum wp_fault_flags {
	WP_FAULT_WRITE = 1 << 0,  /* a store (x86's error code): a shared mapping's page is dirtied */
	WP_FAULT_KERNEL = 1 << 1, /* the kernel touched the user address for the thread (a syscall) */
	WP_FAULT_FILLED = 1 << 2, /* the fault inserted the folio of the page it faulted on */
};

/* The records themselves: their tables, and the structs made of them. */
#include "record_tables.h"

/* writepath serve: metrics the kernel side aggregates itself (the `metrics` map, metrics.bpf.c),
 * read by the agent at scrape time. One entry per label set; each holds a latency histogram
 * with the fixed bounds below and the counters its metric needs. Not a record: never in a
 * trace file, so it carries no version. */
enum wp_metric {
	WP_METRIC_WRITE = 1,	/* a write syscall's latency; sub: 0 buffered, 1 O_DIRECT */
	WP_METRIC_SYNC = 2,	/* a sync syscall's latency; sub: its WP_SYS_* value */
	WP_METRIC_THROTTLE = 3, /* one balance_dirty_pages pause; sub 0, dev 0 */
	WP_METRIC_REQUEST = 4,	/* a block request, issue to completion; sub: WP_OP_*, dev: disk */
	WP_METRIC_FLUSH = 5,	/* a FLUSH request, issue to completion; sub 0, dev: disk */
	WP_METRIC_WRITE_ERROR = 6, /* a write request completed with an error; sub 0, dev: disk,
				    * bytes: what it failed to write; no latency (all in bucket 0) */
	WP_METRIC_READ = 7,	   /* serve --reads: a read syscall of a regular file; sub 0: every
				    * read, its latency, bytes: what it returned that it found in the
				    * page cache; sub 1: a read that brought pages into the cache, its
				    * latency, bytes: those pages', readahead past what it returned
				    * included (an O_DIRECT read: all it returned, in sub 1 only) */
	WP_METRIC_MAJOR_FAULT = 8, /* serve --reads: a major fault on a file mapping; sub 0, no
				    * latency (all in bucket 0) */
};

/* Histogram bucket upper bounds in ns: 1-2-5 steps from 1 us to 10 s, then +Inf. */
#define WP_METRIC_BOUNDS 22
#define WP_METRIC_BUCKETS (WP_METRIC_BOUNDS + 1)
#define WP_METRIC_BOUND_LIST(X)                                                                    \
	X(1000ull) X(2000ull) X(5000ull) X(10000ull) X(20000ull) X(50000ull) X(100000ull)          \
	X(200000ull) X(500000ull) X(1000000ull) X(2000000ull) X(5000000ull) X(10000000ull)         \
	X(20000000ull) X(50000000ull) X(100000000ull) X(200000000ull) X(500000000ull)              \
	X(1000000000ull) X(2000000000ull) X(5000000000ull) X(10000000000ull)

/* The label set of one entry. Fields a metric has no label for are 0. */
/* What the disk did for write requests the kernel side kept out of a filtered trace (bpf/block.bpf.c,
 * filtered_requests, per disk dev_t): the agent adds them to the disk's totals, which count every
 * request as diskstats does. */
struct wp_filtered_totals {
	wp_u64 write_requests;
	wp_u64 write_bytes;
	wp_u64 flush_requests;
};

/* Data bios the kernel side kept out of a filtered trace on a traced disk (bpf/block.bpf.c,
 * filtered_io), by owner: a bystander's process (tgid and cgroup set), or, for a kernel thread's
 * writeback, the file (dev and ino set) whose dirtier the agent knows. */
struct wp_filtered_io_key {
	wp_u32 disk;
	wp_u32 tgid;
	wp_u64 cgroup_id; /* cgroup v2 id of the queueing thread (tgid set) */
	wp_u64 ino;
	wp_u32 dev; /* the file's superblock dev_t (ino set) */
	wp_u32 pad;
};

struct wp_filtered_io {
	wp_u64 bytes;
	wp_u64 bios;
	char comm[WP_COMM_LEN]; /* the queueing thread's name when first counted (tgid set) */
};

struct wp_metric_key {
	wp_u8 metric; /* enum wp_metric */
	wp_u8 sub;
	wp_u16 pad;
	wp_u32 dev;    /* WRITE/SYNC/READ/MAJOR_FAULT: the file's superblock dev_t (fs_dev where
			* set); else the disk */
	wp_u64 cgroup; /* the calling thread's cgroup v2 id (WRITE, SYNC, THROTTLE, READ,
			* MAJOR_FAULT), else 0 */
	char comm[WP_COMM_LEN]; /* the caller's name with cfg_metrics_comm (WRITE, SYNC, READ,
				 * MAJOR_FAULT), else 0s */
};

struct wp_metric_value {
	wp_u64 buckets[WP_METRIC_BUCKETS]; /* non-cumulative counts: bucket i <= bound i */
	wp_u64 sum_ns;
	wp_u64 bytes;	      /* WRITE: bytes written (ret > 0); REQUEST: bytes issued; READ: see
			       * WP_METRIC_READ */
	wp_u64 dirtied_ops;   /* WRITE with sub 1: O_DIRECT writes that dirtied page-cache pages */
	wp_u64 dirtied_pages; /* ... and the pages they dirtied */
};

/* Label sets serve's metrics hold at most (metric_slots; metric_values may hold fewer: see
 * bpf/metrics.bpf.c); an update that finds no slot is counted in metrics_overflow instead. */
#define WP_MAX_METRIC_KEYS 4096

WP_ASSERT_SIZE(struct wp_metric_key, 32);
WP_ASSERT_SIZE(struct wp_metric_value, 8 * (WP_METRIC_BUCKETS + 4));

WP_ASSERT_SIZE(struct wp_record_header, 16);
/* 120 + the ring buffer's 8-byte header: two cache lines (see above). */
/* wp_syscall_record.syscall is one byte, and 0 there means no syscall. */
#define WP_SYSCALL_FITS_(id, value, name, Name, cls, vfs)                                          \
	WP_STATIC_ASSERT((value) > 0 && (value) <= 0xff, "WP_SYS_" #id " must fit in a byte");
WP_SYSCALL_TABLE(WP_SYSCALL_FITS_)
WP_URING_OP_TABLE(WP_SYSCALL_FITS_)
#undef WP_SYSCALL_FITS_

#endif /* WRITEPATH_RECORDS_H */
