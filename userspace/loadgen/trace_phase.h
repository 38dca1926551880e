// SPDX-License-Identifier: Apache-2.0
// The load's side of common/trace_phase.h: under `writepath demo` (or any tracer that hands
// over a phase socket) only a scenario's measured part is traced, not the scratch filesystem's
// mkfs and mount, the scenario's file layout, the result file or the teardown.
#pragma once

#include <string>

#include "common/fd.h"

namespace wp::loadgen {

// Names the calling thread (prctl PR_SET_NAME; the kernel keeps 15 characters), so that a
// trace's comm, lanes and tracks say which role of the scenario made each call.
void name_this_thread(const std::string& role);
std::string this_thread_name();

// The socket named by the environment, if any. Not copyable: one per load process.
class TracePhaseMarker {
 public:
  TracePhaseMarker();  // takes the descriptor out of the environment
  TracePhaseMarker(const TracePhaseMarker&) = delete;
  TracePhaseMarker& operator=(const TracePhaseMarker&) = delete;
  bool under_tracer() const { return fd_.get() >= 0; }
  // Sends one mark and waits for the tracer's ack; a tracer gone quiet ends the marking.
  void mark(char message);

 private:
  UniqueFd fd_;
};

// The measured part of a scenario, for its lifetime: traced under a tracer, with the calling
// thread named `role` (its old name comes back at the end). One at a time.
class MeasuredPhase {
 public:
  MeasuredPhase(TracePhaseMarker& marker, const std::string& role);
  ~MeasuredPhase();
  MeasuredPhase(const MeasuredPhase&) = delete;
  MeasuredPhase& operator=(const MeasuredPhase&) = delete;

 private:
  TracePhaseMarker& marker_;
  std::string old_name_;
};

}  // namespace wp::loadgen
