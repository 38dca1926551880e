// SPDX-License-Identifier: Apache-2.0
// The modes of wp_workload (workload.c's main picks one by its first argument), by family;
// each says at its definition what it does and what it prints. 0 when it did all it meant to.
#pragma once

// Ways of writing (workload_calls.c).
int write_wait(const char* path, const char* stamp, const char* fifo);
int append_mix(const char* path);
int untraced_mix(const char* path, long fallocates, long copies, long msyncs);
int mmap_msync(const char* path, long pages, long syncs);
int pwritev2_dsync(const char* path, long count);
int aio_batch(const char* path, long count);
int uring_mix(const char* path, long count, const char* how);

// What happens to a file after it was written (workload_files.c).
int discard_mix(const char* path, long count);
int unlinked(const char* path, long count);
int rename_over(const char* path, long rounds);

// Who writes (workload_processes.c); join_cgroups says 1 when it joined them all.
int fork_tree(const char* dir, long n, long count, long early, const char* exe);
int join_cgroups(const char* procs);

// Slow calls on purpose (workload_stalls.c).
int inode_lock(const char* path, long hold_ms);
int journal_commit(const char* dir, long bulk_mib);
int buffered_stream(const char* path, long count);
