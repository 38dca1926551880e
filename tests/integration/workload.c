// SPDX-License-Identifier: Apache-2.0
// Small, exact write workloads for the integration tests: the facts the tests assert
// (how many writes, of what size, buffered or direct, fsynced or not) are set here.
// The modes of each family are in workload_calls.c, workload_files.c, workload_processes.c and
// workload_stalls.c (workload.h); the plain write loops are here.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

static int usage(void) {
  fprintf(
      stderr,
      "usage: wp_workload buffered-fsync|fsync-each|buffered|direct|direct-unaligned PATH COUNT "
      "[BS]\n"
      "       wp_workload append-mix PATH\n"
      "       wp_workload write-wait PATH STAMP FIFO|-\n"
      "       wp_workload discard-mix PATH COUNT\n"
      "       wp_workload fork-tree DIR N COUNT EARLY [CHILD_EXE]\n"
      "       wp_workload untraced-mix PATH FALLOCATES COPIES MSYNCS\n"
      "       wp_workload mmap-msync PATH PAGES SYNCS\n"
      "       wp_workload pwritev2-dsync PATH COUNT\n"
      "       wp_workload aio-batch PATH COUNT\n"
      "       wp_workload unlinked PATH COUNT\n"
      "       wp_workload rename-over PATH ROUNDS\n"
      "       wp_workload uring-mix PATH COUNT inline|async|sqpoll\n"
      "       wp_workload inode-lock PATH HOLD_MS\n"
      "       wp_workload journal-commit DIR BULK_MIB\n"
      "       wp_workload buffered-stream PATH MIB\n"
      "       wp_workload in-cgroup PROCS_FILE[,PROCS_FILE…] MODE ARGS…\n");
  return 2;
}

int main(int argc, char** argv) {
  if (argc >= 4 && strcmp(argv[1], "in-cgroup") == 0) {
    if (!join_cgroups(argv[2])) return 1;
    argv[2] = argv[0];
    return main(argc - 2, argv + 2);
  }
  if (argc == 4 && strcmp(argv[1], "inode-lock") == 0)
    return inode_lock(argv[2], strtol(argv[3], NULL, 10));
  if (argc == 4 && strcmp(argv[1], "journal-commit") == 0)
    return journal_commit(argv[2], strtol(argv[3], NULL, 10));
  if (argc == 4 && strcmp(argv[1], "buffered-stream") == 0)
    return buffered_stream(argv[2], strtol(argv[3], NULL, 10));
  if (argc == 3 && strcmp(argv[1], "append-mix") == 0) return append_mix(argv[2]);
  if (argc == 5 && strcmp(argv[1], "write-wait") == 0) return write_wait(argv[2], argv[3], argv[4]);
  if ((argc == 6 || argc == 7) && strcmp(argv[1], "fork-tree") == 0)
    return fork_tree(argv[2], strtol(argv[3], NULL, 10), strtol(argv[4], NULL, 10),
                     strtol(argv[5], NULL, 10), argc == 7 ? argv[6] : NULL);
  if (argc == 6 && strcmp(argv[1], "untraced-mix") == 0)
    return untraced_mix(argv[2], strtol(argv[3], NULL, 10), strtol(argv[4], NULL, 10),
                        strtol(argv[5], NULL, 10));
  if (argc == 5 && strcmp(argv[1], "mmap-msync") == 0)
    return mmap_msync(argv[2], strtol(argv[3], NULL, 10), strtol(argv[4], NULL, 10));
  if (argc == 4 && strcmp(argv[1], "aio-batch") == 0)
    return aio_batch(argv[2], strtol(argv[3], NULL, 10));
  if (argc == 4 && strcmp(argv[1], "rename-over") == 0)
    return rename_over(argv[2], strtol(argv[3], NULL, 10));
  if (argc == 4 && strcmp(argv[1], "unlinked") == 0)
    return unlinked(argv[2], strtol(argv[3], NULL, 10));
  if (argc == 4 && strcmp(argv[1], "pwritev2-dsync") == 0)
    return pwritev2_dsync(argv[2], strtol(argv[3], NULL, 10));
  if (argc == 5 && strcmp(argv[1], "uring-mix") == 0)
    return uring_mix(argv[2], strtol(argv[3], NULL, 10), argv[4]);
  if (argc < 4) return usage();
  const char* mode = argv[1];
  const char* path = argv[2];
  long count = strtol(argv[3], NULL, 10);
  size_t bs = argc > 4 ? (size_t)strtoul(argv[4], NULL, 10) : 4096;
  int direct = strncmp(mode, "direct", 6) == 0;
  int flags = O_WRONLY | O_CREAT | O_TRUNC | (direct ? O_DIRECT : 0);
  if (count <= 0 || bs == 0) return usage();
  if (strcmp(mode, "discard-mix") == 0) return discard_mix(path, count);

  int fd = open(path, flags, 0644);
  if (fd < 0) {
    fprintf(stderr, "wp_workload: open %s: %s\n", path, strerror(errno));
    return 1;
  }
  void* buf = NULL;
  if (posix_memalign(&buf, 4096, bs + 4096)) return 1;
  memset(buf, 'w', bs + 4096);
  char* data = (char*)buf + (strcmp(mode, "direct-unaligned") == 0 ? 1 : 0);
  int failures = 0;
  int fsync_each = strcmp(mode, "fsync-each") == 0;
  for (long i = 0; i < count; i++) {
    if (pwrite(fd, data, bs, (off_t)(i * bs)) != (ssize_t)bs) failures++;
    if (fsync_each && fsync(fd) != 0) failures++;
  }
  if (strcmp(mode, "buffered-fsync") == 0 && fsync(fd) != 0) {
    fprintf(stderr, "wp_workload: fsync: %s\n", strerror(errno));
    return 1;
  }
  close(fd);
  free(buf);
  if (failures) fprintf(stderr, "wp_workload: %d of %ld writes failed\n", failures, count);
  return strcmp(mode, "direct-unaligned") == 0 ? 0 : failures != 0;
}
