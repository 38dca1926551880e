// SPDX-License-Identifier: Apache-2.0
// A non-write syscall loop: COUNT getppid() calls, then the mean ns per call on stdout, timed
// around the loop only. Every process on a machine pays a tracer's syscall-wide hooks on calls
// like this one, traced or not, so this is the bystander's cost.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
  long count = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
  if (argc != 2 || count <= 0) {
    fprintf(stderr, "usage: wp_bench_getppid COUNT\n");
    return 2;
  }
  struct timespec a, b;
  long sum = 0;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < count; i++) sum += syscall(SYS_getppid);  // no libc shortcut
  clock_gettime(CLOCK_MONOTONIC, &b);
  double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
  printf("%.1f\n", ns / (double)count);
  return sum == 0 ? 1 : 0;  // getppid is never 0 for us; keeps the loop from being dropped
}
