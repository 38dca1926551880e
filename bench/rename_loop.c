// SPDX-License-Identifier: Apache-2.0
// A namespace-call loop: COUNT renames of one empty file back and forth in DIR (a, b, a, ...),
// then the mean ns per rename(2) on stdout, timed around the loop only. Beside the cached
// pwrite loop it tells what a traced name-change call costs against a traced write, and under
// a tracer of another process what an untraced rename pays. With PWRITE_FILE each rename is
// followed by a 4 KiB pwrite over the first page of that file (in the cache before the clock
// starts): both calls then run at one pace in one traced process, so the programs' time for
// each, as the kernel counts it, compares without the machine's drift between runs (and the
// mean is per pair).
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
  long count = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
  if ((argc != 3 && argc != 4) || count <= 0) {
    fprintf(stderr, "usage: wp_bench_rename DIR COUNT [PWRITE_FILE]\n");
    return 2;
  }
  char a[4096], b[4096];
  snprintf(a, sizeof(a), "%s/rename.a", argv[1]);
  snprintf(b, sizeof(b), "%s/rename.b", argv[1]);
  unlink(b);
  int fd = open(a, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || close(fd) != 0) {
    perror(a);
    return 1;
  }
  static char page[4096];
  int pwrite_fd = -1;
  if (argc == 4) {
    memset(page, 'w', sizeof(page));
    pwrite_fd = open(argv[3], O_WRONLY | O_CREAT, 0644);
    if (pwrite_fd < 0 || pwrite(pwrite_fd, page, sizeof(page), 0) != (ssize_t)sizeof(page)) {
      perror(argv[3]);
      return 1;
    }
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < count; i++) {
    if (rename(i % 2 ? b : a, i % 2 ? a : b) != 0) {
      perror("rename");
      return 1;
    }
    if (pwrite_fd >= 0 && pwrite(pwrite_fd, page, sizeof(page), 0) != (ssize_t)sizeof(page)) {
      perror("pwrite");
      return 1;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
  printf("%.1f\n", ns / (double)count);
  unlink(count % 2 ? b : a);
  return 0;
}
