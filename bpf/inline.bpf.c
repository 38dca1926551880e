// SPDX-License-Identifier: GPL-2.0-only
/*
 * Layer 4b: data a file system keeps inside its metadata, and the commits that make it
 * durable. btrfs writes a small file (at most max_inline bytes, 2048 by default, starting at
 * offset 0) back as an inline extent: its writeback copies the page into a leaf of the
 * subvolume's tree and ends the page's writeback with no bio, so no data request ever carries
 * it. It reaches the disk with that tree, when the transaction commits (or a log-tree sync
 * of the file, which the agent takes from the fsync's own record). ext4's inline_data is the
 * syscall exit's (syscall.bpf.c): the write copies the bytes into the inode, which its jbd2
 * transaction commits (journal.bpf.c's jbd2 events).
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "compat.bpf.h"
#include "emit.bpf.h"
#include "file_filter.bpf.h"
#include "task_state.bpf.h"
#include "writepath.h"

/* btrfs's extent-bit and io-tree enumerators (fs/btrfs/extent-io-tree.h): anonymous enums,
 * which CO-RE cannot relocate, whose values move as bits are added and dropped. The agent
 * reads them from the running kernel's BTF before load. 0: not found (Debian's 6.1 has the
 * bits as macros, which BTF does not keep), and the hook does nothing. */
const volatile __u32 cfg_btrfs_inode_io_tree __weak = 0;  /* IO_TREE_INODE_IO */
/* EXTENT_DELALLOC | EXTENT_DELALLOC_NEW | EXTENT_DO_ACCOUNTING: what the inline path clears at
 * once, with the range's lock, when the extent is in the tree (cow_file_range_inline()). A
 * regular extent clears DELALLOC with its ordered extent made, and DELALLOC_NEW only when
 * that ordered extent finishes; a truncate's invalidation clears all of them too, but of a
 * folio still dirty, which the inline path has already cleaned for writeback. */
const volatile __u32 cfg_btrfs_inline_clear_bits __weak = 0;

/* 6.18 names the io tree's inode in a union with fs_info (struct btrfs_inode *inode); Debian's
 * 6.1 keeps it as void *private_data. */
struct extent_io_tree___private_data {
	void *private_data;
} __attribute__((preserve_access_index));

static __always_inline struct btrfs_inode *wp_io_tree_inode(const struct extent_io_tree *tree)
{
	if (bpf_core_field_exists(tree->inode))
		return BPF_CORE_READ(tree, inode);
	return (struct btrfs_inode *)BPF_CORE_READ(
	    (struct extent_io_tree___private_data *)tree, private_data);
}

/* A page the page cache holds dirty: the flag word's PG_dirty (the first word of a folio, as
 * wp_folio_nr_pages reads it). */
static __always_inline bool wp_folio_dirty(struct folio *folio)
{
	unsigned long flags = 0;

	bpf_probe_read_kernel(&flags, sizeof(flags), folio);
	return flags & (1ul << bpf_core_enum_value(enum pageflags, PG_dirty));
}

/* A range of a file's io tree losing its delalloc bits. The inline path clears them from
 * offset 0 while the first folio is locked, clean and not yet under writeback. */
SEC("tp_btf/btrfs_clear_extent_bit")
int BPF_PROG(wp_btrfs_inline, const struct extent_io_tree *tree, u64 start, u64 end,
	     unsigned int bits)
{
	struct wp_inline_record *r;
	struct btrfs_inode *bi;
	struct folio *folio;
	struct inode *inode;
	__u64 ino;
	__u32 dev;

	WP_TP_ARG_OR_RETURN(tree);
	if (!cfg_btrfs_inline_clear_bits || start != 0 ||
	    (bits & cfg_btrfs_inline_clear_bits) != cfg_btrfs_inline_clear_bits ||
	    BPF_CORE_READ(tree, owner) != cfg_btrfs_inode_io_tree)
		return 0;
	bi = wp_io_tree_inode(tree);
	if (!bi)
		return 0;
	inode = (void *)bi + bpf_core_field_offset(struct btrfs_inode, vfs_inode);
	ino = BPF_CORE_READ(inode, i_ino);
	dev = wp_inode_dev(inode);
	/* Only files a traced write dirtied have items waiting for their pages. */
	if (!wp_file_may_be_traced(dev, ino))
		return 0;
	folio = wp_pagecache_folio(BPF_CORE_READ(inode, i_mapping), 0);
	if (!folio || wp_folio_dirty(folio))
		return 0;
	r = wp_reserve(sizeof(*r), WP_REC_INLINE, WP_HOOK_INLINE);
	if (!r)
		return 0;
	r->ino = ino;
	r->start = 0;
	r->len = end >= start ? end - start + 1 : 0;
	r->transaction = BPF_CORE_READ(bi, root, fs_info, generation);
	r->dev = dev;
	r->fs_dev = wp_inode_fs_dev(inode);
	r->fs = WP_INLINE_BTRFS;
	__builtin_memset(r->pad, 0, sizeof(r->pad));
	wp_submit(r, sizeof(*r));
	return 0;
}

#define WP_EXT4_SUPER_MAGIC 0xEF53
/* fs/ext4/ext4.h, on disk since inline_data (v3.8): the inode holds the file's data. */
#define WP_EXT4_INLINE_DATA_FL 0x10000000ul

/* ext4 with inline_data: a write to a file whose data fits in its inode copies the bytes
 * there (ext4_write_inline_data_end()) and dirties no page; the jbd2 transaction that
 * journals the inode holds them, and the inode's i_sync_tid names it (what its fsync commits).
 * Called by the write's exit after its record, for a buffered write that dirtied no page: a
 * global function, verified once, so the exits near 6.1's verifier budget grow by a call.
 * WP_INLINE_NEVER when the file cannot hold inline data, which its caller remembers: a loop
 * overwriting dirty pages (no page dirtied) then reads nothing here. */
__noinline int wp_emit_ext4_inline(__u64 file_ptr, __u32 dev, __u64 ino, __u64 pos, __s64 bytes)
{
	struct file *file = (struct file *)file_ptr;
	struct wp_inline_record *r;
	struct ext4_inode_info *ei;
	struct inode *inode;

	if (!file || bytes <= 0)
		return 0;
	inode = wp_backing_inode(BPF_CORE_READ(file, f_mapping, host));
	if (!inode || BPF_CORE_READ(inode, i_sb, s_magic) != WP_EXT4_SUPER_MAGIC)
		return WP_INLINE_NEVER;
	ei = (void *)inode - bpf_core_field_offset(struct ext4_inode_info, vfs_inode);
	if (!(BPF_CORE_READ(ei, i_flags) & WP_EXT4_INLINE_DATA_FL))
		return WP_INLINE_NEVER;
	r = wp_reserve(sizeof(*r), WP_REC_INLINE, WP_HOOK_INLINE);
	if (!r)
		return 0;
	r->ino = ino;
	r->start = pos;
	r->len = (__u32)bytes;
	r->transaction = BPF_CORE_READ(ei, i_sync_tid);
	r->dev = dev;
	r->fs_dev = dev;
	r->fs = WP_INLINE_EXT4;
	__builtin_memset(r->pad, 0, sizeof(r->pad));
	wp_submit(r, sizeof(*r));
	return 0;
}

/* A btrfs transaction committed: fired after its superblocks were written and waited for
 * (and from an aborted one's cleanup, which leaves last_trans_committed as it was). */
SEC("tp_btf/btrfs_transaction_commit")
int BPF_PROG(wp_btrfs_commit, const struct btrfs_fs_info *fs_info)
{
	struct wp_fs_commit_record *r;
	__u32 fs_dev;

	WP_TP_ARG_OR_RETURN(fs_info);
	fs_dev = BPF_CORE_READ(fs_info, sb, s_dev);
	r = wp_reserve(sizeof(*r), WP_REC_FS_COMMIT, WP_HOOK_INLINE);
	if (!r)
		return 0;
	r->transaction = BPF_CORE_READ(fs_info, last_trans_committed);
	/* 6.18 keeps when the commit's own work began in its commit stats (2025); before, it
	 * was a local of btrfs_commit_transaction(), and the agent does without it. */
	r->start_ns = 0;
	if (bpf_core_field_exists(fs_info->commit_stats.critical_section_start_time))
		r->start_ns = BPF_CORE_READ(fs_info, commit_stats.critical_section_start_time);
	r->fs_dev = fs_dev;
	r->tid = wp_current_tid();
	wp_submit(r, sizeof(*r));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
