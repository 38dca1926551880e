// SPDX-License-Identifier: Apache-2.0
// attached_hooks [PID]: what the kernel says the BPF programs held by PID (default: the parent,
// so that `writepath trace -- attached_hooks` reports on the tracer that started it) are attached
// to. One line per attachment, from the kernel's own answers, not the tracer's account:
//   tracepoint NAME        a perf-event tracepoint (BPF_TASK_FD_QUERY: syscalls:* show here)
//   raw_tracepoint NAME    a raw_tp or tp_btf link (BPF_TASK_FD_QUERY: raw_syscalls:* here)
//   link TYPE              any other BPF link, by its fdinfo's link_type (tracing: fentry/fexit)
// Statically linked for the VM guest, which has no shared libraries.
#include <dirent.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int task_fd_query(int pid, int fd, char* name, size_t size, __u32* type) {
  union bpf_attr attr;
  memset(&attr, 0, sizeof(attr));
  attr.task_fd_query.pid = pid;
  attr.task_fd_query.fd = fd;
  attr.task_fd_query.buf = (__u64)(unsigned long)name;
  attr.task_fd_query.buf_len = size;
  if (syscall(SYS_bpf, BPF_TASK_FD_QUERY, &attr, sizeof(attr)) != 0) return -1;
  *type = attr.task_fd_query.fd_type;
  return 0;
}

// The link_type line of /proc/PID/fdinfo/FD ("tracing", "raw_tracepoint", "perf"), or "".
// `out` holds 64 bytes.
static void link_type(int pid, int fd, char out[64]) {
  char path[64], line[256];
  out[0] = 0;
  snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
  FILE* f = fopen(path, "r");
  if (!f) return;
  while (fgets(line, sizeof(line), f))
    if (sscanf(line, "link_type: %63s", out) == 1) break;
  fclose(f);
}

int main(int argc, char** argv) {
  const int pid = argc > 1 ? atoi(argv[1]) : (int)getppid();
  char dir[64];
  snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
  DIR* d = opendir(dir);
  if (!d) {
    fprintf(stderr, "attached_hooks: cannot list %s\n", dir);
    return 1;
  }
  int found = 0;
  for (struct dirent* e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    const int fd = atoi(e->d_name);
    char name[256] = "", type_name[64];
    __u32 type = 0;
    if (task_fd_query(pid, fd, name, sizeof(name), &type) == 0) {
      printf("%s %s\n",
             type == BPF_FD_TYPE_TRACEPOINT       ? "tracepoint"
             : type == BPF_FD_TYPE_RAW_TRACEPOINT ? "raw_tracepoint"
                                                  : "other",
             name);
      ++found;
      continue;
    }
    link_type(pid, fd, type_name);
    if (type_name[0]) {
      printf("link %s\n", type_name);
      ++found;
    }
  }
  closedir(d);
  printf("attachments %d\n", found);
  return 0;
}
