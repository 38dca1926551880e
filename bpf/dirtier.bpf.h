/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Who dirtied a file, told once per clean-to-dirty turn of its inode: the flusher that writes
 * the file back later queues its bios in a kernel thread, and the agent charges them to this
 * dirtier when it names the neighbours of a slow sync. Sent for everyone, traced or not, whose
 * file is on a traced file's file system or disk (a trace of some processes: the only disks its
 * syncs wait on), from the dirty-folio hook that runs for every dirtied folio anyway: a folio
 * of an inode already dirty (nearly all of them) costs two loads more.
 */
#ifndef WRITEPATH_DIRTIER_BPF_H
#define WRITEPATH_DIRTIER_BPF_H

#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "compat.bpf.h"
#include "emit.bpf.h"
#include "file_filter.bpf.h"
#include "writepath.h"

static __always_inline void wp_note_dirtier(struct address_space *mapping)
{
	struct inode *host = BPF_CORE_READ(mapping, host);
	struct task_struct *task;
	struct wp_dirtier_record *r;

	/* The folio is accounted before its inode is marked: a first folio finds it clean. */
	if (!host || wp_inode_has_dirty_pages(host))
		return;
	/* A regular file's data (not a block device's metadata buffers), dirtied by a process. */
	if ((BPF_CORE_READ(host, i_mode) & WP_S_IFMT) != WP_S_IFREG)
		return;
	task = bpf_get_current_task_btf();
	if (task->flags & WP_PF_KTHREAD)
		return;
	if (!wp_disk_may_be_traced(wp_inode_fs_dev(host)) &&
	    !wp_disk_may_be_traced(wp_inode_disk(host)))
		return;
	r = wp_reserve(sizeof(*r), WP_REC_DIRTIER, WP_HOOK_DIRTIER);
	if (!r)
		return;
	r->ino = BPF_CORE_READ(host, i_ino);
	r->cgroup_id = task->cgroups->dfl_cgrp->kn->id;
	r->dev = wp_inode_dev(host);
	r->pid = task->tgid;
	r->tid = task->pid;
	r->pad = 0;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	wp_submit(r, sizeof(*r));
}

#endif /* WRITEPATH_DIRTIER_BPF_H */
