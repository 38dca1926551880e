// SPDX-License-Identifier: Apache-2.0
// The VM cost meter's loops (bench/vm/run.sh): one row's calls, timed inside the guest, whose
// clock advances one nanosecond per guest instruction while it runs (QEMU -icount shift=0),
// so a nanosecond is an instruction. After a warm-up and a pause, COUNT calls of ROW are timed
// with CLOCK_MONOTONIC, and after them the CPU's work until it idles (a tracer's agent reading
// their records); the time the CPU spent idle meanwhile (/proc/timer_list: idle_sleeptime and
// iowait_sleeptime; waiting for the disk, the idle guest's clock follows the host's) is taken
// off, and
//   ROW MODE ROW COUNT INSTRUCTIONS_PER_CALL IDLE_PER_CALL
// is printed. Everything the one vCPU ran meanwhile counts: the kernel's path, the BPF programs,
// and a tracer's agent reading their records. ROW:
//   getppid        getppid(2)
//   write-null     a 64 B write(2) to /dev/null
//   pipe           a 64 B write(2) to a pipe and a 64 B read(2) from it
//   pwrite         a 4 KiB pwrite(2) over a cached page (a 1 MiB window of DIR/rows.dat)
//   pwrite-fdatasync  the same pwrite, then fdatasync(2)
//   rename         rename(2) of an empty file in DIR, back and forth
//   pread          a cached 4 KiB pread(2) of the same window
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { kPage = 4096, kWindow = 256 };  // pages in the pwrite/pread window

static char page[kPage];
static int fd = -1, pipe_fds[2] = {-1, -1};
static char name_a[4096], name_b[4096];

static int fail(const char* what) {
  perror(what);
  return -1;
}

static int call_getppid(long i) {
  (void)i;
  return syscall(SYS_getppid) > 0 ? 0 : fail("getppid");  // no libc shortcut
}
static int call_write_null(long i) {
  (void)i;
  return write(fd, page, 64) == 64 ? 0 : fail("write");
}
static int call_pipe(long i) {
  (void)i;
  if (write(pipe_fds[1], page, 64) != 64) return fail("write");
  return read(pipe_fds[0], page, 64) == 64 ? 0 : fail("read");
}
static int call_pwrite(long i) {
  return pwrite(fd, page, kPage, (off_t)(i % kWindow) * kPage) == kPage ? 0 : fail("pwrite");
}
static int call_pwrite_fdatasync(long i) {
  if (call_pwrite(i) != 0) return -1;
  return fdatasync(fd) == 0 ? 0 : fail("fdatasync");
}
static int call_rename(long i) {
  return rename(i % 2 ? name_b : name_a, i % 2 ? name_a : name_b) == 0 ? 0 : fail("rename");
}
static int call_pread(long i) {
  return pread(fd, page, kPage, (off_t)(i % kWindow) * kPage) == kPage ? 0 : fail("pread");
}

// The file the pwrite and pread rows work on: the window written once, so every page is cached.
static int open_window(const char* dir) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/rows.dat", dir);
  fd = open(path, O_RDWR | O_CREAT, 0644);
  if (fd < 0) return fail(path);
  for (long i = 0; i < kWindow; i++)
    if (call_pwrite(i) != 0) return -1;
  return fsync(fd) == 0 ? 0 : fail("fsync");  // timed syncs then carry one write's data
}

static int setup(const char* row, const char* dir) {
  memset(page, 'r', sizeof(page));
  if (!strcmp(row, "write-null")) {
    fd = open("/dev/null", O_WRONLY);
    return fd >= 0 ? 0 : fail("/dev/null");
  }
  if (!strcmp(row, "pipe")) return pipe(pipe_fds) == 0 ? 0 : fail("pipe");
  if (!strcmp(row, "pwrite") || !strcmp(row, "pwrite-fdatasync") || !strcmp(row, "pread"))
    return open_window(dir);
  if (!strcmp(row, "rename")) {
    snprintf(name_a, sizeof(name_a), "%s/rename.a", dir);
    snprintf(name_b, sizeof(name_b), "%s/rename.b", dir);
    unlink(name_b);
    int f = open(name_a, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    return f >= 0 && close(f) == 0 ? 0 : fail(name_a);
  }
  return 0;
}

// The CPU's idle time so far, in ns: the sum of every idle_sleeptime and iowait_sleeptime line
// of /proc/timer_list (one vCPU: one of each). -1 when the kernel shows neither.
static long long idle_ns(void) {
  FILE* f = fopen("/proc/timer_list", "r");
  if (!f) return -1;
  char line[512];
  long long sum = 0, value;
  int seen = 0;
  while (fgets(line, sizeof(line), f)) {
    if (sscanf(line, " .idle_sleeptime : %lld", &value) == 1 ||
        sscanf(line, " .iowait_sleeptime : %lld", &value) == 1) {
      sum += value;
      seen = 1;
    }
  }
  fclose(f);
  return seen ? sum : -1;
}

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char** argv) {
  static const struct {
    const char* name;
    int (*call)(long);
  } rows[] = {
      {"getppid", call_getppid},
      {"write-null", call_write_null},
      {"pipe", call_pipe},
      {"pwrite", call_pwrite},
      {"pwrite-fdatasync", call_pwrite_fdatasync},
      {"rename", call_rename},
      {"pread", call_pread},
  };
  long count = argc == 5 ? strtol(argv[3], NULL, 10) : 0;
  int (*call)(long) = NULL;
  for (size_t r = 0; argc == 5 && r < sizeof(rows) / sizeof(rows[0]); r++)
    if (!strcmp(argv[2], rows[r].name)) call = rows[r].call;
  if (!call || count <= 0) {
    fprintf(stderr, "usage: wp_bench_syscall_rows MODE ROW COUNT DIR\n");
    return 2;
  }
  if (setup(argv[2], argv[4]) != 0) return 1;
  long warmup = count / 10 > 100 ? count / 10 : 100;
  for (long i = 0; i < warmup; i++)
    if (call(i) != 0) return 1;
  // A pause before the timing: a tracer's agent reads what it was told of this process's
  // start, its setup and the warm-up (and, in the traced mode, the calling shell's sync) at
  // its next look, and reading it inside the timing counted it as the calls' (a traced
  // getppid +16 instructions a call, none of them the call's). Idle time, not counted.
  usleep(300 * 1000);

  long long idle_before = idle_ns(), start = now_ns();
  for (long i = warmup; i < warmup + count; i++)  // rename goes on from where it is
    if (call(i) != 0) return 1;
  // Then what a tracer's agent still has to do for these calls: it reads and writes out their
  // records after them, more so the faster they come. 10 ms slices follow while the CPU keeps
  // busy (idle under 95 % of a slice, at most 20 s); everything it ran in them counts as the
  // calls'. The window ends where the first idle slice begins: that slice, a tracer's idle
  // looks and the clock reads in it are not counted. The clock is read before the idle
  // counters, whose read (some 300,000 instructions) then falls in the next slice.
  long long end = now_ns(), idle_at_end = idle_ns();
  for (int slice = 0; slice < 2000 && idle_at_end >= 0; slice++) {
    usleep(10 * 1000);
    long long t = now_ns(), idle = idle_ns();
    if ((idle - idle_at_end) * 100 >= (t - end) * 95) break;
    end = t;
    idle_at_end = idle;
  }
  long long elapsed = end - start, idle_after = idle_at_end;
  long long idle = idle_before >= 0 && idle_after >= 0 ? idle_after - idle_before : 0;
  printf("ROW %s %s %ld %.1f %.1f\n", argv[1], argv[2], count,
         (double)(elapsed - idle) / (double)count, (double)idle / (double)count);
  if (!strcmp(argv[2], "rename")) unlink((warmup + count) % 2 ? name_b : name_a);
  return 0;
}
