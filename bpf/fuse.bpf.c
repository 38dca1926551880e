// SPDX-License-Identifier: GPL-2.0-only
/*
 * FUSE: a write or fsync on a FUSE file system (bindfs, fuse-overlayfs, sshfs, a rootless
 * container's storage) is handed to the file system's daemon as a request, and the call waits
 * for its answer. fuse_request_send fires in the calling thread; the request is remembered by
 * its connection and id; fuse_request_end fires in the daemon's thread as it answers (it wrote
 * the reply to /dev/fuse), which names the daemon. Both tracepoints are in fs/fuse/fuse_trace.h
 * on 6.18 and absent from Debian's 6.1: the hook plan decides from BTF whether they exist.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "compat.bpf.h"
#include "emit.bpf.h"
#include "task_state.bpf.h"
#include "writepath.h"

/* include/uapi/linux/fuse.h, stable. */
#define WP_FUSE_WRITE 16
#define WP_FUSE_FSYNC 20

struct wp_fuse_key {
	__u64 unique;
	__u32 conn;
	__u32 pad;
};

struct wp_fuse_sender {
	__u64 start_ns;
	__u32 tid;
	__u32 opcode;
};

/* Requests of traced calls in flight to their daemon. A request never answered (an aborted
 * connection) stays until its slot is needed: LRU. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct wp_fuse_key);
	__type(value, struct wp_fuse_sender);
} fuse_requests SEC(".maps");

static __always_inline struct wp_fuse_key wp_fuse_key_of(const struct fuse_req *req)
{
	struct wp_fuse_key key = {};

	key.unique = BPF_CORE_READ(req, in.h.unique);
	key.conn = BPF_CORE_READ(req, fm, fc, dev);
	return key;
}

SEC("tp_btf/fuse_request_send")
int BPF_PROG(wp_fuse_request_send, const struct fuse_req *req)
{
	struct wp_task_state *st = wp_active_state();
	struct wp_fuse_sender sender = {};
	struct wp_fuse_key key;
	__u32 opcode;

	WP_TP_ARG_OR_RETURN(req);
	if (!st)
		return 0;
	opcode = BPF_CORE_READ(req, in.h.opcode);
	if (opcode != WP_FUSE_WRITE && opcode != WP_FUSE_FSYNC)
		return 0;
	key = wp_fuse_key_of(req);
	sender.start_ns = st->start_ns;
	sender.tid = wp_current_tid();
	sender.opcode = opcode;
	bpf_map_update_elem(&fuse_requests, &key, &sender, BPF_ANY);
	return 0;
}

SEC("tp_btf/fuse_request_end")
int BPF_PROG(wp_fuse_request_end, const struct fuse_req *req)
{
	struct wp_fuse_sender *sender;
	struct wp_fuse_record *r;
	struct wp_fuse_key key;

	WP_TP_ARG_OR_RETURN(req);
	key = wp_fuse_key_of(req);
	sender = bpf_map_lookup_elem(&fuse_requests, &key);
	if (!sender)
		return 0;
	r = wp_reserve(sizeof(*r), WP_REC_FUSE, WP_HOOK_SYSCALL);
	if (r) {
		r->start_ns = sender->start_ns;
		r->unique = key.unique;
		r->tid = sender->tid;
		r->opcode = sender->opcode;
		r->error = BPF_CORE_READ(req, out.h.error);
		r->daemon_pid = bpf_get_current_pid_tgid() >> 32;
		r->daemon_tid = wp_current_tid();
		r->pad = 0;
		bpf_get_current_comm(r->daemon_comm, sizeof(r->daemon_comm));
		wp_submit(r, sizeof(*r));
	}
	bpf_map_delete_elem(&fuse_requests, &key);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
