// SPDX-License-Identifier: Apache-2.0
// The static binary of the VM suite: prometheus-cpp has no static archives, so `serve` is not
// in it. Everything else of the CLI is.
#include "common/errors.h"
#include "serve/serve_session.h"

namespace wp {

ListenAddress parse_listen(const std::string& text) {
  return ListenAddress{.host = text};
}

int run_serve(const ServeOptions&) {
  throw Failure(kExitRuntime,
                "serve is not in this static build (prometheus-cpp has no static library)");
}

}  // namespace wp
