#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/vm/table.sh CONSOLE_LOG
# The VM cost meter's table (bench/vm/run.sh) from one guest's console log (bench/vm/guest.sh's
# ROW lines): per plan, each row's guest instructions per call untraced, then in each other mode
# with what it adds and its ratio to untraced; the untraced rerun's largest drift; the hook
# plans the guest's writepath doctor named; where the programs- modes' PROG lines say each
# mode's BPF programs spent their instructions. Markdown on stdout.
set -euo pipefail
log=${1:?usage: table.sh CONSOLE_LOG}

tr -d '\r' <"$log" | awk '
function commas(n,   s, neg) {
  n = sprintf("%.0f", n); neg = n < 0; if (neg) n = -n; s = n ""
  while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s)
  return (neg ? "-" : "") s
}
function cell(mode, row,   v, u) {
  if (!((mode, row) in ipc)) return (mode == "floor-fentry" && row == "getppid") ? "= untraced" : "n/a"
  v = ipc[mode, row]; u = ipc["untraced", row]
  if (mode == "untraced" || u <= 0) return commas(v)
  return sprintf("%s (%s%s, ×%.2f)", commas(v), v >= u ? "+" : "", commas(v - u), v / u)
}
/^WP-GUEST-BEGIN / { split($2, k, "="); kernel = k[2] }
/^ROW / {
  ipc[$2, $3] = $5; idle[$2, $3] = $6
  if ($2 ~ /^programs-/) { pcalls[$2, $3] = $4; next }
  calls[$3] = $4
  if (!($3 in seen)) { seen[$3] = 1; order[++nrows] = $3 }
}
# PROG MODE ROW NAME RUNS NS: one program'\''s runs and instructions in one programs- run.
/^PROG / {
  key = $2 SUBSEP $3
  ptotal[key] += $6; np[key]++; pname[key, np[key]] = $4; pruns[key, np[key]] = $5; pns[key, np[key]] = $6
  if (!($2 in pmode_seen)) { pmode_seen[$2] = 1; pmodes[++npmodes] = $2 }
}
# doctor: its fentry/fexit line and its hooks section, without the variants passed over.
/^WP-DOCTOR / {
  plan = $2; sub(/^WP-DOCTOR [^ ]+ /, "")
  if (/^[a-z]/) in_hooks[plan] = ($0 == "hooks")
  if ((in_hooks[plan] && $0 !~ /^      /) || $0 ~ /^  [a-z]+ +fentry\/fexit/)
    doctor[plan] = doctor[plan] $0 "\n"
}
/^WP-BENCH-FAIL / { fails = fails "    " substr($0, 15) "\n" }
/^WP-INFO serve has no/ { serve_note = substr($0, 9) }
END {
  label["getppid"] = "getppid"
  label["write-null"] = "64 B write(2) to /dev/null"
  label["pipe"] = "64 B write(2) + read(2), pipe"
  label["pwrite"] = "cached 4 KiB pwrite"
  label["pwrite-fdatasync"] = "4 KiB pwrite + fdatasync, NVMe ext4"
  label["rename"] = "rename"
  label["pread"] = "cached 4 KiB pread"
  printf "## Guest instructions per call, %s\n\n", kernel
  print "QEMU TCG with `-icount shift=0,sleep=on`, one vCPU: the guest clock advances 1 ns per"
  print "instruction, so a loop timed inside the guest (CLOCK_MONOTONIC, idle time taken off)"
  print "counts everything the vCPU ran per call: the syscall, the BPF programs, interrupts and"
  print "the tracer'\''s agent. Cells: instructions per call (added, ratio) against untraced."
  print ""
  split("fentry tracepoint", plans, " ")
  title["fentry"] = "Default plan (trampolines: fentry/fexit)"
  title["tracepoint"] = "Tracepoint plan (`--no-fentry`)"
  floor["fentry"] = "floor-fentry"; floor_title["fentry"] = "floor: empty fentry+fexit"
  floor["tracepoint"] = "floor-tracepoint"
  floor_title["tracepoint"] = "floor: one empty syscall tracepoint"
  for (p = 1; p <= 2; p++) {
    plan = plans[p]
    printf "### %s\n\n", title[plan]
    printf "| row | calls | untraced | %s | bystander of `trace -p 1` | bystander of `serve` | traced (`trace -- LOOP`) |\n", floor_title[plan]
    print "|---|---:|---:|---:|---:|---:|---:|"
    for (r = 1; r <= nrows; r++) {
      row = order[r]
      printf "| %s | %s | %s | %s | %s | %s | %s |\n", label[row] ? label[row] : row,
        commas(calls[row]), cell("untraced", row), cell(floor[plan], row),
        cell("bystander-trace:" plan, row), cell("bystander-serve:" plan, row),
        cell("traced:" plan, row)
    }
    print ""
  }
  print "Floors: fentry+fexit on the functions the default plan hooks for the row (write rows:"
  print "vfs_write; fdatasync: also vfs_fsync_range; rename: __x64_sys_rename; pread:"
  print "__x64_sys_pread64; getppid: none); the tracepoint floor is one program on"
  print "syscalls:sys_enter_writev, which sends every syscall of every task down the slow path."
  print "Where the default plan hooks a row by syscall tracepoints (rename, pread: see its hooks"
  print "below), its trampoline floor is what a trampoline there would cost, not that plan'\''s."
  if (serve_note != "") print "The tracepoint plan'\''s serve column: " serve_note "."
  worst = 0
  for (r = 1; r <= nrows; r++) {
    row = order[r]
    if (("untraced-again", row) in ipc && ipc["untraced", row] > 0) {
      d = ipc["untraced-again", row] / ipc["untraced", row] - 1; if (d < 0) d = -d
      if (row == "pwrite-fdatasync") sync_drift = d
      else if (d >= worst) { worst = d; worst_row = row }
    }
    if (idle["untraced", row] > 0)
      idle_note = idle_note sprintf(" %s %s ns idle per call untraced;", row, commas(idle["untraced", row]))
  }
  if (worst_row != "")
    printf "Reproducibility: the untraced rows rerun last differ by at most %.2f %% (%s)", 100 * worst, worst_row
  if (sync_drift != "")
    printf ", pwrite + fdatasync by %.2f %%", 100 * sync_drift
  if (worst_row != "" || sync_drift != "") print "."
  if (idle_note != "") {
    print "Idle, not counted:" idle_note
    print "while the guest waits for the host'\''s disk its clock follows the host'\''s, so what"
    print "runs meanwhile (interrupts, a tracer'\''s agent) depends on how fast the host'\''s disk was."
  }
  if (npmodes > 0) {
    print ""
    print "### Where the programs'\'' instructions go"
    print ""
    print "The rows again (fewer calls) with the kernel counting each program'\''s runs and run time"
    print "(`BPF_ENABLE_STATS`; each run then pays two clock reads more): instructions per call in"
    print "all programs, then the four costliest: instructions per run × runs per call. The rest of"
    print "a mode'\''s added instructions is the hooks'\'' own (trampoline or tracepoint), and the agent."
    print ""
    print "| mode | row | programs per call | costliest programs |"
    print "|---|---|---:|---|"
    for (m = 1; m <= npmodes; m++)
      for (r = 1; r <= nrows; r++) {
        mode = pmodes[m]; row = order[r]; key = mode SUBSEP row
        if (!((mode, row) in pcalls) || pcalls[mode, row] <= 0) continue
        n = pcalls[mode, row]; top = ""
        for (q = 1; q <= np[key]; q++) used[q] = 0
        for (t = 1; t <= 4 && t <= np[key]; t++) {
          best = 0
          for (q = 1; q <= np[key]; q++)
            if (!used[q] && (best == 0 || pns[key, q] > pns[key, best])) best = q
          used[best] = 1
          top = top sprintf("%s%s %s × %.2f", t > 1 ? ", " : "", pname[key, best],
                            commas(pns[key, best] / pruns[key, best]), pruns[key, best] / n)
        }
        printf "| %s | %s | %s | %s |\n", substr(mode, 10), label[row] ? label[row] : row,
          commas(ptotal[key] / n), top == "" ? "none ran" : top
      }
  }
  if (fails != "") { print ""; print "Runs that failed:"; print ""; printf "%s", fails }
  for (p = 1; p <= 2; p++)
    if (plans[p] in doctor) {
      printf "\nThe hooks of the guest'\''s `writepath doctor%s`:\n\n", plans[p] == "tracepoint" ? " --no-fentry" : ""
      print "```"; printf "%s", doctor[plans[p]]; print "```"
    }
}'
