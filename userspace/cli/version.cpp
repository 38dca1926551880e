// SPDX-License-Identifier: Apache-2.0
#include "cli/version.h"

#include <bpf/libbpf.h>
#include <fmt/format.h>

#include "git_commit.h"  // generated at every build: WRITEPATH_GIT_COMMIT

namespace wp {

std::string version_text() {
  // libbpf's version is the library's at run time: a shared libbpf may be newer than the
  // headers writepath was built against.
  return fmt::format("writepath {} (commit {}, libbpf {}.{})", WRITEPATH_VERSION,
                     WRITEPATH_GIT_COMMIT, libbpf_major_version(), libbpf_minor_version());
}

}  // namespace wp
