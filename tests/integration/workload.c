// Small, exact write workloads for the integration tests: the facts the tests assert
// (how many writes, of what size, buffered or direct, fsynced or not) are set here.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

// O_APPEND through every write flavour, then sync_file_range and fdatasync: the offsets
// are 0, 5000 and 11000 whatever the positional argument says (pwrite(2) BUGS).
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

static int usage(void) {
  fprintf(stderr,
          "usage: wp_workload buffered-fsync|buffered|direct|direct-unaligned PATH COUNT [BS]\n"
          "       wp_workload append-mix PATH\n"
          "       wp_workload untraced-mix PATH FALLOCATES COPIES MSYNCS\n");
  return 2;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "append-mix") == 0) return append_mix(argv[2]);
  if (argc == 6 && strcmp(argv[1], "untraced-mix") == 0)
    return untraced_mix(argv[2], strtol(argv[3], NULL, 10), strtol(argv[4], NULL, 10),
                        strtol(argv[5], NULL, 10));
  if (argc < 4) return usage();
  const char* mode = argv[1];
  const char* path = argv[2];
  long count = strtol(argv[3], NULL, 10);
  size_t bs = argc > 4 ? (size_t)strtoul(argv[4], NULL, 10) : 4096;
  int direct = strncmp(mode, "direct", 6) == 0;
  int flags = O_WRONLY | O_CREAT | O_TRUNC | (direct ? O_DIRECT : 0);
  if (count <= 0 || bs == 0) return usage();

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
  for (long i = 0; i < count; i++) {
    if (pwrite(fd, data, bs, (off_t)(i * bs)) != (ssize_t)bs) failures++;
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
