// SPDX-License-Identifier: Apache-2.0
// The benchmarks' write workload: COUNT 4 KiB pwrites over a FILE_MiB window of one file
// (wrapping), then the mean ns per write on stdout, timed around the loop only. The window is
// written once before the clock starts, so every timed write overwrites a page already in the
// cache. With MODE "fdatasync" each write is followed by fdatasync (the durable-write case);
// the default is buffered writes only, which measures what tracing adds to the syscall and
// page-cache path.
// Built a second time as wp_bench_pread (WP_BENCH_PREAD): COUNT 4 KiB preads of the same
// cached window instead, what tracing adds to a read's path beside a write's.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 3 || (argc > 4 && strcmp(argv[4], "fdatasync") != 0)) {
    fprintf(stderr, "usage: %s PATH COUNT [FILE_MiB] [fdatasync]\n", argv[0]);
    return 2;
  }
  long count = strtol(argv[2], NULL, 10);
  long window = (argc > 3 ? strtol(argv[3], NULL, 10) : 64) * 1024 * 1024 / 4096;
  int sync_each = argc > 4;
  int fd = open(argv[1], O_RDWR | O_CREAT, 0644);
  if (fd < 0 || count <= 0 || window <= 0) {
    if (fd < 0)
      perror("wp_bench_pwrite");
    else
      fprintf(stderr, "wp_bench_pwrite: COUNT and FILE_MiB must be positive\n");
    return fd < 0 ? 1 : 2;
  }
  char buf[4096];
  memset(buf, 'b', sizeof(buf));
  for (long i = 0; i < window; i++) {
    if (pwrite(fd, buf, sizeof(buf), (off_t)i * 4096) != (ssize_t)sizeof(buf)) {
      perror("pwrite");
      return 1;
    }
  }
  if (sync_each && fsync(fd) != 0) {  // timed syncs then carry one write's data, not the fill
    perror("fsync");
    return 1;
  }
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < count; i++) {
#ifdef WP_BENCH_PREAD
    if (pread(fd, buf, sizeof(buf), (off_t)(i % window) * 4096) != (ssize_t)sizeof(buf)) {
      perror("pread");
      return 1;
    }
#else
    if (pwrite(fd, buf, sizeof(buf), (off_t)(i % window) * 4096) != (ssize_t)sizeof(buf)) {
      perror("pwrite");
      return 1;
    }
#endif
    if (sync_each && fdatasync(fd) != 0) {
      perror("fdatasync");
      return 1;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
  printf("%.1f\n", ns / (double)count);
  close(fd);
  return 0;
}
