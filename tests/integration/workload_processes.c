// SPDX-License-Identifier: Apache-2.0
// Who writes: a tree of child processes, and a process moved into given cgroups first.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

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
int fork_tree(const char* dir, long n, long count, long early, const char* exe) {
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

/* Moves this process into each cgroup whose cgroup.procs file is listed in PROCS (comma
 * separated: one per v1 hierarchy, or one v2 cgroup) before anything is written. */
int join_cgroups(const char* procs) {
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
