// SPDX-License-Identifier: Apache-2.0
// Bash completion generated from the command line's own definition (`writepath completion
// bash`), so a new subcommand, option or scenario completes without a second list to keep.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace wp {

// A bash script defining and registering `_writepath`: subcommands (scenarios included), each
// command's options, and what follows an option: one of its {choices}, file names (-o, --save,
// --file, report's FILE), directories (--dir), PIDs (--pid), or the traced command after `--`.
// Commands and options in the hidden group ("") are left out, as --help leaves them out.
std::string bash_completion(const CLI::App& app);

}  // namespace wp
