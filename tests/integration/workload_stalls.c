// SPDX-License-Identifier: Apache-2.0
// Slow calls on purpose: each mode makes one thread block on one thing (an inode lock, a
// journal commit, a memory cgroup's reclaim). The first two prove it did by the blocked
// thread's own kernel stack (/proc/self/task/TID/stack, root only), printed on stdout as
// "stack TID F1 < F2 < ..." (innermost first, offsets dropped).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

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
int inode_lock(const char* path, long hold_ms) {
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
int journal_commit(const char* dir, long bulk_mib) {
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
int buffered_stream(const char* path, long count) {
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
