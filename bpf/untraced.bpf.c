// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writes the tracer does not follow: WP_UNTRACED_TABLE's calls of traced processes, counted at
 * entry (untraced.bpf.h). Their own tracepoints, not the raw pair: the write path's programs
 * stay as they are, and these run only on calls that are rare next to write(2).
 */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "untraced.bpf.h"
#include "writepath.h"

#define WP_UNTRACED_COUNTER_(id, name, event, fd_arg)                                              \
	SEC("tracepoint/syscalls/sys_enter_" #event)                                               \
	int wp_count_##name(struct trace_event_raw_sys_enter *ctx)                                 \
	{                                                                                          \
		/* A constant index: the verifier refuses a ctx pointer moved by a variable. */   \
		return wp_count_untraced(WP_UNTRACED_##id, (fd_arg) >= 0,                          \
					 (int)ctx->args[(fd_arg) >= 0 ? (fd_arg) : 0]);            \
	}

WP_UNTRACED_TABLE(WP_UNTRACED_COUNTER_)
#undef WP_UNTRACED_COUNTER_

/* Where trampolines attach: the same counters at each call's entry function (syscall.bpf.c's
 * trampolines say why; the agent sets the target). */
#define WP_UNTRACED_TRAMPOLINE_(id, name, event, fd_arg)                                           \
	SEC("fentry")                                                                              \
	int BPF_PROG(wp_fentry_count_##name, struct pt_regs *regs)                                 \
	{                                                                                          \
		return wp_count_untraced(WP_UNTRACED_##id, (fd_arg) >= 0,                          \
					 (int)wp_regs_syscall_arg(regs, (fd_arg) >= 0 ? (fd_arg) : 0)); \
	}

WP_UNTRACED_TABLE(WP_UNTRACED_TRAMPOLINE_)
#undef WP_UNTRACED_TRAMPOLINE_

char LICENSE[] SEC("license") = "GPL";
