// SPDX-License-Identifier: Apache-2.0
// What happens to a file after it was written: truncated, unlinked, renamed over another.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workload.h"

// COUNT one-page writes to each of four files, whose pages then fare differently:
// PATH.truncated is truncated to 0 and PATH.unlinked unlinked before any writeback (within
// milliseconds of being written, far inside dirty_expire_centisecs), PATH.half truncated to
// COUNT/2 pages and fsynced, PATH.kept fsynced. Prints "wp_workload: ino NAME INO" for each
// (stderr).
static int write_pages(const char* path, const char* name, long count, int* fd_out) {
  char file[4096];
  char page[4096];
  struct stat st;
  snprintf(file, sizeof(file), "%s.%s", path, name);
  int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || fstat(fd, &st) != 0) return 0;
  memset(page, 'd', sizeof(page));
  for (long i = 0; i < count; i++)
    if (pwrite(fd, page, sizeof(page), (off_t)(i * 4096)) != (ssize_t)sizeof(page)) return 0;
  fprintf(stderr, "wp_workload: ino %s %llu\n", name, (unsigned long long)st.st_ino);
  *fd_out = fd;
  return 1;
}

int discard_mix(const char* path, long count) {
  char file[4096];
  int fd = -1;
  if (!write_pages(path, "truncated", count, &fd) || ftruncate(fd, 0) != 0 || close(fd) != 0)
    return 1;
  if (!write_pages(path, "half", count, &fd) || ftruncate(fd, (off_t)(count / 2) * 4096) != 0 ||
      fsync(fd) != 0 || close(fd) != 0)
    return 1;
  if (!write_pages(path, "kept", count, &fd) || fsync(fd) != 0 || close(fd) != 0) return 1;
  // Last, so that no later file of the run reuses its inode number.
  snprintf(file, sizeof(file), "%s.unlinked", path);
  if (!write_pages(path, "unlinked", count, &fd) || close(fd) != 0 || unlink(file) != 0) return 1;
  return 0;
}

/* Opens PATH, unlinks it, then writes COUNT 4 KiB blocks to it and fsyncs: writes to a file
 * that has no name any more (as a log rotated away under its writer). */
int unlinked(const char* path, long count) {
  char block[4096];
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int failures = 0;

  if (fd < 0 || unlink(path) != 0) {
    fprintf(stderr, "wp_workload: unlinked %s: %s\n", path, strerror(errno));
    return 1;
  }
  memset(block, 'u', sizeof(block));
  for (long i = 0; i < count; i++)
    if (pwrite(fd, block, sizeof(block), (off_t)(i * sizeof(block))) != sizeof(block)) failures++;
  if (fsync(fd) != 0) failures++;
  close(fd);
  return failures != 0;
}

/* PostgreSQL's durable_rename, ROUNDS times: write and fsync PATH.tmp, fsync PATH (the file it
 * replaces, once there is one), rename PATH.tmp over PATH, fsync PATH again. Each fsync opens
 * its file afresh, so the kernel often hands it the struct file the previous one closed; prints
 * "wp_workload: ino NAME INO" for each file it fsyncs under NAME, so a test can tell them apart. */
static int fsync_path(const char* path, const char* name) {
  int fd = open(path, O_RDWR);
  struct stat st;

  if (fd < 0 || fstat(fd, &st) != 0 || fsync(fd) != 0) {
    fprintf(stderr, "wp_workload: fsync %s: %s\n", path, strerror(errno));
    return 1;
  }
  fprintf(stderr, "wp_workload: ino %s %llu\n", name, (unsigned long long)st.st_ino);
  close(fd);
  return 0;
}

int rename_over(const char* path, long rounds) {
  char tmp[4096], block[64];

  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  memset(block, 'r', sizeof(block));
  for (long i = 0; i < rounds; i++) {
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);

    if (fd < 0 || write(fd, block, sizeof(block)) != sizeof(block) || close(fd) != 0 ||
        fsync_path(tmp, "tmp") != 0 || (i > 0 && fsync_path(path, "target") != 0))
      return 1;
    if (rename(tmp, path) != 0) {
      fprintf(stderr, "wp_workload: rename %s: %s\n", tmp, strerror(errno));
      return 1;
    }
    if (fsync_path(path, "target") != 0) return 1;
  }
  return 0;
}
