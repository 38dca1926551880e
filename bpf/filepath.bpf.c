// SPDX-License-Identifier: GPL-2.0-only
/*
 * File paths: the first time a record names a file (dev, ino), a wp_file_path_record with its
 * path goes out before it. An LRU of the files already resolved makes the walk cost once per
 * file, not once per write. bpf_d_path is not allowed from tracepoints, so the dentry chain is
 * walked here: from the file's dentry up to its mount's root, across each mount to the dentry
 * it is mounted on, to the root of the mount namespace, noting where it passed the writer's own
 * root (a chroot's). Called by the syscall exits, io_uring's completion and the mmap-dirty hook
 * (wp_emit_file_path, declared in emit.bpf.h), all in the writer's own context: `current` is
 * the writer.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "compat.bpf.h"
#include "emit.bpf.h"
#include "writepath.h"

/* A file's name is bytes long at most NAME_MAX (255) plus its NUL: the most one component read
 * can write past its offset. */
#define WP_NAME_READ 256

struct wp_path_key {
	__u64 ino;
	__u32 dev;
	__u32 pad;
};

/* What a file was resolved for: its struct inode, its name as its dentry holds it (the name's
 * hash and length, and the parent dentry), and the root it was seen from. An inode number
 * reused by a new file is resolved again (a new struct inode, or a freed one reused under
 * another name), and so is a file renamed or moved to another directory (d_move changes its
 * dentry's name and parent): PostgreSQL's WAL segments are written as xlogtemp.N and renamed,
 * rsync writes .name.XXXXXX. A rename of a directory above it is not seen (its own dentry
 * keeps name and parent). The path a writer sees depends on its root: a file met by a writer
 * with another root (a chroot's, or the host's after a chroot's) is resolved again. */
struct wp_path_seen {
	__u64 inode;
	__u64 name;
	__u64 root; /* the writer's fs->root, its dentry and mount mixed */
};

/* Files already resolved. Evicted least recently used: a file met again after that costs one
 * more walk and record. */
#define WP_PATH_CACHE_ENTRIES 16384
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, WP_PATH_CACHE_ENTRIES);
	__type(key, struct wp_path_key);
	__type(value, struct wp_path_seen);
} file_paths SEC(".maps");

/* The record is built here (552 bytes do not fit the 512-byte BPF stack), with room after it
 * for the last component read, whose length is only known once read. */
struct wp_path_scratch {
	struct wp_file_path_record rec;
	char slack[WP_NAME_READ];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct wp_path_scratch);
} path_scratch SEC(".maps");

/* Whether the file was unlinked: its dentry is unhashed and not a root (d_unlinked()), or its
 * inode has no links left (/proc/PID/fd says "(deleted)" for the first). */
static __always_inline bool wp_file_deleted(struct dentry *dentry, struct inode *inode)
{
	if (!BPF_CORE_READ(dentry, d_hash.pprev) && BPF_CORE_READ(dentry, d_parent) != dentry)
		return true;
	return BPF_CORE_READ(inode, i_nlink) == 0;
}

/* After the path record of a file opened through overlayfs (`inode`, the file's own, is not the
 * backing dev/ino the records name): what stat() shows the application. False when it could
 * not be sent. */
static __always_inline bool wp_emit_file_view(struct inode *inode, __u32 dev, __u64 ino)
{
	struct wp_file_view_record v = {};

	if (!wp_overlay_inode(inode))
		return true;
	v.view_dev = wp_inode_dev(inode);
	v.view_ino = BPF_CORE_READ(inode, i_ino);
	if (v.view_dev == dev && v.view_ino == ino)
		return true;
	v.h.type = WP_REC_FILE_VIEW;
	v.h.size = sizeof(v);
	v.h.version = WP_RECORD_VERSION;
	v.h.cpu = bpf_get_smp_processor_id();
	v.h.ts_ns = bpf_ktime_get_ns();
	v.dev = dev;
	v.ino = ino;
	return bpf_ringbuf_output(&events, &v, sizeof(v), BPF_RB_NO_WAKEUP) == 0;
}

/* Emits the path record of the file or directory at `dentry_ptr` (a struct dentry *) on
 * `mnt_ptr` (its struct vfsmount *) for (dev, ino) unless the cache says it went out already. A global function: the verifier checks its bounded walk once, instead of
 * in every syscall exit program it would be inlined into (those are near the 6.1 verifier's
 * 1M-instruction budget). Returns 1 when a record was emitted, 0 when the path went out before
 * (same inode, name and root), -1 when it could not go out (the next call tries again). */
__noinline int wp_emit_path(__u64 dentry_ptr, __u64 mnt_ptr, __u32 dev, __u64 ino)
{
	struct wp_path_key key = {.ino = ino, .dev = dev};
	__u32 mount_off = bpf_core_field_offset(struct mount, mnt);
	struct wp_path_scratch *scratch;
	struct wp_file_path_record *rec;
	struct vfsmount *vfsmnt;
	struct dentry *dentry;
	struct mount *mnt;
	struct inode *inode;
	struct wp_path_seen now, *seen;
	__u32 zero = 0, off = 0, components = 0;
	bool reached_root = false;
	struct task_struct *task = bpf_get_current_task_btf();
	struct fs_struct *fs = BPF_CORE_READ(task, fs);
	struct path root = {};

	dentry = (struct dentry *)dentry_ptr;
	vfsmnt = (struct vfsmount *)mnt_ptr;
	if (!dentry || !vfsmnt)
		return -1;
	/* The writer's root (chroot(2) and pivot_root(2) set it), both pointers in one read. A
	 * task past exit_fs() has no fs: the read fails, leaves zeros, and no root is noted. */
	BPF_CORE_READ_INTO(&root, fs, root);
	inode = BPF_CORE_READ(dentry, d_inode);
	now.inode = (__u64)inode;
	now.name = BPF_CORE_READ(dentry, d_name.hash_len) ^
		   ((__u64)BPF_CORE_READ(dentry, d_parent) * 0x9e3779b97f4a7c15ull);
	now.root = (__u64)root.dentry ^ ((__u64)root.mnt * 0x9e3779b97f4a7c15ull);
	seen = bpf_map_lookup_elem(&file_paths, &key);
	if (seen && seen->inode == now.inode && seen->name == now.name && seen->root == now.root)
		return 0;
	scratch = bpf_map_lookup_elem(&path_scratch, &zero);
	if (!scratch)
		return -1;
	rec = &scratch->rec;
	mnt = (struct mount *)((char *)vfsmnt - mount_off);
	rec->flags = wp_file_deleted(dentry, inode) ? WP_PATH_DELETED : 0;
	rec->root_components = 0;
	/* Whose namespace the path is in, for the agent to know a writer of its own namespace
	 * without /proc (a short-lived writer is gone by the time its record is read). */
	rec->mnt_ns = BPF_CORE_READ(task, nsproxy, mnt_ns, ns.inum);

	for (int i = 0; i < WP_PATH_MAX_STEPS; i++) {
		struct dentry *mnt_root = BPF_CORE_READ(vfsmnt, mnt_root);
		struct dentry *parent = BPF_CORE_READ(dentry, d_parent);
		const unsigned char *name;
		long n;

		/* The writer's root, where d_path() (/proc/PID/fd) stops: the path the writer sees
		 * ends here. The walk goes on to the namespace's root: that path is what the agent
		 * finds the file on the host by. Met once at most: the walk only goes up. */
		if (dentry == root.dentry && vfsmnt == root.mnt) {
			rec->flags |= WP_PATH_PASSED_ROOT;
			rec->root_components = components;
		}
		if (dentry == mnt_root || dentry == parent) {
			struct mount *up = BPF_CORE_READ(mnt, mnt_parent);

			/* The root of the walk: a mount that is its own parent. (A dentry that is
			 * its own parent without being its mount's root is disconnected: stop.) */
			if (dentry != mnt_root || up == mnt || !up) {
				reached_root = dentry == mnt_root;
				break;
			}
			dentry = BPF_CORE_READ(mnt, mnt_mountpoint);
			mnt = up;
			vfsmnt = (struct vfsmount *)((char *)up + mount_off);
			continue;
		}
		if (off >= WP_PATH_BYTES)
			break;
		name = BPF_CORE_READ(dentry, d_name.name);
		n = bpf_probe_read_kernel_str(&rec->names[off & (WP_PATH_BYTES - 1)], WP_NAME_READ,
					      name);
		/* A failed read or a name cut by the end of names[] ends the walk there. */
		if (n <= 0 || off + n > WP_PATH_BYTES)
			break;
		off += n;
		components++;
		dentry = parent;
	}
	if (!reached_root)
		rec->flags |= WP_PATH_TRUNCATED;
	rec->h.type = WP_REC_FILE_PATH;
	rec->h.size = sizeof(*rec);
	rec->h.version = WP_RECORD_VERSION;
	rec->h.cpu = bpf_get_smp_processor_id();
	rec->h.ts_ns = bpf_ktime_get_ns();
	rec->ino = ino;
	rec->dev = dev;
	rec->len = off;
	rec->components = components;
	/* The record that names the file follows at once and decides the wakeup. */
	if (bpf_ringbuf_output(&events, rec, sizeof(*rec), BPF_RB_NO_WAKEUP) ||
	    !wp_emit_file_view(inode, dev, ino)) {
		wp_count_lost(WP_HOOK_FILE_PATH);
		/* Not remembered: the file's next record tries again. */
		if (seen)
			bpf_map_delete_elem(&file_paths, &key);
		return -1;
	}
	bpf_map_update_elem(&file_paths, &key, &now, BPF_ANY);
	return 1;
}

/* The same for `file` (a struct file *): its dentry on its mount. */
__noinline int wp_emit_file_path(__u64 file_ptr, __u32 dev, __u64 ino)
{
	struct file *file = (struct file *)file_ptr;

	if (!file)
		return -1;
	return wp_emit_path((__u64)BPF_CORE_READ(file, f_path.dentry),
			    (__u64)BPF_CORE_READ(file, f_path.mnt), dev, ino);
}

char LICENSE[] SEC("license") = "GPL";
