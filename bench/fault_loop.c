// SPDX-License-Identifier: Apache-2.0
// The benchmarks' fault workload: COUNT major page faults on a FILE_MiB file, then the mean ns
// per fault on stdout. Each pass drops the file's pages (POSIX_FADV_DONTNEED), maps it with
// MADV_RANDOM (no readahead, no fault-around: every touched page is one fault that reads it
// in) and touches one byte of each page; the timed loop covers the passes, drops included.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s PATH COUNT [FILE_MiB]\n", argv[0]);
    return 2;
  }
  long count = strtol(argv[2], NULL, 10);
  long pages = (argc > 3 ? strtol(argv[3], NULL, 10) : 4) * 1024 * 1024 / 4096;
  int fd = open(argv[1], O_RDWR | O_CREAT, 0644);
  if (fd < 0 || count <= 0 || pages <= 0) {
    if (fd < 0)
      perror("wp_bench_fault");
    else
      fprintf(stderr, "wp_bench_fault: COUNT and FILE_MiB must be positive\n");
    return fd < 0 ? 1 : 2;
  }
  char buf[4096];
  memset(buf, 'f', sizeof(buf));
  for (long i = 0; i < pages; i++) {
    if (pwrite(fd, buf, sizeof(buf), (off_t)i * 4096) != (ssize_t)sizeof(buf)) {
      perror("pwrite");
      return 1;
    }
  }
  if (fsync(fd) != 0) {  // clean pages: the drop below can evict them all
    perror("fsync");
    return 1;
  }
  unsigned long sum = 0;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long done = 0; done < count;) {
    if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) {
      perror("posix_fadvise");
      return 1;
    }
    volatile const char* map = mmap(NULL, (size_t)pages * 4096, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED || madvise((void*)map, (size_t)pages * 4096, MADV_RANDOM) != 0) {
      perror("mmap");
      return 1;
    }
    for (long i = 0; i < pages && done < count; i++, done++) sum += (unsigned char)map[i * 4096];
    munmap((void*)map, (size_t)pages * 4096);
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
  printf("%.1f\n", ns / (double)count + (double)(sum & 0));
  return 0;
}
