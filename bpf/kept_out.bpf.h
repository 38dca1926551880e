/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A trace of some processes (wp_filters_files) keeps bystanders' bios and requests out
 * (block.bpf.c says which): the bios kept out and the requests issued with only such bios, by
 * pointer. block.bpf.c decides and fills them; nvme.bpf.c sends no command of a request kept
 * out, which the agent would only drop.
 */
#ifndef WRITEPATH_KEPT_OUT_BPF_H
#define WRITEPATH_KEPT_OUT_BPF_H

#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "writepath.h"

/* Bios kept out, by pointer (a kept bio deletes its pointer: the kernel reuses them), each with
 * its owner on a traced disk (a data bio: disk set), else zeros. Only on disks a traced file is
 * on: another disk's requests are kept out whatever their bios. Weak, as every map a header
 * defines (config.bpf.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct wp_filtered_io_key);
} filtered_bios SEC(".maps") __weak;

/* Requests issued with only such bios, until their last completion event: a partial
 * completion moves rq->bio on, so the issue's decision is kept rather than made again. The
 * value is WP_FILTERED_COUNT_AT_SEQ_END once the data of a request in a flush sequence has
 * completed: the request itself counts at the sequence's end, as diskstats counts it. */
enum { WP_FILTERED_ISSUED = 1, WP_FILTERED_COUNT_AT_SEQ_END = 2 };

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u8);
} filtered_rqs SEC(".maps") __weak;

/* Whether every bio of `rq` was kept out (a request holding more than the walk's bound, or
 * none, is kept). */
static __always_inline bool wp_request_bios_filtered(struct request *rq)
{
	struct bio *bio = BPF_CORE_READ(rq, bio);

	for (int i = 0; i < 16; i++) {
		__u64 key = (__u64)bio;

		if (!bio)
			return i > 0;
		if (!bpf_map_lookup_elem(&filtered_bios, &key))
			return false;
		bio = BPF_CORE_READ(bio, bi_next);
	}
	return false;
}

/* Whether request `rq` was issued kept out and has not completed yet. */
static __always_inline bool wp_request_kept_out(struct request *rq)
{
	__u64 key = (__u64)rq;

	return bpf_map_lookup_elem(&filtered_rqs, &key) != NULL;
}

#endif /* WRITEPATH_KEPT_OUT_BPF_H */
