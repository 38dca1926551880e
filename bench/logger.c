// SPDX-License-Identifier: Apache-2.0
// The soak benchmark's workload: a logger appending 4 KiB buffered records to DIR/log at
// RATE writes/s for SECONDS, never syncing, as an application logging steadily would. Every
// ROTATE_MiB the file is rotated the way logrotate does it: renamed to log.N and a new log
// started; the rotated files stay (their pages are written back as usual) and are all removed
// at the end. Prints the writes done and the rate achieved.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int open_log(const char* path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
  if (fd < 0) perror("wp_bench_logger: open");
  return fd;
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 5) {
    fprintf(stderr, "usage: wp_bench_logger DIR [RATE=20000] [SECONDS=60] [ROTATE_MiB=256]\n");
    return 2;
  }
  long rate = argc > 2 ? strtol(argv[2], NULL, 10) : 20000;
  double seconds = argc > 3 ? strtod(argv[3], NULL) : 60;
  long rotate = (argc > 4 ? strtol(argv[4], NULL, 10) : 256) * 1024 * 1024 / 4096;
  if (rate <= 0 || seconds <= 0 || rotate <= 0) {
    fprintf(stderr, "wp_bench_logger: RATE, SECONDS and ROTATE_MiB must be positive\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof(path), "%s/log", argv[1]);
  int fd = open_log(path);
  if (fd < 0) return 1;
  char record[4096];
  memset(record, 'l', sizeof(record));
  record[sizeof(record) - 1] = '\n';

  const double start = now_s();
  long written = 0, in_file = 0, rotated = 0;
  char old[4200];
  for (;;) {
    double elapsed = now_s() - start;
    if (elapsed >= seconds) break;
    // Catch up to the schedule, then sleep a millisecond: a steady rate without a busy loop.
    long due = (long)(elapsed * (double)rate);
    for (; written < due; written++, in_file++) {
      if (in_file == rotate) {
        close(fd);
        snprintf(old, sizeof(old), "%s.%ld", path, ++rotated);
        if (rename(path, old) != 0) {
          perror("wp_bench_logger: rename");
          return 1;
        }
        if ((fd = open_log(path)) < 0) return 1;
        in_file = 0;
      }
      if (write(fd, record, sizeof(record)) != (ssize_t)sizeof(record)) {
        perror("wp_bench_logger: write");
        return 1;
      }
    }
    struct timespec tick = {0, 1000000};
    nanosleep(&tick, NULL);
  }
  double took = now_s() - start;
  printf("%ld writes in %.1f s (%.0f writes/s)\n", written, took, (double)written / took);
  close(fd);
  unlink(path);
  for (long i = 1; i <= rotated; i++) {
    snprintf(old, sizeof(old), "%s.%ld", path, i);
    unlink(old);
  }
  return 0;
}
