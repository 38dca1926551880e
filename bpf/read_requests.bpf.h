/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * With --reads (cfg_reads): the read bios of traced readers the block layer sent
 * (block.bpf.c), and the requests carrying one of them, whose request events and NVMe commands
 * are sent (block.bpf.c, nvme.bpf.c): nobody else's read request is.
 */
#ifndef WRITEPATH_READ_REQUESTS_BPF_H
#define WRITEPATH_READ_REQUESTS_BPF_H

#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

/* LRU: a bio merged into a request that was not sent, or a request whose completion never
 * came, ages out. Weak, as every map a header defines (config.bpf.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, __u8);
} read_bios SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u8);
} read_rqs SEC(".maps") __weak;

/* Whether request `rq` carries a read bio that was sent (a request holding more bios than the
 * walk's bound is judged by its first ones). */
static __always_inline bool wp_rq_has_read_bio(struct request *rq)
{
	struct bio *bio = BPF_CORE_READ(rq, bio);

	for (int i = 0; i < 16 && bio; i++) {
		__u64 key = (__u64)bio;

		if (bpf_map_lookup_elem(&read_bios, &key))
			return true;
		bio = BPF_CORE_READ(bio, bi_next);
	}
	return false;
}

#endif /* WRITEPATH_READ_REQUESTS_BPF_H */
