// SPDX-License-Identifier: Apache-2.0
// The paths of /proc/PID/mountinfo as the kernel writes them: shared by the agent's view of the
// mounts (probe/devices.h) and the load generator's search for the cgroup2 mount.
#pragma once

#include <string>

namespace wp {

// mountinfo escapes space, tab, newline and backslash in paths as \ooo: the path itself.
std::string unescape_mount_path(const std::string& field);

}  // namespace wp
