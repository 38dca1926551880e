// SPDX-License-Identifier: Apache-2.0
// The ways of writing the tracer follows (or counts): O_APPEND through every write flavour,
// mmap stores and msync, pwritev2 flags, io_submit, io_uring, and the calls it only counts.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

#include "workload.h"

/* One buffered 4 KiB pwrite; once it returned, "PID REALTIME_NS" goes to STAMP (written to a
 * temporary name and renamed, so a reader never sees half of it); then, unless FIFO is "-",
 * waits until someone opens FIFO for writing and closes it: the tracer keeps running. */
int write_wait(const char* path, const char* stamp, const char* fifo) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return 1;
  char buf[4096];
  memset(buf, 'w', sizeof(buf));
  if (pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf)) return 1;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  char tmp[4096];
  snprintf(tmp, sizeof(tmp), "%s.tmp", stamp);
  FILE* out = fopen(tmp, "w");
  if (out == NULL) return 1;
  fprintf(out, "%d %lld\n", (int)getpid(), (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
  if (fclose(out) != 0 || rename(tmp, stamp) != 0) return 1;
  if (strcmp(fifo, "-") != 0) {
    int wait_fd = open(fifo, O_RDONLY);
    if (wait_fd < 0) return 1;
    char c;
    while (read(wait_fd, &c, 1) > 0) {
    }
    close(wait_fd);
  }
  close(fd);
  return 0;
}

// O_APPEND through every write flavour, then sync_file_range and fdatasync: the offsets
// are 0, 5000 and 11000 whatever the positional argument says (pwrite(2) BUGS).
int append_mix(const char* path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
  if (fd < 0) return 1;
  char a[5000], b[3000], c[4096];
  memset(a, 'a', sizeof(a));
  memset(b, 'b', sizeof(b));
  memset(c, 'c', sizeof(c));
  struct iovec two[2] = {{b, sizeof(b)}, {b, sizeof(b)}};
  struct iovec one[1] = {{c, sizeof(c)}};
  int ok = write(fd, a, sizeof(a)) == (ssize_t)sizeof(a) &&
           writev(fd, two, 2) == (ssize_t)(2 * sizeof(b)) &&
           pwritev(fd, one, 1, 65536) == (ssize_t)sizeof(c) &&
           sync_file_range(fd, 0, 0,
                           SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                               SYNC_FILE_RANGE_WAIT_AFTER) == 0 &&
           fdatasync(fd) == 0;
  close(fd);
  return ok ? 0 : 1;
}

// Writes by ways the tracer counts but does not stitch, a known number of times each:
// `fallocates` fallocate(2), `copies` copy_file_range(2) into PATH.copy, `msyncs` stores into a
// shared mapping each followed by msync(2); then a splice(2) from the file into a pipe, which
// writes no file and must not be counted.
int untraced_mix(const char* path, long fallocates, long copies, long msyncs) {
  char copy_path[4096];
  snprintf(copy_path, sizeof(copy_path), "%s.copy", path);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  int out = open(copy_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int pipes[2];
  if (fd < 0 || out < 0 || pipe(pipes) != 0) return 1;
  const size_t page = 4096;
  int ok = 1;
  for (long i = 0; ok && i < fallocates; i++)
    ok = fallocate(fd, 0, (off_t)(i * page), (off_t)page) == 0;
  for (long i = 0; ok && i < copies; i++) {
    loff_t from = 0, to = (loff_t)(i * page);
    ok = copy_file_range(fd, &from, out, &to, page, 0) == (ssize_t)page;
  }
  const size_t span = (size_t)(msyncs > 0 ? msyncs : 1) * page;
  if (ok && ftruncate(fd, (off_t)span) != 0) ok = 0;
  char* map = ok ? mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  if (map == MAP_FAILED) ok = 0;
  for (long i = 0; ok && i < msyncs; i++) {
    map[i * page] = 'm';
    ok = msync(map + i * page, page, MS_SYNC) == 0;
  }
  if (map != MAP_FAILED) munmap(map, span);
  loff_t at = 0;
  if (ok && splice(fd, &at, pipes[1], NULL, page, 0) != (ssize_t)page) ok = 0;
  close(pipes[0]);
  close(pipes[1]);
  close(out);
  close(fd);
  if (!ok) fprintf(stderr, "wp_workload: untraced-mix: %s\n", strerror(errno));
  return ok ? 0 : 1;
}

// `syncs` rounds of: a store into each of `pages` pages of a shared mapping of PATH, then
// msync(MS_SYNC) of the whole mapping; then one MS_ASYNC msync after a last round of stores,
// and an fsync, which finds nothing left to write.
int mmap_msync(const char* path, long pages, long syncs) {
  const size_t page = 4096;
  const size_t span = (size_t)pages * page;
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || pages <= 0 || syncs <= 0 || ftruncate(fd, (off_t)span) != 0) return 1;
  char* map = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int ok = map != MAP_FAILED;
  for (long s = 0; ok && s < syncs; s++) {
    for (long i = 0; i < pages; i++) map[i * page + (size_t)s % page] = (char)('a' + s % 26);
    ok = msync(map, span, MS_SYNC) == 0;
  }
  if (ok) {
    map[0] = 'z';
    ok = msync(map, span, MS_ASYNC) == 0 && fsync(fd) == 0;
  }
  if (map != MAP_FAILED) munmap(map, span);
  close(fd);
  if (!ok) fprintf(stderr, "wp_workload: mmap-msync: %s\n", strerror(errno));
  return ok ? 0 : 1;
}

// COUNT buffered pwritev2(RWF_DSYNC) of one page each at consecutive offsets: each is
// written and flushed inside its call, as with O_DSYNC.
int pwritev2_dsync(const char* path, long count) {
  char data[4096];
  memset(data, 'd', sizeof(data));
  struct iovec one[1] = {{data, sizeof(data)}};
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return 1;
  int ok = 1;
  for (long i = 0; ok && i < count; i++)
    ok = pwritev2(fd, one, 1, (off_t)(i * sizeof(data)), RWF_DSYNC) == (ssize_t)sizeof(data);
  close(fd);
  if (!ok) fprintf(stderr, "wp_workload: pwritev2-dsync: %s\n", strerror(errno));
  return ok ? 0 : 1;
}

// One io_submit(2) of COUNT O_DIRECT one-page writes (IOCB_CMD_PWRITE, consecutive offsets),
// reaped with io_getevents(2); then one buffered IOCB_CMD_PWRITEV of two pages and an fsync.
int aio_batch(const char* path, long count) {
  const size_t page = 4096;
  aio_context_t ctx = 0;
  if (count <= 0 || count > 64 || syscall(SYS_io_setup, 128, &ctx) != 0) return 1;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0644);
  int buffered = open(path, O_WRONLY);
  void* buf = NULL;
  if (fd < 0 || buffered < 0 || posix_memalign(&buf, page, 2 * page)) return 1;
  memset(buf, 'a', 2 * page);
  struct iocb cbs[64];
  struct iocb* ptrs[64];
  memset(cbs, 0, sizeof(cbs));
  for (long i = 0; i < count; i++) {
    cbs[i].aio_lio_opcode = IOCB_CMD_PWRITE;
    cbs[i].aio_fildes = (unsigned)fd;
    cbs[i].aio_buf = (unsigned long)buf;
    cbs[i].aio_nbytes = page;
    cbs[i].aio_offset = (long long)(i * page);
    ptrs[i] = &cbs[i];
  }
  struct io_event events[64];
  int ok = syscall(SYS_io_submit, ctx, count, ptrs) == count &&
           syscall(SYS_io_getevents, ctx, count, count, events, NULL) == count;
  for (long i = 0; ok && i < count; i++) ok = events[i].res == (long long)page;
  struct iovec two[2] = {{buf, page}, {(char*)buf + page, page}};
  struct iocb vec = {.aio_lio_opcode = IOCB_CMD_PWRITEV,
                     .aio_fildes = (unsigned)buffered,
                     .aio_buf = (unsigned long)two,
                     .aio_nbytes = 2,
                     .aio_offset = (long long)(count * page)};
  struct iocb* one[1] = {&vec};
  ok = ok && syscall(SYS_io_submit, ctx, 1, one) == 1 &&
       syscall(SYS_io_getevents, ctx, 1, 1, events, NULL) == 1 &&
       events[0].res == (long long)(2 * page) && fsync(buffered) == 0;
  syscall(SYS_io_destroy, ctx);
  close(buffered);
  close(fd);
  free(buf);
  if (!ok) fprintf(stderr, "wp_workload: aio-batch: %s\n", strerror(errno));
  return ok ? 0 : 1;
}

// COUNT 4 KiB io_uring writes at offsets 0, 4096, ..., then one IORING_OP_FSYNC and one
// IORING_OP_FALLOCATE of the range written, one op in flight at a time. HOW: "inline" (issued by
// io_uring_enter), "async" (IOSQE_ASYNC: every op punted to an io-wq worker) or "sqpoll"
// (IORING_SETUP_SQPOLL: the kernel thread submits). Prints "wp_workload: pid N" for the tests.
int uring_mix(const char* path, long count, const char* how) {
  struct io_uring ring;
  unsigned setup = strcmp(how, "sqpoll") == 0 ? IORING_SETUP_SQPOLL : 0;
  unsigned char sqe_flags = strcmp(how, "async") == 0 ? IOSQE_ASYNC : 0;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  char block[4096];
  memset(block, 'u', sizeof(block));
  if (fd < 0) {
    fprintf(stderr, "wp_workload: uring-mix: %s: %s\n", path, strerror(errno));
    return 1;
  }
  int err = io_uring_queue_init(4, &ring, setup);
  if (err < 0) {
    fprintf(stderr, "wp_workload: uring-mix: io_uring_queue_init: %s\n", strerror(-err));
    return 1;
  }
  fprintf(stderr, "wp_workload: pid %d\n", (int)getpid());
  // COUNT writes, the fsync, then one op the tracer does not stitch but counts: an
  // IORING_OP_FALLOCATE of the range.
  for (long i = 0; i <= count + 1; i++) {
    struct io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    struct io_uring_cqe* cqe;
    const char* op = i < count ? "write" : i == count ? "fsync" : "fallocate";
    int expected = i < count ? (int)sizeof(block) : 0;
    if (i < count)
      io_uring_prep_write(sqe, fd, block, sizeof(block), (__u64)i * sizeof(block));
    else if (i == count)
      io_uring_prep_fsync(sqe, fd, 0);
    else
      io_uring_prep_fallocate(sqe, fd, 0, 0, (__u64)count * sizeof(block));
    sqe->flags |= sqe_flags;
    // With SQPOLL the count is the ring's unconsumed entries, and the kernel thread may post
    // the previous op's completion before it moves the ring's head past it: 2 is no error
    // (io_uring_submit(3): "may report a higher number of submitted entries").
    int submitted = io_uring_submit(&ring);
    if (submitted < 1 || (submitted != 1 && !setup)) {
      fprintf(stderr, "wp_workload: uring-mix: %s %ld: io_uring_submit returned %d (%s)\n", op, i,
              submitted, submitted < 0 ? strerror(-submitted) : "not one op");
      return 1;
    }
    err = io_uring_wait_cqe(&ring, &cqe);
    if (err < 0) {
      fprintf(stderr, "wp_workload: uring-mix: %s %ld: io_uring_wait_cqe: %s\n", op, i,
              strerror(-err));
      return 1;
    }
    if (cqe->res != expected) {
      fprintf(stderr, "wp_workload: uring-mix: %s %ld: completed with %d (%s), not %d\n", op, i,
              cqe->res, cqe->res < 0 ? strerror(-cqe->res) : "short", expected);
      return 1;
    }
    io_uring_cqe_seen(&ring, cqe);
  }
  io_uring_queue_exit(&ring);
  close(fd);
  return 0;
}
