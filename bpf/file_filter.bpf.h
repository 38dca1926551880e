/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which files and disks the trace follows: --file and --dev, and, while the trace follows only
 * some threads or one file, the files and disks traced calls touched, so that the hooks that
 * run outside a traced call keep only what belongs to an item.
 */
#ifndef WRITEPATH_FILE_FILTER_BPF_H
#define WRITEPATH_FILE_FILTER_BPF_H

#include "vmlinux.h"

#include <bpf/bpf_helpers.h>

#include "compat.bpf.h"
#include "config.bpf.h"

/* Whether the trace follows only some threads' or one file's writes (-p, --comm, --cgroup,
 * --file): the hooks that do not run in a traced call (a dirty page's discard, writeback's bios
 * and requests) then keep only what concerns the files traced calls touched, so that a trace of
 * an idle process costs nothing however busy the machine is. */
static __always_inline bool wp_filters_files(void)
{
	return cfg_filter_tgid || cfg_filter_comm || cfg_comm_roots || cfg_filter_cgroups ||
	       cfg_file_ino;
}

/* The files traced calls resolved (their page-cache host's dev and ino), kept only while
 * wp_filters_files(): a discarded dirty page or a writeback bio of any other regular file
 * belongs to no item. Noted once per file a thread resolves (wp_resolve_file caches it), so a
 * loop over one fd costs one update. LRU: past 64 Ki files the least recently noted goes,
 * and its later pages are filtered like an untraced file's. */
struct wp_file_key {
	__u64 ino;
	__u32 dev;
	__u32 pad;
};

#define WP_MAX_TRACED_FILES 65536
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, WP_MAX_TRACED_FILES);
	__type(key, struct wp_file_key);
	__type(value, __u8);
} traced_files SEC(".maps") __weak;

/* The devices traced files live on (their file system's and its disk's), or that a bio kept
 * for them went to (the disk under a stacked device): the journal commits, metadata and
 * flushes of any other device concern no item. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u8);
} traced_disks SEC(".maps") __weak;

static __always_inline void wp_note_traced_disk(__u32 disk)
{
	__u8 one = 1;

	if (disk && !bpf_map_lookup_elem(&traced_disks, &disk))
		bpf_map_update_elem(&traced_disks, &disk, &one, BPF_NOEXIST);
}

static __always_inline bool wp_disk_may_be_traced(__u32 disk)
{
	return !wp_filters_files() || bpf_map_lookup_elem(&traced_disks, &disk);
}

/* `host`: the file's page-cache inode (its dev and ino are dev and ino). */
static __always_inline void wp_note_traced_file(struct inode *host, __u32 dev, __u64 ino)
{
	struct wp_file_key key = {.ino = ino, .dev = dev};
	__u8 one = 1;

	if (!wp_filters_files())
		return;
	bpf_map_update_elem(&traced_files, &key, &one, BPF_ANY);
	wp_note_traced_disk(wp_inode_fs_dev(host));
	wp_note_traced_disk(wp_inode_disk(host));
}

/* Whether a page of file (dev, ino) may belong to an item: always, unless the trace follows
 * only some files and no traced call resolved this one. */
static __always_inline bool wp_file_may_be_traced(__u32 dev, __u64 ino)
{
	struct wp_file_key key = {.ino = ino, .dev = dev};

	return !wp_filters_files() || bpf_map_lookup_elem(&traced_files, &key);
}

/* Whether a device-keyed event (a journal commit, a log force) passes the --dev filter: the
 * device is that disk, or a file system's superblock device the agent found on it (dm-0 over
 * the disk: its jbd2 journal is keyed by dm-0). */
static __always_inline bool wp_dev_on_filtered_disk(__u32 dev)
{
	if (!cfg_disk || dev == cfg_disk)
		return true;
	for (int i = 0; i < WP_MAX_DISK_FS_DEVS; i++)
		if (cfg_disk_fs_devs[i] && cfg_disk_fs_devs[i] == dev)
			return true;
	return false;
}

/* Whether a file passes the --dev filter (cfg_disk): its superblock is on that disk, or it is
 * a file system the agent found on that disk whose superblock has no block device (btrfs:
 * s_bdev is NULL, the devices are the file system's own list), or it is the device itself. */
static __always_inline bool wp_inode_on_filtered_disk(struct inode *inode, __u32 dev)
{
	__u32 fs_dev;

	if (!cfg_disk || dev == cfg_disk || wp_inode_disk(inode) == cfg_disk)
		return true;
	fs_dev = wp_inode_fs_dev(inode);
	/* The loop of wp_dev_on_filtered_disk(), kept here: calling it changes the generated
	 * code of the syscall exit programs, which are near 6.1's verifier limit of 1M insns. */
	for (int i = 0; i < WP_MAX_DISK_FS_DEVS; i++)
		if (cfg_disk_fs_devs[i] && cfg_disk_fs_devs[i] == fs_dev)
			return true;
	return false;
}

#endif /* WRITEPATH_FILE_FILTER_BPF_H */
