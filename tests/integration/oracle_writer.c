// SPDX-License-Identifier: Apache-2.0
// The oracle sweep's workload: writes a file in a pattern set by its arguments and logs, as it
// goes, what it did and what the kernel answered, so that the test can hold the tracer's
// verdicts against truths the tracer did not compute:
//   write OFFSET BYTES RET START_NS END_NS       one line per write call (CLOCK_MONOTONIC)
//   sync NAME RET START_NS END_NS                 one per sync call (fsync, fdatasync, msync;
//                                                 RET -errno when it failed)
//   store FIRST_PAGE PAGES START_NS END_NS        stores into a shared mapping
//   pages T0_NS T1_NS                             then per page of the file, from cachestat(2):
//   page INDEX CACHED DIRTY WRITEBACK             its state between T0 and T1
//   disk WHEN WRITES SECTORS FLUSHES              with WP_ORACLE_DISK=NAME: that disk's
//                                                 /proc/diskstats as it starts and ends
// With WP_ORACLE_PAGES_OF=PATH, cachestat asks PATH (an overlay file's upper file) instead.
//
// usage: oracle_writer FILE LOG ENGINE BS COUNT SEQUENTIAL SYNC EVERY SEED
//   ENGINE: pwrite | write | direct | mmap
//   SYNC: none | fsync | fdatasync | end-fsync (fsync or msync every EVERY calls; end-fsync:
//   one at the end); SEQUENTIAL 1 or 0 (random block-aligned offsets in COUNT blocks).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef __NR_cachestat
#define __NR_cachestat 451 /* x86-64, Linux 6.5+ */
#endif

struct cachestat_range {
  uint64_t off;
  uint64_t len;
};
struct cachestat {
  uint64_t nr_cache;
  uint64_t nr_dirty;
  uint64_t nr_writeback;
  uint64_t nr_evicted;
  uint64_t nr_recently_evicted;
};

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// xorshift64*: the offsets are a function of the seed alone.
static uint64_t next_random(uint64_t* state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1DULL;
}

// The disk's completed writes, sectors written and flushes (diskstats fields 5, 7 and 16).
static void log_disk(FILE* log, const char* when) {
  const char* name = getenv("WP_ORACLE_DISK");
  FILE* in = name ? fopen("/proc/diskstats", "r") : NULL;
  if (in == NULL) return;
  char line[512], dev[64];
  while (fgets(line, sizeof(line), in)) {
    unsigned long long f[17] = {0};
    if (sscanf(line,
               "%*u %*u %63s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu "
               "%llu %llu",
               dev, &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10], &f[11],
               &f[12], &f[13], &f[14], &f[15], &f[16]) >= 17 &&
        strcmp(dev, name) == 0)
      fprintf(log, "disk %s %llu %llu %llu\n", when, f[5], f[7], f[16]);
  }
  fclose(in);
}

static int fail(const char* what) {
  fprintf(stderr, "oracle_writer: %s: %s\n", what, strerror(errno));
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 10) {
    fprintf(stderr, "usage: oracle_writer FILE LOG ENGINE BS COUNT SEQUENTIAL SYNC EVERY SEED\n");
    return 2;
  }
  const char* path = argv[1];
  const char* engine = argv[3];
  const size_t bs = strtoull(argv[4], NULL, 10);
  const long count = strtol(argv[5], NULL, 10);
  const int sequential = atoi(argv[6]);
  const char* sync_mode = argv[7];
  const long every = strtol(argv[8], NULL, 10);
  uint64_t rng = strtoull(argv[9], NULL, 10) * 2654435761ULL + 1;
  const int direct = strcmp(engine, "direct") == 0;
  const int mapped = strcmp(engine, "mmap") == 0;
  const int positional = strcmp(engine, "write") != 0;
  const int syncs = strcmp(sync_mode, "fsync") == 0 || strcmp(sync_mode, "fdatasync") == 0;
  if (bs == 0 || count <= 0 || every <= 0) return 2;

  FILE* log = fopen(argv[2], "w");
  if (log == NULL) return fail("log");
  log_disk(log, "start");
  fflush(log);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | (direct ? O_DIRECT : 0), 0644);
  if (fd < 0) return fail("open");
  const size_t size = bs * (size_t)count;
  char* buf = NULL;
  if (posix_memalign((void**)&buf, 4096, bs) != 0) return fail("buffer");
  memset(buf, 'o', bs);
  char* map = NULL;
  if (mapped) {
    if (ftruncate(fd, (off_t)size) != 0) return fail("ftruncate");
    map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) return fail("mmap");
  }

  for (long i = 0; i < count; ++i) {
    const uint64_t block = sequential ? (uint64_t)i : next_random(&rng) % (uint64_t)count;
    const off_t offset = (off_t)(block * bs);
    const long long start = now_ns();
    if (mapped) {
      memset(map + offset, (int)('a' + i % 26), bs);
      fprintf(log, "store %lld %zu %lld %lld\n", (long long)(offset / 4096),
              (size_t)((offset + bs - 1) / 4096 - offset / 4096 + 1), start, now_ns());
    } else {
      ssize_t ret;
      if (positional) {
        ret = pwrite(fd, buf, bs, offset);
      } else {
        ret = write(fd, buf, bs);
      }
      const long long end = now_ns();
      fprintf(log, "write %lld %zu %zd %lld %lld\n",
              positional ? (long long)offset : (long long)(i * (long)bs), bs, ret, start, end);
      if (ret < 0) return fail("write");
    }
    if (syncs && (i + 1) % every == 0) {
      const long long s = now_ns();
      int ret;
      const char* name;
      if (mapped) {
        ret = msync(map, size, MS_SYNC);
        name = "msync";
      } else if (strcmp(sync_mode, "fsync") == 0) {
        ret = fsync(fd);
        name = "fsync";
      } else {
        ret = fdatasync(fd);
        name = "fdatasync";
      }
      fprintf(log, "sync %s %d %lld %lld\n", name, ret < 0 ? -errno : ret, s, now_ns());
    }
  }
  if (strcmp(sync_mode, "end-fsync") == 0) {
    const long long s = now_ns();
    const int ret = fsync(fd);
    fprintf(log, "sync fsync %d %lld %lld\n", ret < 0 ? -errno : ret, s, now_ns());
  }

  // The kernel's own account of every page, as the workload ends (still traced). Through an
  // overlay the pages are the upper file's (WP_ORACLE_PAGES_OF): the overlay's own file has
  // no page cache to ask.
  const char* pages_of = getenv("WP_ORACLE_PAGES_OF");
  const int pages_fd = pages_of != NULL && *pages_of ? open(pages_of, O_RDONLY) : fd;
  if (pages_fd < 0) return fail("open WP_ORACLE_PAGES_OF");
  const long long t0 = now_ns();
  const size_t pages = (size + 4095) / 4096;
  struct cachestat* state = calloc(pages, sizeof(*state));
  if (state == NULL) return fail("calloc");
  int have_cachestat = 1;
  for (size_t p = 0; p < pages && have_cachestat; ++p) {
    struct cachestat_range range = {p * 4096, 4096};
    if (syscall(__NR_cachestat, pages_fd, &range, &state[p], 0) != 0) have_cachestat = 0;
  }
  const long long t1 = now_ns();
  if (have_cachestat) {
    fprintf(log, "pages %lld %lld\n", t0, t1);
    for (size_t p = 0; p < pages; ++p) {
      fprintf(log, "page %zu %llu %llu %llu\n", p, (unsigned long long)state[p].nr_cache,
              (unsigned long long)state[p].nr_dirty, (unsigned long long)state[p].nr_writeback);
    }
  }
  log_disk(log, "end");
  if (fclose(log) != 0) return fail("log");
  if (map != NULL) munmap(map, size);
  if (pages_fd != fd) close(pages_fd);
  close(fd);
  return 0;
}
