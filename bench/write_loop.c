// SPDX-License-Identifier: Apache-2.0
// An untraced-kind write loop: COUNT write(2)s of BYTES (default 64) to PATH (default
// /dev/null), then the mean ns per write on stdout, timed around the loop only. Most of a
// server's writes go to sockets, pipes and terminals, which the write path does not follow:
// what a tracer adds to this loop is what it costs every such write on the machine.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
  long count = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
  const char* path = argc > 2 ? argv[2] : "/dev/null";
  long bytes = argc > 3 ? strtol(argv[3], NULL, 10) : 64;
  if (argc < 2 || argc > 4 || count <= 0 || bytes <= 0 || bytes > 4096) {
    fprintf(stderr, "usage: wp_bench_write COUNT [PATH] [BYTES<=4096]\n");
    return 2;
  }
  int fd = open(path, O_WRONLY);
  if (fd < 0) {
    perror("wp_bench_write");
    return 1;
  }
  char buf[4096];
  memset(buf, 'w', sizeof(buf));
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < count; i++) {
    if (write(fd, buf, (size_t)bytes) != (ssize_t)bytes) {
      perror("write");
      return 1;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
  printf("%.1f\n", ns / (double)count);
  close(fd);
  return 0;
}
