// SPDX-License-Identifier: GPL-2.0-only
/*
 * Layer 5: NVMe commands under block requests, keyed by the request pointer (the command id
 * carries a generation counter since v5.16, e7006de6c238, so (qid, cid) is not an identity).
 * The nvme tracepoints live in the nvme_core module: these programs need module BTF and are
 * autoloaded only where userspace/probe/ finds them.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "compat.bpf.h"
#include "config.bpf.h"
#include "emit.bpf.h"
#include "file_filter.bpf.h"
#include "kept_out.bpf.h"
#include "read_requests.bpf.h"
#include "writepath.h"

/* struct nvme_request is the request's driver payload (blk_mq_rq_to_pdu: right after struct
 * request); its layout comes from nvme_core's BTF through CO-RE. */
struct nvme_request___wp {
	void *cmd;
	__u16 status;
} __attribute__((preserve_access_index));

/* The submission queue entry is the NVMe wire format (NVM Express base spec, 64 bytes),
 * fixed by the standard rather than by the kernel, so it is read at its wire offsets. */
#define WP_SQE_OPCODE 0
#define WP_SQE_CID 2
#define WP_SQE_NSID 4
#define WP_SQE_SLBA 40
#define WP_SQE_NLB 48
#define WP_SQE_CONTROL 50

/* NVM command set opcodes (same specification). */
#define WP_NVME_OP_FLUSH 0x00
#define WP_NVME_OP_WRITE 0x01
#define WP_NVME_OP_READ 0x02

static __always_inline __u16 wp_nvme_qid(struct request *rq)
{
	/* nvme_req_qid(): the admin queue has no queuedata; I/O queues are hctx + 1. */
	if (!BPF_CORE_READ(rq, q, queuedata))
		return 0;
	return BPF_CORE_READ(rq, mq_hctx, queue_num) + 1;
}

static __always_inline struct nvme_request___wp *wp_nvme_req(struct request *rq)
{
	return (void *)rq + bpf_core_type_size(struct request);
}

static __always_inline int wp_emit_nvme(struct request *rq, void *sqe, __u8 event)
{
	struct wp_nvme_record *r;
	__u32 disk = wp_rq_disk(rq);
	__u8 opcode = 0;
	__u16 cid = 0;

	if (cfg_disk && disk != cfg_disk)
		return 0;
	bpf_probe_read_kernel(&opcode, sizeof(opcode), sqe + WP_SQE_OPCODE);
	/* Reads are not the write path: a traced reader's read request only, with --reads. At the
	 * command's setup (before block_rq_issue) its bios say so; at its completion too. */
	if (opcode == WP_NVME_OP_READ && !(cfg_reads && wp_rq_has_read_bio(rq)))
		return 0;
	/* A write or flush of a disk no traced file is on, or a bystander's write on a traced
	 * one: its request is kept out (block.bpf.c), so its command would be one the agent
	 * drops. Every NVMe command of a bystander sent two records before these tests. The
	 * setup comes before the request's issue (nvme_prep_rq), so its bios decide there, as
	 * they will at the issue; at the completion the decision is still kept. */
	if (opcode != WP_NVME_OP_READ && wp_filters_files()) {
		if (!wp_disk_may_be_traced(disk))
			return 0;
		if (opcode != WP_NVME_OP_FLUSH &&
		    (event == WP_NVME_SETUP ? wp_request_bios_filtered(rq) : wp_request_kept_out(rq)))
			return 0;
	}
	r = wp_reserve(sizeof(*r), WP_REC_NVME, WP_HOOK_NVME);
	if (!r)
		return 0;
	bpf_probe_read_kernel(&cid, sizeof(cid), sqe + WP_SQE_CID);
	r->rq = (__u64)rq;
	r->disk = disk;
	r->qid = wp_nvme_qid(rq);
	r->cid = cid;
	r->kind = event;
	r->opcode = opcode;
	r->status = event == WP_NVME_COMPLETE ? BPF_CORE_READ(wp_nvme_req(rq), status) : 0;
	r->nsid = 0;
	r->slba = 0;
	r->nlb = 0;
	r->control = 0;
	bpf_probe_read_kernel(&r->nsid, sizeof(r->nsid), sqe + WP_SQE_NSID);
	if (opcode == WP_NVME_OP_WRITE) {
		__u16 nlb = 0, control = 0;

		bpf_probe_read_kernel(&r->slba, sizeof(r->slba), sqe + WP_SQE_SLBA);
		bpf_probe_read_kernel(&nlb, sizeof(nlb), sqe + WP_SQE_NLB);
		bpf_probe_read_kernel(&control, sizeof(control), sqe + WP_SQE_CONTROL);
		r->nlb = nlb;
		r->control = control;
	}
	wp_submit(r, sizeof(*r));
	return 0;
}

SEC("tp_btf/nvme_setup_cmd")
int BPF_PROG(wp_nvme_setup_cmd, struct request *rq, void *cmd)
{
	WP_TP_ARG_OR_RETURN(rq);
	WP_TP_ARG_OR_RETURN(cmd); /* struct nvme_command * in BTF: maybe-NULL too */
	return wp_emit_nvme(rq, cmd, WP_NVME_SETUP);
}

SEC("tp_btf/nvme_complete_rq")
int BPF_PROG(wp_nvme_complete_rq, struct request *rq)
{
	WP_TP_ARG_OR_RETURN(rq);
	return wp_emit_nvme(rq, BPF_CORE_READ(wp_nvme_req(rq), cmd), WP_NVME_COMPLETE);
}

char LICENSE[] SEC("license") = "GPL";
