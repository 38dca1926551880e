// SPDX-License-Identifier: Apache-2.0
// The one time unit of the project.
#pragma once

#include <cstdint>

namespace wp {

using Nanos = std::uint64_t;  // CLOCK_MONOTONIC nanoseconds (bpf_ktime_get_ns)

}  // namespace wp
