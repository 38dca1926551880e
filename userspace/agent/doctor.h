// SPDX-License-Identifier: Apache-2.0
// `writepath doctor`: what works on this kernel, what falls back, and why.
#pragma once

#include <ostream>

#include "probe/bpf_session.h"

namespace wp {

// Prints the report; returns 0 when tracing can run here, 1 otherwise. `prefs` shows the plan
// of --no-fentry / --raw-syscalls.
int run_doctor(std::ostream& out, const HookPrefs& prefs = {});

}  // namespace wp
