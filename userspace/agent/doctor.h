// `writepath doctor`: what works on this kernel, what falls back, and why.
#pragma once

#include <ostream>

namespace wp {

// Prints the report; returns 0 when tracing can run here, 1 otherwise. `allow_fentry` false
// shows the plan of --no-fentry.
int run_doctor(std::ostream& out, bool allow_fentry = true);

}  // namespace wp
