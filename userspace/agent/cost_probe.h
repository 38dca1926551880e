// SPDX-License-Identifier: Apache-2.0
// What the trace's programs cost a call on this machine, measured now (`writepath doctor`).
// Two helper processes make the calls and time them themselves: one the trace follows, making
// cached 4 KiB pwrites to a file of its own, and one it does not, writing 64 bytes to /dev/null
// (a bystander's write to a pipe, socket or terminal takes the same path). Each is timed
// before the programs are attached, while they are and after they are gone, in rounds; and
// the programs' own time per call is the kernel's count (BPF_ENABLE_STATS, on only for the
// measurement, or kernel.bpf_stats_enabled).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/nanos.h"

namespace wp {

class BpfSession;

// One kind of call, per call (medians of the rounds).
struct CallCost {
  Nanos untraced_ns = 0;  // without the programs (the rounds before and after)
  Nanos traced_ns = 0;    // with them attached
  // The programs' time and runs for each call, as the kernel counted them while the calls
  // ran (every program and every process on the machine in that window); unset when the
  // kernel does not count.
  std::optional<Nanos> program_ns;
  std::optional<double> program_runs;
};

struct TraceCost {
  std::uint32_t calls = 0;  // per round and kind
  int rounds = 0;
  CallCost traced_pwrite;    // a traced process's cached 4 KiB pwrite
  CallCost bystander_write;  // another process's 64-byte write(2) to /dev/null
  std::string counted_by;    // how the kernel counted program time ("" when it did not)
};

// The helpers making the calls: started before any program is attached (neither is traced
// until the caller adds `traced_pid()` to its session's filter), stopped by the destructor.
class CostProbe {
 public:
  // Null with `error` set when the helpers could not start.
  static std::unique_ptr<CostProbe> start(std::uint32_t calls, std::string& error);
  ~CostProbe();
  CostProbe(const CostProbe&) = delete;
  CostProbe& operator=(const CostProbe&) = delete;

  int traced_pid() const { return traced_.pid; }
  // Rounds without programs (before attaching, or after detaching).
  bool measure_untraced(int rounds, std::string& error);
  // Rounds with `session` attached and following traced_pid(); its ring buffer is drained
  // while a helper runs, as trace drains it.
  bool measure_traced(int rounds, BpfSession& session, std::string& error);
  // The medians so far.
  TraceCost result() const;

 private:
  // A helper process and what its rounds measured, per call.
  struct Helper {
    int pid = -1;
    int command_fd = -1;
    int result_fd = -1;
    char command = 0;  // 'p': pwrites, 'w': /dev/null writes
    std::vector<Nanos> untraced, traced, program;
    std::vector<double> runs;
  };
  CostProbe() = default;
  // Runs one batch in `helper`; its ns per call.
  std::optional<Nanos> run(const Helper& helper, BpfSession* session, std::string& error);

  std::uint32_t calls_ = 0;
  Helper traced_, bystander_;
  std::string counted_by_;
  int rounds_ = 0;
};

}  // namespace wp
