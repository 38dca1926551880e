// SPDX-License-Identifier: Apache-2.0
// Small, exact write workloads for the integration tests: the facts the tests assert
// (how many writes, of what size, buffered or direct, fsynced or not) are set here.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/ioctl.h>

#include <liburing.h>

// O_APPEND through every write flavour, then sync_file_range and fdatasync: the offsets
// are 0, 5000 and 11000 whatever the positional argument says (pwrite(2) BUGS).
/* One buffered 4 KiB pwrite; once it returned, "PID REALTIME_NS" goes to STAMP (written to a
 * temporary name and renamed, so a reader never sees half of it); then, unless FIFO is "-",
 * waits until someone opens FIFO for writing and closes it: the tracer keeps running. */
static int write_wait(const char* path, const char* stamp, const char* fifo) {
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

static int append_mix(const char* path) {
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

static int discard_mix(const char* path, long count) {
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

// COUNT 4 KiB writes to PATH, then fsync.
static int write_and_fsync(const char* path, long count) {
  char block[4096];
  memset(block, 'f', sizeof(block));
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return 1;
  int ok = 1;
  for (long i = 0; i < count; i++)
    ok &= pwrite(fd, block, sizeof(block), (off_t)(i * sizeof(block))) == (ssize_t)sizeof(block);
  ok &= fsync(fd) == 0;
  close(fd);
  return ok ? 0 : 1;
}

// One child's work: in this process, or by exec'ing EXE (whose name becomes the child's comm).
static void child_work(const char* exe, const char* dir, const char* name, long i, long count) {
  char path[4096], count_text[32];
  snprintf(path, sizeof(path), "%s/%s-%ld", dir, name, i);
  snprintf(count_text, sizeof(count_text), "%ld", count);
  if (exe) {
    execl(exe, exe, "buffered-fsync", path, count_text, (char*)NULL);
    _exit(127);
  }
  _exit(write_and_fsync(path, count));
}

// A process tree for --children: EARLY children forked at once, held on a pipe; then "ready
// PID" on stdout and a wait for SIGUSR1 (sent once the tracer is attached), which releases the
// early ones and forks N more. Every child writes COUNT 4 KiB blocks to DIR/early-I or
// DIR/child-I and fsyncs; the parent itself writes nothing after "ready".
static int fork_tree(const char* dir, long n, long count, long early, const char* exe) {
  int gate[2];
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigprocmask(SIG_BLOCK, &usr1, NULL);
  if (pipe(gate) != 0) return 1;
  for (long i = 0; i < early; i++) {
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      char byte;
      close(gate[1]);
      if (read(gate[0], &byte, 1) != 0) _exit(1);  // EOF: the parent let go
      child_work(exe, dir, "early", i, count);
    }
  }
  close(gate[0]);
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  int signal = 0;
  if (sigwait(&usr1, &signal) != 0) return 1;
  close(gate[1]);
  for (long i = 0; i < n; i++) {
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) child_work(exe, dir, "child", i, count);
  }
  int failures = 0, status = 0;
  while (wait(&status) > 0) failures += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  if (failures) fprintf(stderr, "wp_workload: %d children failed\n", failures);
  return failures != 0;
}

// Writes by ways the tracer counts but does not stitch, a known number of times each:
// `fallocates` fallocate(2), `copies` copy_file_range(2) into PATH.copy, `msyncs` stores into a
// shared mapping each followed by msync(2); then a splice(2) from the file into a pipe, which
// writes no file and must not be counted.
static int untraced_mix(const char* path, long fallocates, long copies, long msyncs) {
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
static int mmap_msync(const char* path, long pages, long syncs) {
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
static int pwritev2_dsync(const char* path, long count) {
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
static int aio_batch(const char* path, long count) {
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
static int uring_mix(const char* path, long count, const char* how) {
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

/* Opens PATH, unlinks it, then writes COUNT 4 KiB blocks to it and fsyncs: writes to a file
 * that has no name any more (as a log rotated away under its writer). */
static int unlinked(const char* path, long count) {
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

static int rename_over(const char* path, long rounds) {
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

/* ---- stalls: each mode makes one thread block on one thing, and proves it did by the
 * blocked thread's own kernel stack (/proc/self/task/TID/stack, root only), printed on
 * stdout as "stack TID F1 < F2 < ..." (innermost first, offsets dropped). */

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static pid_t this_tid(void) {
  return (pid_t)syscall(SYS_gettid);
}

/* TID's kernel stack as one line of function names, innermost first, in OUT. */
static int read_stack(pid_t tid, char* out, size_t size) {
  char path[64], line[256];
  snprintf(path, sizeof(path), "/proc/self/task/%d/stack", (int)tid);
  FILE* in = fopen(path, "r");
  if (in == NULL) return 0;
  size_t used = 0;
  out[0] = 0;
  while (fgets(line, sizeof(line), in)) {
    /* "[<0>] rwsem_down_write_slowpath+0x2a1/0x5c0" */
    char* name = strchr(line, ']');
    if (name == NULL) continue;
    name += 2;
    name[strcspn(name, "+\n ")] = 0;
    int n = snprintf(out + used, size - used, "%s%s", used ? " < " : "", name);
    if (n < 0 || (size_t)n >= size - used) break;
    used += (size_t)n;
  }
  fclose(in);
  return used > 0;
}

/* Polls TID's kernel stack until it holds NEEDLE ("^NAME": its innermost frame is NAME) --
 * then copies it to OUT and says 1 -- or *DONE turns true, or TIMEOUT_MS passes (0). */
static int stack_matches(const char* stack, const char* needle) {
  if (needle[0] != '^') return strstr(stack, needle) != NULL;
  size_t n = strlen(needle + 1);
  return strncmp(stack, needle + 1, n) == 0 && (stack[n] == ' ' || stack[n] == 0);
}

static int wait_for_stack(pid_t tid, const char* needle, atomic_int* done, int timeout_ms,
                          char* out, size_t size) {
  const long long deadline = now_ns() + (long long)timeout_ms * 1000000LL;
  while (now_ns() < deadline && !(done && atomic_load(done))) {
    if (read_stack(tid, out, size) && stack_matches(out, needle)) return 1;
    struct timespec pause = {0, 200000}; /* 0.2 ms: a stall of a few ms is seen */
    nanosleep(&pause, NULL);
  }
  return 0;
}

static void print_stack(pid_t tid, const char* stack) {
  printf("stack %d %s\n", (int)tid, stack);
  fflush(stdout);
}

struct locked_write {
  int fd;
  const char* buf;
  off_t offset;
  pid_t tid;
  long long ns;
  ssize_t result;
  atomic_int started;
  atomic_int done;
};

static void* locked_write_thread(void* arg) {
  struct locked_write* w = arg;
  w->tid = this_tid();
  atomic_store(&w->started, 1);
  long long start = now_ns();
  w->result = pwrite(w->fd, w->buf, 4096, w->offset);
  w->ns = now_ns() - start;
  atomic_store(&w->done, 1);
  return NULL;
}

static void start_locked_write(struct locked_write* w, pthread_t* thread) {
  pthread_create(thread, NULL, locked_write_thread, w);
  while (!atomic_load(&w->started)) sched_yield();
}

/* Two writers on PATH. The holder's 4 KiB pwrite takes the file's i_rwsem, then faults on its
 * source page, registered with userfaultfd and left missing: it sleeps in handle_userfault
 * with the lock held. The waiter's 4 KiB pwrite then sleeps in down_write. /proc's stacks skip
 * the scheduler's own frames (rwsem_down_write_slowpath is one): once the waiter's innermost
 * frame is ext4_buffered_write_iter, where it takes the lock, the lock stays held HOLD_MS longer
 * (the stall's length), then the page is supplied (UFFDIO_COPY) and both writes finish. Prints
 * "holder TID", "waiter TID", the waiter's "stack", and "waiter-write NS" / "holder-write NS". */
static int inode_lock(const char* path, long hold_ms) {
  const size_t page = 4096;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
  struct uffdio_api api = {.api = UFFD_API};
  char* missing = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (fd < 0 || uffd < 0 || missing == MAP_FAILED || ioctl(uffd, UFFDIO_API, &api) != 0) {
    fprintf(stderr, "wp_workload: inode-lock: userfaultfd: %s\n", strerror(errno));
    return 1;
  }
  struct uffdio_register reg = {.range = {(unsigned long)missing, page},
                                .mode = UFFDIO_REGISTER_MODE_MISSING};
  if (ioctl(uffd, UFFDIO_REGISTER, &reg) != 0) {
    fprintf(stderr, "wp_workload: inode-lock: UFFDIO_REGISTER: %s\n", strerror(errno));
    return 1;
  }
  static char data[4096];
  memset(data, 'l', sizeof(data));
  struct locked_write holder = {.fd = fd, .buf = missing, .offset = 0};
  struct locked_write waiter = {.fd = fd, .buf = data, .offset = (off_t)page};
  pthread_t holder_thread, waiter_thread;
  char stack[4096];
  start_locked_write(&holder, &holder_thread);
  /* The holder has faulted once the userfaultfd has a message (it sleeps with the lock). */
  struct pollfd pfd = {.fd = uffd, .events = POLLIN};
  struct uffd_msg msg;
  if (poll(&pfd, 1, 10000) != 1 || read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
      msg.event != UFFD_EVENT_PAGEFAULT) {
    fprintf(stderr, "wp_workload: inode-lock: the holder never faulted\n");
    return 1;
  }
  printf("holder %d\n", (int)holder.tid);
  start_locked_write(&waiter, &waiter_thread);
  printf("waiter %d\n", (int)waiter.tid);
  int blocked = wait_for_stack(waiter.tid, "^ext4_buffered_write_iter", &waiter.done, 10000, stack,
                               sizeof(stack));
  if (blocked)
    print_stack(waiter.tid, stack);
  else
    fprintf(stderr, "wp_workload: inode-lock: the waiter never blocked on the lock\n");
  struct timespec hold = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};
  nanosleep(&hold, NULL);
  memset(data, 'h', sizeof(data));
  struct uffdio_copy copy = {
      .dst = (unsigned long)missing, .src = (unsigned long)data, .len = page};
  if (ioctl(uffd, UFFDIO_COPY, &copy) != 0) {
    fprintf(stderr, "wp_workload: inode-lock: UFFDIO_COPY: %s\n", strerror(errno));
    return 1;
  }
  pthread_join(holder_thread, NULL);
  pthread_join(waiter_thread, NULL);
  printf("holder-write %lld\nwaiter-write %lld\n", holder.ns, waiter.ns);
  close(fd);
  close(uffd);
  int ok = blocked && holder.result == (ssize_t)page && waiter.result == (ssize_t)page;
  return ok ? 0 : 1;
}

struct stack_watch {
  pid_t tid;
  const char* needle;
  atomic_int done;
  int seen;
  char stack[4096];
};

static void* stack_watch_thread(void* arg) {
  struct stack_watch* w = arg;
  w->seen = wait_for_stack(w->tid, w->needle, &w->done, 60000, w->stack, sizeof(w->stack));
  return NULL;
}

/* BULK_MIB MiB of buffered writes to DIR/bulk (no sync: they stay in the running journal
 * transaction, as ordered data on a nodelalloc mount), then one 4 KiB write to DIR/small and
 * its fsync, which waits for that transaction's commit. A second thread watches the fsync's
 * stack for jbd2_log_wait_commit. Prints "fsync TID NS" and the "stack" it saw. */
static int journal_commit(const char* dir, long bulk_mib) {
  char path[4096];
  static char chunk[1 << 20];
  memset(chunk, 'j', sizeof(chunk));
  snprintf(path, sizeof(path), "%s/bulk", dir);
  int bulk = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  snprintf(path, sizeof(path), "%s/small", dir);
  int small = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (bulk < 0 || small < 0) return 1;
  for (long i = 0; i < bulk_mib; i++)
    if (write(bulk, chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk)) return 1;
  struct stack_watch watch = {.tid = this_tid(), .needle = "jbd2_log_wait_commit"};
  pthread_t watcher;
  pthread_create(&watcher, NULL, stack_watch_thread, &watch);
  long long start = now_ns();
  int ok = write(small, chunk, 4096) == 4096 && fsync(small) == 0;
  long long ns = now_ns() - start;
  atomic_store(&watch.done, 1);
  pthread_join(watcher, NULL);
  printf("fsync %d %lld\n", (int)this_tid(), ns);
  if (watch.seen) print_stack(watch.tid, watch.stack);
  close(small);
  close(bulk);
  return ok ? 0 : 1;
}

/* Buffered writes of COUNT MiB to PATH, 1 MiB a call, each MiB's writeback started at once
 * (sync_file_range WRITE) so that a memory cgroup's limit finds clean pages to reclaim rather
 * than only dirty ones; then an fsync. Prints "writes N NS" (calls and their total time). */
static int buffered_stream(const char* path, long count) {
  static char chunk[1 << 20];
  memset(chunk, 'm', sizeof(chunk));
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return 1;
  int ok = 1;
  long long start = now_ns();
  for (long i = 0; ok && i < count; i++) {
    ok = write(fd, chunk, sizeof(chunk)) == (ssize_t)sizeof(chunk) &&
         sync_file_range(fd, (off_t)i << 20, 1 << 20, SYNC_FILE_RANGE_WRITE) == 0;
  }
  long long ns = now_ns() - start;
  ok = ok && fsync(fd) == 0;
  printf("writes %ld %lld\n", count, ns);
  close(fd);
  if (!ok) fprintf(stderr, "wp_workload: buffered-stream: %s\n", strerror(errno));
  return ok ? 0 : 1;
}

/* Moves this process into each cgroup whose cgroup.procs file is listed in PROCS (comma
 * separated: one per v1 hierarchy, or one v2 cgroup) before anything is written. */
static int join_cgroups(const char* procs) {
  char list[4096];
  snprintf(list, sizeof(list), "%s", procs);
  for (char* file = strtok(list, ","); file; file = strtok(NULL, ",")) {
    FILE* out = fopen(file, "w");
    if (out == NULL || fprintf(out, "%d\n", (int)getpid()) < 0 || fclose(out) != 0) {
      fprintf(stderr, "wp_workload: joining %s: %s\n", file, strerror(errno));
      return 0;
    }
  }
  return 1;
}

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
