// SPDX-License-Identifier: Apache-2.0
// The VM cost meter's floor (bench/vm/run.sh): the cheapest hooks a tracer could put where
// writepath puts its own, so what is left above them is writepath's programs and agent.
//   wp_bench_floor [-s] [-f FUNCTION]... [-t CATEGORY:EVENT]... -- CMD ARGS...
// attaches an empty BPF program (r0 = 0; exit) as fentry and as fexit on each kernel FUNCTION
// (a trampoline, as writepath's default plan uses), and one on each tracepoint (-t
// syscalls:sys_enter_writev: any syscall tracepoint sends every task's syscalls down the
// kernel's slow path), then runs CMD and exits with its status, detaching everything.
// -s: the kernel counts each program's runs and run time while CMD runs (BPF_ENABLE_STATS, as
// kernel.bpf_stats_enabled does; each run then pays two clock reads more), and a line
//   PROG NAME RUNS NS
// is printed for every program that ran meanwhile (not -f's or -t's own). Under QEMU -icount
// shift=0 a guest nanosecond is an instruction: NS is the instructions the program ran.
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct bpf_insn kEmpty[] = {
    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0},  // r0 = 0
    {.code = BPF_JMP | BPF_EXIT},
};

// FUNCTION's fentry and fexit; 0, or -1 having said why.
static int attach_trampolines(const struct btf* vmlinux, const char* function) {
  int id = btf__find_by_name_kind(vmlinux, function, BTF_KIND_FUNC);
  if (id < 0) {
    fprintf(stderr, "wp_bench_floor: %s is not in the kernel's BTF\n", function);
    return -1;
  }
  const enum bpf_attach_type types[] = {BPF_TRACE_FENTRY, BPF_TRACE_FEXIT};
  for (int i = 0; i < 2; i++) {
    LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = types[i],
                .attach_btf_id = (__u32)id);
    int prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "wp_floor", "GPL", kEmpty, 2, &opts);
    if (prog < 0 || bpf_link_create(prog, 0, types[i], NULL) < 0) {
      fprintf(stderr, "wp_bench_floor: %s on %s: %s\n", i ? "fexit" : "fentry", function,
              strerror(errno));
      return -1;
    }
  }
  return 0;
}

// An empty program on tracepoint CATEGORY:EVENT; 0, or -1 having said why.
static int attach_tracepoint(const char* spec) {
  char category[256], path[640];
  const char* colon = strchr(spec, ':');
  if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(category)) {
    fprintf(stderr, "wp_bench_floor: -t wants CATEGORY:EVENT, not %s\n", spec);
    return -1;
  }
  snprintf(category, sizeof(category), "%.*s", (int)(colon - spec), spec);
  FILE* f = NULL;
  const char* roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
  for (int i = 0; i < 2 && !f; i++) {
    snprintf(path, sizeof(path), "%s/events/%s/%s/id", roots[i], category, colon + 1);
    f = fopen(path, "r");
  }
  long long tp_id = -1;
  if (!f || fscanf(f, "%lld", &tp_id) != 1) {
    fprintf(stderr, "wp_bench_floor: no tracepoint %s (tracefs mounted?)\n", spec);
    if (f) fclose(f);
    return -1;
  }
  fclose(f);
  int prog = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "wp_floor", "GPL", kEmpty, 2, NULL);
  struct perf_event_attr attr = {.type = PERF_TYPE_TRACEPOINT,
                                 .size = sizeof(attr),
                                 .config = (__u64)tp_id,
                                 .sample_period = 1,
                                 .wakeup_events = 1};
  int event = prog < 0 ? -1 : (int)syscall(SYS_perf_event_open, &attr, -1, 0, -1, 0);
  if (event < 0 || ioctl(event, PERF_EVENT_IOC_SET_BPF, prog) != 0 ||
      ioctl(event, PERF_EVENT_IOC_ENABLE, 0) != 0) {
    fprintf(stderr, "wp_bench_floor: %s: %s\n", spec, strerror(errno));
    return -1;
  }
  return 0;
}

// The run counters of every loaded program but those named wp_floor, by id (ids only grow).
enum { kMaxPrograms = 4096 };
struct ProgramCounts {
  __u32 id;
  char name[BPF_OBJ_NAME_LEN];
  __u64 runs, ns;
};

static int read_program_counts(struct ProgramCounts* counts) {
  int n = 0;
  for (__u32 id = 0; n < kMaxPrograms && bpf_prog_get_next_id(id, &id) == 0;) {
    int fd = bpf_prog_get_fd_by_id(id);
    if (fd < 0) continue;  // unloaded meanwhile
    struct bpf_prog_info info = {0};
    __u32 len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && strcmp(info.name, "wp_floor") != 0) {
      counts[n].id = id;
      memcpy(counts[n].name, info.name, sizeof(counts[n].name));
      counts[n].runs = info.run_cnt;
      counts[n].ns = info.run_time_ns;
      n++;
    }
    close(fd);
  }
  return n;
}

// PROG lines: what each program ran between the two readings (one loaded meanwhile from 0).
static void print_program_counts(const struct ProgramCounts* before, int n_before,
                                 const struct ProgramCounts* after, int n_after) {
  for (int i = 0, j = 0; i < n_after; i++) {
    while (j < n_before && before[j].id < after[i].id) j++;
    const int known = j < n_before && before[j].id == after[i].id;
    const __u64 runs = after[i].runs - (known ? before[j].runs : 0);
    const __u64 ns = after[i].ns - (known ? before[j].ns : 0);
    if (runs)
      printf("PROG %s %llu %llu\n", after[i].name, (unsigned long long)runs,
             (unsigned long long)ns);
  }
  fflush(stdout);
}

int main(int argc, char** argv) {
  struct btf* vmlinux = NULL;
  int opt, stats_fd = -1;
  while ((opt = getopt(argc, argv, "+sf:t:")) != -1) {
    if (opt == 's') {
      if (stats_fd < 0 && (stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME)) < 0) {
        fprintf(stderr, "wp_bench_floor: cannot enable run-time stats: %s\n", strerror(errno));
        return 1;
      }
    } else if (opt == 'f') {
      if (!vmlinux && !(vmlinux = btf__load_vmlinux_btf())) {
        fprintf(stderr, "wp_bench_floor: cannot load the kernel's BTF: %s\n", strerror(errno));
        return 1;
      }
      if (attach_trampolines(vmlinux, optarg) != 0) return 1;
    } else if (opt == 't') {
      if (attach_tracepoint(optarg) != 0) return 1;
    } else {
      optind = argc;  // usage below
      break;
    }
  }
  if (optind >= argc) {
    fprintf(stderr,
            "usage: wp_bench_floor [-s] [-f FUNCTION]... [-t CATEGORY:EVENT]... -- CMD ARGS...\n");
    return 2;
  }
  btf__free(vmlinux);
  static struct ProgramCounts before[kMaxPrograms], after[kMaxPrograms];
  const int n_before = stats_fd < 0 ? 0 : read_program_counts(before);
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    execvp(argv[optind], argv + optind);
    perror(argv[optind]);
    _exit(127);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child) {
    perror("wp_bench_floor");
    return 1;
  }
  if (stats_fd >= 0) print_program_counts(before, n_before, after, read_program_counts(after));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
