// SPDX-License-Identifier: Apache-2.0
// The measured phase of a traced command: a command the tracer starts can say when the part
// worth tracing begins and ends (writepath load: after its scratch filesystem and file layout,
// before its teardown), so set-up and teardown never appear among the items.
//
// The tracer hands the command one end of a socket pair and names its descriptor in the
// environment variable below. The command writes kPhaseBegin and waits for the tracer's
// kPhaseAck (the tracer has then started matching the command's process: the next call is
// traced), later kPhaseEnd and waits for the ack again (matching has stopped). A command
// started without the variable, or whose tracer does not answer, just runs.
#pragma once

namespace wp {

inline constexpr const char* kTracePhaseFdEnv = "WRITEPATH_TRACE_PHASE_FD";
inline constexpr char kPhaseBegin = 'b';
inline constexpr char kPhaseEnd = 'e';
inline constexpr char kPhaseAck = 'a';

}  // namespace wp
