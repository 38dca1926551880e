// SPDX-License-Identifier: Apache-2.0
// What `writepath --version` prints.
#pragma once

#include <string>

namespace wp {

// "writepath 0.1.0 (commit 1a2b3c4d5e6f, libbpf 1.5)": the release, the git commit it was built
// from ("unknown" outside a git checkout; "-dirty" with uncommitted changes) and the libbpf it
// runs with.
std::string version_text();

}  // namespace wp
