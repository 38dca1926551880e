// `writepath doctor`: what works on this kernel, what falls back, and why.
#pragma once

#include <ostream>

namespace wp {

// Prints the report; returns 0 when tracing can run here, 1 otherwise.
int run_doctor(std::ostream& out);

}  // namespace wp
